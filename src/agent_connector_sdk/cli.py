"""``agent-connector``: the thin command line over the SDK (parse arguments, print, exit codes).

* ``disclose`` — build and verify schema disclosures for every operation of an OpenAPI document
  (default: the embedded GitHub extract). The main job: no network, no arguments needed.
* ``serve`` — serve an OpenAPI document's operations as MCP tools over Streamable HTTP, hidden behind
  a ``RegexSearchTransform`` with schema disclosure resources and the contract gates on.
* ``review`` — connect to an MCP server as a host would: page ``tools/list`` and run admission, then
  print what was admitted and why anything was rejected.

Exit codes: 0 success; 1 a finding (``review`` rejected a tool, ``disclose`` failed to verify);
2 usage, input or connection errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from agent_connector_sdk.connectors.github_extract import (
    OpenAPISource,
    load_github_extract,
    load_openapi_source,
)
from agent_connector_sdk.connectors.openapi import (
    build_openapi_server,
    build_tool_disclosures,
    tool_disclosure_origins,
)
from agent_connector_sdk.mcp.schema_disclosure import (
    SchemaDisclosure,
    SchemaDisclosureError,
    SourceDigest,
    reconstruct_schema,
)

__all__ = ["build_serve_app", "main", "main_exit"]


def _load_source(path: str | None) -> OpenAPISource:
    if path is None:
        return load_github_extract()
    return load_openapi_source(Path(path).read_bytes())


async def _disclosures(source: OpenAPISource, upstream: str | None = None) -> tuple[Any, dict[str, Any]]:
    openapi = build_openapi_server(source.document, base_url=upstream)
    disclosures = await build_tool_disclosures(openapi, SourceDigest.of(source.raw))
    return openapi, disclosures


def _verify(disclosure: SchemaDisclosure) -> str | None:
    try:
        reconstruct_schema(disclosure.manifest, disclosure.fragments)
    except SchemaDisclosureError as error:
        return error.category
    return None


def _cmd_disclose(args: argparse.Namespace, out: TextIO) -> int:
    source = _load_source(args.openapi)

    async def run() -> dict[str, SchemaDisclosure]:
        openapi, disclosures = await _disclosures(source)
        await openapi.aclose()
        return disclosures

    disclosures = asyncio.run(run())
    selected = {
        alias: d
        for alias, d in disclosures.items()
        if args.operation is None or args.operation in (alias, d.manifest.operation)
    }
    if not selected:
        print(f"no operation or tool named {args.operation!r}", file=sys.stderr)
        return 2
    failures = {alias: _verify(d) for alias, d in selected.items()}
    if args.json:
        report = [
            {"manifest": d.manifest.model_dump(), "verified": failures[alias] is None}
            for alias, d in selected.items()
        ]
        json.dump(report, out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        print(f"source sha256 {SourceDigest.of(source.raw).sha256}  ({len(source.raw):,} bytes)", file=out)
        print(f"{'tool (alias)':<40} {'schema bytes':>12} {'fragments':>9}  schema sha256", file=out)
        for alias, d in selected.items():
            verdict = "verified" if failures[alias] is None else f"FAILED: {failures[alias]}"
            m = d.manifest
            print(
                f"{alias:<40} {m.schema_bytes:>12,} {m.fragment_count:>9}  "
                f"{m.schema_sha256[:16]}…  {verdict}",
                file=out,
            )
        total = sum(d.manifest.fragment_count for d in selected.values())
        print(
            f"{len(selected)} tools, {total} fragments of at most 4,096 bytes, each reconstructed", file=out
        )
    return 1 if any(failures.values()) else 0


def build_serve_app(source: OpenAPISource, *, upstream: str | None = None) -> tuple[Any, int]:
    """The ASGI app ``serve`` runs, and its tool count: every operation a tool hidden behind a
    ``RegexSearchTransform`` whose results are navigation entries, disclosure resources registered,
    and the contract gates on (stateless Streamable HTTP)."""
    from fastmcp.server.transforms.search import RegexSearchTransform

    from agent_connector_sdk.mcp.schema_disclosure_provider import (
        describe_schema_tools,
        register_schema_resources,
    )
    from agent_connector_sdk.mcp.server import gated_http_app

    openapi = build_openapi_server(source.document, base_url=upstream)
    # Lazy: each disclosure is built on its first read, from the schemas that read sees.
    disclosures = tool_disclosure_origins(openapi, SourceDigest.of(source.raw))
    server = openapi.server
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    server.add_transform(search)
    # from_openapi tools are never edited in place: reads may memoize on the schema objects.
    register_schema_resources(server, search, disclosures, frozen_schemas=True)
    return gated_http_app(server, stateless_http=True), len(disclosures)


def _cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    import uvicorn

    app, count = build_serve_app(_load_source(args.openapi), upstream=args.upstream)
    print(f"serving {count} tools at http://{args.host}:{args.port}/mcp", file=out, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def _cmd_review(args: argparse.Namespace, out: TextIO) -> int:
    import fastmcp

    from agent_connector_sdk.mcp.client import ContractClient, ProtocolError
    from agent_connector_sdk.mcp.contracts import AdmissionPolicy, ContractError

    async def run() -> int:
        async with ContractClient(
            fastmcp.Client(args.url), policy=AdmissionPolicy(profile=args.profile)
        ) as host:
            report = await host.discover_tools()
            pages = len(host.cursor_trace)
        print(f"{len(report.admitted)} admitted, {len(report.rejected)} rejected, {pages} pages", file=out)
        for name in report.admitted:
            print(f"  admitted  {name}", file=out)
        for rejection in report.rejected:
            print(
                f"  rejected  {rejection['tool']}: {rejection['category']} — {rejection['reason']}", file=out
            )
        return 1 if report.rejected else 0

    try:
        return asyncio.run(run())
    except (ContractError, ProtocolError) as error:
        category = getattr(error, "category", type(error).__name__)
        print(f"review failed: {category}: {error}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-connector", description=__doc__.splitlines()[0] if __doc__ else ""
    )
    commands = parser.add_subparsers(dest="command", required=True)
    disclose = commands.add_parser(
        "disclose", help="build and verify schema disclosures (default: GitHub extract)"
    )
    disclose.add_argument("--openapi", help="OpenAPI JSON file (default: the embedded GitHub extract)")
    disclose.add_argument("--operation", help="only this operation ID or tool name")
    disclose.add_argument("--json", action="store_true", help="print manifests as JSON")
    disclose.set_defaults(run=_cmd_disclose)
    serve = commands.add_parser("serve", help="serve OpenAPI operations as gated MCP tools behind search")
    serve.add_argument("--openapi", help="OpenAPI JSON file (default: the embedded GitHub extract)")
    serve.add_argument("--upstream", help="base URL the tools call (default: the document's first server)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.set_defaults(run=_cmd_serve)
    review = commands.add_parser("review", help="discover and admit a server's tools as a host would")
    review.add_argument("url", help="Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp")
    review.add_argument(
        "--profile", choices=("strict", "spec"), default="strict", help="x-mcp-header placement"
    )
    review.set_defaults(run=_cmd_review)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the CLI; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        code: int = args.run(args, out if out is not None else sys.stdout)
    except (OSError, ValueError) as error:  # unreadable file, not JSON/OpenAPI, bad disclosure input
        print(f"agent-connector: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    return code


def main_exit() -> None:
    """Console-script entry point (``agent-connector``)."""
    sys.exit(main())


if __name__ == "__main__":
    main_exit()
