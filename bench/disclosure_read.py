"""Benchmark: reconstruct the largest GitHub operation's schemas via disclosure vs. inline search.

    python -m bench.disclosure_read [--repeat N] [--in-flight N]

Two FastMCP servers built from the full, pinned GitHub description (1,223 operation tools each), each
served by uvicorn on 127.0.0.1 (stateless Streamable HTTP), each hiding its tools behind a
``RegexSearchTransform``:

* *disclosure* — ``search_result_serializer=describe_schema_tools`` plus ``register_schema_resources``.
  Timed: ``SchemaDisclosureConsumer.select`` (one ``search_tools`` call) + ``disclose`` (manifest and
  every fragment over the same session, ``--in-flight`` concurrent reads, every read re-authorized and
  its schemas re-checked by the provider) + ``reconstruct_schema``.
* *inline* — FastMCP's default serializer, which pastes each matched tool (schemas included) into the
  ``search_tools`` result. Timed: one ``search_tools`` call returning the operation, plus ``json.loads``
  of its text.

Both run in one process, interleaved, ``--repeat`` times; best times are compared (target: ratio <= 2).
"Model context" is what a model reading the search result receives: the ``search_tools`` result's text
content (the navigation entry vs. the whole tool). The disclosure fragments are read by the host, not
put in the model's context.

Setup (fetching/verifying the description, converting it to tools, building disclosures) is not timed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

import httpx2
from fastmcp import Client
from fastmcp.server.context import Context
from fastmcp.server.middleware.dereference import DereferenceRefsMiddleware
from fastmcp.server.transforms.search import RegexSearchTransform

from agent_connector_sdk.connectors import build_openapi_server, build_tool_disclosures
from agent_connector_sdk.core.schema_disclosure import SourceDigest, manifest_uri
from agent_connector_sdk.core.schema_disclosure.cache import SchemaIdentityMemo
from agent_connector_sdk.core.schema_disclosure.encoding import encode_schema_document
from agent_connector_sdk.mcp.host.disclosure_consumer import CallerScope, SchemaDisclosureConsumer
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    describe_schema_tools,
    register_schema_resources,
)
from bench._github import load_github_description
from bench._timing import best_of
from scripts.github_openapi import LARGEST_OPERATION
from tests.support.http_server import serve_asgi

TARGET_RATIO = 2.0
NOOP_URI = "bench://noop"
ALIAS = LARGEST_OPERATION.replace("/", "_").replace("-", "_")
PATTERN = f"^{ALIAS}"


def _text_bytes(result: dict[str, Any]) -> int:
    return sum(len(block.get("text", "").encode("utf-8")) for block in result.get("content", []))


async def _measure(disclosure_url: str, inline_url: str, *, repeat: int, in_flight: int, label: str) -> None:
    disclosure_client: Client[Any] = Client(disclosure_url)
    consumer = SchemaDisclosureConsumer(
        disclosure_client, scope=CallerScope("bench", disclosure_url), max_in_flight=in_flight
    )
    inline_client: Client[Any] = Client(inline_url)
    async with disclosure_client, inline_client:
        reconstructed: dict[str, Any] = {}
        inline: dict[str, Any] = {}

        async def via_disclosure() -> None:
            tool = await consumer.disclose(await consumer.select(PATTERN, ALIAS))
            reconstructed["tool"] = tool

        async def via_inline() -> None:
            result = await inline_client.call_tool_mcp("search_tools", {"pattern": PATTERN})
            raw = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            (entry,) = json.loads(raw["content"][0]["text"])
            inline["entry"], inline["raw"] = entry, raw

        await via_disclosure()  # warm both paths (imports, validator caches, connections)
        await via_inline()

        async def round_trips() -> None:
            # The protocol floor: as many reads of a trivial resource as disclosure makes, same bound.
            limiter = asyncio.Semaphore(in_flight)

            async def one() -> None:
                async with limiter:
                    await disclosure_client.session.read_resource(NOOP_URI)

            await asyncio.gather(*(one() for _ in range(reads)))

        reads = reconstructed["tool"].manifest.fragment_count + 1
        ours, floor, trips = await best_of(repeat, [via_disclosure, via_inline, round_trips])

        tool = reconstructed["tool"]
        entry = inline["entry"]
        if (tool.input_schema, tool.output_schema) != (entry["inputSchema"], entry.get("outputSchema")):
            raise RuntimeError("disclosure and inline search disagree on the schemas")
        search = await disclosure_client.call_tool_mcp("search_tools", {"pattern": PATTERN})
        navigation_bytes = _text_bytes(search.model_dump(mode="json", by_alias=True, exclude_none=True))
        inline_bytes = _text_bytes(inline["raw"])

    manifest = tool.manifest
    ratio = ours / floor
    print(
        f"--- {label}\n"
        f"operation {LARGEST_OPERATION} (tool {ALIAS}): canonical document {manifest.schema_bytes:,} bytes, "
        f"{manifest.fragment_count} fragments\n"
        f"disclosure (search + manifest + {manifest.fragment_count} fragment reads, {in_flight} in flight, "
        f"reconstruct): best {ours * 1000:.1f} ms; {tool.bytes_read:,} bytes read by the host\n"
        f"inline (one search_tools response, FastMCP default serializer): best {floor * 1000:.1f} ms\n"
        f"protocol floor ({manifest.fragment_count + 1} reads of a no-op resource, same bound): "
        f"best {trips * 1000:.1f} ms = {trips / floor:.2f}x inline\n"
        f"ratio disclosure/inline: {ratio:.2f}x (target <= {TARGET_RATIO}x) "
        f"{'OK' if ratio <= TARGET_RATIO else 'OVER TARGET'}\n"
        f"model context (search_tools result text): disclosure {navigation_bytes:,} bytes "
        f"vs inline {inline_bytes:,} bytes ({inline_bytes / navigation_bytes:.0f}x smaller)"
    )


async def _per_read_costs(server: Any, search: RegexSearchTransform, registry: Any, repeat: int) -> None:
    """In process, what one disclosure read of the operation actually spends besides the round trip:
    finding the caller's tool (by name, vs. the whole catalog the exact path lists), checking its current
    schemas (the exact fingerprint memo reads use, vs. a full canonical re-hash), and a whole read."""
    async with Context(fastmcp=server) as ctx:
        catalog: list[Any] = []
        found: list[Any] = []

        async def resolve_catalog() -> None:
            catalog[:] = await search.get_tool_catalog(ctx)

        async def resolve_by_name() -> None:
            found[:] = [await registry._visible_tool(ALIAS, exact=False)]

        await resolve_catalog()
        await resolve_by_name()
        tool = found[0]
        memo = SchemaIdentityMemo()
        identity = memo.identify(tool.input_schema, tool.output_schema)
        base = manifest_uri(ALIAS, identity.digests.schema_sha256).removesuffix("manifest")
        fragment = f"{base}fragments/1"

        async def check_memo() -> None:
            memo.identify(tool.input_schema, tool.output_schema)

        async def rehash() -> None:
            encode_schema_document(tool.input_schema, tool.output_schema)

        async def read() -> None:
            await registry.read(fragment)

        await read()
        catalog_s, name_s, memo_s, rehash_s, read_s = await best_of(
            repeat, [resolve_catalog, resolve_by_name, check_memo, rehash, read]
        )
    print(
        f"per read, in process ({registry.fast_path_blocker() or 'name-resolved path'}): find the tool by "
        f"name {name_s * 1000:.2f} ms (whole catalog, {len(catalog)} tools: {catalog_s * 1000:.1f} ms); "
        f"schema check via the fingerprint memo {memo_s * 1000:.2f} ms "
        f"(full re-hash {rehash_s * 1000:.1f} ms); "
        f"whole fragment read {read_s * 1000:.2f} ms"
    )


async def _build(
    description: Any, base_url: str
) -> tuple[tuple[Any, Any, Any], Any, Any, httpx2.AsyncClient]:
    http = httpx2.AsyncClient(base_url=base_url)
    disclosed = build_openapi_server(description.document, client=http, name="github-disclosure")
    disclosures = await build_tool_disclosures(disclosed, SourceDigest.of(description.raw))
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools, max_results=5)
    disclosed.server.add_transform(search)
    registry = register_schema_resources(disclosed.server, search, disclosures)
    disclosed.server.resource(NOOP_URI, mime_type="application/json")(lambda: "{}")
    inline = build_openapi_server(description.document, client=http, name="github-inline")
    inline.server.add_transform(RegexSearchTransform(max_results=5))
    return (disclosed.server, search, registry), inline.server, disclosures, http


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--in-flight", type=int, default=8)
    args = parser.parse_args(argv)
    description = load_github_description()
    started = time.perf_counter()
    (disclosed_server, search, registry), inline_server, disclosures, _http = asyncio.run(
        _build(description, "http://127.0.0.1:9")
    )
    print(
        f"setup (untimed): {len(disclosures)} tools and disclosures per server in "
        f"{time.perf_counter() - started:.1f} s"
    )
    with (
        serve_asgi(disclosed_server.http_app(stateless_http=True)) as disclosure_url,
        serve_asgi(inline_server.http_app(stateless_http=True)) as inline_url,
    ):

        def measure(label: str) -> None:
            asyncio.run(
                _measure(
                    disclosure_url, inline_url, repeat=args.repeat, in_flight=args.in_flight, label=label
                )
            )
            asyncio.run(_per_read_costs(disclosed_server, search, registry, args.repeat))

        measure("FastMCP defaults (DereferenceRefsMiddleware walks all 1,223 schemas per catalog read)")
        # The description is already dereferenced, so the wire is identical without FastMCP's
        # dereference middleware (the measurement re-checks that both paths agree on the schemas).
        for server in (disclosed_server, inline_server):
            server.middleware[:] = [
                m for m in server.middleware if not isinstance(m, DereferenceRefsMiddleware)
            ]
        measure("dereference middleware off (pre-dereferenced source; same wire schemas)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
