"""A schema keyed once (:class:`SchemaKey`) is judged exactly as the schema itself, on every path.

The host's gates validate a tool's arguments and results against keys made at its first call, so
the per-call validator lookup no longer serializes the (often large) schema. These tests pin that this
is only a cost change: the keyed verdict equals the verdict of the schema itself with a fresh cache
(the uncached path), also through a cache warmed by schemas that differ only in JSON-distinct values
Python calls equal (``1``, ``1.0``, ``True``) or in key order; and a key is a snapshot, never following
edits to the dict it was made from.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from agent_connector_sdk.core.contracts import (
    SchemaKey,
    ValidatorCache,
    validate_arguments,
    validate_instance,
    validate_tool_result,
)
from agent_connector_sdk.core.contracts._json_schema import validate_keyed
from agent_connector_sdk.core.contracts.errors import ArgumentError, ContractViolation
from agent_connector_sdk.mcp.host import HostCore, HostOptions

# Schemas that differ only by values Python calls equal, by key order, by dialect, plus broken ones.
SCHEMAS: list[Any] = [
    {"const": 1},
    {"const": 1.0},
    {"const": True},
    {"enum": [1, "a"]},
    {"enum": [True, "a"]},
    {"enum": [1.0, "a"]},
    {"type": "integer", "minimum": 1},
    {"type": "integer", "minimum": True},  # invalid: a boolean bound
    {"minimum": 1, "type": "integer"},
    {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]},
    {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"const": 1}], "additionalItems": False},
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "prefixItems": [{"const": True}]},
    {"$ref": "#/$defs/n", "$defs": {"n": {"const": 1}}},
    {"$ref": "https://example.invalid/remote.json"},  # never fetched: unresolvable_ref
    {"type": "nope"},  # invalid schema
    {"pattern": "(?<name>x)\\k<name>"},
    True,
    False,
]
INSTANCES: list[Any] = [1, 1.0, True, "a", 0, [1], [True], [1, 2], {"n": 1}, {"n": 1.5}, {"n": "x"}, {}, None]


def _uncached(schema: Any, instance: Any) -> Any:
    return validate_instance(schema, instance, cache=ValidatorCache(maxsize=1))


@pytest.mark.parametrize("order", ["forward", "backward"])
def test_keyed_verdicts_equal_the_uncached_path_through_one_shared_cache(order: str) -> None:
    shared = ValidatorCache(maxsize=64)
    schemas = SCHEMAS if order == "forward" else SCHEMAS[::-1]
    keys = [SchemaKey.of(schema) for schema in schemas]
    checked = 0
    for _ in range(2):  # the second round is served from the cache
        for schema, key in zip(schemas, keys, strict=True):
            assert key is not None
            for instance in INSTANCES:
                expected = _uncached(schema, instance)
                assert validate_keyed(key, instance, cache=shared) == expected, (schema, instance)
                # The schema itself through the same cache agrees too (both lookups share entries).
                assert validate_instance(schema, instance, cache=shared) == expected, (schema, instance)
                checked += 1
    assert checked == 2 * len(SCHEMAS) * len(INSTANCES)
    assert shared.hits > 0


def test_keys_separate_values_python_calls_equal() -> None:
    keys = {SchemaKey.of({"const": value}) for value in (1, 1.0, True)}
    assert len(keys) == 3 and None not in keys
    shared = ValidatorCache(maxsize=8)
    one, true = SchemaKey.of({"const": 1}), SchemaKey.of({"const": True})
    assert one is not None and true is not None
    assert validate_keyed(one, 1, cache=shared) is None
    refused = validate_keyed(true, 1, cache=shared)  # not the validator built for {"const": 1}
    assert refused is not None and refused.kind == "instance"
    assert validate_keyed(one, True, cache=shared) is not None


def test_a_key_is_a_snapshot_of_the_schema_it_was_made_from() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    key = SchemaKey.of(schema)
    assert key is not None
    shared = ValidatorCache(maxsize=8)
    assert validate_keyed(key, {"n": 1}, cache=shared) is None
    schema["properties"]["n"]["type"] = "string"  # an edit after keying changes nothing keyed
    assert validate_keyed(key, {"n": 1}, cache=shared) is None
    assert validate_keyed(key, {"n": "x"}, cache=ValidatorCache(maxsize=1)) is not None
    # ...while the edited dict itself is judged as it is now.
    assert validate_instance(schema, {"n": 1}, cache=shared) is not None


def test_what_cannot_be_keyed_has_no_key() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    assert SchemaKey.of(cyclic) is None
    assert SchemaKey.of({"x": object()}) is None


def test_keyed_gates_raise_what_the_descriptor_gates_raise() -> None:
    tool: dict[str, Any] = {
        "name": "t",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    }
    input_key, output_key = SchemaKey.of(tool["inputSchema"]), SchemaKey.of(tool["outputSchema"])
    arguments: Any
    for arguments in ({"n": 1}, {"n": 1.5}, {"n": True}, {}, None, []):
        outcomes: list[Any] = []
        for key in (None, input_key):
            try:
                validate_arguments(tool, arguments, input_key=key)
                outcomes.append(None)
            except ArgumentError as refused:
                outcomes.append((refused.category, str(refused), refused.path))
        assert outcomes[0] == outcomes[1], arguments
    for structured in ({"n": 1}, {"n": "x"}, {"n": True}, {}):
        result = {"content": [{"type": "text", "text": "x"}], "structuredContent": structured}
        outcomes = []
        for key in (None, output_key):
            try:
                outcomes.append(validate_tool_result(tool, result, profile="default", output_key=key))
            except ContractViolation as refused:
                outcomes.append((refused.category, str(refused), refused.path))
        assert outcomes[0] == outcomes[1], structured


DUAL: dict[str, Any] = {
    "name": "dual",
    "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
    "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
}


def _result(structured: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "x"}], "structuredContent": structured}


@pytest.mark.parametrize("origin", ["disclosure", "listing"])
def test_both_gates_run_on_every_call_against_the_schemas_keyed_at_the_first(origin: str) -> None:
    core = HostCore(HostOptions())
    descriptor = copy.deepcopy(DUAL)
    if origin == "disclosure":
        tool = core.admit_disclosed(descriptor, schema_sha256="0" * 64)
    else:
        core.admit_listing([descriptor], pages=1)
        tool = core.listed_tool("dual")
    assert "_gate_keys" not in tool.__dict__  # nothing keyed until a call needs it
    call = core.invoke(tool, {"n": 1})
    assert core.consume(call, _result({"n": 1})).structured_content == {"n": 1}
    assert "_gate_keys" in tool.__dict__
    # Edits to the caller's dict or to the tool's readable copy after that loosen no gate.
    descriptor["outputSchema"] = True
    tool.descriptor["outputSchema"]["properties"]["n"] = {}
    tool.descriptor["inputSchema"]["properties"]["n"] = {}
    for _ in range(2):  # each call runs Invoke and Consume again
        with pytest.raises(ArgumentError) as refused:
            core.invoke(tool, {"n": "x"})
        assert refused.value.category == "invalid_arguments"
        call = core.invoke(tool, {"n": 1})
        with pytest.raises(ContractViolation) as violated:
            core.consume(call, _result({"n": "not-an-int"}))
        assert violated.value.category == "output_schema_violation"
        call = core.invoke(tool, {"n": 2})
        assert core.consume(call, _result({"n": 2})).structured_content == {"n": 2}


def test_a_replaced_tool_carries_no_keys_of_the_old_descriptor() -> None:
    core = HostCore(HostOptions())
    tool = core.admit_disclosed(copy.deepcopy(DUAL), schema_sha256="0" * 64)
    core.consume(core.invoke(tool, {"n": 1}), _result({"n": 1}))
    other = dataclasses.replace(tool, descriptor={**DUAL, "outputSchema": {"type": "object"}})
    assert "_gate_keys" in tool.__dict__ and "_gate_keys" not in other.__dict__
