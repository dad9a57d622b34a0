"""The ``Mcp-Param-*`` codec, typed header text, annotation reading, and the build/validate pair."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.shared import inbound

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.core.contracts import (
    MAX_SAFE_INTEGER,
    build_parameter_headers,
    decode_header_value,
    encode_header_value,
    header_annotations,
    header_text,
    validate_parameter_headers,
)
from agent_connector_sdk.core.contracts.errors import AdmissionError, HeaderMismatch, HeaderValueError


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


# ------------------------------------------------------------------------------------------ encode


@pytest.mark.parametrize("text", ["eu-west-1", "A", "!#$%&'*+-.^_`|~", "a=?base64?b", "=?BASE64?SGVsbG8=?="])
def test_visible_ascii_stays_plain(text: str) -> None:
    assert encode_header_value(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "",  # stricter than the spec: an empty field can be dropped by proxies
        " ",
        "inner space",  # stricter than the spec: intermediaries fold/collapse inner whitespace
        "tab\there",
        "line\nbreak",
        "crlf\r\nInjected: yes",
        " leading",
        "trailing ",
        "Zürich",
        "東京",
        "\x00nul",
        "del\x7f",
        "=?base64?SGVsbG8=?=",
        "=?base64?",
    ],
)
def test_everything_else_is_base64_of_exact_utf8(text: str) -> None:
    assert encode_header_value(text) == b64(text)


def test_empty_string_encodes_to_empty_sentinel() -> None:
    assert encode_header_value("") == "=?base64??="
    assert decode_header_value("=?base64??=") == ""


def test_lone_surrogate_refused() -> None:
    with pytest.raises(HeaderValueError) as refusal:
        encode_header_value("\ud800")
    assert refusal.value.category == "malformed"


# ------------------------------------------------------------------------------------------ decode


@pytest.mark.parametrize(
    ("wire", "text"),
    [
        ("=?base64?SGVsbG8=?=", "Hello"),
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),  # missing suffix: literal
        ("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?="),  # case-sensitive prefix: literal
        ("=?base64?=", "=?base64?="),  # prefix and suffix overlap: literal
        ("inner space", "inner space"),  # spec-conformant peers send it plain
        ("a\tb", "a\tb"),  # the spec allows inner tab in plain values
        ("", ""),  # the spec sends the empty string plain
        ("eu-west-1", "eu-west-1"),
    ],
)
def test_decode_accepts(wire: str, text: str) -> None:
    assert decode_header_value(wire) == text


@pytest.mark.parametrize(
    "wire",
    [
        "=?base64?SGVsbG8?=",  # bad padding
        "=?base64?SGVsbG8===?=",  # excess padding
        "=?base64?SGV sbG8=?=",  # non-alphabet
        "=?base64?SGVs\nbG8=?=",
        "=?base64?SGVs\tbG8=?=",  # a tab is fine in plain values, never inside a sentinel
        "=?base64?SGVsbG9=?=",  # non-canonical: non-zero trailing bits
        "=?base64?/w==?=",  # invalid UTF-8
        "=?base64?wq?=",
        "=?base64?é?=",  # non-ASCII payload (the SDK raises a bare ValueError here)
        "Zürich",  # plain non-ASCII
        "a\nb",  # plain control characters
        "a\x00b",
        "a\x7fb",
        " lead",  # plain edge whitespace: HTTP strips it, so what arrived may not be what was sent
        "trail\t",
    ],
)
def test_decode_refuses(wire: str) -> None:
    with pytest.raises(HeaderValueError) as refusal:
        decode_header_value(wire)
    assert refusal.value.category == "malformed"
    assert wire not in refusal.value.message


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_round_trip_and_visible_ascii(text: str) -> None:
    wire = encode_header_value(text)
    assert decode_header_value(wire) == text
    assert wire and all("!" <= char <= "~" for char in wire)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_sdk_decodes_what_we_encode(text: str) -> None:
    # Our encoding is a subset of the spec's, so a spec-conformant server (the SDK) reads it back exactly.
    assert inbound.decode_header_value(encode_header_value(text)) == text


# ------------------------------------------------------------------------------------- header_text


@pytest.mark.parametrize(
    ("value", "declared", "text"),
    [
        (True, "boolean", "true"),
        (False, "boolean", "false"),
        (0, "integer", "0"),
        (-12, "integer", "-12"),
        (MAX_SAFE_INTEGER, "integer", "9007199254740991"),
        (-MAX_SAFE_INTEGER, "integer", "-9007199254740991"),
        (3.0, "integer", "3"),
        (-0.0, "integer", "0"),
        (9007199254740991.0, "integer", "9007199254740991"),
        ("  as is\n", "string", "  as is\n"),
        ("", "string", ""),
    ],
)
def test_header_text(value: Any, declared: str, text: str) -> None:
    assert header_text(value, declared) == text


@pytest.mark.parametrize(
    "value", [MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1, 2**64, 1e300, 9007199254740992.0]
)
def test_header_text_out_of_range_never_rounded(value: Any) -> None:
    with pytest.raises(HeaderValueError) as refusal:
        header_text(value, "integer")
    assert refusal.value.category == "out_of_range"


@pytest.mark.parametrize(
    ("value", "declared"),
    [
        (True, "integer"),
        (1, "boolean"),
        ("1", "integer"),
        (1, "string"),
        (1.5, "integer"),
        (float("nan"), "integer"),
        (float("inf"), "integer"),
        (None, "string"),
        ({"a": 1}, "string"),
        (1.0, "number"),
        ("x", "number"),
    ],
)
def test_header_text_type_mismatch(value: Any, declared: str) -> None:
    with pytest.raises(HeaderValueError) as refusal:
        header_text(value, declared)
    assert refusal.value.category == "type_mismatch"


# ------------------------------------------------------------------------------ annotation reading


def tool(properties: dict[str, Any], **schema: Any) -> dict[str, Any]:
    return {"name": "route", "inputSchema": {"type": "object", "properties": properties, **schema}}


ROUTE = tool(
    {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "dry_run": {"type": "boolean", "x-mcp-header": "Dry-Run"},
        "note": {"type": "string"},
    }
)


def test_annotations_in_document_order() -> None:
    found = header_annotations(ROUTE["inputSchema"])
    assert [(a.header, a.path, a.type, a.pointer) for a in found] == [
        ("Mcp-Param-Region", ("region",), "string", "/properties/region"),
        ("Mcp-Param-Count", ("count",), "integer", "/properties/count"),
        ("Mcp-Param-Dry-Run", ("dry_run",), "boolean", "/properties/dry_run"),
    ]


def test_nested_annotation_spec_vs_strict() -> None:
    schema = {
        "type": "object",
        "properties": {
            "target": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}}
        },
    }
    assert [a.path for a in header_annotations(schema, placement="spec")] == [("target", "zone")]
    with pytest.raises(AdmissionError) as refusal:
        header_annotations(schema, placement="strict")
    assert refusal.value.category == "invalid_header_annotation"
    assert "/properties/target/properties/zone" in refusal.value.message


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "oneOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]},
        {
            "type": "object",
            "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}},
        },
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"type": "string", "x-mcp-header": "A"}},
        },
        {"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}},
        {"type": "object", "properties": {"a": {"type": ["string", "null"], "x-mcp-header": "A"}}},
        {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Region\r\nInjected"}}},
        {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": ""}}},
        {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": 7}}},
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "R"},
                "b": {"type": "string", "x-mcp-header": "r"},
            },
        },
        {"type": "object", "x-mcp-header": "Root"},
    ],
)
def test_invalid_annotations_refused_under_spec_placement(schema: dict[str, Any]) -> None:
    with pytest.raises(AdmissionError) as refusal:
        header_annotations(schema)
    assert refusal.value.category == "invalid_header_annotation"
    assert "Injected" not in refusal.value.message


def test_data_keywords_are_not_schemas() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string", "const": {"x-mcp-header": "NotASchema"}, "default": "x"}},
        "examples": [{"x-mcp-header": "Nope"}],
    }
    assert header_annotations(schema) == ()


# ---------------------------------------------------------------------------------------- build


def test_build_one_header_per_present_non_null_argument() -> None:
    audit: list[dict[str, Any]] = []
    headers = build_parameter_headers(
        ROUTE, {"region": "Zürich", "count": 3, "dry_run": None, "note": "n"}, audit=audit.append
    )
    assert headers == {"Mcp-Param-Region": b64("Zürich"), "Mcp-Param-Count": "3"}
    assert audit == [
        {
            "gate": "invoke",
            "event": "parameter_headers_built",
            "tool": "route",
            "headers": ["Mcp-Param-Region", "Mcp-Param-Count"],
            "base64_encoded": ["Mcp-Param-Region"],
        }
    ]


def test_build_refuses_out_of_range_and_wrong_type() -> None:
    with pytest.raises(HeaderValueError) as refusal:
        build_parameter_headers(ROUTE, {"region": "eu", "count": MAX_SAFE_INTEGER + 1})
    assert refusal.value.category == "out_of_range"
    with pytest.raises(HeaderValueError) as refusal:
        build_parameter_headers(ROUTE, {"region": "eu", "dry_run": "yes"})
    assert refusal.value.category == "type_mismatch"


def test_build_nested_argument() -> None:
    nested = tool(
        {"target": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}}}
    )
    assert build_parameter_headers(nested, {"target": {"zone": "a b"}}) == {"Mcp-Param-Zone": b64("a b")}
    assert build_parameter_headers(nested, {"target": "not an object"}) == {}


def test_audit_never_holds_values() -> None:
    audit: list[dict[str, Any]] = []
    secret = "private-λ\n"
    headers = build_parameter_headers(ROUTE, {"region": secret}, audit=audit.append)
    validate_parameter_headers(ROUTE, {"region": secret}, headers, audit=audit.append)
    with pytest.raises(HeaderMismatch):
        validate_parameter_headers(
            ROUTE, {"region": secret}, {"Mcp-Param-Region": "private-x"}, audit=audit.append
        )
    dumped = json.dumps(audit, ensure_ascii=False)
    assert "private" not in dumped
    assert "λ" not in dumped
    assert audit[-1] == {
        "gate": "execute",
        "event": "parameter_headers_refused",
        "tool": "route",
        "header": "Mcp-Param-Region",
        "category": "mismatched",
    }


def test_audit_is_the_one_callable_sink_convention() -> None:
    """Both header functions take ``audit`` as a callable sink (keyword only), like every other gate:
    a :class:`BoundedAuditSink` receives the Invoke and the Execute events; a list passed in the old
    append position is refused at the call, never half-used."""
    sink = BoundedAuditSink(maxlen=4)
    headers = build_parameter_headers(ROUTE, {"region": "eu"}, audit=sink)
    validate_parameter_headers(ROUTE, {"region": "eu"}, headers, audit=sink)
    assert [event["event"] for event in sink] == ["parameter_headers_built", "parameter_headers_accepted"]
    with pytest.raises(TypeError):
        build_parameter_headers(ROUTE, {"region": "eu"}, [])  # type: ignore[call-arg, arg-type]
    with pytest.raises(TypeError):
        validate_parameter_headers(ROUTE, {"region": "eu"}, headers, [])  # type: ignore[call-arg, arg-type]


# ------------------------------------------------------------------------------------- validate


@settings(max_examples=100, deadline=None)
@given(
    region=st.text(),
    count=st.none() | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
    dry_run=st.none() | st.booleans(),
)
def test_what_build_emits_validate_accepts(region: str, count: int | None, dry_run: bool | None) -> None:
    arguments = {"region": region, "count": count, "dry_run": dry_run}
    headers = build_parameter_headers(ROUTE, arguments)
    validate_parameter_headers(ROUTE, arguments, headers)
    validate_parameter_headers(ROUTE, arguments, [(name.upper(), value) for name, value in headers.items()])


def refusal(arguments: dict[str, Any], headers: Any) -> HeaderMismatch:
    with pytest.raises(HeaderMismatch) as caught:
        validate_parameter_headers(ROUTE, arguments, headers)
    return caught.value


VALIDATE_REFUSALS: list[tuple[dict[str, Any], Any, str, str]] = [
    ({"region": "eu"}, {}, "missing", "Mcp-Param-Region"),
    (
        {"region": "eu"},
        [("Mcp-Param-Region", "eu"), ("mcp-param-region", "eu")],
        "duplicated",
        "Mcp-Param-Region",
    ),
    (
        {"region": "eu"},
        {"Mcp-Param-Region": "eu", "Mcp-Param-Count": "1"},
        "unexpected",
        "Mcp-Param-Count",
    ),
    (
        {"region": "eu", "count": None},
        {"Mcp-Param-Region": "eu", "Mcp-Param-Count": "1"},
        "unexpected",
        "Mcp-Param-Count",
    ),
    ({"region": "eu"}, {"Mcp-Param-Region": "=?base64?ZXU?="}, "malformed", "Mcp-Param-Region"),
    ({"region": "eu"}, {"Mcp-Param-Region": "us"}, "mismatched", "Mcp-Param-Region"),
    ({"region": "eu"}, {"MCP-PARAM-REGION": "EU"}, "mismatched", "Mcp-Param-Region"),
    ({"region": 1}, {"Mcp-Param-Region": "1"}, "mismatched", "Mcp-Param-Region"),
    (
        {"region": "x", "count": 7},
        {"Mcp-Param-Region": "x", "Mcp-Param-Count": "8"},
        "mismatched",
        "Mcp-Param-Count",
    ),
    (
        {"region": "x", "count": 7},
        {"Mcp-Param-Region": "x", "Mcp-Param-Count": "7.0"},
        "malformed",
        "Mcp-Param-Count",
    ),
    (
        {"region": "x", "count": 7},
        {"Mcp-Param-Region": "x", "Mcp-Param-Count": "+7"},
        "malformed",
        "Mcp-Param-Count",
    ),
    (
        {"region": "x", "count": 7},
        {"Mcp-Param-Region": "x", "Mcp-Param-Count": "٧"},
        "malformed",
        "Mcp-Param-Count",
    ),
    (
        {"region": "x", "count": 2**53},
        {"Mcp-Param-Region": "x", "Mcp-Param-Count": str(2**53)},
        "malformed",
        "Mcp-Param-Count",
    ),
    (
        {"region": "x", "count": True},
        {"Mcp-Param-Region": "x", "Mcp-Param-Count": "1"},
        "mismatched",
        "Mcp-Param-Count",
    ),
    (
        {"region": "x", "dry_run": 1},
        {"Mcp-Param-Region": "x", "Mcp-Param-Dry-Run": "true"},
        "mismatched",
        "Mcp-Param-Dry-Run",
    ),
    (
        {"region": "x", "dry_run": True},
        {"Mcp-Param-Region": "x", "Mcp-Param-Dry-Run": "TRUE"},
        "malformed",
        "Mcp-Param-Dry-Run",
    ),
]


@pytest.mark.parametrize(("arguments", "headers", "category", "header"), VALIDATE_REFUSALS)
def test_validate_refusals(arguments: dict[str, Any], headers: Any, category: str, header: str) -> None:
    refused = refusal(arguments, headers)
    assert (refused.category, refused.header) == (category, header)
    assert refused.gate == "execute"


@pytest.mark.parametrize(("arguments", "headers", "category", "header"), VALIDATE_REFUSALS)
def test_proxied_rule_refuses_every_sent_lie_and_only_forgives_missing(
    arguments: dict[str, Any], headers: Any, category: str, header: str
) -> None:
    """``require_headers=False`` (a call through a search proxy) differs from the direct rule in one
    category only: an unsent header is not ``missing``; everything that is sent is judged the same."""
    if category == "missing":
        event = validate_parameter_headers(ROUTE, arguments, headers, require_headers=False)
        assert event["headers"] == []
        return
    with pytest.raises(HeaderMismatch) as caught:
        validate_parameter_headers(ROUTE, arguments, headers, require_headers=False)
    assert (caught.value.category, caught.value.header) == (category, header)


@settings(max_examples=100, deadline=None)
@given(
    region=st.text(),
    count=st.none() | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
    dry_run=st.none() | st.booleans(),
    keep=st.sets(st.sampled_from(["Mcp-Param-Region", "Mcp-Param-Count", "Mcp-Param-Dry-Run"])),
)
def test_proxied_rule_accepts_any_subset_of_the_faithful_headers(
    region: str, count: int | None, dry_run: bool | None, keep: set[str]
) -> None:
    arguments = {"region": region, "count": count, "dry_run": dry_run}
    headers = build_parameter_headers(ROUTE, arguments)
    subset = {name: value for name, value in headers.items() if name in keep}
    event = validate_parameter_headers(ROUTE, arguments, subset, require_headers=False)
    assert event["headers"] == [name for name in headers if name in keep]
    if subset != headers:  # the direct rule refuses exactly the calls that left a header out
        assert refusal(arguments, subset).category == "missing"


def test_validate_integers_numerically() -> None:
    validate_parameter_headers(
        ROUTE, {"region": "x", "count": 7.0}, {"Mcp-Param-Region": "x", "Mcp-Param-Count": "7"}
    )


@pytest.mark.parametrize(("body", "header"), [(7, "007"), (0, "-0"), (5, "+5"), (0, "00")])
def test_validate_integers_in_canonical_form_only(body: int, header: str) -> None:
    # The spec's integer grammar has one spelling per value: a numerically equal but non-canonical
    # header is malformed (it could route differently from what the body says at a proxy).
    with pytest.raises(HeaderMismatch) as refused:
        validate_parameter_headers(
            ROUTE, {"region": "x", "count": body}, {"Mcp-Param-Region": "x", "Mcp-Param-Count": header}
        )
    assert refused.value.category == "malformed" and refused.value.header == "Mcp-Param-Count"


def test_validate_ignores_unrecognized_param_headers_and_other_headers() -> None:
    validate_parameter_headers(
        ROUTE, {"region": "x"}, [("Mcp-Param-Region", "x"), ("Mcp-Param-Unknown", "?"), ("Accept", "*/*")]
    )


def test_validate_invalid_annotations_fail_closed() -> None:
    bad = tool({"a": {"type": "number", "x-mcp-header": "A"}})
    audit: list[dict[str, Any]] = []
    with pytest.raises(HeaderMismatch) as refused:
        validate_parameter_headers(bad, {"a": 1.5}, {"Mcp-Param-A": "1.5"}, audit=audit.append)
    # The Execute gate owns this refusal (it used to be mislabelled as an Admit-gate AdmissionError).
    assert refused.value.gate == "execute" and refused.value.header is None
    assert audit[-1]["category"] == refused.value.category == "invalid_header_annotation"


def test_header_name_match_is_not_fooled_by_prefix_tricks() -> None:
    # "Mcp-Param-Region2" is a different header; the real one is then missing.
    assert refusal({"region": "x"}, {"Mcp-Param-Region2": "x"}).category == "missing"
