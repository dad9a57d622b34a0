"""Real data: every operation of the committed GitHub extract round-trips through a disclosure.

The extract (package data ``agent_connector_sdk/connectors/data/github_extract.json``) is a valid
OpenAPI document copied verbatim from the pinned ``@octokit/openapi`` package;
``python -m scripts.github_openapi extract --check`` proves it is current. Tool schemas come from
FastMCP's own OpenAPI conversion (input = parameters + request body, output = the 2xx JSON response)
exactly as ``tools/list`` shows them, and the source bytes are the extract's own bytes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from typing import Any

import pytest

from agent_connector_sdk.connectors import OpenAPIOperationTool, load_github_extract, openapi_operation_tools
from agent_connector_sdk.core.schema_disclosure import (
    SchemaDisclosure,
    SchemaDisclosureError,
    SourceDigest,
    build_schema_disclosure,
    read_schema_fragment,
    reconstruct_schema,
)
from scripts import github_openapi

TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


@pytest.fixture(scope="module")
def extract_bytes() -> bytes:
    return load_github_extract().raw


@pytest.fixture(scope="module")
def tools(extract_bytes: bytes) -> dict[str, OpenAPIOperationTool]:
    listed = asyncio.run(openapi_operation_tools(json.loads(extract_bytes)))
    return {tool.operation: tool for tool in listed}


@pytest.fixture(scope="module")
def disclosures(extract_bytes: bytes, tools: dict[str, OpenAPIOperationTool]) -> dict[str, SchemaDisclosure]:
    source = SourceDigest.of(extract_bytes)
    return {
        operation: build_schema_disclosure(
            operation=operation,
            alias=tool.alias,
            source=source,
            input_schema=tool.input_schema,
            output_schema=tool.output_schema,
        )
        for operation, tool in tools.items()
    }


def test_the_extract_is_small_and_records_its_provenance(extract_bytes: bytes) -> None:
    document = json.loads(extract_bytes)
    assert len(extract_bytes) < 1_000_000
    assert document["openapi"].startswith("3.")
    meta = document["x-agent-connector-extract"]
    assert meta["package"] == github_openapi.PACKAGE
    assert meta["version"] == github_openapi.VERSION
    assert meta["tarball_sha256"] == github_openapi.TARBALL_SHA256
    assert meta["document_sha256"] == github_openapi.DOCUMENT_SHA256
    assert meta["document_operation_count"] == github_openapi.OPERATION_COUNT == 1223
    assert meta["operations"] == list(github_openapi.EXTRACT_OPERATIONS)
    assert github_openapi.count_operations(document) == len(github_openapi.EXTRACT_OPERATIONS)
    assert github_openapi.LARGEST_OPERATION in meta["operations"]
    # The file is exactly what the extract command writes, so --check can detect drift.
    assert github_openapi.encode_extract(document) == extract_bytes


def test_every_operation_is_a_tool_with_a_safe_alias(tools: dict[str, OpenAPIOperationTool]) -> None:
    assert set(tools) == set(github_openapi.EXTRACT_OPERATIONS)
    assert all(TOOL_NAME.fullmatch(tool.alias) for tool in tools.values())
    assert len({tool.alias for tool in tools.values()}) == len(tools)


def test_every_operation_round_trips_fragment_by_fragment(
    extract_bytes: bytes,
    tools: dict[str, OpenAPIOperationTool],
    disclosures: dict[str, SchemaDisclosure],
) -> None:
    source_sha256 = hashlib.sha256(extract_bytes).hexdigest()
    for operation, disclosure in disclosures.items():
        manifest = disclosure.manifest
        assert manifest.operation == operation
        assert manifest.alias == tools[operation].alias
        assert manifest.source_sha256 == source_sha256
        fragments = [read_schema_fragment(disclosure, str(index)) for index in range(manifest.fragment_count)]
        for fragment in fragments:
            assert len(fragment.text.encode("utf-8")) <= 4096
        assert sum(len(f.text.encode("utf-8")) for f in fragments) == manifest.schema_bytes
        assert reconstruct_schema(manifest, fragments) == {
            "inputSchema": tools[operation].input_schema,
            "outputSchema": tools[operation].output_schema,
        }


def test_the_largest_operation_is_large_and_fills_many_full_fragments(
    disclosures: dict[str, SchemaDisclosure],
) -> None:
    largest = disclosures[github_openapi.LARGEST_OPERATION]
    manifest = largest.manifest
    assert manifest.schema_bytes == max(d.manifest.schema_bytes for d in disclosures.values())
    assert manifest.schema_bytes > 400_000
    assert manifest.fragment_count == -(-manifest.schema_bytes // 4096) >= 100
    # Fragments are filled as full as possible: all but the last, up to a code point's width.
    assert all(len(f.text.encode("utf-8")) > 4096 - 4 for f in largest.fragments[:-1])


def test_bytes_and_a_precomputed_source_digest_build_the_same_disclosure(
    extract_bytes: bytes, tools: dict[str, OpenAPIOperationTool], disclosures: dict[str, SchemaDisclosure]
) -> None:
    tool = tools[github_openapi.LARGEST_OPERATION]
    from_bytes = build_schema_disclosure(
        operation=tool.operation,
        alias=tool.alias,
        source=extract_bytes,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
    )
    assert from_bytes == disclosures[github_openapi.LARGEST_OPERATION]


@pytest.mark.parametrize(
    ("mutate", "category"),
    [
        (lambda f, other: [f[1], f[0], *f[2:]], "reordered"),
        (lambda f, other: f[:-1], "incomplete"),
        (lambda f, other: [*f[:50], other[0], *f[51:]], "mixed_operation"),
    ],
    ids=["swap", "drop-last", "splice-other-operation"],
)
def test_mutated_real_disclosures_are_refused(
    disclosures: dict[str, SchemaDisclosure], mutate: Any, category: str
) -> None:
    largest = disclosures[github_openapi.LARGEST_OPERATION]
    other = disclosures["issues/create-comment"]
    with pytest.raises(SchemaDisclosureError) as refused:
        reconstruct_schema(largest.manifest, mutate(list(largest.fragments), list(other.fragments)))
    assert refused.value.category == category
