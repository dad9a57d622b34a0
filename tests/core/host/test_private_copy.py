"""The admitted tool's private descriptor copy: equal to a deep copy, independent of the caller's dict."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.host._sequence import _private_copy

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=4), _json, max_size=4))
def test_the_copy_equals_a_deep_copy_with_the_same_types_and_order(descriptor: dict[str, Any]) -> None:
    private = _private_copy(descriptor)
    expected = copy.deepcopy(descriptor)
    assert private == expected and repr(private) == repr(expected)  # repr: True vs 1, key order
    assert type(private) is dict


def test_the_caller_mutating_its_descriptor_changes_nothing() -> None:
    shared = {"type": "string"}
    descriptor: dict[str, Any] = {
        "name": "t",
        "inputSchema": {"type": "object", "properties": {"a": shared, "b": shared}},
    }
    private = _private_copy(descriptor)
    shared["type"] = "integer"
    descriptor["inputSchema"]["properties"]["c"] = {}
    assert private == {
        "name": "t",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
    }


def test_what_marshal_cannot_write_is_deep_copied() -> None:
    descriptor = {"name": "t", "inputSchema": OrderedDict(type="object")}
    private = _private_copy(descriptor)
    assert private == descriptor and type(private["inputSchema"]) is OrderedDict
    assert private["inputSchema"] is not descriptor["inputSchema"]
