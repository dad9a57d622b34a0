"""Benchmark: disclosure at catalog scale — a read costs the same at 10 tools and at 10,000.

    python -m bench.disclosure_scale [--repeat N] [--in-flight N] [--skip-startup]

Printed side by side in one run, FastMCP defaults on (``DereferenceRefsMiddleware`` included):

1. **Per-read cost vs catalog size.** Servers built with ``FastMCP.from_openapi`` from 10 and 100
   operations of the pinned GitHub description, the full description (1,223), and a synthetic
   10,000-operation description (realistic REST shapes: path/query parameters, JSON bodies, nested
   responses). Each hides its tools behind a ``RegexSearchTransform`` and registers disclosure origins
   (lazy). The same GitHub operation is read in every catalog, in process, inside a FastMCP request
   context: its manifest and one fragment, best of ``--repeat``, after a first (building) read. The
   whole-catalog reference path (``read_exact``, a fresh ``get_tool_catalog`` per read) is printed too.
   Target: cost at 10,000 <= 1.5x cost at 10.
2. **Disclosing the largest GitHub operation over loopback HTTP** (uvicorn on 127.0.0.1, stateless
   Streamable HTTP): ``SchemaDisclosureConsumer`` select + manifest + every fragment + reconstruct,
   against the protocol floor (the same number of reads of a no-op resource at the same in-flight
   bound), against one inline ``search_tools`` response, and the model-context sizes.
   Target: <= 1.5x the floor.
3. **Start-up**: ``agent-connector serve --openapi <full GitHub description>`` vs plain FastMCP
   (``from_openapi`` + ``RegexSearchTransform``, served the same way), each in a fresh process: time
   from spawn to the first answered ``search_tools`` call, and RSS right after it. Target <= 1.1x each.

Setup (fetching/verifying the description, building servers) is not timed except in part 3.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2
from fastmcp import Client
from fastmcp.server.context import Context
from fastmcp.server.transforms.search import RegexSearchTransform

from agent_connector_sdk.connectors.openapi import build_openapi_server, tool_disclosure_origins
from agent_connector_sdk.core.schema_disclosure import SourceDigest, manifest_uri
from agent_connector_sdk.core.schema_disclosure.cache import SchemaIdentityMemo
from agent_connector_sdk.mcp.host.disclosure_consumer import CallerScope, SchemaDisclosureConsumer
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    SchemaDisclosureRegistry,
    describe_schema_tools,
    register_schema_resources,
)
from bench._github import load_github_description
from bench._timing import best_of
from scripts.github_openapi import LARGEST_OPERATION
from tests.support.http_server import serve_asgi

SCALE_TARGET = 1.5
FLOOR_TARGET = 1.5
STARTUP_TARGET = 1.1
NOOP_URI = "bench://noop"
LARGEST_ALIAS = LARGEST_OPERATION.replace("/", "_").replace("-", "_")
# A typical operation read at every scale (a list endpoint with query parameters and a big response).
PROBE_OPERATION = "issues/list-for-repo"
PROBE_ALIAS = PROBE_OPERATION.replace("/", "_").replace("-", "_")
UPSTREAM = "http://127.0.0.1:9"


# ------------------------------------------------------------------------------------------------
# Catalogs
# ------------------------------------------------------------------------------------------------


def _subset(document: dict[str, Any], count: int, keep: set[str]) -> dict[str, Any]:
    """The first ``count`` operations of ``document`` (those named in ``keep`` always included)."""
    chosen: list[tuple[str, str]] = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if isinstance(operation, dict) and operation.get("operationId") in keep:
                chosen.append((path, method))
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if len(chosen) >= count:
                break
            if isinstance(operation, dict) and "operationId" in operation and (path, method) not in chosen:
                chosen.append((path, method))
    paths: dict[str, Any] = {}
    for path, method in chosen:
        item = document["paths"][path]
        paths.setdefault(
            path, {k: v for k, v in item.items() if not isinstance(v, dict) or "operationId" not in v}
        )
        paths[path][method] = item[method]
    return {**document, "paths": paths}


def _synthetic_operation(index: int) -> dict[str, Any]:
    """A realistic REST operation: path and query parameters, a JSON body, a nested JSON response."""
    resource = f"resource{index // 4}"
    item = {
        "type": "object",
        "properties": {
            "id": {"type": "integer", "description": "Unique identifier."},
            "node_id": {"type": "string"},
            "name": {"type": "string", "description": f"Name of the {resource}."},
            "state": {"type": "string", "enum": ["open", "closed", "archived"]},
            "created_at": {"type": "string", "format": "date-time"},
            "updated_at": {"type": "string", "format": "date-time"},
            "owner": {
                "type": "object",
                "properties": {
                    "login": {"type": "string"},
                    "id": {"type": "integer"},
                    "site_admin": {"type": "boolean"},
                    "html_url": {"type": "string", "format": "uri"},
                },
                "required": ["login", "id"],
            },
            "labels": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "color": {"type": "string"}},
                },
            },
            "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["id", "name", "state"],
    }
    method = ("get", "post", "patch", "delete")[index % 4]
    operation: dict[str, Any] = {
        "operationId": f"synthetic/{method}-{resource}-{index}",
        "summary": f"{method.upper()} a {resource} (synthetic operation {index}).",
        "description": f"Synthetic operation {index} shaped like a typical REST endpoint. " * 3,
        "parameters": [
            {"name": "owner", "in": "path", "required": True, "schema": {"type": "string"}},
            {"name": "repo", "in": "path", "required": True, "schema": {"type": "string"}},
            {"name": "per_page", "in": "query", "schema": {"type": "integer", "default": 30, "maximum": 100}},
            {"name": "page", "in": "query", "schema": {"type": "integer", "default": 1}},
            {"name": "sort", "in": "query", "schema": {"type": "string", "enum": ["created", "updated"]}},
        ],
        "responses": {
            "200": {
                "description": "OK",
                "content": {"application/json": {"schema": {"type": "array", "items": item}}},
            }
        },
    }
    if method in ("post", "patch"):
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": copy.deepcopy(item)}},
        }
    return operation


def _synthetic_document(count: int, probe: dict[str, Any]) -> dict[str, Any]:
    """``count`` operations: the probe operation (copied from GitHub) plus synthetic ones."""
    paths: dict[str, Any] = {probe["path"]: {probe["method"]: probe["operation"]}}
    for index in range(count - 1):
        paths[f"/repos/{{owner}}/{{repo}}/synthetic/{index}"] = {
            ("get", "post", "patch", "delete")[index % 4]: _synthetic_operation(index)
        }
    return {
        "openapi": "3.0.3",
        "info": {"title": "synthetic", "version": "1"},
        "servers": [{"url": UPSTREAM}],
        "paths": paths,
        "components": probe["components"],
    }


def _probe(document: dict[str, Any]) -> dict[str, Any]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if isinstance(operation, dict) and operation.get("operationId") == PROBE_OPERATION:
                return {
                    "path": path,
                    "method": method,
                    "operation": operation,
                    "components": document.get("components", {}),
                }
    raise RuntimeError(f"{PROBE_OPERATION} not in the description")


def _disclosure_server(
    document: dict[str, Any], raw: bytes, http: httpx2.AsyncClient
) -> tuple[Any, SchemaDisclosureRegistry]:
    built = build_openapi_server(document, client=http, name="scale")
    origins = tool_disclosure_origins(built, SourceDigest.of(raw))
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools, max_results=5)
    built.server.add_transform(search)
    # As `agent-connector serve` does: from_openapi tools are never edited in place.
    registry = register_schema_resources(built.server, search, origins, frozen_schemas=True)
    built.server.resource(NOOP_URI, mime_type="application/json")(lambda: "{}")
    return built.server, registry


def _local_server(source: Any, source_registry: SchemaDisclosureRegistry) -> tuple[Any, Any]:
    """``source``'s tools, as its catalog lists them, re-added to a new server as plain local tools."""
    from fastmcp import FastMCP

    from tests.support.disclosure_servers import static_tool

    async def listed() -> list[Any]:
        async with Context(fastmcp=source) as ctx:
            return list(await source_registry.catalog.get_tool_catalog(ctx))

    server: FastMCP[Any] = FastMCP("local-scale")
    for tool in asyncio.run(listed()):
        server.add_tool(static_tool(tool.name, tool.parameters, output_schema=tool.output_schema))
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools, max_results=5)
    server.add_transform(search)
    origins = {alias: source_registry.origin(alias) for alias in source_registry.aliases()}
    registry = register_schema_resources(server, search, origins, frozen_schemas=True)  # type: ignore[arg-type]
    return server, registry


# ------------------------------------------------------------------------------------------------
# 1. Per-read cost vs catalog size (in process)
# ------------------------------------------------------------------------------------------------


async def _read_costs(
    server: Any, registry: SchemaDisclosureRegistry, repeat: int, exact_repeat: int
) -> dict[str, float]:
    async with Context(fastmcp=server) as ctx:
        catalog = await registry.catalog.get_tool_catalog(ctx)
        (tool,) = [t for t in catalog if t.name == PROBE_ALIAS]
        identity = SchemaIdentityMemo().identify(tool.parameters, tool.output_schema)
        manifest = manifest_uri(PROBE_ALIAS, identity.digests.schema_sha256)
        fragment = manifest.removesuffix("manifest") + "fragments/0"
        started = time.perf_counter()
        await registry.read(manifest)  # first read: builds the disclosure
        first = time.perf_counter() - started

        async def read_manifest() -> None:
            await registry.read(manifest)

        async def read_fragment() -> None:
            await registry.read(fragment)

        async def exact_fragment() -> None:
            await registry.read_exact(fragment)

        # The same reads without the frozen-schemas declaration (in-place edits caught exactly).
        unfrozen = SchemaDisclosureRegistry(server, registry.catalog)
        unfrozen.replace(PROBE_ALIAS, registry.origin(PROBE_ALIAS))  # type: ignore[arg-type]

        async def unfrozen_fragment() -> None:
            await unfrozen.read(fragment)

        await unfrozen_fragment()
        manifest_s, fragment_s, unfrozen_s = await best_of(
            repeat, [read_manifest, read_fragment, unfrozen_fragment]
        )
        (exact_s,) = await best_of(exact_repeat, [exact_fragment])
    return {
        "tools": len(catalog),
        "first": first,
        "manifest": manifest_s,
        "fragment": fragment_s,
        "exact": exact_s,
        "unfrozen": unfrozen_s,
        "fast": float(registry.fast_path_blocker() is None),
    }


def part_read_cost(description: Any, repeat: int) -> None:
    print("== 1. per-read cost vs catalog size (in process, FastMCP defaults on)")
    http = httpx2.AsyncClient(base_url=UPSTREAM)
    document = description.document
    probe = _probe(document)
    catalogs: list[tuple[str, dict[str, Any], bytes]] = [
        ("10 (GitHub subset)", _subset(document, 10, {PROBE_OPERATION}), description.raw),
        ("100 (GitHub subset)", _subset(document, 100, {PROBE_OPERATION}), description.raw),
        ("1,223 (GitHub, full)", document, description.raw),
    ]
    rows: list[tuple[str, dict[str, float], float]] = []
    for label, doc, raw in catalogs:
        started = time.perf_counter()
        server, registry = _disclosure_server(doc, raw, http)
        setup = time.perf_counter() - started
        rows.append(
            (
                label,
                asyncio.run(_read_costs(server, registry, repeat, 3 if "full" not in label else 2)),
                setup,
            )
        )
        del server, registry
        gc.collect()
    synthetic = _synthetic_document(10_000, probe)
    raw = json.dumps(synthetic).encode()
    started = time.perf_counter()
    server, registry = _disclosure_server(synthetic, raw, http)
    setup = time.perf_counter() - started
    rows.append(("10,000 (synthetic)", asyncio.run(_read_costs(server, registry, repeat, 1)), setup))
    # The same tools through FastMCP's LocalProvider (added with add_tool): its get_tool scans its
    # components, so this row shows FastMCP's own per-lookup cost at 10,000 local tools.
    started = time.perf_counter()
    local, local_registry = _local_server(server, registry)
    setup = time.perf_counter() - started
    del server, registry
    gc.collect()
    rows.append(("10,000 (LocalProvider)", asyncio.run(_read_costs(local, local_registry, repeat, 1)), setup))
    del local, local_registry
    gc.collect()
    base = rows[0][1]
    print(
        f"probe tool {PROBE_ALIAS}; best of {repeat}; frozen-schemas declared (as `serve` does); "
        "unfrozen = same fragment read without the declaration; exact = whole-catalog path"
    )
    print(
        f"{'catalog':>22} {'tools':>6} {'setup s':>8} {'1st read':>9} {'manifest':>9} {'fragment':>9} "
        f"{'x@10':>6} {'unfrozen':>9} {'exact frag':>11} {'path':>5}"
    )
    for label, row, setup in rows:
        print(
            f"{label:>22} {int(row['tools']):>6} {setup:>8.1f} {row['first'] * 1e3:>7.2f}ms "
            f"{row['manifest'] * 1e3:>7.3f}ms {row['fragment'] * 1e3:>7.3f}ms "
            f"{row['fragment'] / base['fragment']:>5.2f}x {row['unfrozen'] * 1e3:>7.3f}ms "
            f"{row['exact'] * 1e3:>9.1f}ms "
            f"{'fast' if row['fast'] else 'EXACT':>5}"
        )
    top = rows[-2][1]
    ratio = max(top["manifest"] / base["manifest"], top["fragment"] / base["fragment"])
    print(
        f"cost@10,000 / cost@10 (worse of manifest, fragment): {ratio:.2f}x (target <= {SCALE_TARGET}x) "
        f"{'OK' if ratio <= SCALE_TARGET else 'OVER TARGET'}"
    )


# ------------------------------------------------------------------------------------------------
# 2. Largest GitHub operation over loopback HTTP
# ------------------------------------------------------------------------------------------------


def _text_bytes(result: dict[str, Any]) -> int:
    return sum(len(block.get("text", "").encode("utf-8")) for block in result.get("content", []))


async def _measure_http(disclosure_url: str, inline_url: str, *, repeat: int, in_flight: int) -> None:
    pattern = f"^{LARGEST_ALIAS}"
    disclosure_client: Client[Any] = Client(disclosure_url)
    consumer = SchemaDisclosureConsumer(
        disclosure_client, scope=CallerScope("bench", disclosure_url), max_in_flight=in_flight
    )
    inline_client: Client[Any] = Client(inline_url)
    async with disclosure_client, inline_client:
        got: dict[str, Any] = {}

        async def select() -> None:
            got["entry_nav"] = await consumer.select(pattern, LARGEST_ALIAS)

        async def disclose() -> None:
            got["tool"] = await consumer.disclose(got["entry_nav"])

        async def via_inline() -> None:
            result = await inline_client.call_tool_mcp("search_tools", {"pattern": pattern})
            raw = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            (entry,) = json.loads(raw["content"][0]["text"])
            got["entry"], got["raw"] = entry, raw

        await select()  # warm: imports, validator caches, connections, the lazy build
        await disclose()
        await via_inline()
        reads = got["tool"].manifest.fragment_count + 1

        async def floor() -> None:
            limiter = asyncio.Semaphore(in_flight)

            async def one() -> None:
                async with limiter:
                    await disclosure_client.session.read_resource(NOOP_URI)

            await asyncio.gather(*(one() for _ in range(reads)))

        search_s, ours, inline, trips = await best_of(repeat, [select, disclose, via_inline, floor])
        tool, entry = got["tool"], got["entry"]
        if (tool.input_schema, tool.output_schema) != (entry["inputSchema"], entry.get("outputSchema")):
            raise RuntimeError("disclosure and inline search disagree on the schemas")
        search = await disclosure_client.call_tool_mcp("search_tools", {"pattern": pattern})
        navigation_bytes = _text_bytes(search.model_dump(mode="json", by_alias=True, exclude_none=True))
        inline_bytes = _text_bytes(got["raw"])
    manifest = tool.manifest
    print(
        f"operation {LARGEST_OPERATION}: {manifest.schema_bytes:,} canonical bytes, "
        f"{manifest.fragment_count} fragments; {in_flight} reads in flight; best of {repeat}\n"
        f"disclose (manifest + {manifest.fragment_count} fragment reads + reconstruct): {ours * 1e3:.1f} ms\n"
        f"protocol floor ({reads} no-op resource reads, same bound): {trips * 1e3:.1f} ms\n"
        f"ratio disclose/floor: {ours / trips:.2f}x (target <= {FLOOR_TARGET}x) "
        f"{'OK' if ours / trips <= FLOOR_TARGET else 'OVER TARGET'}\n"
        f"search (select: one search_tools call, navigation entries): {search_s * 1e3:.1f} ms\n"
        f"inline (one search_tools response with the schemas): {inline * 1e3:.1f} ms\n"
        f"search + disclose vs inline: {(search_s + ours) / inline:.2f}x; "
        f"vs search + floor: {(search_s + ours) / (search_s + trips):.2f}x\n"
        f"model context (search_tools result text): disclosure {navigation_bytes:,} bytes vs inline "
        f"{inline_bytes:,} bytes ({inline_bytes / navigation_bytes:.0f}x smaller)"
    )


async def _sweep_in_flight(url: str, repeat: int, bounds: tuple[int, ...]) -> None:
    """Disclose time of the largest operation per consumer read-concurrency bound (for its default)."""
    results: list[tuple[int, float, float]] = []
    for bound in bounds:
        client: Client[Any] = Client(url)
        consumer = SchemaDisclosureConsumer(client, scope=CallerScope("sweep", url), max_in_flight=bound)
        async with client:
            entry = await consumer.select(f"^{LARGEST_ALIAS}", LARGEST_ALIAS)
            await consumer.disclose(entry)
            reads = (entry.navigation.fragment_count or 0) + 1

            async def disclose(entry: Any = entry, consumer: Any = consumer) -> None:
                await consumer.disclose(entry)

            async def floor(client: Any = client, bound: int = bound, reads: int = reads) -> None:
                limiter = asyncio.Semaphore(bound)

                async def one() -> None:
                    async with limiter:
                        await client.session.read_resource(NOOP_URI)

                await asyncio.gather(*(one() for _ in range(reads)))

            ours, trips = await best_of(repeat, [disclose, floor])
        results.append((bound, ours, trips))
    print("consumer read concurrency (max_in_flight) sweep, same operation:")
    for bound, ours, trips in results:
        print(f"  {bound:>3} in flight: disclose {ours * 1e3:8.1f} ms, floor {trips * 1e3:8.1f} ms")


def part_http(description: Any, repeat: int, in_flight: int, sweep: bool = False) -> None:
    print("\n== 2. disclosing the largest GitHub operation over loopback HTTP (FastMCP defaults on)")
    http = httpx2.AsyncClient(base_url=UPSTREAM)
    server, _ = _disclosure_server(description.document, description.raw, http)
    inline = build_openapi_server(description.document, client=http, name="inline")
    inline.server.add_transform(RegexSearchTransform(max_results=5))
    with (
        serve_asgi(server.http_app(stateless_http=True)) as disclosure_url,
        serve_asgi(inline.server.http_app(stateless_http=True)) as inline_url,
    ):
        asyncio.run(_measure_http(disclosure_url, inline_url, repeat=repeat, in_flight=in_flight))
        if sweep:
            asyncio.run(_sweep_in_flight(disclosure_url, max(repeat, 5), (1, 2, 4, 8, 16, 32)))


# ------------------------------------------------------------------------------------------------
# 3. Start-up: time to first answer and RSS, fresh processes
# ------------------------------------------------------------------------------------------------

_PLAIN_FASTMCP = """
import json, sys
import httpx2, uvicorn
from fastmcp import FastMCP
from fastmcp.server.transforms.search import RegexSearchTransform
document = json.loads(open(sys.argv[1], "rb").read())
server = FastMCP.from_openapi(document, client=httpx2.AsyncClient(base_url="http://127.0.0.1:9"))
server.add_transform(RegexSearchTransform())
app = server.http_app(stateless_http=True)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (robust to other load on a shared machine)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


async def _first_answer(url: str, deadline: float) -> None:
    while True:
        try:
            async with Client(url) as client:
                await client.call_tool_mcp("search_tools", {"pattern": f"^{PROBE_ALIAS}"})
                return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


def _startup(command: list[str], port: int) -> tuple[float, float, int]:
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        asyncio.run(_first_answer(f"http://127.0.0.1:{port}/mcp", started + 600))
        elapsed = time.monotonic() - started
        return elapsed, _cpu_seconds(process.pid), _rss_bytes(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)


def part_startup(description: Any, repeat: int) -> None:
    print("\n== 3. start-up on the full GitHub description (fresh process each; first answered search_tools)")
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "github.json"
        path.write_bytes(description.raw)
        cli = str(Path(sys.executable).with_name("agent-connector"))
        best: dict[str, list[float]] = {}
        for _ in range(repeat):
            for label in ("plain FastMCP", "agent-connector serve"):
                port = _free_port()
                command = (
                    [sys.executable, "-c", _PLAIN_FASTMCP, str(path), str(port)]
                    if label == "plain FastMCP"
                    else [cli, "serve", "--openapi", str(path), "--port", str(port), "--upstream", UPSTREAM]
                )
                measured = _startup(command, port)
                kept = best.get(label, [float("inf")] * 3)
                best[label] = [min(a, b) for a, b in zip(kept, measured, strict=True)]
    plain, ours = best["plain FastMCP"], best["agent-connector serve"]
    print(f"{'':>24} {'first answer':>13} {'CPU':>9} {'RSS':>9}   (best of {repeat}, interleaved)")
    for label, (wall, cpu, rss) in (("plain FastMCP", plain), ("agent-connector serve", ours)):
        print(f"{label:>24} {wall:>11.2f} s {cpu:>7.2f} s {rss / 2**20:>6.0f} MB")
    wall_ratio, cpu_ratio, rss_ratio = (a / b for a, b in zip(ours, plain, strict=True))
    print(
        f"ratio time to first answer {wall_ratio:.2f}x (CPU time {cpu_ratio:.2f}x, robust to machine load), "
        f"RSS {rss_ratio:.2f}x (target <= {STARTUP_TARGET}x each) "
        f"{'OK' if max(wall_ratio, rss_ratio) <= STARTUP_TARGET else 'OVER TARGET'}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--startup-repeat", type=int, default=2)
    parser.add_argument("--skip-startup", action="store_true")
    parser.add_argument("--sweep-in-flight", action="store_true", help="also time the consumer's bounds")
    parser.add_argument("--only", choices=["reads", "http", "startup"])
    args = parser.parse_args(argv)
    description = load_github_description()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    if args.only in (None, "reads"):
        part_read_cost(description, args.repeat)
    if args.only in (None, "http"):
        part_http(description, args.repeat, args.in_flight, args.sweep_in_flight)
    if args.only in (None, "startup") and not args.skip_startup:
        part_startup(description, args.startup_repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
