"""How big and how deep a JSON value is, measured without serializing it and without recursion (pure).

Shared by the Admit gate (descriptor size and schema depth) and the host's result bound: one walk
that stops at the first bound crossed, so a 50 MB schema or a 10,000-level one costs at most the walk
up to the bound, never a copy and never a ``RecursionError``.
"""

from __future__ import annotations

import functools
import marshal
from collections.abc import Mapping
from typing import Any, Final, Literal

import jsonschema_rs

__all__ = ["Crossed", "json_bound_crossed", "screened_bound_crossed"]

Crossed = Literal["bytes", "depth"]


def _text_bytes(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def json_bound_crossed(value: Any, *, max_bytes: int, max_depth: int | None = None) -> Crossed | None:
    """``"bytes"`` when ``value``'s compact JSON encoding (UTF-8, strings counted without escapes) is
    larger than ``max_bytes``, ``"depth"`` when it nests more than ``max_depth`` containers below the
    top level, else ``None``. Numbers, booleans and null count 8 bytes each.

    Without ``max_depth`` (a result's size, on every call) a value well under ``max_bytes`` is cleared
    by one ``marshal.dumps`` in C (:func:`_bytes_screen`), not walked node by node in Python: the
    verdict is the walk's either way (``tests/core/contracts/test_schema_screen.py``)."""
    if max_depth is None and _bytes_screen(value, max_bytes):
        return None
    return _walk(value, max_bytes=max_bytes, max_depth=max_depth)


def _bytes_screen(value: Any, max_bytes: int) -> bool:
    """True only when :func:`_walk` measures ``value`` at most ``max_bytes`` (see ``_EXCESS``: the
    marshalled length plus each type code's worst excess bounds the measure from above)."""
    try:
        marshalled = marshal.dumps(value, 2)
    except (ValueError, TypeError):  # not plain data, or deeper than marshal writes: the walk decides
        return False
    return _marshalled_bound(marshalled, max_bytes) <= max_bytes


def _marshalled_bound(marshalled: bytes, max_bytes: int) -> int:
    """An upper bound of :func:`_walk`'s measure of the value ``marshalled`` encodes (format 2)."""
    size = len(marshalled)
    # Every byte counted as a worst-case type code first (no copy); only when that is too much,
    # each type code's occurrences (a superset of the nodes: content bytes may look alike).
    if (_MAX_EXCESS + 1) * size > max_bytes:
        size += sum(
            weight * (len(marshalled) - len(marshalled.translate(None, codes))) for codes, weight in _EXCESS
        )
    return size


def _walk(value: Any, *, max_bytes: int, max_depth: int | None) -> Crossed | None:
    """The measure itself (see :func:`json_bound_crossed`), node by node."""
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


# ------------------------------------------------------------------------------ screened (admission)

# How ``marshal.dumps(value, 2)`` (:func:`~agent_connector_sdk.core.contracts._json_schema.exact_value_key`)
# relates to the measure above, node by node (format 2 writes every object in place, no references):
# a string is 5 + its UTF-8 bytes (measured 2 + them, or 3 + them as a key plus the entry's 1 for its
# comma), a dict 2 bytes plus its members (measured 2 plus 1 per entry), a list 5 plus its items
# (measured 2 plus 1 per item). A scalar other than a string measures 8 (+1 in a list, +4 as a key).
# So only nodes whose encoding starts with one of these type codes can measure more than they encode,
# by at most the weight given (the worst of value, list item and key): None, False, True,
# StopIteration, Ellipsis (1 byte written; 12 measured as a key); int (5), bytes, tuple, set,
# frozenset (at least 5); float (9); long (at least 11) and dict (2 written, 3 measured in a list).
_EXCESS: Final = ((b"NFTS.", 11), (b"is(<>", 7), (b"g", 3), (b"l{", 1))
_MAX_EXCESS: Final = 11
_DEPTH_SCREEN_LIMIT: Final = 128  # the engine validates one level per JSON level: keep it shallow


@functools.lru_cache(maxsize=8)
def _depth_validator(max_depth: int) -> jsonschema_rs.Validator:
    """A validator accepting exactly the JSON values whose containers sit at most ``max_depth`` levels
    below the top (as :func:`json_bound_crossed` counts depth): ``level{n}`` admits n nested levels."""
    levels: dict[str, Any] = {"level0": {"type": ["string", "number", "boolean", "null"]}}
    for level in range(1, max_depth + 2):
        below = {"$ref": f"#/$defs/level{level - 1}"}
        levels[f"level{level}"] = {"items": below, "additionalProperties": below}
    return jsonschema_rs.Draft202012Validator(
        {"$defs": levels, "$ref": f"#/$defs/level{max_depth + 1}"}, validate_formats=False
    )


def screened_bound_crossed(
    value: Any, marshalled: bytes, *, max_bytes: int, max_depth: int
) -> Crossed | None:
    """Exactly :func:`json_bound_crossed` (``value``, ``max_bytes``, ``max_depth``), usually without
    walking ``value`` in Python; ``marshalled`` must be ``marshal.dumps(value, 2)``.

    Bytes: the encoding's length plus, per type code that can measure more than it encodes, its
    occurrences times that excess bounds the measure from above (see ``_EXCESS``); at or under
    ``max_bytes`` no prefix of the walk can cross it either. Depth: the Rust engine checks it in one
    pass against a fixed schema; it reads a tuple as a list (stricter than the walk, which counts a
    tuple as a scalar). Whenever either screen cannot clear the value — large, deep, or not plain
    JSON — the walk decides, so every verdict, including which bound is reported first, is the walk's
    own (``tests/core/contracts/test_schema_screen.py`` checks this against the walk).
    """
    if max_depth <= _DEPTH_SCREEN_LIMIT and _marshalled_bound(marshalled, max_bytes) <= max_bytes:
        try:
            if _depth_validator(max_depth).is_valid(value):
                return None
        except Exception:  # whatever the engine cannot read (not JSON, ...): the walk decides
            pass
    return _walk(value, max_bytes=max_bytes, max_depth=max_depth)
