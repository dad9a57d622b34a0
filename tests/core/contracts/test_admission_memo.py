"""The admission verdict memo is exact: memoized admission equals uncached admission, listing for listing.

Hypothesis draws listings of descriptors (valid and invalid schemas, header annotations, sensitive
names, duplicates, bad names, non-objects) and admits them twice through one memo — cold, then warm —
and once uncached, after random byte-level edits of a previously admitted listing: every report must
be equal. A changed descriptor is checked afresh, never answered from the memo.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.contracts import AdmissionPolicy, admit_tools
from agent_connector_sdk.core.contracts import _admission as admission

PROPERTIES = st.sampled_from(
    [
        {"type": "string"},
        {"type": "string", "x-mcp-header": "Region"},
        {"type": "number", "x-mcp-header": "N"},
        {"type": "string", "x-mcp-header": "Api-Key"},
        {"type": "string", "pattern": "^[a-z]+$"},
        {"type": "string", "pattern": "\\Z"},
        {"type": "string", "pattern": "(?<n>x)"},
        {"type": "nope"},
        {"$ref": "#/$defs/Missing"},
        {"type": "integer", "minimum": 1, "maximum": 5},
    ]
)
SCHEMAS = st.one_of(
    st.dictionaries(st.sampled_from(["a", "b", "region", "password"]), PROPERTIES, max_size=3).map(
        lambda props: {"type": "object", "properties": props}
    ),
    st.sampled_from(
        [
            {"type": "array"},
            {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
            {"$schema": "http://example.com/unknown", "type": "object"},
            {"type": "object", "additionalProperties": False, "required": ["x"]},
        ]
    ),
)
NAMES = st.sampled_from(["alpha", "beta", "gamma", "", "x" * 129, "bad\nname", "dup"])


@st.composite
def descriptors(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 20)) == 0:
        return draw(st.sampled_from([None, "text", 3, []]))
    item: dict[str, Any] = {"name": draw(NAMES), "inputSchema": draw(SCHEMAS)}
    if draw(st.booleans()):
        item["outputSchema"] = draw(st.one_of(SCHEMAS, st.just("not a schema")))
    if draw(st.booleans()):
        item["description"] = draw(st.text(max_size=20))
    return item


def _edit(listing: list[Any], data: st.DataObject) -> list[Any]:
    """One small change somewhere: a description, a property type, a pattern, or a name."""
    edited = copy.deepcopy(listing)
    objects = [i for i, item in enumerate(edited) if isinstance(item, dict)]
    if not objects:
        return edited
    item = edited[data.draw(st.sampled_from(objects))]
    how = data.draw(st.sampled_from(["description", "type", "name", "int-vs-bool"]))
    if how == "description":
        item["description"] = item.get("description", "") + "!"
    elif how == "type":
        item["inputSchema"] = {**item["inputSchema"], "type": "string"}
    elif how == "name":
        item["name"] = str(item.get("name")) + "2"
    else:  # a changed byte that compares equal in Python: True == 1, but not as JSON
        item["inputSchema"] = {**item["inputSchema"], "minProperties": data.draw(st.sampled_from([1, True]))}
    return edited


@settings(max_examples=150, deadline=None)
@given(
    listing=st.lists(descriptors(), max_size=6),
    strict=st.booleans(),
    data=st.data(),
)
def test_memoized_admission_equals_uncached(listing: list[Any], strict: bool, data: st.DataObject) -> None:
    policy = AdmissionPolicy(profile="strict" if strict else "spec")
    memo = admission._VerdictMemo(16)
    cold = admission._admit(listing, policy, memo)
    warm = admission._admit(listing, policy, memo)
    uncached = admission._admit(listing, policy, None)
    assert cold == warm == uncached
    edited = _edit(listing, data)
    assert admission._admit(edited, policy, memo) == admission._admit(edited, policy, None)


def test_a_re_list_is_answered_from_the_memo_and_a_changed_byte_is_not() -> None:
    memo = admission._VerdictMemo(16)
    good: dict[str, Any] = {
        "name": "route",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
    policy = AdmissionPolicy()
    calls: list[str] = []
    original = admission._verdict

    def counting(item: Any, tool: str, policy: AdmissionPolicy, *scanned: Any) -> Any:
        calls.append(tool)
        return original(item, tool, policy, *scanned)

    admission._verdict = counting  # type: ignore[assignment]
    try:
        admission._admit([good], policy, memo)
        admission._admit([copy.deepcopy(good)], policy, memo)
        assert calls == ["route"]
        changed = copy.deepcopy(good)
        changed["inputSchema"]["properties"]["q"]["type"] = "strin"
        report = admission._admit([changed], policy, memo)
        assert calls == ["route", "route"] and report.rejected[0]["category"] == "invalid_schema"
        admission._admit([good], AdmissionPolicy(profile="spec"), memo)  # another policy: checked afresh
        assert calls == ["route", "route", "route"]
    finally:
        admission._verdict = original


def test_admit_tools_uses_the_process_memo() -> None:
    good = {"name": "memoized", "inputSchema": {"type": "object", "properties": {"m": {"type": "string"}}}}
    admit_tools([good])
    key = admission._VERDICTS.key(good, AdmissionPolicy())
    assert key is not None and admission._VERDICTS.get(key) == (True, None)
