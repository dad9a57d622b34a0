"""Admit gate: every rule refuses the offending descriptor, explains it without values, keeps the rest."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_connector_sdk.core.contracts import AdmissionPolicy, admit_tools
from agent_connector_sdk.core.contracts._admission import is_sensitive_name
from agent_connector_sdk.core.contracts.errors import AdmissionError


def tool(name: str, properties: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties or {}}
    schema.update(extra.pop("schema", {}))
    return {"name": name, "inputSchema": schema, **extra}


GOOD = tool(
    "route",
    {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "dry_run": {"type": "boolean", "x-mcp-header": "Dry-Run"},
    },
)
PLAIN = tool("plain", {"text": {"type": "string"}})


def only_rejection(descriptor: Any, policy: AdmissionPolicy | None = None) -> dict[str, Any]:
    """Admit ``descriptor`` between two good tools; they must survive, and exactly it must be rejected."""
    report = admit_tools([GOOD, descriptor, PLAIN], policy)
    assert list(report.admitted) == ["route", "plain"]
    assert len(report.rejected) == 1
    rejection = dict(report.rejected[0])
    assert rejection["index"] == 1
    return rejection


def test_good_tools_admitted_in_server_order() -> None:
    report = admit_tools([PLAIN, GOOD])
    assert list(report.admitted) == ["plain", "route"]
    assert report.admitted["route"] == GOOD
    assert report.rejected == []


@pytest.mark.parametrize(
    ("descriptor", "tool_name"),
    [
        ("not an object", None),
        ({"inputSchema": {"type": "object"}}, None),
        ({"name": "", "inputSchema": {"type": "object"}}, None),
        ({"name": 7, "inputSchema": {"type": "object"}}, None),
        ({"name": "x"}, "x"),
        ({"name": "x", "inputSchema": []}, "x"),
        ({"name": "x", "inputSchema": {"type": "array"}}, "x"),
        ({"name": "x", "inputSchema": {}}, "x"),
        ({"name": "x", "inputSchema": {"type": "object"}, "outputSchema": "nope"}, "x"),
    ],
)
def test_malformed(descriptor: Any, tool_name: str | None) -> None:
    rejection = only_rejection(descriptor)
    assert rejection["category"] == "malformed"
    assert rejection["tool"] == tool_name


def test_invalid_schema_is_one_category_shared_with_every_gate() -> None:
    # Compatibility: Admit reported this as `malformed` before the JSON Schema module was shared.
    schema = {"type": "object", "properties": {"a": {"minLength": "secret-ish"}}}
    descriptor = {"name": "x", "inputSchema": schema}
    rejection = only_rejection(descriptor)
    assert (rejection["tool"], rejection["category"]) == ("x", "invalid_schema")
    assert "secret-ish" not in rejection["reason"]
    assert "/properties/a/minLength" in rejection["reason"]


@pytest.mark.parametrize(
    "dialect",
    [
        "https://json-schema.org/draft-07/schema#",  # not the canonical spelling (http://json-schema.org/...)
        "http://json-schema.org/draft-03/schema#",
        "http://json-schema.org/schema#",  # "the latest", whatever that is: not a dialect
        "https://example.com/my-dialect",
        7,
    ],
)
def test_unsupported_dialect(dialect: Any) -> None:
    rejection = only_rejection(tool("old", schema={"$schema": dialect}))
    assert rejection["category"] == "unsupported_dialect"


def test_unsupported_dialect_nested_and_in_output_schema() -> None:
    # A supported dialect embedded in a document of another one: mixed dialects are refused.
    nested = tool("n", {"a": {"$schema": "http://json-schema.org/draft-04/schema#", "type": "string"}})
    assert only_rejection(nested)["category"] == "unsupported_dialect"
    out = tool("o", outputSchema={"$schema": "https://example.com/my-dialect"})
    assert only_rejection(out)["category"] == "unsupported_dialect"


def test_explicit_2020_12_accepted() -> None:
    descriptor = tool("new", schema={"$schema": "https://json-schema.org/draft/2020-12/schema"})
    assert list(admit_tools([descriptor]).admitted) == ["new"]


def test_remote_ref_rejected_never_fetched() -> None:
    # 127.0.0.1:9 (discard) would fail loudly if anything tried to fetch; nothing does.
    remote = tool("remote", {"a": {"$ref": "http://127.0.0.1:9/schema.json"}})
    rejection = only_rejection(remote)
    assert rejection["category"] == "unresolvable_ref"
    assert "127.0.0.1" not in rejection["reason"]
    dangling = tool("dangling", {"a": {"$ref": "#/$defs/missing"}})
    assert only_rejection(dangling)["category"] == "unresolvable_ref"


def test_local_refs_and_embedded_resources_resolve() -> None:
    local = tool("local", {"a": {"$ref": "#/$defs/A"}}, schema={"$defs": {"A": {"type": "string"}}})
    embedded = tool(
        "embedded",
        {"a": {"$ref": "other"}},
        schema={"$id": "https://tools.invalid/root", "$defs": {"o": {"$id": "other", "type": "string"}}},
    )
    anchored = tool(
        "anchored", {"a": {"$ref": "#zone"}}, schema={"$defs": {"z": {"$anchor": "zone", "type": "string"}}}
    )
    assert list(admit_tools([local, embedded, anchored]).admitted) == ["local", "embedded", "anchored"]


@pytest.mark.parametrize(
    ("where", "descriptor"),
    [
        (
            "nested object",
            tool(
                "t", {"a": {"type": "object", "properties": {"b": {"type": "string", "x-mcp-header": "B"}}}}
            ),
        ),
        (
            "oneOf",
            tool("t", schema={"oneOf": [{"properties": {"b": {"type": "string", "x-mcp-header": "B"}}}]}),
        ),
        (
            "anyOf",
            tool("t", schema={"anyOf": [{"properties": {"b": {"type": "string", "x-mcp-header": "B"}}}]}),
        ),
        (
            "allOf",
            tool("t", schema={"allOf": [{"properties": {"b": {"type": "string", "x-mcp-header": "B"}}}]}),
        ),
        ("items", tool("t", {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "B"}}})),
        (
            "$ref'd $defs",
            tool(
                "t",
                {"a": {"$ref": "#/$defs/A"}},
                schema={"$defs": {"A": {"type": "string", "x-mcp-header": "A"}}},
            ),
        ),
        ("not", tool("t", schema={"not": {"properties": {"b": {"type": "string", "x-mcp-header": "B"}}}})),
        (
            "if/then/else",
            tool(
                "t",
                schema={
                    "if": {"properties": {"k": {"const": 1}}},
                    "then": {"properties": {"b": {"type": "string", "x-mcp-header": "B"}}},
                },
            ),
        ),
        (
            "output schema",
            tool(
                "t",
                outputSchema={"type": "object", "properties": {"b": {"type": "string", "x-mcp-header": "B"}}},
            ),
        ),
        ("number", tool("t", {"a": {"type": "number", "x-mcp-header": "A"}})),
        ("object", tool("t", {"a": {"type": "object", "x-mcp-header": "A"}})),
        ("no type", tool("t", {"a": {"x-mcp-header": "A"}})),
        ("CRLF name", tool("t", {"a": {"type": "string", "x-mcp-header": "Region\r\nInjected"}})),
        ("space in name", tool("t", {"a": {"type": "string", "x-mcp-header": "Re gion"}})),
        ("colon in name", tool("t", {"a": {"type": "string", "x-mcp-header": "Region:"}})),
        ("empty name", tool("t", {"a": {"type": "string", "x-mcp-header": ""}})),
        ("non-string name", tool("t", {"a": {"type": "string", "x-mcp-header": True}})),
        ("non-ASCII name", tool("t", {"a": {"type": "string", "x-mcp-header": "Régión"}})),
        (
            "case-insensitive duplicate",
            tool(
                "t",
                {
                    "a": {"type": "string", "x-mcp-header": "Zone"},
                    "b": {"type": "string", "x-mcp-header": "ZONE"},
                },
            ),
        ),
    ],
)
def test_invalid_header_annotation(where: str, descriptor: dict[str, Any]) -> None:
    rejection = only_rejection(descriptor)
    assert rejection["category"] == "invalid_header_annotation", where
    assert "\r" not in rejection["reason"]
    assert "\n" not in rejection["reason"]
    assert "Injected" not in rejection["reason"]


def test_spec_profile_accepts_properties_chain_only() -> None:
    nested = tool(
        "nested", {"a": {"type": "object", "properties": {"b": {"type": "string", "x-mcp-header": "B"}}}}
    )
    assert only_rejection(nested)["category"] == "invalid_header_annotation"
    spec = AdmissionPolicy(profile="spec")
    assert list(admit_tools([nested], spec).admitted) == ["nested"]
    one_of = tool("t", schema={"oneOf": [{"properties": {"b": {"type": "string", "x-mcp-header": "B"}}}]})
    assert only_rejection(one_of, spec)["category"] == "invalid_header_annotation"


@pytest.mark.parametrize(
    ("property_name", "header"),
    [
        ("password", "Route"),
        ("region", "Password"),
        ("db_passwd", "Db"),
        ("client_secret", "Client"),
        ("region", "X-Auth-Token"),
        ("api_key", "Key"),
        ("region", "Api-Key"),
        ("region", "Authorization"),
        ("region", "Cookie"),
        ("aws_credentials", "Aws"),
        ("private_key", "Pk"),
        ("SESSION_ID", "S"),
        ("ＴＯＫＥＮ", "T"),  # fullwidth letters normalize to ASCII
    ],
)
def test_sensitive_header(property_name: str, header: str) -> None:
    descriptor = tool("t", {property_name: {"type": "string", "x-mcp-header": header}})
    rejection = only_rejection(descriptor)
    assert rejection["category"] == "sensitive_header"


def test_sensitive_only_when_mirrored() -> None:
    body_only = tool(
        "login", {"password": {"type": "string"}, "region": {"type": "string", "x-mcp-header": "Region"}}
    )
    assert list(admit_tools([body_only]).admitted) == ["login"]


def test_sensitive_names_configurable() -> None:
    descriptor = tool("t", {"tenant": {"type": "string", "x-mcp-header": "Tenant"}})
    assert list(admit_tools([descriptor]).admitted) == ["t"]
    policy = AdmissionPolicy(sensitive_names=frozenset({"tenant"}))
    assert only_rejection(descriptor, policy)["category"] == "sensitive_header"
    relaxed = AdmissionPolicy(sensitive_names=frozenset())
    token_tool = tool("tk", {"token": {"type": "string", "x-mcp-header": "Token"}})
    assert list(admit_tools([token_tool], relaxed).admitted) == ["tk"]


def test_is_sensitive_name_normalizes() -> None:
    assert is_sensitive_name("X-API-KEY")
    assert is_sensitive_name("Session.Id")
    assert not is_sensitive_name("region")


def test_duplicate_names_reject_every_copy() -> None:
    first = tool("dup", {"a": {"type": "string"}})
    second = tool("dup", {"b": {"type": "integer"}})
    report = admit_tools([first, GOOD, second])
    assert list(report.admitted) == ["route"]
    assert [(r["tool"], r["index"], r["category"]) for r in report.rejected] == [
        ("dup", 0, "duplicate_name"),
        ("dup", 2, "duplicate_name"),
    ]


def test_one_bad_descriptor_never_removes_others_even_pathological_ones() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(5000):
        deep = {"type": "object", "properties": {"a": deep}}
    pathological = {"name": "deep", "inputSchema": deep}
    report = admit_tools([GOOD, pathological, PLAIN])
    assert list(report.admitted) == ["route", "plain"]
    assert [r["tool"] for r in report.rejected] == ["deep"]


def test_reasons_never_contain_values() -> None:
    descriptors = [
        tool(
            "a",
            {"p": {"type": "string", "x-mcp-header": "Region", "default": "VALUE-1"}},
            outputSchema="VALUE-2",
        ),
        tool("b", {"p": {"type": "number", "x-mcp-header": "P", "const": "VALUE-3"}}),
        tool("c", {"p": {"$ref": "https://VALUE-4.invalid/x"}}),
        tool("d", {"p": {"type": "string", "enum": "VALUE-5"}}),
    ]
    report = admit_tools(descriptors)
    assert len(report.rejected) == 4
    # Reasons name fields, never values (the rejected descriptor itself rides along for display).
    assert "VALUE" not in json.dumps(
        [{k: v for k, v in r.items() if k != "descriptor"} for r in report.rejected]
    )
    assert [r["descriptor"] for r in report.rejected] == descriptors


def test_admitted_descriptor_is_a_copy() -> None:
    descriptor = tool("copy", {"a": {"type": "string"}})
    report = admit_tools([descriptor])
    descriptor["name"] = "changed"
    assert report.admitted["copy"]["name"] == "copy"


@pytest.mark.parametrize(
    "pattern",
    [
        r"^a\Z",  # Python-only end anchor: not ECMA-262, so the instance engine cannot compile it
        r"(?P<x>a)(?P=x)",  # Python-only named back-reference
        r"(?i)abc",  # a Python inline flag: not ECMA-262 (the instance engine would take it)
        r"a{,3}",  # Annex B reads it as text; with the u flag JSON Schema asks for, it is an error
    ],
)
def test_pattern_that_is_not_ecma_262_is_rejected_at_admission(pattern: str) -> None:
    good = {"name": "ok", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}}
    bad = {
        "name": "dialect_gap",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "pattern": pattern}}},
    }
    report = admit_tools([good, bad])
    assert list(report.admitted) == ["ok"]
    (rejection,) = report.rejected
    assert rejection["tool"] == "dialect_gap"
    assert rejection["category"] == "invalid_schema"
    assert pattern not in rejection["reason"]


def test_admitted_tools_always_compile_for_argument_validation() -> None:
    from agent_connector_sdk.core.contracts._validation import check_schema

    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"q": {"pattern": "^[a-z]+$"}}}}
    report = admit_tools([tool])
    assert list(report.admitted) == ["t"]
    assert check_schema(tool["inputSchema"]) is None


# ------------------------------------------------------------------------------ unrepresentable values
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(
        alphabet=st.sampled_from(["a", "é", "\ud800", "\udfff", "\U0001f600", "\x7f", "ÿ"]), max_size=4
    ),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.text(alphabet=st.sampled_from(["k", "\ud83d", "ð"]), max_size=2), inner, max_size=3
        )
    ),
    max_leaves=12,
)


@given(_VALUES)
def test_the_byte_prefilter_never_clears_a_descriptor_holding_an_unrepresentable_value(value: Any) -> None:
    from agent_connector_sdk.core.contracts import exact_value_key
    from agent_connector_sdk.core.contracts._admission import _check_values, first_invalid_value

    descriptor = {"name": "t", "inputSchema": {"type": "object", "default": value}}
    scanned = exact_value_key(descriptor)

    def verdict(scanned: bytes | None) -> str | None:
        try:
            _check_values(descriptor, scanned)
        except AdmissionError as refusal:
            return refusal.message
        return None

    assert verdict(scanned) == verdict(None)
    assert (verdict(None) is None) == (first_invalid_value(descriptor) is None)


def test_unrepresentable_values_are_rejected_alone_naming_the_pointer() -> None:
    report = admit_tools(
        [
            {"name": "a", "inputSchema": {"type": "object", "properties": {"n": {"default": float("inf")}}}},
            {"name": "b", "inputSchema": {"type": "object", "examples": [{"x": "\udc00"}]}},
            {"name": "c", "inputSchema": {"type": "object", "properties": {"k\ud800": {}}}},
            {"name": "d", "inputSchema": {"type": "object"}},
        ]
    )
    assert list(report.admitted) == ["d"]
    assert [(r["tool"], r["category"], r["reason"]) for r in report.rejected] == [
        ("a", "malformed", "a non-finite number at /inputSchema/properties/n/default"),
        ("b", "malformed", "a string holding a lone surrogate at /inputSchema/examples/0/x"),
        ("c", "malformed", "a key holding a lone surrogate at /inputSchema/properties/k\\ud800"),
    ]
