"""Demo: build, print and reconstruct a disclosure of an embedded tool schema.

``python -m agent_connector_sdk.mcp.schema_disclosure`` — no arguments, no network.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from agent_connector_sdk.mcp.schema_disclosure import (
    SourceDigest,
    build_schema_disclosure,
    read_schema_fragment,
    reconstruct_schema,
)

# A small, realistic default: a search tool whose description carries non-ASCII text, so fragments
# visibly cut between code points rather than inside them.
_SOURCE = b"embedded demo source: agent-connector-sdk schema disclosure"
_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Search text — any language: 検索, поиск, بحث. " * 200},
        "region": {"type": "string", "x-mcp-header": "Region"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    },
    "required": ["query"],
}
_OUTPUT_SCHEMA: dict[str, Any] = {"type": "array", "items": {"type": "object"}}


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(
        prog="python -m agent_connector_sdk.mcp.schema_disclosure",
        description="Build, print and reconstruct the disclosure of an embedded demo tool schema "
        "(no arguments, no network). For real documents use `agent-connector disclose`.",
    ).parse_args(argv)
    disclosure = build_schema_disclosure(
        operation="search/query",
        alias="search_query",
        source=SourceDigest.of(_SOURCE),
        input_schema=_INPUT_SCHEMA,
        output_schema=_OUTPUT_SCHEMA,
    )
    manifest = disclosure.manifest
    print("manifest:")
    print(json.dumps(manifest.model_dump(), indent=2, ensure_ascii=False))
    print(f"\n{manifest.fragment_count} fragments of the {manifest.schema_bytes}-byte document:")
    fragments = []
    for index in range(manifest.fragment_count):
        fragment = read_schema_fragment(disclosure, str(index))
        fragments.append(fragment)
        size = len(fragment.text.encode("utf-8"))
        uri = manifest.fragment_uri_template.replace("{index}", str(index))
        print(f"  {uri}  {size:5d} bytes  sha256={fragment.fragment_sha256[:16]}…")
    document = reconstruct_schema(manifest, fragments)
    intact = document == {"inputSchema": _INPUT_SCHEMA, "outputSchema": _OUTPUT_SCHEMA}
    print(f"\nreconstructed and verified against the manifest: {'intact' if intact else 'MISMATCH'}")
    return 0 if intact else 1


if __name__ == "__main__":
    sys.exit(main())
