"""The per-call caches behind the server gates never answer for content they were not built from.

The gates run on every ``tools/call``, so the compiled-validator lookup and the ``x-mcp-header`` reading
are memoized under type-exact ``marshal`` keys (``exact_value_key``) instead of a canonical JSON digest.
These tests pin the property that makes that safe: a schema edited in place, or one differing only in
JSON-distinct values that Python calls equal (``1``, ``1.0``, ``True``), is never judged by a stale entry.
"""

from __future__ import annotations

from typing import Any

import pytest

from agent_connector_sdk.core.contracts import (
    ValidatorCache,
    exact_value_key,
    header_annotations,
    validate_instance,
    validate_parameter_headers,
    validate_tool_result,
)
from agent_connector_sdk.core.contracts import _headers as header_contract
from agent_connector_sdk.core.contracts.errors import AdmissionError, ContractViolation, HeaderMismatch


def test_exact_key_separates_values_python_calls_equal() -> None:
    keys = {exact_value_key({"const": value}) for value in (1, 1.0, True)}
    assert len(keys) == 3 and None not in keys
    assert exact_value_key({"a": [1]}) == exact_value_key({"a": [1]})
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    assert exact_value_key(cyclic) is None
    assert exact_value_key({"x": object()}) is None


def test_validator_cache_never_reuses_an_entry_across_json_distinct_constants() -> None:
    cache = ValidatorCache(maxsize=8)
    schema: dict[str, Any] = {"const": 1}
    assert validate_instance(schema, 1, cache=cache) is None
    refused = validate_instance(schema, True, cache=cache)
    assert refused is not None and refused.keyword == "const"
    schema["const"] = True  # edited in place: Python says True == 1, JSON does not
    assert validate_instance(schema, True, cache=cache) is None
    assert validate_instance(schema, 1, cache=cache) is not None


def test_validator_cache_hits_repeat_lookups_and_stays_bounded() -> None:
    cache = ValidatorCache(maxsize=2)
    schemas = [{"type": "object", "properties": {f"p{n}": {"type": "integer"}}} for n in range(3)]
    for _ in range(3):
        assert validate_instance(schemas[0], {"p0": 1}, cache=cache) is None
    assert (cache.misses, cache.hits) == (1, 2)
    for schema in schemas:
        validate_instance(schema, {}, cache=cache)
    assert len(cache) == 2 and schemas[0] not in cache
    # The entry evicted from the digest LRU is compiled again, not served from a dangling exact key.
    assert validate_instance(schemas[0], {"p0": "x"}, cache=cache) is not None


def _tool(schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": "t", "inputSchema": schema}


def test_header_annotations_follow_a_schema_edited_in_place() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"region": {"type": "string"}}}
    assert header_annotations(schema) == ()
    validate_parameter_headers(_tool(schema), {"region": "eu"}, [])
    schema["properties"]["region"]["x-mcp-header"] = "Region"
    assert [a.header for a in header_annotations(schema)] == ["Mcp-Param-Region"]
    with pytest.raises(HeaderMismatch) as missing:
        validate_parameter_headers(_tool(schema), {"region": "eu"}, [])
    assert missing.value.category == "missing"


def test_cached_annotation_refusal_is_raised_every_time_as_a_fresh_error() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}
    errors = []
    for _ in range(2):
        with pytest.raises(AdmissionError) as refused:
            header_annotations(schema)
        errors.append(refused.value)
    assert errors[0] is not errors[1]
    assert {error.category for error in errors} == {"invalid_header_annotation"}


@pytest.mark.parametrize(
    ("text", "value", "serializes"),
    [
        ('{"a":1}', {"a": 1}, True),
        ('{"a": 1.0}', {"a": 1}, True),  # numbers compare by value
        ('{"b":2,"a":1}', {"a": 1, "b": 2}, True),  # key order is irrelevant
        ('{"a":1}', {"a": True}, False),  # a boolean is not a number
        ("[true]", [1], False),
    ],
)
def test_text_serialization_fast_path_keeps_json_semantics(text: str, value: Any, serializes: bool) -> None:
    tool = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {}}
    result = {"content": [{"type": "text", "text": text}], "structuredContent": value}
    if serializes:
        validate_tool_result(tool, result)
    else:
        with pytest.raises(ContractViolation) as violation:
            validate_tool_result(tool, result)
        assert violation.value.category == "missing_text_serialization"


def test_header_annotation_memo_is_bounded_and_exact() -> None:
    bound = header_contract._ANNOTATIONS_CACHE_SIZE
    for index in range(bound * 3):
        schema = {
            "type": "object",
            "properties": {f"p{index}": {"type": "string", "x-mcp-header": f"H{index}"}},
        }
        (annotation,) = header_annotations(schema)
        assert annotation.header == f"Mcp-Param-H{index}"
        assert len(header_contract._ANNOTATIONS) <= bound
    invalid = {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}
    for _ in range(2):  # a memoized refusal is still a refusal
        try:
            header_annotations(invalid)
        except AdmissionError as refusal:
            assert refusal.category
        else:
            raise AssertionError("number-typed header annotation admitted")
