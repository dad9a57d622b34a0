"""The five JSON Schema dialects at every gate: the semantics that differ between them.

The instance cases follow the JSON Schema Test Suite (``tests/draft*/{ref,maximum,items,dependencies,
const,if-then-else,unevaluatedProperties,definitions,type}.json``): the same schema, or the same keyword,
means different things in different drafts, and each dialect must be evaluated as itself. The engine
differential test (``test_validator_engines.py``) holds python-jsonschema to the same verdicts on
:data:`DIALECT_CASES` and :data:`DIALECT_INVALID_SCHEMAS`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema_rs
import pytest

from agent_connector_sdk.core.contracts import (
    AdmissionPolicy,
    ValidatorCache,
    admit_tools,
    build_parameter_headers,
    header_annotations,
    validate_arguments,
    validate_instance,
    validate_parameter_headers,
    validate_tool_result,
)
from agent_connector_sdk.core.contracts._admission import SUPPORTED_DIALECTS
from agent_connector_sdk.core.contracts._json_schema import DIALECTS, DialectName, check_schema, dialect_of
from agent_connector_sdk.core.contracts.errors import AdmissionError, ArgumentError, ContractViolation
from tests.support.schema_cases import (
    D4,
    D6,
    D7,
    D2019,
    D2020,
    DIALECT_CASES,
    DIALECT_INVALID_SCHEMAS,
    DIALECT_VALID_SCHEMAS,
    LEGACY,
    MODERN,
)
from tests.support.schema_server import recording_schema_server


def verdict(schema: Any, instance: Any) -> bool:
    failure = validate_instance(schema, instance)
    assert failure is None or failure.kind == "instance", failure
    return failure is None


@pytest.mark.parametrize(
    ("label", "schema", "instance", "valid"), DIALECT_CASES, ids=[c[0] for c in DIALECT_CASES]
)
def test_each_dialect_is_evaluated_with_its_own_semantics(
    label: str, schema: Any, instance: Any, valid: bool
) -> None:
    assert verdict(schema, instance) is valid


@pytest.mark.parametrize(
    ("label", "schema"), DIALECT_INVALID_SCHEMAS, ids=[c[0] for c in DIALECT_INVALID_SCHEMAS]
)
def test_each_dialect_is_checked_against_its_own_meta_schema(label: str, schema: Any) -> None:
    failure = check_schema(schema)
    assert failure is not None and failure.kind == "invalid_schema"


@pytest.mark.parametrize(
    ("label", "schema"), DIALECT_VALID_SCHEMAS, ids=[c[0] for c in DIALECT_VALID_SCHEMAS]
)
def test_keywords_unknown_to_a_dialect_are_not_checked(label: str, schema: Any) -> None:
    assert check_schema(schema) is None


# --- which dialect ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "name"),
    [(D4, "draft-04"), (D6, "draft-06"), (D7, "draft-07"), (D2019, "2019-09"), (D2020, "2020-12")],
)
def test_both_engines_pick_the_declared_dialect(declared: str, name: DialectName) -> None:
    for spelling in (declared, declared.rstrip("#"), declared.rstrip("#") + "#"):
        dialect = dialect_of({"$schema": spelling})
        assert dialect is not None and dialect.name == name
        assert spelling in SUPPORTED_DIALECTS
    # jsonschema_rs, left to itself, reads $schema the same way (we pass the class explicitly anyway).
    assert type(jsonschema_rs.validator_for({"$schema": declared})) is DIALECTS[name].rust_validator


def test_absent_schema_means_2020_12() -> None:
    assert dialect_of({"type": "object"}) is DIALECTS["2020-12"]
    assert dialect_of(True) is DIALECTS["2020-12"]
    # prefixItems applies (2020-12), array-form items would be refused by the 2020-12 meta-schema.
    assert not verdict({"prefixItems": [{"type": "integer"}]}, ["x"])


@pytest.mark.parametrize(
    "declared",
    [
        "https://json-schema.org/draft-07/schema#",  # https: not the canonical URI of draft-07
        "http://json-schema.org/draft-03/schema#",
        "http://json-schema.org/schema#",
        "https://json-schema.org/draft/2020-12/schema#frag",
        "https://example.com/my-dialect",
        7,
        None,
    ],
)
def test_unknown_dialect_is_refused_at_every_gate(declared: Any) -> None:
    schema = {"$schema": declared, "type": "object", "properties": {"a": {"type": "string"}}}
    assert dialect_of(schema) is None
    tool = {"name": "t", "inputSchema": schema, "outputSchema": {"type": "object"}}
    (rejection,) = admit_tools([tool]).rejected
    assert rejection["category"] == "unsupported_dialect"
    with pytest.raises(ArgumentError) as invoke:
        validate_arguments(tool, {})
    assert invoke.value.category == "unsupported_dialect"
    out = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema}
    with pytest.raises(ContractViolation) as consume:
        validate_tool_result(out, {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}})
    assert consume.value.category == "unsupported_dialect"
    with pytest.raises(AdmissionError) as headers:
        header_annotations(schema)
    assert headers.value.category == "unsupported_dialect"


def test_mixed_dialects_are_refused() -> None:
    for root, embedded in ((D7, D2020), (D2020, D7), (D2019, D4)):
        schema = {"$schema": root, "properties": {"a": {"$schema": embedded, "type": "string"}}}
        failure = check_schema(schema)
        assert failure is not None and failure.kind == "unsupported_dialect"
    # The same dialect spelled with and without '#' is not a mix.
    assert check_schema({"$schema": D7, "definitions": {"a": {"$schema": D7.rstrip("#")}}}) is None


# --- policy -----------------------------------------------------------------------------------------------


def _tool(name: str, dialect: str | None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}}}
    if dialect is not None:
        schema["$schema"] = dialect
    return {"name": name, "inputSchema": schema}


def test_default_policy_admits_all_five_dialects() -> None:
    tools = [_tool(f"t{i}", d) for i, d in enumerate((None, D4, D6, D7, D2019, D2020))]
    report = admit_tools(tools)
    assert report.rejected == []
    assert len(report.admitted) == 6


def test_policy_narrows_the_dialects() -> None:
    policy = AdmissionPolicy(dialects=frozenset({"2020-12", "draft-07"}))
    report = admit_tools([_tool("none", None), _tool("d7", D7), _tool("d4", D4), _tool("d19", D2019)], policy)
    assert list(report.admitted) == ["none", "d7"]
    assert [(r["tool"], r["category"]) for r in report.rejected] == [
        ("d4", "unsupported_dialect"),
        ("d19", "unsupported_dialect"),
    ]
    assert "draft-04" in report.rejected[0]["reason"]
    out = {**_tool("out", None), "outputSchema": {"$schema": D6, "type": "object"}}
    (rejection,) = admit_tools([out], policy).rejected
    assert (rejection["category"], rejection["reason"].split(":")[0]) == (
        "unsupported_dialect",
        "outputSchema",
    )


def test_policy_shares_the_compiled_cache_but_not_the_verdict() -> None:
    cache = ValidatorCache(maxsize=4)
    schema = _tool("t", D7)["inputSchema"]
    assert check_schema(schema, cache=cache) is None
    failure = check_schema(schema, dialects={"2020-12"}, cache=cache)
    assert failure is not None and failure.kind == "unsupported_dialect"
    assert check_schema(schema, dialects=["2020-12", "draft-07"], cache=cache) is None
    assert (cache.misses, cache.hits) == (1, 2)


@pytest.mark.parametrize(
    "dialects", [frozenset({"draft-07"}), frozenset(), frozenset({"2020-12", "draft-08"})]
)
def test_policy_refuses_impossible_dialect_sets(dialects: frozenset[Any]) -> None:
    with pytest.raises(ValueError):
        AdmissionPolicy(dialects=dialects)


# --- admission: the root must declare type object, in effect ----------------------------------------------


@pytest.mark.parametrize("dialect", LEGACY)
def test_root_ref_hides_the_root_type_in_legacy_dialects(dialect: str) -> None:
    schema = {"$schema": dialect, "type": "object", "$ref": "#/definitions/A", "definitions": {"A": {}}}
    (rejection,) = admit_tools([{"name": "t", "inputSchema": schema}]).rejected
    assert rejection["category"] == "malformed"
    assert "`$ref`" in rejection["reason"]


@pytest.mark.parametrize("dialect", MODERN)
def test_root_ref_beside_type_is_fine_in_modern_dialects(dialect: str) -> None:
    defs = "$defs"
    schema = {"$schema": dialect, "type": "object", "$ref": f"#/{defs}/A", defs: {"A": {}}}
    assert list(admit_tools([{"name": "t", "inputSchema": schema}]).admitted) == ["t"]


# --- references: offline in every dialect -----------------------------------------------------------------


@pytest.fixture
def schema_server() -> Iterator[tuple[str, list[str]]]:
    with recording_schema_server() as served:
        yield served


@pytest.mark.parametrize("dialect", [D4, D6, D7, D2019, D2020])
def test_remote_refs_are_refused_and_never_fetched_in_every_dialect(
    dialect: str, schema_server: tuple[str, list[str]]
) -> None:
    base, requests = schema_server
    id_keyword = "id" if dialect == D4 else "$id"
    for schema in (
        {"$schema": dialect, "type": "object", "properties": {"x": {"$ref": f"{base}/x.json"}}},
        {"$schema": dialect, id_keyword: f"{base}/root.json", "properties": {"x": {"$ref": "other.json"}}},
    ):
        failure = check_schema(schema)
        assert failure is not None and failure.kind == "unresolvable_ref", failure
        (rejection,) = admit_tools([{"name": "t", "inputSchema": {"type": "object", **schema}}]).rejected
        assert rejection["category"] == "unresolvable_ref"
    assert requests == []


def test_unresolvable_ref_beside_a_legacy_ref_is_refused_even_though_ignored() -> None:
    # Fail closed: draft-07 never evaluates it, but we refuse to carry a dangling reference anyway.
    schema = {
        "$schema": D7,
        "definitions": {"x": {}},
        "properties": {"a": {"$ref": "#/definitions/x", "properties": {"b": {"$ref": "#/definitions/nope"}}}},
    }
    failure = check_schema(schema)
    assert failure is not None and failure.kind == "unresolvable_ref"


def test_dynamic_ref_is_only_a_reference_in_2020_12() -> None:
    # In 2019-09 `$dynamicRef` is an unknown keyword (an annotation), so its target is never looked up.
    assert check_schema({"$schema": D2019, "$dynamicRef": "#nowhere"}) is None
    failure = check_schema({"$schema": D2020, "$dynamicRef": "#nowhere"})
    assert failure is not None and failure.kind == "unresolvable_ref"


# --- header placement in every dialect --------------------------------------------------------------------


def _header_schema(dialect: str, **extra: Any) -> dict[str, Any]:
    return {
        "$schema": dialect,
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, **extra},
    }


@pytest.mark.parametrize("dialect", [D4, D6, D7, D2019, D2020])
def test_header_annotations_work_in_every_dialect(dialect: str) -> None:
    tool = {"name": "t", "inputSchema": _header_schema(dialect)}
    assert list(admit_tools([tool]).admitted) == ["t"]
    audit: list[dict[str, Any]] = []
    headers = build_parameter_headers(tool, {"region": "eu"}, audit=audit.append)
    assert headers == {"Mcp-Param-Region": "eu"}
    validate_parameter_headers(tool, {"region": "eu"}, headers, audit=audit.append)


@pytest.mark.parametrize("dialect", LEGACY)
def test_annotation_beside_a_legacy_ref_is_refused(dialect: str) -> None:
    # The `type` and the annotation beside `$ref` are ignored by the dialect: nothing declares a header.
    schema = _header_schema(dialect)
    schema["properties"]["zone"] = {"$ref": "#/definitions/Z", "type": "string", "x-mcp-header": "Zone"}
    schema["definitions"] = {"Z": {"type": "string"}}
    with pytest.raises(AdmissionError) as refusal:
        header_annotations(schema)
    assert refusal.value.category == "invalid_header_annotation"
    assert "/properties/zone" in refusal.value.message and "ignores" in refusal.value.message
    (rejection,) = admit_tools([{"name": "t", "inputSchema": schema}]).rejected
    assert rejection["category"] == "invalid_header_annotation"


@pytest.mark.parametrize("dialect", LEGACY)
def test_properties_beside_a_legacy_ref_are_not_a_placement(dialect: str) -> None:
    # `properties` beside `$ref` is ignored, so the chain root→target→zone does not exist in effect,
    # even under the spec profile that accepts nested properties chains.
    schema = _header_schema(
        dialect,
        target={
            "$ref": "#/definitions/T",
            "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
        },
    )
    schema["definitions"] = {"T": {"type": "object"}}
    with pytest.raises(AdmissionError) as refusal:
        header_annotations(schema, placement="spec")
    assert refusal.value.category == "invalid_header_annotation"
    assert "/properties/target/properties/zone" in refusal.value.message


@pytest.mark.parametrize("dialect", MODERN)
def test_ref_siblings_are_a_placement_in_modern_dialects(dialect: str) -> None:
    schema = _header_schema(
        dialect,
        zone={"$ref": "#/$defs/Z", "type": "string", "x-mcp-header": "Zone"},
        target={"$ref": "#/$defs/T", "properties": {"sub": {"type": "string", "x-mcp-header": "Sub"}}},
    )
    schema["$defs"] = {"Z": {"type": "string"}, "T": {"type": "object"}}
    found = header_annotations(schema, placement="spec")
    assert [a.path for a in found] == [("region",), ("zone",), ("target", "sub")]


@pytest.mark.parametrize(
    ("dialect", "where"),
    [
        (D7, {"items": [{"type": "string", "x-mcp-header": "A"}]}),  # tuple-form items (legacy)
        (D2019, {"additionalItems": {"type": "string", "x-mcp-header": "A"}}),
        (D7, {"dependencies": {"region": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}}),
        (D4, {"definitions": {"A": {"type": "string", "x-mcp-header": "A"}}}),
        (
            D2019,
            {"dependentSchemas": {"region": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}},
        ),
        (D7, {"if": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}),
    ],
)
def test_annotations_off_the_properties_chain_are_refused_in_every_dialect(
    dialect: str, where: dict[str, Any]
) -> None:
    schema = {**_header_schema(dialect), **where}
    with pytest.raises(AdmissionError) as refusal:
        header_annotations(schema, placement="spec")
    assert refusal.value.category == "invalid_header_annotation"


# --- the gates with a draft-07 tool as TypeScript-SDK servers publish them ---------------------------------

WEATHER = {
    "name": "get-structured-content",
    "inputSchema": {
        "$schema": D7,
        "type": "object",
        "properties": {"location": {"type": "string", "enum": ["New York", "Chicago", "Los Angeles"]}},
        "required": ["location"],
    },
    "outputSchema": {
        "$schema": D7,
        "type": "object",
        "properties": {
            "temperature": {"type": "number"},
            "conditions": {"type": "string"},
            "humidity": {"type": "number"},
        },
        "required": ["temperature", "conditions", "humidity"],
        "additionalProperties": False,
    },
}


def test_a_draft_07_tool_passes_admit_invoke_and_consume() -> None:
    assert list(admit_tools([WEATHER]).admitted) == ["get-structured-content"]
    validate_arguments(WEATHER, {"location": "Chicago"})
    with pytest.raises(ArgumentError) as refusal:
        validate_arguments(WEATHER, {"location": "Paris"})
    assert (refusal.value.category, refusal.value.path) == ("invalid_arguments", "/location")
    value: dict[str, Any] = {"temperature": 22.5, "conditions": "Sunny", "humidity": 65}
    validate_tool_result(
        WEATHER,
        {
            "content": [{"type": "text", "text": '{"temperature":22.5,"conditions":"Sunny","humidity":65}'}],
            "structuredContent": value,
        },
    )
    windy: dict[str, Any] = {**value, "wind": 3}
    with pytest.raises(ContractViolation) as violation:
        validate_tool_result(
            WEATHER, {"content": [{"type": "text", "text": "{}"}], "structuredContent": windy}
        )
    assert violation.value.category == "output_schema_violation"


@pytest.mark.parametrize("dialect", [D4, D7, D2019, D2020])
def test_ref_reached_only_through_another_ref_is_refused_and_never_fetched(
    dialect: str, schema_server: tuple[str, list[str]]
) -> None:
    # The walker does not enter unknown keywords, so the pre-check never sees this inner `$ref`; the
    # engine's retriever refuses it at compile time instead (fail closed, nothing fetched).
    base, requests = schema_server
    for target in (f"{base}/remote.json", "#/nope"):
        schema = {
            "$schema": dialect,
            "properties": {"a": {"$ref": "#/x-hidden"}},
            "x-hidden": {"$ref": target},
        }
        failure = check_schema(schema)
        assert failure is not None and failure.kind == "unresolvable_ref"
    assert requests == []
