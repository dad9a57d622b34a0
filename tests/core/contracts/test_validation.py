"""Invoke gate: argument validation with JSON Schema 2020-12, offline refs, a bounded validator cache."""

from __future__ import annotations

from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.contracts import (
    VALIDATOR_CACHE_SIZE,
    ValidatorCache,
    json_pointer,
    validate_arguments,
    validate_instance,
)
from agent_connector_sdk.core.contracts._validation import default_validator_cache
from agent_connector_sdk.core.contracts.errors import ArgumentError
from tests.support.schema_cases import (
    DYNAMIC_TREE_SCHEMA,
    EMBEDDED_RESOURCE_SCHEMA,
    LOCAL_REFS_SCHEMA,
    REGION_TOOL,
    SECRET,
)
from tests.support.schema_server import recording_schema_server


def tool(schema: Any) -> dict[str, Any]:
    return {"name": "t", "inputSchema": schema}


def refusal(t: dict[str, Any], arguments: Any) -> ArgumentError:
    with pytest.raises(ArgumentError) as info:
        validate_arguments(t, arguments)
    return info.value


def test_valid_arguments_pass() -> None:
    validate_arguments(REGION_TOOL, {"region": "eu", "limit": 3, "filter": {"tag": "ab"}, "a/b~c": True})


def test_mapping_that_is_not_a_dict_is_an_object() -> None:
    validate_arguments(REGION_TOOL, MappingProxyType({"region": "us"}))


@pytest.mark.parametrize(
    ("arguments", "path", "keyword"),
    [
        ({"region": SECRET}, "/region", "enum"),
        ({"region": "eu", "limit": SECRET}, "/limit", "type"),
        ({"region": "eu", "limit": 0}, "/limit", "minimum"),
        ({"region": "eu", "limit": True}, "/limit", "type"),  # a boolean is not an integer
        ({"region": "eu", "filter": {"tag": SECRET}}, "/filter/tag", "maxLength"),
        ({"region": "eu", "a/b~c": SECRET}, "/a~1b~0c", "type"),
        ({"limit": 2}, "/region", "required"),
        ({}, "/region", "required"),
    ],
)
def test_invalid_arguments_name_keyword_and_path_never_the_value(
    arguments: dict[str, Any], path: str, keyword: str
) -> None:
    err = refusal(REGION_TOOL, arguments)
    assert err.category == "invalid_arguments"
    assert err.gate == "invoke"
    assert err.path == path
    assert f"'{keyword}'" in err.message
    assert SECRET not in str(err) and SECRET not in repr(err)


def test_a_missing_required_argument_is_said_to_be_missing() -> None:
    err = refusal(REGION_TOOL, {"limit": 2})
    assert err.message.endswith("'/region' is missing (schema keyword 'required')"), err.message
    assert "value at" not in err.message  # there is no value to fail a keyword


def test_additional_property_is_refused_without_echoing_it() -> None:
    err = refusal(REGION_TOOL, {"region": "eu", SECRET: 1})
    assert err.category == "invalid_arguments"
    assert "additionalProperties" in err.message
    assert SECRET not in str(err)


def test_absent_arguments_are_validated_as_an_empty_object() -> None:
    assert refusal(REGION_TOOL, None).path == "/region"
    validate_arguments(tool({"type": "object"}), None)


@pytest.mark.parametrize("arguments", [[1], "x", 3, True])
def test_non_object_arguments_are_refused(arguments: Any) -> None:
    err = refusal(REGION_TOOL, arguments)
    assert (err.category, err.path) == ("invalid_arguments", "")


@pytest.mark.parametrize("descriptor", [{"name": "t"}, {"name": "t", "inputSchema": "object"}])
def test_descriptor_without_input_schema_object(descriptor: dict[str, Any]) -> None:
    assert refusal(descriptor, {}).category == "invalid_schema"


def test_format_is_an_annotation_not_an_assertion() -> None:
    # Documented decision: format assertions depend on optional packages, so both ends skip them.
    validate_arguments(
        tool({"type": "object", "properties": {"e": {"format": "email"}}}), {"e": "not an email"}
    )


# --- dialects -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dialect",
    ["https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#"],
)
def test_explicit_2020_12_is_accepted(dialect: str) -> None:
    validate_arguments(tool({"$schema": dialect, "type": "object"}), {})


@pytest.mark.parametrize(
    "schema",
    [
        {"$schema": "http://json-schema.org/draft-03/schema#", "type": "object"},
        {"$schema": "https://json-schema.org/draft-07/schema#", "type": "object"},  # non-canonical
        {"$schema": "https://example.com/my-dialect", "type": "object"},
        {"type": "object", "properties": {"x": {"$schema": "http://json-schema.org/draft-07/schema#"}}},
    ],
)
def test_other_dialects_are_refused(schema: dict[str, Any]) -> None:
    assert refusal(tool(schema), {}).category == "unsupported_dialect"


def test_data_keywords_are_not_mistaken_for_schema_keywords() -> None:
    schema = {
        "type": "object",
        "properties": {"doc": {"const": {"$schema": "draft-07", "$ref": "http://127.0.0.1:1/x.json"}}},
    }
    validate_arguments(tool(schema), {"doc": {"$schema": "draft-07", "$ref": "http://127.0.0.1:1/x.json"}})


def test_invalid_schema_is_refused() -> None:
    assert (
        refusal(tool({"type": "object", "properties": {"x": {"type": 5}}}), {}).category == "invalid_schema"
    )
    assert refusal(tool({"type": "object", "properties": {"x": {"pattern": "("}}}), {}).category == (
        "invalid_schema"
    )


# --- references: local ones resolve, nothing is ever fetched ----------------------------------------


@pytest.fixture
def schema_server() -> Iterator[tuple[str, list[str]]]:
    with recording_schema_server() as served:
        yield served


def test_remote_ref_is_refused_and_never_fetched(schema_server: tuple[str, list[str]]) -> None:
    base, requests = schema_server
    schemas = [
        {"type": "object", "properties": {"x": {"$ref": f"{base}/x.json"}}},
        # A relative reference against a remote base URI is just as remote.
        {"$id": f"{base}/root.json", "type": "object", "properties": {"x": {"$ref": "other.json"}}},
        # Even in a branch the instance never takes (checked when the schema is compiled).
        {"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}, {"$ref": f"{base}/y.json"}]}}},
        {"type": "object", "properties": {"x": {"$dynamicRef": f"{base}/z.json#meta"}}},
    ]
    for schema in schemas:
        err = refusal(tool(schema), {"x": "hello"})
        assert err.category == "unresolvable_ref"
    assert requests == []


def test_ref_to_unroutable_address_is_a_typed_refusal() -> None:
    err = refusal(tool({"type": "object", "properties": {"x": {"$ref": "http://127.0.0.1:1/x.json"}}}), {})
    assert err.category == "unresolvable_ref"


def test_local_refs_resolve() -> None:
    schema = LOCAL_REFS_SCHEMA
    validate_arguments(tool(schema), {"a": 1, "b": "x", "c": True, "meta": {"type": "string"}})
    assert refusal(tool(schema), {"b": 3}).path == "/b"
    assert refusal(tool(schema), {"meta": {"type": 5}}).category == "invalid_arguments"


def test_dangling_local_pointer_is_refused() -> None:
    assert refusal(tool({"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}}), {}).category == (
        "unresolvable_ref"
    )


# --- the validator cache --------------------------------------------------------------------------


def _schema(n: int) -> dict[str, Any]:
    return {"type": "object", "properties": {f"p{n}": {"type": "integer"}}}


def test_cache_is_bounded_and_least_recently_used_goes_first() -> None:
    cache = ValidatorCache(maxsize=2)
    validate_instance(_schema(1), {}, cache=cache)
    validate_instance(_schema(2), {}, cache=cache)
    validate_instance(_schema(1), {}, cache=cache)  # touch 1: now 2 is least recently used
    validate_instance(_schema(3), {}, cache=cache)
    assert len(cache) == 2
    assert _schema(1) in cache and _schema(3) in cache and _schema(2) not in cache
    assert (cache.hits, cache.misses) == (1, 3)


def test_default_cache_bound_is_honoured() -> None:
    cache = default_validator_cache()
    assert cache.maxsize == VALIDATOR_CACHE_SIZE
    for n in range(VALIDATOR_CACHE_SIZE + 20):
        validate_arguments(tool(_schema(n)), {})
    assert len(cache) <= VALIDATOR_CACHE_SIZE
    assert _schema(VALIDATOR_CACHE_SIZE + 19) in cache and _schema(0) not in cache


def test_cache_key_is_canonical_content() -> None:
    cache = ValidatorCache(maxsize=4)
    a: dict[str, Any] = {"type": "object", "required": ["x"], "properties": {"x": {"type": "string"}}}
    b = {"properties": {"x": {"type": "string"}}, "required": ["x"], "type": "object"}  # same, reordered
    assert validate_instance(a, {"x": "1"}, cache=cache) is None
    assert validate_instance(b, {"x": "1"}, cache=cache) is None
    assert (len(cache), cache.hits) == (1, 1)
    # A schema mutated in place is recompiled, never judged by its stale validator.
    a["properties"]["x"]["type"] = "integer"
    failure = validate_instance(a, {"x": "1"}, cache=cache)
    assert failure is not None and failure.keyword == "type"


def test_schema_refusals_are_cached_too() -> None:
    cache = ValidatorCache(maxsize=4)
    bad = {"$schema": "https://example.com/my-dialect"}
    for _ in range(3):
        failure = validate_instance(bad, {}, cache=cache)
        assert failure is not None and failure.kind == "unsupported_dialect"
    assert (cache.misses, cache.hits) == (1, 2)


def test_non_json_schema_is_refused() -> None:
    failure = validate_instance({"type": "number", "maximum": float("nan")}, 1)
    assert failure is not None and failure.kind == "invalid_schema"
    with pytest.raises(ValueError):
        ValidatorCache(maxsize=0)


def test_json_pointer_escapes() -> None:
    assert json_pointer(["a/b", "~", 0]) == "/a~1b/~0/0"
    assert json_pointer([]) == ""


@settings(max_examples=60, deadline=None)
@given(value=st.text(min_size=6))
def test_refusal_messages_never_contain_the_value(value: str) -> None:
    schema = tool({"type": "object", "properties": {"n": {"type": "integer"}}})
    err = refusal(schema, {"n": value})
    assert err.path == "/n"
    # The message does not depend on the value at all (a generated value may happen to be a word of the
    # fixed text, such as "argume", so "not in" alone would be a flaky way to say this).
    assert err.message == refusal(schema, {"n": "another value"}).message
    assert "another value" not in err.message


def test_deeply_nested_arguments_are_refused_not_crashed() -> None:
    nested: Any = "leaf"
    for _ in range(5000):
        nested = [nested]
    recursive = tool(
        {
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/n"}},
            "$defs": {"n": {"items": {"$ref": "#/$defs/n"}}},
        }
    )
    err = refusal(recursive, {"x": nested})
    assert err.category == "invalid_arguments"
    assert "too deeply" in err.message


def test_dynamic_refs_and_embedded_resources_resolve_locally() -> None:
    tree = DYNAMIC_TREE_SCHEMA
    assert validate_instance(tree, {"children": [{"children": []}]}) is None
    failure = validate_instance(tree, {"children": [1]})
    assert failure is not None and (failure.kind, failure.path) == ("instance", "/children/0")
    # A pointer inside an embedded resource resolves against that resource, not the root.
    embedded = EMBEDDED_RESOURCE_SCHEMA
    assert validate_instance(embedded, {"a": 1}) is None
    failure = validate_instance(embedded, {"a": "z"})
    assert failure is not None and failure.path == "/a"
