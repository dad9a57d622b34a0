"""The consumer's memo of parsed navigation entries answers exactly as parsing again: for any entry
(valid, or changed in one field to another value or another JSON type), the memo's answer equals
``SchemaNavigation.model_validate``'s, a refusal is refused again, and the memo stays bounded."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from agent_connector_sdk.core.disclosure_navigation import SchemaNavigation
from agent_connector_sdk.mcp.host.disclosure_consumer import _ParsedEntries

_DIGEST = "a" * 64
_ENTRY: dict[str, Any] = {
    "kind": "schema-navigation",
    "name": "pulls_list",
    "title": None,
    "description": "Lists pull requests.",
    "description_cut": False,
    "arguments": [{"name": "owner", "type": "string", "required": True}],
    "arguments_omitted": 0,
    "input_schema_sha256": _DIGEST,
    "output_schema_sha256": None,
    "schema_sha256": "b" * 64,
    "fragment_count": 1,
    "manifest_uri": "schema://tools/pulls_list/manifest",
    "headers": [{"argument": ["owner"], "header": "Mcp-Param-Owner", "type": "string"}],
    "annotations": {"readOnlyHint": True},
    "contract_sha256": "c" * 64,
}
# Values of other JSON types and close spellings: strict parsing refuses some of them (1 for a bool,
# 1.0 for an int, "x" for a digest), which the memo's key must keep apart from the valid ones.
_VARIANTS: st.SearchStrategy[Any] = st.sampled_from(
    [None, True, False, 0, 1, 1.0, 2, "", "x", _DIGEST, [], {}, "pulls_list"]
)


def _judged(parse: Any, raw: Any) -> Any:
    try:
        return ("ok", parse(raw))
    except ValidationError as error:
        return ("refused", [(item["loc"], item["type"]) for item in error.errors()])


@given(st.lists(st.tuples(st.sampled_from(sorted(_ENTRY)), _VARIANTS), max_size=3), st.booleans())
def test_the_memo_answers_as_parsing_again(changes: list[tuple[str, Any]], annotations_first: bool) -> None:
    memo = _ParsedEntries(max_entries=4)
    raw = copy.deepcopy(_ENTRY)
    for field, value in changes:
        raw[field] = value
    if annotations_first:  # another key order: another key, the same verdict
        raw = {"annotations": raw.pop("annotations"), **raw}
    for _ in range(2):  # the second answer may come from the memo
        assert _judged(memo.parse, raw) == _judged(SchemaNavigation.model_validate, raw)
    # The valid entry is never answered for the changed one, nor the changed one for it.
    assert _judged(memo.parse, _ENTRY) == _judged(SchemaNavigation.model_validate, _ENTRY)
    assert _judged(memo.parse, raw) == _judged(SchemaNavigation.model_validate, raw)


def test_a_hit_is_the_same_parse_and_a_refusal_is_not_kept() -> None:
    memo = _ParsedEntries(max_entries=2)
    first = memo.parse(copy.deepcopy(_ENTRY))
    assert memo.parse(copy.deepcopy(_ENTRY)) is first  # an equal value: no second parse
    assert first == SchemaNavigation.model_validate(_ENTRY)
    flipped = {**copy.deepcopy(_ENTRY), "annotations": {"readOnlyHint": 1}}  # 1 is not a bool, strictly
    for _ in range(2):
        with pytest.raises(ValidationError):
            memo.parse(flipped)
    assert len(memo) == 1
    for index in range(5):
        memo.parse({**copy.deepcopy(_ENTRY), "name": f"tool_{index}"})
    assert len(memo) == 2  # bounded, least recently used out first
    assert memo.parse(copy.deepcopy(_ENTRY)) is not first  # evicted: parsed again
    not_marshalled = {**copy.deepcopy(_ENTRY), "title": type("Text", (str,), {})("t")}  # a str subclass
    assert memo.parse(not_marshalled) == SchemaNavigation.model_validate(not_marshalled)
