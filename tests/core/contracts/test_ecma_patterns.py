"""``pattern`` and ``patternProperties`` are ECMA-262 (u flag) at every gate: admission, the host's
argument and result validation, and the server's argument check (one module, ``_json_schema``)."""

from __future__ import annotations

import marshal
from typing import Any

import pytest

from agent_connector_sdk.core.contracts import admit_tools, validate_instance
from agent_connector_sdk.core.contracts._json_schema import (
    ALL_DIALECTS,
    DIALECTS,
    DialectName,
    check_schema,
    ecma_regex_valid,
    screen_schemas,
)

UNICODE_WORDS = r"^[\p{L}\p{N}_-]+$"  # what zod's Unicode rules emit
NAMED_GROUPS = r"^(?<year>\d{4})-(?<m>\d{2})$"


def _tool(pattern: str, dialect: DialectName | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"q": {"type": "string", "pattern": pattern}},
        "patternProperties": {pattern: {"type": "string"}},
    }
    if dialect is not None:
        schema["$schema"] = DIALECTS[dialect].uri
    return {"name": "t", "inputSchema": schema, "outputSchema": schema}


@pytest.mark.parametrize("dialect", [None, "draft-07", "2019-09"])
@pytest.mark.parametrize("pattern", [UNICODE_WORDS, NAMED_GROUPS, r"\p{Script=Greek}", r"^\u{1F600}$"])
def test_valid_ecma_262_patterns_are_admitted_in_every_dialect(
    pattern: str, dialect: DialectName | None
) -> None:
    report = admit_tools([_tool(pattern, dialect)])
    assert list(report.admitted) == ["t"], report.rejected
    assert check_schema(_tool(pattern, dialect)["inputSchema"]) is None


@pytest.mark.parametrize(
    "pattern",
    [r"\Z", r"(?P<x>a)", r"(?i)a", r"a{,3}", r"\-", r"\p{NotAProperty}", r"(?<a>x)(?<a>y)", r"[z-a]", "("],
)
def test_patterns_that_are_not_ecma_262_stay_rejected(pattern: str) -> None:
    assert not ecma_regex_valid(pattern)
    report = admit_tools([_tool(pattern)])
    (rejection,) = report.rejected
    assert rejection["category"] == "invalid_schema"
    assert "pattern" in rejection["reason"]  # the pointer (or keyword) says where, never the value
    schema = {"type": "string", "pattern": pattern}
    failure = validate_instance(schema, "x")
    assert failure is not None and failure.kind == "invalid_schema"
    # The screen never clears what the full check refuses.
    assert not screen_schemas([schema], marshal.dumps(schema, 2), dialects=ALL_DIALECTS)


def test_a_key_of_pattern_properties_is_held_to_ecma_262_too() -> None:
    schema = {"type": "object", "patternProperties": {r"(?P<n>x)": {"type": "string"}}}
    failure = check_schema(schema)
    assert failure is not None and failure.kind == "invalid_schema"
    assert "patternProperties" in failure.message


def test_unicode_property_escapes_match_as_ecma_262_says() -> None:
    schema = {"type": "string", "pattern": UNICODE_WORDS}
    assert validate_instance(schema, "Zürich_ünïcode-42") is None
    assert validate_instance(schema, "\u0663\u0664") is None  # \p{N}: Arabic-Indic digits are numbers
    assert validate_instance(schema, "two words") is not None
    assert validate_instance(schema, "") is not None


def test_named_groups_match_as_ecma_262_says() -> None:
    schema = {"type": "string", "pattern": NAMED_GROUPS}
    assert validate_instance(schema, "2026-12") is None
    assert validate_instance(schema, "2026-1") is not None
    assert validate_instance(schema, "\u0662\u0660\u0662\u0666-12") is not None  # \d is ASCII only


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        (r"^\d$", "7", True),
        (r"^\d$", "\u0663", False),  # ECMA \d is [0-9]
        (r"^\w+$", "snake_case_1", True),
        (r"^\w+$", "straße", False),  # ECMA \w is [A-Za-z0-9_], also with the u flag
        (r"^\s$", "\u00a0", True),  # ECMA \s: every Zs character, U+FEFF and the line terminators
        (r"^\s$", "\ufeff", True),
        (r"^\s$", "\u2028", True),
        (r"^\S$", "\u00a0", False),
        (r"^\D$", "\u0663", True),
        (r"^.$", "\U0001f600", True),  # with the u flag "." is one code point, not a UTF-16 unit
    ],
)
def test_character_classes_follow_ecma_262(pattern: str, value: str, matches: bool) -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": pattern}}}
    assert (validate_instance(schema, {"v": value}) is None) is matches
    keyed = {"type": "object", "patternProperties": {pattern: {"type": "integer"}}}
    # A key the pattern matches is held to its subschema; one it does not match is unconstrained.
    assert (validate_instance(keyed, {value: "not an integer"}) is None) is not matches


def test_pathological_nesting_is_refused_without_recursing() -> None:
    # regress bounds its parser's nesting: a refusal, never a stack overflow of this process.
    deep = "(" * 100_000 + "a" + ")" * 100_000
    assert not ecma_regex_valid(deep)
    failure = validate_instance({"type": "string", "pattern": deep}, "a")
    assert failure is not None and failure.kind == "invalid_schema"
