"""Consume gate: tool results against the tool's published contract (any JSON output, errors included)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.contracts import (
    ValidatorCache,
    server_text,
    validate_arguments,
    validate_tool_result,
)
from agent_connector_sdk.core.contracts._results import json_equal
from agent_connector_sdk.core.contracts.errors import ContractViolation
from tests.support.schema_cases import ANY_JSON_STRUCTURED_CONTENT, ARRAY_TOOL

PLAIN_TOOL = {"name": "plain", "inputSchema": {"type": "object"}}


def with_output(schema: Any) -> dict[str, Any]:
    return {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema}


def structured(value: Any, **extra: Any) -> dict[str, Any]:
    """A result carrying ``value`` as structuredContent plus its compatibility serialization."""
    return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value, **extra}


def violation(tool: dict[str, Any], result: Any, **kwargs: Any) -> ContractViolation:
    with pytest.raises(ContractViolation) as info:
        validate_tool_result(tool, result, **kwargs)
    assert info.value.gate == "consume"
    return info.value


# --- envelope ---------------------------------------------------------------------------------------


def test_plain_result_without_output_schema() -> None:
    validate_tool_result(PLAIN_TOOL, {"content": [{"type": "text", "text": "ok"}]})
    validate_tool_result(PLAIN_TOOL, {"content": [], "resultType": "complete", "isError": False})
    validate_tool_result(PLAIN_TOOL, {"content": [], "structuredContent": [1, "free-form"]})
    validate_tool_result({**PLAIN_TOOL, "outputSchema": None}, {"content": []})


@pytest.mark.parametrize("result_type", ["input_required", "task", "", None, "COMPLETE", 1])
def test_result_type_other_than_complete_is_invalid(result_type: Any) -> None:
    err = violation(PLAIN_TOOL, {"content": [], "resultType": result_type})
    assert (err.category, err.path) == ("invalid_result_type", "/resultType")


@pytest.mark.parametrize(
    ("result", "path"),
    [
        ({}, "/content"),
        ({"content": None}, "/content"),
        ({"content": {"type": "text", "text": "x"}}, "/content"),
        ({"content": [], "isError": "true"}, "/isError"),
        ({"content": [], "isError": 1}, "/isError"),
        ([], ""),
        (None, ""),
    ],
)
def test_malformed_envelope(result: Any, path: str) -> None:
    err = violation(PLAIN_TOOL, result)
    assert (err.category, err.path) == ("malformed_result", path)


def test_invalid_block_is_reported_at_its_position() -> None:
    result = {
        "content": [
            {"type": "text", "text": "fine"},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"},
            {"type": "text", "text": "x", "annotations": {"priority": 7}},
        ]
    }
    err = violation(PLAIN_TOOL, result)
    assert (err.category, err.path) == ("invalid_content_block", "/content/2/annotations/priority")
    err = violation(PLAIN_TOOL, {"content": [{"type": "hologram"}]})
    assert (err.category, err.path) == ("unknown_content_type", "/content/0/type")


# --- structured output of any JSON type -----------------------------------------------------------


def test_array_output_is_accepted_and_an_object_for_the_same_schema_refused() -> None:
    validate_tool_result(ARRAY_TOOL, structured([1, 2, 3]))
    err = violation(ARRAY_TOOL, structured({"items": [1, 2, 3]}))
    assert (err.category, err.path) == ("output_schema_violation", "/structuredContent")
    assert "'type'" in err.message


def test_violation_path_points_into_structured_content() -> None:
    err = violation(ARRAY_TOOL, structured([1, "two", 3]))
    assert (err.category, err.path) == ("output_schema_violation", "/structuredContent/1")
    assert "two" not in err.message


@pytest.mark.parametrize(
    ("schema", "value"),
    ANY_JSON_STRUCTURED_CONTENT,
)
def test_any_json_value_is_valid_structured_content(schema: Any, value: Any) -> None:
    validate_tool_result(with_output(schema), structured(value))


def test_present_null_is_a_value_and_absent_is_missing() -> None:
    nullable = with_output({"type": "null"})
    validate_tool_result(nullable, {"content": [{"type": "text", "text": "null"}], "structuredContent": None})
    err = violation(nullable, {"content": [{"type": "text", "text": "null"}]})
    assert (err.category, err.path) == ("missing_structured_content", "/structuredContent")
    # null is validated like any value: an object schema refuses it.
    err = violation(with_output({"type": "object"}), structured(None))
    assert (err.category, err.path) == ("output_schema_violation", "/structuredContent")


def test_is_error_result_must_still_carry_conforming_structured_content() -> None:
    schema = with_output(
        {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}
    )
    err = violation(schema, {"content": [{"type": "text", "text": "boom"}], "isError": True})
    assert err.category == "missing_structured_content"
    err = violation(schema, structured({"message": "boom"}, isError=True))
    assert (err.category, err.path) == ("output_schema_violation", "/structuredContent/error")
    validate_tool_result(schema, structured({"error": "boom"}, isError=True))


# --- the compatibility serialization ----------------------------------------------------------------


def test_text_serialization_is_compared_as_json() -> None:
    tool = with_output({"type": "object"})
    value = {"a": 1, "b": [True, None, "x"]}
    for text in ('{"b": [true, null, "x"], "a": 1}', '{\n  "a": 1.0,\n  "b": [true,null,"x"]\n}'):
        validate_tool_result(tool, {"content": [{"type": "text", "text": text}], "structuredContent": value})


def test_serialization_may_be_any_text_block() -> None:
    result = {
        "content": [
            {"type": "text", "text": "Here are the numbers:"},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"},
            {"type": "text", "text": "[1,2]"},
        ],
        "structuredContent": [1, 2],
    }
    validate_tool_result(ARRAY_TOOL, result)


@pytest.mark.parametrize(
    ("value", "texts"),
    [
        ([1, 2], []),
        ([1, 2], ["[1, 2, 3]", "1, 2"]),
        ([1], ["[true]"]),  # a boolean is never the number 1
        (True, ["1"]),
        ({"a": 1}, ['{"a": 1, "b": 2}']),
        (None, ["", "None"]),
        ("hello", ["'hello'", "hello "]),
        (1.0, ["NaN", "Infinity"]),
    ],
)
def test_missing_text_serialization_is_refused(value: Any, texts: list[str]) -> None:
    result = {"content": [{"type": "text", "text": t} for t in texts], "structuredContent": value}
    err = violation(with_output(True), result)
    assert (err.category, err.path) == ("missing_text_serialization", "/content")
    # A project rule (the spec's SHOULD): the default profile reports it and keeps the result.
    (finding,) = validate_tool_result(with_output(True), result, profile="default")
    assert (finding.rule, finding.category, finding.path) == ("text-serialization", err.category, "/content")


def test_string_output_may_be_serialized_raw_or_as_json() -> None:
    tool = with_output({"type": "string"})
    validate_tool_result(tool, {"content": [{"type": "text", "text": "hello"}], "structuredContent": "hello"})
    validate_tool_result(
        tool, {"content": [{"type": "text", "text": '"hello"'}], "structuredContent": "hello"}
    )


# --- schemas we refuse to evaluate --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "category"),
    [
        ({"$schema": "https://example.com/my-dialect", "type": "array"}, "unsupported_dialect"),
        ({"$ref": "http://127.0.0.1:1/out.json"}, "unresolvable_ref"),
        ({"type": "list"}, "invalid_schema"),  # (was `invalid_output_schema`: one category everywhere now)
    ],
)
def test_unusable_output_schema_never_passes(schema: Any, category: str) -> None:
    assert violation(with_output(schema), structured([1])).category == category


def test_arguments_and_results_share_one_cache() -> None:
    cache = ValidatorCache(maxsize=8)
    tool = {
        "name": "t",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "outputSchema": {"type": "array"},
    }
    validate_arguments(tool, {"n": 1}, cache=cache)
    validate_tool_result(tool, structured([]), cache=cache)
    validate_tool_result(tool, structured([]), cache=cache)
    assert tool["inputSchema"] in cache and tool["outputSchema"] in cache
    assert (len(cache), cache.hits) == (2, 1)


# --- JSON equality ------------------------------------------------------------------------------------


def test_json_equal_follows_json_not_python() -> None:
    assert json_equal(1, 1.0)
    assert not json_equal(True, 1) and not json_equal(0, False)
    assert not json_equal(None, False) and not json_equal("1", 1)
    assert json_equal({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not json_equal({"a": 1}, {"a": 1, "b": None})
    assert not json_equal([1, 2], [2, 1])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(value=json_values, indent=st.sampled_from([None, 0, 2]), sort_keys=st.booleans())
def test_any_json_serialization_of_the_value_qualifies(
    value: Any, indent: int | None, sort_keys: bool
) -> None:
    text = json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=bool(indent))
    validate_tool_result(
        with_output(True), {"content": [{"type": "text", "text": text}], "structuredContent": value}
    )


# --- profiles: spec MUST rules reject, project rules are findings by default ------------------------

OBJECT_TOOL = with_output({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})


def test_an_error_result_without_structured_content_is_a_finding_by_default_and_refused_when_strict() -> None:
    result = {"content": [{"type": "text", "text": "Invalid timezone: 'Mars/Olympus'"}], "isError": True}
    (finding,) = validate_tool_result(OBJECT_TOOL, result, profile="default")
    assert (finding.rule, finding.category) == ("error-structured-content", "missing_structured_content")
    err = violation(OBJECT_TOOL, result, profile="strict")
    assert err.category == "missing_structured_content"
    assert err.server_text == "Invalid timezone: 'Mars/Olympus'"  # the server's words travel with it
    assert "Mars" not in str(err)  # ... as an attribute, never in the message


def test_an_error_result_whose_structured_content_does_not_conform_is_a_finding_by_default() -> None:
    result = structured({"result": {"error": "boom"}}, isError=True)
    (finding,) = validate_tool_result(OBJECT_TOOL, result, profile="default")
    assert (finding.rule, finding.category) == ("error-output-schema", "output_schema_violation")
    assert violation(OBJECT_TOOL, result).category == "output_schema_violation"


@pytest.mark.parametrize(
    ("result", "category"),
    [
        ({"content": [{"type": "text", "text": "{}"}]}, "missing_structured_content"),
        (structured({"ok": "yes"}), "output_schema_violation"),
        ({"content": [{"type": "text"}], "structuredContent": {"ok": True}}, "invalid_content_block"),
        ({"content": [], "structuredContent": {"ok": True}, "resultType": "task"}, "invalid_result_type"),
    ],
)
def test_spec_rules_reject_in_the_default_profile_too(result: dict[str, Any], category: str) -> None:
    assert violation(OBJECT_TOOL, result, profile="default").category == category


def test_a_structured_result_without_its_text_block_is_accepted_with_a_finding() -> None:
    # server-filesystem / server-memory: structuredContent with a human text, not its JSON.
    result = {"content": [{"type": "text", "text": "done"}], "structuredContent": {"ok": True}}
    (finding,) = validate_tool_result(OBJECT_TOOL, result, profile="default")
    assert finding.rule == "text-serialization"
    assert validate_tool_result(OBJECT_TOOL, structured({"ok": True}), profile="default") == ()


def test_the_server_text_on_a_refusal_is_sanitized_and_bounded() -> None:
    hostile = "\x1b[31mred\u202e" + "x" * 5000
    err = violation(OBJECT_TOOL, {"content": [{"type": "text", "text": hostile}], "structuredContent": {}})
    assert err.server_text is not None
    assert "\x1b" not in err.server_text and "\u202e" not in err.server_text
    assert len(err.server_text) <= 2_100


def test_server_text_with_line_breaks_keeps_them_and_still_escapes_every_other_control() -> None:
    result = {
        "content": [
            {"type": "text", "text": "line one\r\n\x1b[31mred\x1b[0m\nlone\rcr\u202e"},
            {"type": "image", "data": "", "mimeType": "image/png"},
            {"type": "text", "text": "second block"},
        ]
    }
    flat = "line one\\x0d\\x0a\\x1b[31mred\\x1b[0m\\x0alone\\x0dcr\\u202e\\x0asecond block"
    assert server_text(result) == flat
    kept = server_text(result, line_breaks=True)
    assert kept == "line one\n\\x1b[31mred\\x1b[0m\nlone\\x0dcr\\u202e\nsecond block"
    assert server_text({"content": [{"type": "image"}]}, line_breaks=True) is None


def test_server_text_with_line_breaks_stays_within_its_limit() -> None:
    many = {"content": [{"type": "text", "text": "\n".join(["abcdefghi"] * 1000)}]}
    kept = server_text(many, limit=100, line_breaks=True)
    assert kept is not None
    lines = kept.split("\n")
    assert lines[:10] == ["abcdefghi"] * 10 and lines[-1] == "…[more lines]"
    assert len(kept) <= 100 + len("\n…[more lines]")
    long_line = server_text({"content": [{"type": "text", "text": "y" * 500}]}, limit=100, line_breaks=True)
    assert long_line is not None and long_line.startswith("y" * 100 + "…[+") and len(long_line) < 120
