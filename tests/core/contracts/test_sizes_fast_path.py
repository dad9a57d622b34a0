"""``json_bound_crossed`` counts exactly as the general walk does, on the built-in types' fast path too.

The reference below is the walk before its exact-type fast path (every node through ``isinstance`` on
the ABCs); hypothesis feeds both JSON values (non-ASCII keys and strings, nesting) and mapping/list/str
subclasses that must still take the general branches, under random byte and depth bounds.
"""

from __future__ import annotations

from collections import OrderedDict, UserDict
from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.contracts import json_bound_crossed
from agent_connector_sdk.core.contracts._sizes import Crossed


def _reference(value: Any, *, max_bytes: int, max_depth: int | None = None) -> Crossed | None:
    def text_bytes(text: str) -> int:
        return len(text.encode("utf-8", "surrogatepass"))

    size = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            if max_depth is not None and depth > max_depth:
                return "depth"
            size += 2 + len(item)
            for key, member in item.items():
                size += 3 + (text_bytes(key) if isinstance(key, str) else 8)
                stack.append((member, depth + 1))
        elif isinstance(item, list):
            if max_depth is not None and depth > max_depth:
                return "depth"
            size += 2 + len(item)
            stack.extend((member, depth + 1) for member in item)
        elif isinstance(item, str):
            size += 2 + text_bytes(item)
        else:
            size += 8
        if size > max_bytes:
            return "bytes"
    return None


class _Text(str):
    pass


class _Items(list[Any]):
    pass


_texts = st.text(max_size=8) | st.text(max_size=4).map(_Text)
_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _texts
_keys = st.text(max_size=6) | st.integers(min_value=0, max_value=9)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(_Items)
        | st.dictionaries(_keys, inner, max_size=4)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3).map(OrderedDict)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3).map(lambda d: UserDict(d))
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(_values, st.integers(min_value=0, max_value=400), st.none() | st.integers(min_value=0, max_value=5))
def test_fast_path_counts_exactly_as_the_general_walk(
    value: Any, max_bytes: int, max_depth: int | None
) -> None:
    assert json_bound_crossed(value, max_bytes=max_bytes, max_depth=max_depth) == _reference(
        value, max_bytes=max_bytes, max_depth=max_depth
    )
