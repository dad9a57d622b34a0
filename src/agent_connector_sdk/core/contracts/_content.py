"""Consume: structural validation of MCP content blocks (``CallToolResult.content`` items).

A host decides what reaches a model, so it checks every block before trusting it: a block of an
unknown type, an image whose ``data`` is not base64, or an annotation outside its range is refused
with :class:`ContractViolation` and a JSON-pointer-like ``path`` to the offending member (for example
``/content/2/annotations/priority``). Messages name members, never their values.

Rules (MCP 2026-07-28 schema, read strictly where the schema is loose):

- ``text``: ``text`` is a string.
- ``image`` / ``audio``: ``data`` is *canonical* standard base64 (RFC 4648 §4 alphabet, ``=`` padding,
  no whitespace, zero pad bits — what any encoder emits; the empty string encodes zero bytes);
  ``mimeType`` is a syntactically valid media type whose top-level type is ``image`` / ``audio``.
- ``resource_link``: ``uri`` (an absolute URI: scheme, no whitespace or controls) and ``name`` are
  strings; optional ``title``, ``description``, ``mimeType`` (media type) are strings; ``size`` is a
  non-negative integer (not a boolean, not a float).
- ``resource``: ``resource`` is an object with a ``uri`` and exactly one of ``text`` (string) or
  ``blob`` (canonical base64); optional ``mimeType`` a media type; optional ``_meta`` an object.
- any block: optional ``annotations`` object (``audience`` a list of ``"user"``/``"assistant"``,
  ``priority`` a finite number in [0, 1], ``lastModified`` an ISO 8601 date-time string) and
  optional ``_meta`` object. Members this module does not know are tolerated (forward compatibility);
  unknown block *types* are not, since the host cannot know how to present them.

Categories: ``invalid_content_block`` (a known block breaks its shape) and ``unknown_content_type``.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from agent_connector_sdk.core.contracts.errors import ConsumeCategory, ContractViolation

__all__ = [
    "CONTENT_BLOCK_TYPES",
    "is_canonical_base64",
    "validate_content_block",
]

CONTENT_BLOCK_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})

# RFC 6838 §4.2 restricted-name for type and subtype; parameters after ";" are free-form but must not
# carry control characters (they end up in logs and UI).
_MEDIA_TYPE = re.compile(
    r"(?P<type>[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126})/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
    r"(?:[ \t]*;[^\x00-\x1f\x7f]*)?"
)
# RFC 3986 scheme followed by anything without whitespace or control characters.
_ABSOLUTE_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x20\x7f]*")
_AUDIENCE = frozenset({"user", "assistant"})


def is_canonical_base64(text: object) -> bool:
    """True when ``text`` is a str of canonical standard base64 (what ``base64.b64encode`` would emit).

    Refuses whitespace, the URL-safe alphabet, missing or extra padding, and non-zero pad bits, so one
    byte string has exactly one accepted spelling.
    """
    if not isinstance(text, str) or not text.isascii():
        return False
    try:
        decoded = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return base64.b64encode(decoded).decode("ascii") == text


def _fail(path: str, message: str, category: ConsumeCategory = "invalid_content_block") -> ContractViolation:
    return ContractViolation(category, message, path=path)


def _require_str(block: Mapping[str, Any], key: str, path: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise _fail(f"{path}/{key}", f"'{key}' is required and must be a string")
    return value


def _optional_str(block: Mapping[str, Any], key: str, path: str) -> None:
    if key in block and not isinstance(block[key], str):
        raise _fail(f"{path}/{key}", f"'{key}' must be a string when present")


def _check_uri(block: Mapping[str, Any], path: str) -> None:
    uri = _require_str(block, "uri", path)
    if not _ABSOLUTE_URI.fullmatch(uri):
        raise _fail(f"{path}/uri", "'uri' must be an absolute URI without whitespace or control characters")


def _check_media_type(block: Mapping[str, Any], path: str, *, required: bool, top: str | None = None) -> None:
    if "mimeType" not in block:
        if required:
            raise _fail(f"{path}/mimeType", "'mimeType' is required")
        return
    value = block["mimeType"]
    match = _MEDIA_TYPE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise _fail(f"{path}/mimeType", "'mimeType' must be a media type 'type/subtype'")
    if top is not None and match.group("type").lower() != top:
        raise _fail(f"{path}/mimeType", f"'mimeType' must be an {top}/* media type")


def _check_base64(block: Mapping[str, Any], key: str, path: str) -> None:
    if not is_canonical_base64(_require_str(block, key, path)):
        raise _fail(f"{path}/{key}", f"'{key}' must be canonical standard base64")


def _check_meta(block: Mapping[str, Any], path: str) -> None:
    if "_meta" in block and not isinstance(block["_meta"], Mapping):
        raise _fail(f"{path}/_meta", "'_meta' must be an object when present")


def _is_iso8601(text: str) -> bool:
    # Python 3.11's fromisoformat reads ISO 8601 (including a trailing "Z"); the isascii() guard keeps
    # out non-ASCII digits that int() would otherwise accept.
    if not text.isascii():
        return False
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _check_annotations(block: Mapping[str, Any], path: str) -> None:
    if "annotations" not in block:
        return
    annotations = block["annotations"]
    where = f"{path}/annotations"
    if not isinstance(annotations, Mapping):
        raise _fail(where, "'annotations' must be an object when present")
    if "audience" in annotations:
        audience = annotations["audience"]
        if not isinstance(audience, list):
            raise _fail(f"{where}/audience", "'audience' must be a list")
        for index, role in enumerate(audience):
            if not isinstance(role, str) or role not in _AUDIENCE:
                raise _fail(f"{where}/audience/{index}", "'audience' members must be 'user' or 'assistant'")
    if "priority" in annotations:
        priority = annotations["priority"]
        # Compare ints as ints: math.isfinite(10**400) would raise OverflowError instead of refusing.
        in_range = (isinstance(priority, int) and 0 <= priority <= 1) or (
            isinstance(priority, float) and math.isfinite(priority) and 0.0 <= priority <= 1.0
        )
        if isinstance(priority, bool) or not in_range:
            raise _fail(f"{where}/priority", "'priority' must be a number between 0 and 1")
    if "lastModified" in annotations:
        modified = annotations["lastModified"]
        if not isinstance(modified, str) or not _is_iso8601(modified):
            raise _fail(f"{where}/lastModified", "'lastModified' must be an ISO 8601 date-time string")


def _check_resource(block: Mapping[str, Any], path: str) -> None:
    resource = block.get("resource")
    where = f"{path}/resource"
    if not isinstance(resource, Mapping):
        raise _fail(where, "'resource' is required and must be an object")
    _check_uri(resource, where)
    has_text, has_blob = "text" in resource, "blob" in resource
    if has_text == has_blob:
        raise _fail(where, "'resource' must carry exactly one of 'text' or 'blob'")
    if has_text:
        _require_str(resource, "text", where)
    else:
        _check_base64(resource, "blob", where)
    _check_media_type(resource, where, required=False)
    _check_meta(resource, where)


def validate_content_block(block: object, *, path: str = "") -> None:
    """Consume gate for one content block; returns ``None`` or raises :class:`ContractViolation`.

    ``path`` is the pointer of the block itself (``/content/2`` when called for a result); member paths
    are appended to it. See the module docstring for the rules.
    """
    if not isinstance(block, Mapping):
        raise _fail(path, "a content block must be an object")
    kind = block.get("type")
    if not isinstance(kind, str):
        raise _fail(f"{path}/type", "'type' is required and must be a string")
    if kind not in CONTENT_BLOCK_TYPES:
        raise _fail(
            f"{path}/type", "content block type is not one this host understands", "unknown_content_type"
        )
    if kind == "text":
        _require_str(block, "text", path)
    elif kind in ("image", "audio"):
        _check_base64(block, "data", path)
        _check_media_type(block, path, required=True, top=kind)
    elif kind == "resource_link":
        _check_uri(block, path)
        _require_str(block, "name", path)
        _optional_str(block, "title", path)
        _optional_str(block, "description", path)
        _check_media_type(block, path, required=False)
        if "size" in block:
            size = block["size"]
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise _fail(f"{path}/size", "'size' must be a non-negative integer")
    else:
        _check_resource(block, path)
    _check_annotations(block, path)
    _check_meta(block, path)
