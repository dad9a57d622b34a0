"""Consume: a ``tools/call`` result must honour the contract its tool published.

The server cannot force a host to trust its output, so the host checks it, and a server can run the
same function on its own results before sending them (the output self-check). ``result`` is the wire
dict (camelCase); ``tool`` the wire descriptor the host admitted.

Rules, in the order they are checked (the first failure is reported):

1. ``resultType`` absent or ``"complete"`` (absent means complete; any other value, including
   ``"input_required"`` which never belongs in a final tool result, is ``invalid_result_type``).
2. ``content`` a list (``malformed_result``) of valid content blocks (``invalid_content_block`` /
   ``unknown_content_type``, see :mod:`._content`); ``isError`` a boolean when present.
3. When the tool publishes an ``outputSchema`` (a non-null member):

   - a result that is not an error must carry ``structuredContent`` (``missing_structured_content``)
     that validates against the output schema, in the dialect it declares (``output_schema_violation``,
     path ``/structuredContent/...``): the spec's MUST. Presence is about the key: a member whose value
     is JSON ``null`` is present and validated like any other value; any JSON value is allowed. A schema
     we refuse to evaluate yields the shared schema categories ``invalid_schema``,
     ``unsupported_dialect`` or ``unresolvable_ref`` — never a silent pass;
   - an ``isError`` result: the spec is silent (issue #569). Project rules ``error-structured-content``
     (it carries ``structuredContent``) and ``error-output-schema`` (which conforms);
   - project rule ``text-serialization`` (the spec's SHOULD): some ``text`` block carries the
     serialization. A text block qualifies when its text parses as JSON equal to ``structuredContent``
     — so whitespace, key order and number spelling (``1`` vs ``1.0``) do not matter, but ``true``
     never equals ``1``. When ``structuredContent`` is a string, a text block holding exactly that
     string also qualifies: FastMCP emits string outputs that way, and the text is unambiguous.

   Project rules reject in the ``strict`` profile and are findings in ``default``
   (:data:`~._findings.RULES` is the table; the README shows it).

A refusal carries the server's own words: ``ContractViolation.server_text`` is the result's text blocks,
sanitized and bounded (:func:`server_text`), so the reason a server gave is never lost with its result.
Messages name members and schema keywords, never values.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from agent_connector_sdk.core.contracts._content import validate_content_block
from agent_connector_sdk.core.contracts._findings import Finding, Profile
from agent_connector_sdk.core.contracts._json_schema import (
    SchemaKey,
    ValidatorCache,
    exact_value_key,
    validate_instance,
    validate_keyed,
)
from agent_connector_sdk.core.contracts.errors import ConsumeCategory, ContractViolation
from agent_connector_sdk.sanitize import sanitize_text

__all__ = ["SERVER_TEXT_LIMIT", "json_equal", "server_text", "validate_tool_result"]


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


SERVER_TEXT_LIMIT = 2000
"""Characters of a refused result's text kept on the error (``ContractViolation.server_text``)."""


def server_text(result: object, limit: int = SERVER_TEXT_LIMIT, *, line_breaks: bool = False) -> str | None:
    """The text blocks of a (possibly malformed) result joined by newlines, sanitized and cut to
    ``limit`` characters; ``None`` when it has none. Only reads what is there: never raises.

    ``line_breaks=True`` keeps the text's own line breaks (LF, CRLF) as ``\\n`` and sanitizes each
    line alone, for a reader who sees the text laid out as the server wrote it; every other control
    (a lone CR among them) is still escaped, and the whole stays within ``limit``."""
    content = result.get("content") if isinstance(result, Mapping) else None
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    size = 0
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"][: limit - size + 1])
            size += len(texts[-1]) + 1
            if size > limit:
                break
    if not texts:
        return None
    if not line_breaks:
        return sanitize_text("\n".join(texts), limit=limit)
    lines = "\n".join(texts).replace("\r\n", "\n").split("\n")
    shown: list[str] = []
    used = 0
    for line in lines:
        if used >= limit:
            # Only a prefix of the text was read (see above): how much is left is not known here.
            shown.append("…[more lines]")
            break
        shown.append(sanitize_text(line, limit=limit - used))
        used += len(shown[-1]) + 1
    return "\n".join(shown)


def validate_tool_result(
    tool: Mapping[str, Any],
    result: object,
    *,
    profile: Profile = "strict",
    cache: ValidatorCache | None = None,
    output_key: SchemaKey | None = None,
) -> tuple[Finding, ...]:
    """Consume gate: check one ``CallToolResult`` wire dict against its tool.

    Spec rules raise :class:`ContractViolation` with a stable ``category``, a JSON-pointer-like
    ``path`` and the server's own text (``server_text``, see the module docstring). Project rules
    (``text-serialization``, ``error-structured-content``, ``error-output-schema``: the rule table,
    :data:`~._findings.RULES`) raise too in the ``strict`` profile (the default here: what our own
    servers hold themselves to) and are returned as :class:`~._findings.Finding` values in the
    ``default`` profile, the result still usable. ``cache`` is the validator cache shared with
    argument validation (default: the process-wide one). ``output_key``: the tool's ``outputSchema`` as
    a :class:`SchemaKey` made when the tool was admitted; when given, it is the output schema checked
    (the same verdict as the schema itself, without serializing it again on every call).
    """
    findings: list[Finding] = []

    def refuse(category: ConsumeCategory, message: str, path: str) -> ContractViolation:
        return ContractViolation(category, message, path=path, server_text=server_text(result))

    def project(rule: str, category: ConsumeCategory, message: str, path: str) -> None:
        if profile == "strict":
            raise refuse(category, message, path)
        findings.append(Finding(rule=rule, category=category, message=message, path=path))

    if not isinstance(result, Mapping):
        raise ContractViolation("malformed_result", "a tool result must be an object", path="")
    if "resultType" in result and result["resultType"] != "complete":
        raise refuse("invalid_result_type", "'resultType' must be absent or 'complete'", "/resultType")
    content = result.get("content")
    if not isinstance(content, list):
        raise refuse("malformed_result", "'content' is required and must be a list", "/content")
    for index, block in enumerate(content):
        try:
            validate_content_block(block, path=f"/content/{index}")
        except ContractViolation as violation:
            violation.server_text = server_text(result)
            raise
    if "isError" in result and not isinstance(result["isError"], bool):
        raise refuse("malformed_result", "'isError' must be a boolean when present", "/isError")

    schema: Any = output_key
    if schema is None:
        schema = tool.get("outputSchema") if isinstance(tool, Mapping) else None
    if schema is None:
        return ()
    is_error = result.get("isError") is True
    if "structuredContent" not in result:
        message = "the tool publishes an outputSchema, so 'structuredContent' is required"
        if not is_error:
            raise refuse("missing_structured_content", message, "/structuredContent")
        project(
            "error-structured-content",
            "missing_structured_content",
            message + " (also when isError)",
            "/structuredContent",
        )
        return tuple(findings)
    structured = result["structuredContent"]
    if isinstance(schema, SchemaKey):
        failure = validate_keyed(schema, structured, cache=cache)
    else:
        failure = validate_instance(schema, structured, cache=cache)
    if failure is not None:
        if failure.kind != "instance":
            raise refuse(failure.kind, f"outputSchema refused: {failure.message}", "")
        message = f"structuredContent refused by the output schema: {failure.message}"
        if not is_error:
            raise refuse("output_schema_violation", message, "/structuredContent" + failure.path)
        project(
            "error-output-schema", "output_schema_violation", message, "/structuredContent" + failure.path
        )
    if not _has_text_serialization(content, structured):
        project(
            "text-serialization",
            "missing_text_serialization",
            "no text block carries the JSON serialization of structuredContent",
            "/content",
        )
    return tuple(findings)
