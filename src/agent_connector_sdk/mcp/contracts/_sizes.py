"""How big and how deep a JSON value is, measured without serializing it and without recursion (pure).

Shared by the Admit gate (descriptor size and schema depth) and the host's result bound: one walk
that stops at the first bound crossed, so a 50 MB schema or a 10,000-level one costs at most the walk
up to the bound, never a copy and never a ``RecursionError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["Crossed", "json_bound_crossed"]

Crossed = Literal["bytes", "depth"]


def _text_bytes(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def json_bound_crossed(value: Any, *, max_bytes: int, max_depth: int | None = None) -> Crossed | None:
    """``"bytes"`` when ``value``'s compact JSON encoding (UTF-8, strings counted without escapes) is
    larger than ``max_bytes``, ``"depth"`` when it nests more than ``max_depth`` containers below the
    top level, else ``None``. Numbers, booleans and null count 8 bytes each."""
    size = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        # The exact built-in types first (what parsed JSON is made of): an ABC ``isinstance`` per
        # node was most of this walk's cost on a large catalog. Anything else takes the general
        # checks below, in their original order, so every value is counted as before.
        if kind is str:
            size += 2 + (len(item) if item.isascii() else _text_bytes(item))
        elif kind is dict:
            if max_depth is not None and depth > max_depth:
                return "depth"
            size += 2 + len(item)
            child = depth + 1
            for key, member in item.items():
                if type(key) is str:
                    size += 3 + (len(key) if key.isascii() else _text_bytes(key))
                else:
                    size += 3 + (_text_bytes(key) if isinstance(key, str) else 8)
                stack.append((member, child))
        elif kind is list:
            if max_depth is not None and depth > max_depth:
                return "depth"
            size += 2 + len(item)
            child = depth + 1
            stack.extend([(member, child) for member in item])
        elif isinstance(item, Mapping):
            if max_depth is not None and depth > max_depth:
                return "depth"
            size += 2 + len(item)
            for key, member in item.items():
                size += 3 + (_text_bytes(key) if isinstance(key, str) else 8)
                stack.append((member, depth + 1))
        elif isinstance(item, list):
            if max_depth is not None and depth > max_depth:
                return "depth"
            size += 2 + len(item)
            stack.extend((member, depth + 1) for member in item)
        elif isinstance(item, str):
            size += 2 + _text_bytes(item)
        else:
            size += 8
        if size > max_bytes:
            return "bytes"
    return None
