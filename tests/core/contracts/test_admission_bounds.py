"""Admission bounds: tool names, descriptor size and depth, x-mcp-header name length and count.

Each bad descriptor is rejected alone, with its category and a reason naming the bound; neighbours
are admitted.
"""

from __future__ import annotations

from typing import Any

import pytest

from agent_connector_sdk.core.contracts import MAX_TOOL_NAME_LENGTH, AdmissionPolicy, admit_tools

GOOD = {"name": "good", "inputSchema": {"type": "object"}}


def _tool(name: str, **schema: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", **schema}}


def _one_rejected(bad: Any, policy: AdmissionPolicy | None = None) -> dict[str, Any]:
    report = admit_tools([GOOD, bad, {**GOOD, "name": "also_good"}], policy)
    assert list(report.admitted) == ["good", "also_good"]
    (rejection,) = report.rejected
    assert rejection["index"] == 1
    return dict(rejection)


@pytest.mark.parametrize(
    "name",
    [
        "crlf\r\nX-Evil: 1",
        "esc\x1b[31m",
        "bell\x07",
        "bidi\u202eevil",
        "lrm\u200e",
        "del\x7f",
        "c1\x9b",
        "x" * 129,
    ],
)
def test_a_bad_tool_name_is_rejected_alone(name: str) -> None:
    rejection = _one_rejected(_tool(name))
    assert rejection["category"] == "malformed"
    assert "name" in rejection["reason"] and name not in rejection["reason"]


def test_names_up_to_128_characters_and_non_ascii_letters_are_admitted() -> None:
    report = admit_tools([_tool("x" * MAX_TOOL_NAME_LENGTH), _tool("zürich")])
    assert not report.rejected


def test_an_empty_name_stays_malformed() -> None:
    assert _one_rejected(_tool(""))["category"] == "malformed"


def _deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_a_10000_level_schema_is_refused_by_the_depth_bound_not_a_recursion_error() -> None:
    rejection = _one_rejected({"name": "deep", "inputSchema": _deep(10_000)})
    assert rejection["category"] == "invalid_schema"
    assert "max_schema_depth (64)" in rejection["reason"]


def test_depth_within_the_bound_is_admitted_and_the_bound_is_a_policy_field() -> None:
    tool = {"name": "nested", "inputSchema": _deep(20)}
    assert not admit_tools([tool]).rejected
    rejection = _one_rejected(tool, AdmissionPolicy(max_schema_depth=10))
    assert "max_schema_depth (10)" in rejection["reason"]


def test_a_descriptor_over_the_size_bound_is_rejected_alone() -> None:
    big = _tool("big", description="d" * 2_000_000)
    rejection = _one_rejected({**big, "description": "d" * 2_000_000})
    assert rejection["category"] == "malformed"
    assert "max_descriptor_bytes (1048576)" in rejection["reason"]
    # Non-ASCII text counts in UTF-8 bytes.
    policy = AdmissionPolicy(max_descriptor_bytes=1_000)
    assert not admit_tools([_tool("small", description="é" * 400)], policy).rejected
    assert _one_rejected(_tool("wide", description="é" * 600), policy)["category"] == "malformed"


def _annotated(count: int, name_length: int = 8) -> dict[str, Any]:
    properties = {
        f"p{i}": {"type": "string", "x-mcp-header": f"H{i}".ljust(name_length, "x")} for i in range(count)
    }
    return _tool("mirrors", properties=properties)


def test_mirrored_headers_per_tool_are_bounded() -> None:
    assert not admit_tools([_annotated(32)]).rejected
    rejection = _one_rejected(_annotated(5_000))
    assert rejection["category"] == "invalid_header_annotation"
    assert "max_mirrored_headers (32)" in rejection["reason"]


def test_header_names_are_bounded() -> None:
    assert not admit_tools([_annotated(1, 64)]).rejected
    rejection = _one_rejected(_annotated(1, 100_000))
    assert rejection["category"] == "invalid_header_annotation"
    assert "max_header_name_length (64)" in rejection["reason"]
    assert len(rejection["reason"]) < 200


def test_default_header_bounds_keep_the_header_block_under_8_kib() -> None:
    policy = AdmissionPolicy()
    # "Mcp-Param-" + name + ": " + a base64-wrapped value of a short argument, per header.
    per_header = len("Mcp-Param-") + policy.max_header_name_length + 2 + 2 + 64 + 2
    assert policy.max_mirrored_headers * per_header < 8 * 1024


@pytest.mark.parametrize(
    "field", ["max_descriptor_bytes", "max_schema_depth", "max_header_name_length", "max_mirrored_headers"]
)
def test_bounds_must_be_positive(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        bounds: dict[str, Any] = {field: 0}
        AdmissionPolicy(**bounds)
