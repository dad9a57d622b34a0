"""Invoke and Execute gates for ``Mcp-Param-*`` headers: one codec and one annotation reader for both ends.

The client (:func:`build_parameter_headers`) and the server (:func:`validate_parameter_headers`) read the
same :func:`header_annotations` of a tool and render values with the same :func:`header_text`, so the two
ends cannot drift. Everything here is pure: wire dicts in, strings or typed refusals out.

Compared with the official SDK's ``mcp.shared.inbound`` (read, not copied):

* **Encoding is stricter on purpose.** The SDK (and the spec) send a value plain when it is printable ASCII
  without edge whitespace, so inner spaces, tabs and the empty string travel raw. We send plain only a
  non-empty run of visible ASCII ``!``..``~``: an empty field is dropped or merged by some proxies (so
  "present but empty" would read as ``missing``), and inner whitespace is exactly what intermediaries fold,
  collapse or split on. Our output is therefore a strict subset of what spec-conformant servers decode.
* **Decoding is as liberal as the spec and no more.** Only a complete ``=?base64?…?=`` is decoded (the
  prefix is case-sensitive); inside it we refuse bad padding, non-alphabet characters, non-canonical
  base64 and invalid UTF-8, like the SDK. Unlike the SDK we also refuse a *plain* value carrying control
  characters, non-ASCII or edge whitespace, and we never raise anything but :class:`HeaderValueError`
  (the SDK's ``b64decode`` lets a non-ASCII payload escape as a bare ``ValueError``).
* **Values are typed.** Integers are limited to the JSON safe range and compared numerically after a
  strict decimal parse; booleans must be exactly ``true``/``false``; a body value of the wrong JSON type
  never matches (the SDK compares ``str(value)``, so ``"1"`` and ``1`` can look alike).

Audit events appended by the gate functions carry header *names*, categories and which headers were
base64-encoded; never a value.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, NamedTuple, cast

from agent_connector_sdk.audit import AuditSink
from agent_connector_sdk.core.contracts._json_schema import (
    MAX_SCHEMA_DEPTH,
    SchemaPosition,
    dialect_of,
    exact_value_key,
    iter_schema_positions,
)
from agent_connector_sdk.core.contracts.errors import (
    AdmissionCategory,
    AdmissionError,
    HeaderMismatch,
    HeaderValueError,
)

__all__ = [
    "MAX_SAFE_INTEGER",
    "MAX_SCHEMA_DEPTH",
    "MCP_PARAM_HEADER_PREFIX",
    "X_MCP_HEADER_KEY",
    "AnnotationSite",
    "HeaderAnnotation",
    "HeaderType",
    "ParameterHeaders",
    "Placement",
    "build_parameter_headers",
    "decode_header_value",
    "encode_header_value",
    "header_annotations",
    "header_text",
    "iter_schema_positions",
    "parameter_headers",
    "validate_parameter_headers",
]

X_MCP_HEADER_KEY: Final = "x-mcp-header"
MCP_PARAM_HEADER_PREFIX: Final = "Mcp-Param-"
MAX_SAFE_INTEGER: Final = 9_007_199_254_740_991
"""2**53 - 1: the largest integer every JSON peer (including IEEE-754-only ones) reads exactly."""

HeaderType = Literal["string", "integer", "boolean"]
Placement = Literal["strict", "spec"]

_SENTINEL_PREFIX: Final = "=?base64?"
_SENTINEL_SUFFIX: Final = "?="
_MIN_SENTINEL_LENGTH: Final = len(_SENTINEL_PREFIX) + len(_SENTINEL_SUFFIX)
# RFC 9110 §5.6.2 tchar. fullmatch (never `$`, which would accept a trailing newline).
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# Canonical decimal, the form a client writes (`str(int)`): ASCII digits only (no `+`, `_`, spaces or
# Unicode digits that int() would accept), no leading zero (`05`) and no negative zero (`-0`) — two
# spellings of one value would let an intermediary routing on the text disagree with the server.
# 16 digits bound the parse and cover every safe integer.
_STRICT_DECIMAL: Final = re.compile(r"0|-?[1-9][0-9]{0,15}")
_HEADER_TYPES: Final = frozenset({"string", "integer", "boolean"})
# --------------------------------------------------------------------------------------------- codec


def encode_header_value(text: str) -> str:
    """Render ``text`` as an HTTP field value that carries its exact characters.

    Plain only for a non-empty string of visible ASCII (``!``..``~``) that does not start with
    ``=?base64?``; everything else (empty, any space or tab, controls, non-ASCII, sentinel-looking text)
    becomes ``=?base64?`` + standard base64 of the exact UTF-8 bytes + ``?=``. Never trims, never
    normalizes. The output is always visible ASCII. Raises :class:`HeaderValueError` (``malformed``)
    for text that is not valid Unicode (lone surrogates), which has no UTF-8 encoding.
    """
    # Inlined (not a helper call): this runs once per header per call, on both ends.
    # ASCII + isprintable() is exactly 0x20..0x7E; excluding the space leaves visible ASCII `!`..`~`.
    if (
        text
        and text.isascii()
        and text.isprintable()
        and " " not in text
        and not text.startswith(_SENTINEL_PREFIX)
    ):
        return text
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        raise HeaderValueError("malformed", "header value is not encodable as UTF-8") from None
    return _SENTINEL_PREFIX + base64.b64encode(raw).decode("ascii") + _SENTINEL_SUFFIX


def _is_plain_acceptable(text: str) -> bool:
    # Spec-conformant peers send inner spaces and tabs plain, so those are accepted. Edge whitespace is
    # refused: HTTP parsers strip it, so what arrived may not be what was sent.
    if not text.isascii():
        return False
    if not text.isprintable() and not text.replace("\t", "").isprintable():
        return False
    return text == text.strip(" \t")


def _decode_sentinel(payload: str) -> str:
    if not payload.isascii():
        raise HeaderValueError("malformed", "base64 header value contains non-alphabet characters")
    encoded = payload.encode("ascii")
    try:
        # strict_mode refuses non-alphabet characters and bad or excess padding.
        raw = binascii.a2b_base64(encoded, strict_mode=True)
    except binascii.Error:
        raise HeaderValueError("malformed", "base64 header value is not valid base64") from None
    # strict_mode ignores non-zero unused bits; re-encoding catches them, so no two wire values decode
    # to the same text.
    if binascii.b2a_base64(raw, newline=False) != encoded:
        raise HeaderValueError("malformed", "base64 header value is not canonical base64")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise HeaderValueError("malformed", "base64 header value is not valid UTF-8") from None


def decode_header_value(text: str) -> str:
    """Inverse of :func:`encode_header_value`, liberal exactly where the spec is.

    Only a complete ``=?base64?…?=`` is decoded; a value missing the suffix, or using ``=?BASE64?``, is
    literal text. Inside a sentinel, bad padding, non-alphabet characters, non-canonical base64 (non-zero
    trailing bits) and invalid UTF-8 are refused. A plain value must be ASCII without control characters
    other than inner tabs and without edge whitespace; inner spaces and the empty string are accepted
    because spec-conformant peers send them. Refusals raise :class:`HeaderValueError` (``malformed``).
    """
    # Fast path, the common case, written for speed (it runs per header per call): printable ASCII
    # (0x20..0x7E). Literals, not module constants, on purpose.
    if text.isascii() and text.isprintable():
        if not text:
            return text
        if text[0] == "=" and len(text) >= 11 and text.startswith("=?base64?") and text.endswith("?="):
            return _decode_sentinel(text[9:-2])
        if text[0] != " " and text[-1] != " ":
            return text
        raise HeaderValueError("malformed", "plain header value has edge whitespace")
    if (
        len(text) >= _MIN_SENTINEL_LENGTH
        and text.startswith(_SENTINEL_PREFIX)
        and text.endswith(_SENTINEL_SUFFIX)
    ):
        return _decode_sentinel(text[len(_SENTINEL_PREFIX) : -len(_SENTINEL_SUFFIX)])
    if not _is_plain_acceptable(text):
        raise HeaderValueError(
            "malformed", "plain header value contains control characters, non-ASCII or edge whitespace"
        )
    return text


def header_text(value: Any, declared_type: str) -> str:
    """The header text of one argument ``value`` for a property declared ``declared_type``.

    Booleans become ``true``/``false``; integers base-10, refused (``out_of_range``) outside
    ±9007199254740991 and never rounded, where a float with an integral value counts as an integer;
    strings are returned unchanged. A value whose JSON type does not match ``declared_type`` (including
    ``True`` for an integer, or any declared type other than string/integer/boolean) is refused
    (``type_mismatch``). The result is *text*; pass it through :func:`encode_header_value` for the wire.
    """
    if declared_type == "string":
        if isinstance(value, str):
            return value
    elif declared_type == "boolean":
        if isinstance(value, bool):
            return "true" if value else "false"
    elif declared_type == "integer" and not isinstance(value, bool):
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            if abs(value) > MAX_SAFE_INTEGER:
                raise HeaderValueError("out_of_range", "integer argument is outside the safe integer range")
            return str(int(value))
        if isinstance(value, int):
            if abs(value) > MAX_SAFE_INTEGER:
                raise HeaderValueError("out_of_range", "integer argument is outside the safe integer range")
            return str(value)
    raise HeaderValueError("type_mismatch", f"argument is not a JSON {_quote(declared_type)}")


# -------------------------------------------------------------------------------- schema annotations


AnnotationSite = SchemaPosition
"""Compatibility name: the schema walker and its positions live in :mod:`._json_schema` (one walker for
dialect, reference and header checks alike); ``iter_schema_positions`` is re-exported from there."""


@dataclass(frozen=True, slots=True)
class HeaderAnnotation:
    """A valid ``x-mcp-header`` annotation: ``name`` as declared, the ``header`` it produces
    (``Mcp-Param-{name}``), the ``path`` of ``properties`` keys to the argument, its declared ``type``
    and its JSON ``pointer`` in the input schema."""

    name: str
    header: str
    path: tuple[str, ...]
    type: HeaderType
    pointer: str


def header_annotations(input_schema: Any, *, placement: Placement = "spec") -> tuple[HeaderAnnotation, ...]:
    """The ``x-mcp-header`` annotations of an input schema, validated, in document order.

    Every annotation must be a non-empty RFC 9110 token, case-insensitively unique, on a property of
    type ``string``, ``integer`` or ``boolean`` (``number`` and type lists are refused), placed on a
    property reachable from the root through ``properties`` keys only (``placement="spec"``, the
    2026-07-28 rule) or directly in the root ``properties`` (``placement="strict"``). The rule holds in
    every supported dialect, read with that dialect's semantics: in draft-04 to draft-07 a ``$ref``
    makes its siblings ignored, so an annotation beside a ``$ref``, or under a ``properties`` beside
    one, declares nothing and is refused (fail closed); an unknown dialect is ``unsupported_dialect``.
    Anything else raises
    :class:`AdmissionError` (``invalid_header_annotation``) naming the JSON pointer, never the value.
    Client emit and server validate both call this, so they agree on what a declared header is.

    Results (and refusals) are memoized in a bounded LRU keyed by the schema's exact content
    (:func:`~agent_connector_sdk.core.contracts._validation.exact_value_key`), because both gates call this
    on every call: a schema edited in place has a new key, so it is read again, never answered stale.
    """
    key = exact_value_key(input_schema)
    if key is None:
        return _read_header_annotations(input_schema, placement)
    memo_key = (placement, key)
    with _ANNOTATIONS_LOCK:
        memo = _ANNOTATIONS.get(memo_key)
        if memo is not None:
            _ANNOTATIONS.move_to_end(memo_key)
    if memo is None:
        try:
            memo = _read_header_annotations(input_schema, placement)
        except AdmissionError as refusal:
            memo = _Refused(refusal.category, refusal.message)
        with _ANNOTATIONS_LOCK:
            _ANNOTATIONS[memo_key] = memo
            while len(_ANNOTATIONS) > _ANNOTATIONS_CACHE_SIZE:
                _ANNOTATIONS.popitem(last=False)
    if isinstance(memo, _Refused):
        raise AdmissionError(memo.category, memo.message)  # a fresh exception: no shared traceback
    return memo


class _Refused(NamedTuple):
    category: AdmissionCategory
    message: str


_ANNOTATIONS_CACHE_SIZE: Final = 256
_ANNOTATIONS: OrderedDict[tuple[Placement, bytes], tuple[HeaderAnnotation, ...] | _Refused] = OrderedDict()
_ANNOTATIONS_LOCK: Final = threading.Lock()


def _read_header_annotations(input_schema: Any, placement: Placement) -> tuple[HeaderAnnotation, ...]:
    found: list[HeaderAnnotation] = []
    seen: dict[str, str] = {}
    dialect = dialect_of(input_schema)
    if dialect is None:
        # Which keywords are applicators (and so where a property can sit) depends on the dialect.
        raise AdmissionError("unsupported_dialect", "inputSchema/: $schema is not a supported dialect")
    for site in iter_schema_positions(input_schema, dialect=dialect):
        if X_MCP_HEADER_KEY not in site.schema:
            continue
        where = site.pointer or "/"
        if site.ignored or (dialect.ref_overrides_siblings and "$ref" in site.schema):
            # In draft-04..07 every keyword beside a `$ref` is ignored, this annotation and the `type`
            # it relies on included: no property is declared there, so there is nothing to mirror.
            raise AdmissionError(
                "invalid_header_annotation",
                f"inputSchema{where}: {X_MCP_HEADER_KEY} sits where {dialect.name} ignores it "
                "(beside a `$ref`, whose siblings that dialect ignores)",
            )
        path = site.properties_path
        if not path or (placement == "strict" and len(path) != 1):
            rule = (
                "directly in inputSchema.properties" if placement == "strict" else "through `properties` only"
            )
            raise AdmissionError(
                "invalid_header_annotation",
                f"inputSchema{where}: {X_MCP_HEADER_KEY} must sit on a property reachable {rule}",
            )
        token = site.schema[X_MCP_HEADER_KEY]
        if not isinstance(token, str) or not _TOKEN.fullmatch(token):
            raise AdmissionError(
                "invalid_header_annotation",
                f"inputSchema{where}: {X_MCP_HEADER_KEY} must be a non-empty RFC 9110 token",
            )
        declared = site.schema.get("type")
        if not isinstance(declared, str) or declared not in _HEADER_TYPES:
            raise AdmissionError(
                "invalid_header_annotation",
                f"inputSchema{where}: {X_MCP_HEADER_KEY} is only allowed on a string, integer or boolean "
                "property",
            )
        folded = token.lower()
        if folded in seen:
            raise AdmissionError(
                "invalid_header_annotation",
                f"inputSchema{where}: {X_MCP_HEADER_KEY} duplicates the one at inputSchema{seen[folded]} "
                "(names are case-insensitive)",
            )
        seen[folded] = where
        found.append(
            HeaderAnnotation(
                name=token,
                header=MCP_PARAM_HEADER_PREFIX + token,
                path=path,
                type=cast(HeaderType, declared),
                pointer=site.pointer,
            )
        )
    return tuple(found)


def _tool_annotations(tool: Mapping[str, Any]) -> tuple[HeaderAnnotation, ...]:
    return header_annotations(tool.get("inputSchema"), placement="spec")


def _argument_at(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The argument at a ``properties`` path, or ``None`` when a step is missing or not an object."""
    node: Any = arguments
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = cast(Mapping[str, Any], node).get(key)
    return node


def _quote(text: str) -> str:
    # JSON quoting escapes control characters, so a hostile schema key cannot forge log lines.
    return json.dumps(text)


def _tool_name(tool: Mapping[str, Any]) -> str | None:
    name = tool.get("name")
    return name if isinstance(name, str) else None


# ----------------------------------------------------------------------------------------- invoke


class ParameterHeaders(NamedTuple):
    """What :func:`parameter_headers` returns: the headers, and the audit event describing them."""

    headers: dict[str, str]
    event: dict[str, Any]


def parameter_headers(tool: Mapping[str, Any], arguments: Mapping[str, Any]) -> ParameterHeaders:
    """The ``Mcp-Param-{Name}`` headers a ``tools/call`` of ``tool`` (a wire descriptor) must carry.

    One header per annotation whose argument is present and not null, rendered with
    :func:`header_text` and :func:`encode_header_value`. Refuses with :class:`HeaderValueError`
    (``type_mismatch``/``out_of_range``, and ``invalid_header_annotation`` when the tool's annotations
    are invalid — an admitted tool never has such). Returns the headers and one audit event: the
    header names sent and which of them were base64-encoded; never values.
    """
    headers: dict[str, str] = {}
    encoded: list[str] = []
    try:
        annotations = _tool_annotations(tool)
    except AdmissionError as refusal:
        raise HeaderValueError("invalid_header_annotation", refusal.message) from None
    for annotation in annotations:
        value = _argument_at(arguments, annotation.path)
        if value is None:
            continue
        wire = encode_header_value(header_text(value, annotation.type))
        headers[annotation.header] = wire
        if wire.startswith(_SENTINEL_PREFIX):
            encoded.append(annotation.header)
    event = {
        "gate": "invoke",
        "event": "parameter_headers_built",
        "tool": _tool_name(tool),
        "headers": list(headers),
        "base64_encoded": encoded,
    }
    return ParameterHeaders(headers, event)


def build_parameter_headers(
    tool: Mapping[str, Any], arguments: Mapping[str, Any], *, audit: AuditSink | None = None
) -> dict[str, str]:
    """:func:`parameter_headers`' headers; its event goes to ``audit`` (the one callable
    :class:`~agent_connector_sdk.audit.AuditSink` convention) when one is given."""
    built = parameter_headers(tool, arguments)
    if audit is not None:
        audit(built.event)
    return built.headers


# ---------------------------------------------------------------------------------------- execute


def _header_pairs(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> Iterable[tuple[str, str]]:
    if isinstance(headers, Mapping):
        return cast(Mapping[str, str], headers).items()
    return headers


def _matches(annotation: HeaderAnnotation, argument: Any, decoded: str) -> bool:
    """Whether ``decoded`` header text agrees with the body ``argument``; raises ``malformed`` text."""
    if annotation.type == "boolean":
        if decoded not in ("true", "false"):
            raise HeaderMismatch(
                "malformed", f"{annotation.header} is not `true` or `false`", header=annotation.header
            )
        return isinstance(argument, bool) and argument is (decoded == "true")
    if annotation.type == "integer":
        if not _STRICT_DECIMAL.fullmatch(decoded):
            raise HeaderMismatch(
                "malformed",
                f"{annotation.header} is not a canonical decimal integer",
                header=annotation.header,
            )
        number = int(decoded)
        if abs(number) > MAX_SAFE_INTEGER:
            # A conforming client never sends it (header_text refuses), so it cannot be a faithful copy.
            raise HeaderMismatch(
                "malformed",
                f"{annotation.header} is outside the safe integer range",
                header=annotation.header,
            )
        if isinstance(argument, bool) or not isinstance(argument, int | float):
            return False
        # int == float compares exactly in Python (no rounding through float).
        return number == argument
    return isinstance(argument, str) and decoded == argument


def validate_parameter_headers(
    tool: Mapping[str, Any],
    arguments: Mapping[str, Any],
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    *,
    audit: AuditSink | None = None,
    require_headers: bool = True,
) -> dict[str, Any]:
    """Check a ``tools/call``'s ``Mcp-Param-*`` headers against its body, for ``tool`` (a wire descriptor).

    ``headers`` is a Mapping or an iterable of ``(name, value)`` pairs; pass the raw pairs so duplicates
    stay visible. Names match case-insensitively; unrecognized ``Mcp-Param-*`` names are ignored. For each
    annotation, in schema order, the first failure raises :class:`HeaderMismatch`: ``duplicated`` (the
    header appears more than once), ``unexpected`` (a header whose argument is absent or null),
    ``missing`` (an argument without its header), ``malformed`` (undecodable, or not a decimal integer /
    ``true``/``false`` for those types), ``mismatched`` (decoded text disagrees with the body: strings
    exactly, integers numerically, booleans exactly). Invalid annotations raise :class:`HeaderMismatch`
    ``invalid_header_annotation`` (``header`` ``None``): this is the Execute gate, not Admit.
    Returns the success audit event (the names checked and which were base64-encoded; never values).
    ``audit`` (a callable :class:`~agent_connector_sdk.audit.AuditSink`), when given, also receives the
    event — on refusal the canonical header name and category.

    ``require_headers=False`` is the rule for a tool called *through* a search transform's ``call_tool``
    proxy: the client computed its headers from the proxy's schema, which annotates nothing, so the spec
    asks it for none and ``missing`` is not refused; every header that *is* sent is still checked
    (``duplicated``, ``unexpected``, ``malformed``, ``mismatched``), since an intermediary may have
    routed on it.
    """
    try:
        try:
            annotations = _tool_annotations(tool)
        except AdmissionError as refusal:
            raise HeaderMismatch("invalid_header_annotation", refusal.message, header=None) from None
    except HeaderMismatch as refusal:
        if audit is not None:
            audit(_refused_event(tool, refusal))
        raise
    received: dict[str, list[str]] = {}
    prefix = MCP_PARAM_HEADER_PREFIX.lower()
    for name, value in _header_pairs(headers):
        folded = name.lower()
        if folded.startswith(prefix):
            received.setdefault(folded, []).append(value)
    checked: list[str] = []
    encoded: list[str] = []
    try:
        for annotation in annotations:
            values = received.get(annotation.header.lower(), [])
            header = annotation.header
            if len(values) > 1:
                raise HeaderMismatch("duplicated", f"{header} appears more than once", header=header)
            argument = _argument_at(arguments, annotation.path)
            if argument is None:
                if values:
                    raise HeaderMismatch(
                        "unexpected", f"{header} is present but its argument is absent or null", header=header
                    )
                continue
            if not values:
                if not require_headers:
                    continue
                raise HeaderMismatch(
                    "missing",
                    f"{header} is missing but its argument is present; send it with the argument's value",
                    header=header,
                )
            try:
                decoded = decode_header_value(values[0])
            except HeaderValueError as exc:
                raise HeaderMismatch("malformed", f"{header}: {exc.message}", header=header) from None
            if not _matches(annotation, argument, decoded):
                raise HeaderMismatch("mismatched", f"{header} does not match its argument", header=header)
            checked.append(header)
            if values[0].startswith(_SENTINEL_PREFIX):
                encoded.append(header)
    except HeaderMismatch as refusal:
        if audit is not None:
            audit(_refused_event(tool, refusal))
        raise
    event = {
        "gate": "execute",
        "event": "parameter_headers_accepted",
        "tool": _tool_name(tool),
        "headers": checked,
        "base64_encoded": encoded,
    }
    if audit is not None:
        audit(event)
    return event


def _refused_event(tool: Mapping[str, Any], refusal: HeaderMismatch) -> dict[str, Any]:
    return {
        "gate": "execute",
        "event": "parameter_headers_refused",
        "tool": _tool_name(tool),
        "header": refusal.header,
        "category": refusal.category,
    }
