"""Consume: a ``tools/call`` result must honour the contract its tool published.

The server cannot force a host to trust its output, so the host checks it, and a server can run the
same function on its own results before sending them (the output self-check). ``result`` is the wire
dict (camelCase); ``tool`` the wire descriptor the host admitted.

Rules, in the order they are checked (the first failure is reported):

1. ``resultType`` absent or ``"complete"`` (absent means complete; any other value, including
   ``"input_required"`` which never belongs in a final tool result, is ``invalid_result_type``).
2. ``content`` a list (``malformed_result``) of valid content blocks (``invalid_content_block`` /
   ``unknown_content_type``, see :mod:`.content`); ``isError`` a boolean when present.
3. When the tool publishes an ``outputSchema`` (a non-null member):

   - ``structuredContent`` must be *present*, **even when ``isError`` is true** (project policy; the
     spec leaves error results open) — ``missing_structured_content``. Presence is about the key: a
     member whose value is JSON ``null`` is present and is validated like any other value;
   - it may be any JSON value (object, array, string, number, boolean, null) and must validate
     against the output schema (``output_schema_violation``, path ``/structuredContent/...``); a
     schema we refuse to evaluate yields ``invalid_output_schema``, ``unsupported_dialect`` or
     ``unresolvable_ref`` — never a silent pass;
   - some ``text`` block must carry the compatibility serialization (``missing_text_serialization``).
     A text block qualifies when its text parses as JSON equal to ``structuredContent`` — so
     whitespace, key order and number spelling (``1`` vs ``1.0``) do not matter, but ``true`` never
     equals ``1``. When ``structuredContent`` is a string, a text block holding exactly that string
     also qualifies: FastMCP emits string outputs that way, and the text is unambiguous.

Messages name members and schema keywords, never values.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from agent_connector_sdk.mcp.contracts.content import validate_content_block
from agent_connector_sdk.mcp.contracts.errors import ConsumeCategory, ContractViolation
from agent_connector_sdk.mcp.contracts.validation import ValidatorCache, exact_value_key, validate_instance

__all__ = ["json_equal", "validate_tool_result"]

_SCHEMA_FAILURE_CATEGORY: dict[str, ConsumeCategory] = {
    "invalid_schema": "invalid_output_schema",
    "unsupported_dialect": "unsupported_dialect",
    "unresolvable_ref": "unresolvable_ref",
}


def json_equal(left: Any, right: Any) -> bool:
    """Equality of two JSON values under JSON's data model, not Python's.

    Booleans are distinct from numbers (Python says ``True == 1``); numbers compare by value across
    int and float; objects compare as unordered maps; arrays element-wise.
    """
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, str) or isinstance(right, str):
        return isinstance(left, str) and isinstance(right, str) and left == right
    if left is None or right is None:
        return left is None and right is None
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
    return False


def _refuse_constant(name: str) -> Any:
    # NaN/Infinity are not JSON; a text block spelling them carries no serialization of a JSON value.
    raise ValueError(name)


# One decoder for every call: `json.loads` with a keyword argument builds a new decoder each time.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def _serializes(text: str, value: Any) -> bool:
    if isinstance(value, str) and text == value:
        return True
    try:
        parsed = _DECODER.decode(text)
    except (ValueError, RecursionError):
        return False
    if isinstance(parsed, float) and not math.isfinite(parsed):  # e.g. 1e999 overflows to inf
        return False
    # Fast path: identical type-exact bytes mean the very same JSON value (the usual case: the text is
    # the serialization of this value). Anything else — 1 vs 1.0, key order, tuples — is decided by
    # json_equal, so the answer never depends on which path ran.
    exact = exact_value_key(parsed)
    if exact is not None and exact == exact_value_key(value):
        return True
    return json_equal(parsed, value)


def _has_text_serialization(content: list[Any], value: Any) -> bool:
    return any(
        isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and _serializes(block["text"], value)
        for block in content
    )


def validate_tool_result(
    tool: Mapping[str, Any],
    result: object,
    *,
    require_text_serialization: bool = True,
    cache: ValidatorCache | None = None,
) -> None:
    """Consume gate: check one ``CallToolResult`` wire dict against its tool; raise or return ``None``.

    Raises :class:`ContractViolation` with a stable ``category`` and a JSON-pointer-like ``path`` (see
    the module docstring). ``require_text_serialization=False`` drops rule 3's last bullet for hosts
    that only read ``structuredContent``. ``cache`` is the validator cache shared with argument
    validation (default: the process-wide one).
    """
    if not isinstance(result, Mapping):
        raise ContractViolation("malformed_result", "a tool result must be an object", path="")
    if "resultType" in result and result["resultType"] != "complete":
        raise ContractViolation(
            "invalid_result_type", "'resultType' must be absent or 'complete'", path="/resultType"
        )
    content = result.get("content")
    if not isinstance(content, list):
        raise ContractViolation(
            "malformed_result", "'content' is required and must be a list", path="/content"
        )
    for index, block in enumerate(content):
        validate_content_block(block, path=f"/content/{index}")
    if "isError" in result and not isinstance(result["isError"], bool):
        raise ContractViolation(
            "malformed_result", "'isError' must be a boolean when present", path="/isError"
        )

    schema = tool.get("outputSchema") if isinstance(tool, Mapping) else None
    if schema is None:
        return
    if "structuredContent" not in result:
        raise ContractViolation(
            "missing_structured_content",
            "the tool publishes an outputSchema, so 'structuredContent' is required (also when isError)",
            path="/structuredContent",
        )
    structured = result["structuredContent"]
    failure = validate_instance(schema, structured, cache=cache)
    if failure is not None:
        if failure.kind == "instance":
            raise ContractViolation(
                "output_schema_violation",
                f"structuredContent refused by the output schema: {failure.message}",
                path="/structuredContent" + failure.path,
            )
        raise ContractViolation(
            _SCHEMA_FAILURE_CATEGORY[failure.kind], f"outputSchema refused: {failure.message}", path=""
        )
    if require_text_serialization and not _has_text_serialization(content, structured):
        raise ContractViolation(
            "missing_text_serialization",
            "no text block carries the JSON serialization of structuredContent",
            path="/content",
        )
