"""Admit gate: which tool descriptors a host will trust enough to call.

The host owns this gate: a server cannot force a client to accept its schemas or header annotations.
:func:`admit_tools` checks each wire descriptor (camelCase dict) on its own, so one bad descriptor never
removes the others, and explains every rejection with a stable ``category`` and a reason that names
fields and JSON pointers, never values.

Categories: ``malformed`` (descriptor shape: no name, ``inputSchema`` not an object with ``type:
"object"`` at its root, ...), ``invalid_schema`` (not a valid schema of its dialect, or one the
instance engine cannot compile), ``unsupported_dialect`` (``$schema`` not one of the policy's dialects,
or mixed dialects), ``unresolvable_ref`` (a ``$ref`` that does not resolve inside the descriptor
itself: remote references are never fetched), ``invalid_header_annotation``, ``sensitive_header`` and
``duplicate_name``. Every schema check is
:func:`~agent_connector_sdk.core.contracts._json_schema.check_schema`, the one the later gates use, so an
admitted tool can always be validated (its screen,
:func:`~agent_connector_sdk.core.contracts._json_schema.screen_schemas`, only ever clears a schema that
check would accept). (Compatibility: an invalid
schema was reported as ``malformed`` before the JSON Schema module was shared; it is ``invalid_schema``
at every gate now.)

Dialects: draft-04, draft-06, draft-07, 2019-09 and 2020-12 (absent ``$schema`` = 2020-12), each with
its own meta-schema and semantics; :attr:`AdmissionPolicy.dialects` narrows the set. In draft-04 to
draft-07 a root ``$ref`` makes its sibling ``type`` ignored, so such an ``inputSchema`` does not declare
``type: "object"`` and is ``malformed``.

Duplicate names: *every* descriptor sharing a name is rejected, not only the later ones. A client
cannot know which definition the server will execute for that name, and keeping the first would let a
reordering server silently swap the contract under an admitted name. Failing closed on all of them is
the only choice that never calls a tool under a schema it does not run.

Bounds (each a policy field with a documented default; a host session applies its
:class:`~agent_connector_sdk.core.host._options.HostBounds` on top, the stricter value winning):

* ``name``: 1–:data:`MAX_TOOL_NAME_LENGTH` characters, none of them a control, format (bidi) or
  separator character — ``malformed`` (a name like ``crlf\r\nX-Evil: 1`` is never admitted);
* values no JSON text carries faithfully — a non-finite number (``"default": 1e400`` is read as
  infinity) or a lone surrogate in a string or key — ``malformed``, naming the pointer (such a
  descriptor could be neither fingerprinted nor shown, so it is refused alone, never later);
* the descriptor's size (``max_descriptor_bytes``, UTF-8 JSON bytes, measured without serializing)
  — ``malformed``; its schemas' nesting (``max_schema_depth`` JSON levels) — ``invalid_schema``;
  both are measured before any schema check runs, so a 10,000-level schema costs one bounded walk;
* ``x-mcp-header`` names at most ``max_header_name_length`` characters and at most
  ``max_mirrored_headers`` annotations per tool — ``invalid_header_annotation``. The defaults (64 and
  32) keep one call's ``Mcp-Param-*`` block well under common proxy limits (8 KiB).

Every bound reason names the bound (``max_schema_depth (64)``), never the offending value.

Cost: a cold admission reads each descriptor's exact bytes once (they key the verdict memo too) and
screens it — size bounded from those bytes, depth and the schemas' meta-schemas checked in the Rust
engine (:func:`~agent_connector_sdk.core.contracts._json_schema.screen_schemas`), header walks skipped when
no ``x-mcp-header`` occurs — so most descriptors are never walked in Python nor compiled. Whatever a
screen cannot clear takes the full checks above, which alone decide every rejection and its reason;
``tests/core/contracts/test_schema_screen.py`` checks admission with and without the screens is the same.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
import unicodedata
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypedDict, cast

from agent_connector_sdk.core.contracts._headers import X_MCP_HEADER_KEY, header_annotations
from agent_connector_sdk.core.contracts._json_schema import (
    ALL_DIALECTS,
    DIALECTS,
    SCREEN_MAX_DEPTH,
    DialectName,
    check_schema,
    dialect_of,
    exact_value_key,
    iter_schema_positions,
    screen_schemas,
)
from agent_connector_sdk.core.contracts._pointers import json_pointer
from agent_connector_sdk.core.contracts._sizes import json_bound_crossed, screened_bound_crossed
from agent_connector_sdk.core.contracts.errors import AdmissionCategory, AdmissionError

__all__ = [
    "DEFAULT_SENSITIVE_NAMES",
    "MAX_TOOL_NAME_LENGTH",
    "SUPPORTED_DIALECTS",
    "AdmissionPolicy",
    "AdmissionReport",
    "Rejection",
    "admit_tools",
    "is_sensitive_name",
]

SUPPORTED_DIALECTS: Final = frozenset(
    spelling for dialect in DIALECTS.values() for spelling in (dialect.uri, dialect.uri + "#")
)
"""Every ``$schema`` value a host can admit (an absent ``$schema`` means 2020-12): the canonical URIs
of draft-04, draft-06, draft-07, 2019-09 and 2020-12, with or without the empty fragment."""

DEFAULT_SENSITIVE_NAMES: Final = frozenset(
    {
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "authorization",
        "cookie",
        "credential",
        "privatekey",
        "sessionid",
    }
)
"""Fragments that mark a header or property name as sensitive (matched on the normalized name)."""

_NON_ALNUM: Final = re.compile(r"[^a-z0-9]")

MAX_TOOL_NAME_LENGTH: Final = 128
"""The spec's bound on a tool name (1–128 characters)."""

_UNPRINTABLE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Controls, format characters (bidi controls, zero-width joiners), surrogates, line separators."""


@dataclass(frozen=True, slots=True)
class AdmissionPolicy:
    """Local admission policy.

    ``profile="strict"`` (default) accepts ``x-mcp-header`` only on direct members of
    ``inputSchema.properties``; ``profile="spec"`` also accepts properties reachable through a chain of
    ``properties`` keys (the 2026-07-28 rule). ``sensitive_names`` are fragments (lowercase ASCII
    alphanumerics) that reject an annotated header or property whose normalized name contains one.
    ``dialects`` are the JSON Schema dialects admitted (default all five); a schema in another one is
    ``unsupported_dialect``. It must include ``"2020-12"``, the dialect the spec requires every host to
    support (and the meaning of a schema without ``$schema``).
    """

    profile: Literal["strict", "spec"] = "strict"
    sensitive_names: frozenset[str] = field(default=DEFAULT_SENSITIVE_NAMES)
    dialects: frozenset[DialectName] = field(default=ALL_DIALECTS)
    max_descriptor_bytes: int = 1 << 20
    max_schema_depth: int = 64
    max_header_name_length: int = 64
    max_mirrored_headers: int = 32

    def __post_init__(self) -> None:
        for bound in (
            "max_descriptor_bytes",
            "max_schema_depth",
            "max_header_name_length",
            "max_mirrored_headers",
        ):
            value = getattr(self, bound)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"AdmissionPolicy.{bound} must be a positive integer")
        unknown = set(self.dialects) - ALL_DIALECTS
        if unknown:
            raise ValueError(
                f"unknown JSON Schema dialects: {sorted(unknown)} (known: {sorted(ALL_DIALECTS)})"
            )
        if "2020-12" not in self.dialects:
            raise ValueError("dialects must include 2020-12, the MCP default every host must support")


class Rejection(TypedDict):
    """Why one descriptor was not admitted. ``tool`` is its name, or ``None`` when it has no usable name;
    ``index`` is its position in the server's listing; ``descriptor`` is the item as listed (so a
    reviewer shows what was refused without listing again; never sent anywhere by the SDK)."""

    tool: str | None
    index: int
    category: str
    reason: str
    descriptor: Any


@dataclass(frozen=True, slots=True)
class AdmissionReport:
    """``admitted``: name → descriptor, in server order. ``rejected``: one :class:`Rejection` each."""

    admitted: dict[str, dict[str, Any]]
    rejected: list[Rejection]


def is_sensitive_name(name: str, sensitive_names: Iterable[str] = DEFAULT_SENSITIVE_NAMES) -> bool:
    """Whether ``name``, NFKC-normalized, case-folded and stripped of non-alphanumerics, contains a
    sensitive fragment (``Api-Key``, ``X_API_KEY`` and fullwidth ``ＴＯＫＥＮ`` all count)."""
    normalized = _NON_ALNUM.sub("", unicodedata.normalize("NFKC", name).casefold())
    return any(fragment in normalized for fragment in sensitive_names)


def _check_schema(schema: Any, where: str, policy: AdmissionPolicy) -> None:
    """The one schema check every gate shares (dialect, meta-schema, offline references, both engines):
    e.g. a ``pattern`` valid for Python ``re`` but not ECMA-262 (``\\Z``) fails here, at Admit."""
    failure = check_schema(schema, dialects=policy.dialects)
    if failure is not None:
        # check_schema judges schemas only, so "instance" cannot occur; the fallback keeps mypy exact.
        category: AdmissionCategory = "invalid_schema" if failure.kind == "instance" else failure.kind
        raise AdmissionError(category, f"{where}: {failure.message}")


def _check_header_placement_elsewhere(schema: Any, where: str) -> None:
    for site in iter_schema_positions(schema):
        if X_MCP_HEADER_KEY in site.schema:
            raise AdmissionError(
                "invalid_header_annotation",
                f"{where}{site.pointer or '/'}: {X_MCP_HEADER_KEY} is not allowed here",
            )


def _check_name(name: str) -> None:
    if len(name) > MAX_TOOL_NAME_LENGTH:
        raise AdmissionError("malformed", f"name is longer than {MAX_TOOL_NAME_LENGTH} characters")
    # Printable ASCII has none of those categories (ASCII's only one among them is Cc, which
    # isprintable refuses): one C call instead of a category lookup per character.
    if name.isascii() and name.isprintable():
        return
    if any(unicodedata.category(character) in _UNPRINTABLE_CATEGORIES for character in name):
        raise AdmissionError("malformed", "name contains a control, format or separator character")


def _check_size(descriptor: Mapping[str, Any], policy: AdmissionPolicy, scanned: bytes | None) -> None:
    """Bound the descriptor's JSON size and its schemas' nesting in one iterative walk that stops at
    the first bound crossed (never serializes, never recurses: a 10,000-level schema is one walk).
    With the descriptor's exact bytes (``scanned``) the same verdict usually comes without the walk."""
    if scanned is None:
        crossed = json_bound_crossed(
            descriptor, max_bytes=policy.max_descriptor_bytes, max_depth=policy.max_schema_depth
        )
    else:
        crossed = screened_bound_crossed(
            descriptor, scanned, max_bytes=policy.max_descriptor_bytes, max_depth=policy.max_schema_depth
        )
    if crossed == "depth":
        raise AdmissionError(
            "invalid_schema", f"the descriptor nests deeper than max_schema_depth ({policy.max_schema_depth})"
        )
    if crossed == "bytes":
        raise AdmissionError(
            "malformed", f"the descriptor is larger than max_descriptor_bytes ({policy.max_descriptor_bytes})"
        )


# Prefilters over a descriptor's exact (marshal) bytes: a float is its 8 little-endian bytes, whose last
# two hold the exponent — all ones (infinity, NaN) needs these two bytes; a string is UTF-8 written with
# "surrogatepass", where only a surrogate starts 0xED 0xA0..0xBF. No match: no such value, no walk.
_NON_FINITE_BYTES: Final = re.compile(rb"[\xf0-\xff][\x7f\xff]")
_SURROGATE_BYTES: Final = re.compile(rb"\xed[\xa0-\xbf]")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _shown_key(key: str) -> str:
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", key)


def first_invalid_value(value: Any) -> tuple[str, str] | None:
    """``(pointer, what)`` of the first value in ``value`` that no JSON text can carry faithfully: a
    non-finite number (``1e400`` is read as infinity) or a string holding a lone surrogate (a
    ``\\ud800`` escape: no UTF-8 document contains it); ``None`` when there is none. Iterative; keys
    in the pointer have their surrogates shown escaped."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while stack:
        current, path = stack.pop()
        if isinstance(current, float) and not math.isfinite(current):
            return json_pointer(path), "a non-finite number"
        if isinstance(current, str) and _SURROGATE.search(current):
            return json_pointer(path), "a string holding a lone surrogate"
        if isinstance(current, Mapping):
            for key, member in reversed(list(current.items())):
                shown = _shown_key(key) if isinstance(key, str) else str(key)
                if isinstance(key, str) and _SURROGATE.search(key):
                    return json_pointer((*path, shown)), "a key holding a lone surrogate"
                stack.append((member, (*path, shown)))
        elif isinstance(current, list):
            stack.extend(
                (member, (*path, str(index))) for index, member in reversed(list(enumerate(current)))
            )
    return None


def _check_values(descriptor: Mapping[str, Any], scanned: bytes | None) -> None:
    """Refuse a descriptor holding a value no JSON text carries faithfully (``malformed``): it could
    be neither fingerprinted nor shown nor sent back, and it must cost only its own tool."""
    if scanned is not None and not (_NON_FINITE_BYTES.search(scanned) or _SURROGATE_BYTES.search(scanned)):
        return
    found = first_invalid_value(descriptor)
    if found is not None:
        pointer, what = found
        raise AdmissionError("malformed", f"{what} at {pointer or '/'}")


def _check_header_bounds(annotations: tuple[Any, ...], policy: AdmissionPolicy) -> None:
    if len(annotations) > policy.max_mirrored_headers:
        raise AdmissionError(
            "invalid_header_annotation",
            f"inputSchema: {len(annotations)} x-mcp-header annotations, more than max_mirrored_headers "
            f"({policy.max_mirrored_headers})",
        )
    for annotation in annotations:
        if len(annotation.name) > policy.max_header_name_length:
            raise AdmissionError(
                "invalid_header_annotation",
                f"inputSchema{annotation.pointer}: the x-mcp-header name is longer than "
                f"max_header_name_length ({policy.max_header_name_length})",
            )


_HEADER_KEY_BYTES: Final = X_MCP_HEADER_KEY.encode()


def _check_descriptor(descriptor: Mapping[str, Any], policy: AdmissionPolicy, scanned: bytes | None) -> None:
    """``scanned``: the descriptor's :func:`exact_value_key` bytes, which let the screens below clear
    most descriptors without walking or compiling them (``None``: every check the long way)."""
    _check_size(descriptor, policy, scanned)
    _check_values(descriptor, scanned)
    input_schema = descriptor.get("inputSchema")
    if not isinstance(input_schema, Mapping):
        raise AdmissionError("malformed", "inputSchema must be a JSON object")
    if input_schema.get("type") != "object":
        raise AdmissionError("malformed", 'inputSchema must declare type "object" at its root')
    output_schema = descriptor.get("outputSchema")
    if "outputSchema" in descriptor and not isinstance(output_schema, Mapping):
        raise AdmissionError("malformed", "outputSchema must be a JSON object")
    schemas = [("inputSchema", input_schema)]
    if isinstance(output_schema, Mapping):
        schemas.append(("outputSchema", output_schema))
    # The screen only ever says "certainly accepted" (see screen_schemas); otherwise each schema gets
    # the full check, in order, for the exact category and reason. Depth is bounded above already.
    if (
        scanned is None
        or policy.max_schema_depth > SCREEN_MAX_DEPTH
        or not screen_schemas([schema for _, schema in schemas], scanned, dialects=policy.dialects)
    ):
        for where, schema in schemas:
            _check_schema(schema, where, policy)
    dialect = dialect_of(input_schema)
    if dialect is not None and dialect.ref_overrides_siblings and "$ref" in input_schema:
        raise AdmissionError(
            "malformed",
            f'inputSchema/: in {dialect.name} a root `$ref` makes the sibling `type: "object"` ignored',
        )
    if scanned is not None and _HEADER_KEY_BYTES not in scanned:
        # No x-mcp-header key anywhere (its bytes would be in the exact encoding): nothing to place,
        # and with a supported dialect (checked above) reading the annotations would find none.
        return
    if isinstance(output_schema, Mapping):
        _check_header_placement_elsewhere(output_schema, "outputSchema")
    annotations = header_annotations(input_schema, placement=policy.profile)
    _check_header_bounds(annotations, policy)
    for annotation in annotations:
        property_name = annotation.path[-1]
        if is_sensitive_name(annotation.name, policy.sensitive_names) or is_sensitive_name(
            property_name, policy.sensitive_names
        ):
            raise AdmissionError(
                "sensitive_header",
                f"inputSchema{annotation.pointer}: a sensitive argument must not be mirrored into "
                f"{annotation.header}",
            )


def admit_tools(descriptors: Iterable[Any], policy: AdmissionPolicy | None = None) -> AdmissionReport:
    """Admit the descriptors a host may call, in server order, and explain every rejection.

    Rules: ``name`` is a non-empty string and unique (all duplicates are rejected, see the module
    docstring); ``inputSchema`` is a JSON object with ``type: "object"``; ``outputSchema``, when present,
    is a JSON object; both are valid schemas of one of the policy's dialects (``$schema`` absent means
    2020-12), and every ``$ref`` resolves locally (nothing is fetched). ``x-mcp-header`` annotations follow
    :func:`~agent_connector_sdk.core.contracts._headers.header_annotations` with the policy's placement
    profile, never appear in an ``outputSchema``, and never mark a sensitive name. One descriptor's
    failure, including an unexpected one such as a pathologically deep schema, never affects another.
    """
    return _admit(descriptors, policy if policy is not None else AdmissionPolicy(), _VERDICTS)


def admit_keyed(
    descriptors: Sequence[Any], exact_keys: Sequence[bytes | None], policy: AdmissionPolicy
) -> AdmissionReport:
    """:func:`admit_tools` given each descriptor's :func:`exact_value_key` (computed by the caller, who
    needs them too: the host core's listing memo). Same report; internal to the SDK."""
    return _admit(descriptors, policy, _VERDICTS, exact_keys=exact_keys)


# ---------------------------------------------------------------------------------- verdict memo

VERDICT_MEMO_ENTRIES: Final = 8192
"""Descriptor verdicts remembered process-wide (~150 bytes each: a digest and a reason)."""

_Verdict = tuple[AdmissionCategory, str] | None  # None: admitted


class _VerdictMemo:
    """``(policy, SHA-256 of the descriptor's exact bytes)`` → its verdict, bounded (LRU).

    Content-addressed: the key is computed from the descriptor as given, every time (``marshal``
    writes each value with its type and every key in order, so equal bytes are an equal descriptor and
    a changed byte is a new key that is checked afresh). A verdict is a pure function of the descriptor
    and the policy (the name's uniqueness is judged per listing, outside the memo), so a re-list of
    identical descriptors costs one hash each instead of every schema check.
    """

    def __init__(self, max_entries: int) -> None:
        self._entries: OrderedDict[tuple[AdmissionPolicy, bytes], _Verdict] = OrderedDict()
        self._max_entries = max_entries
        self._lock = threading.Lock()

    def key(self, item: Any, policy: AdmissionPolicy) -> tuple[AdmissionPolicy, bytes] | None:
        return self.key_of(exact_value_key(item), policy)

    @staticmethod
    def key_of(exact: bytes | None, policy: AdmissionPolicy) -> tuple[AdmissionPolicy, bytes] | None:
        return None if exact is None else (policy, hashlib.sha256(exact).digest())

    def get(self, key: tuple[AdmissionPolicy, bytes]) -> tuple[bool, _Verdict]:
        with self._lock:
            if key not in self._entries:
                return False, None
            self._entries.move_to_end(key)
            return True, self._entries[key]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def put(self, key: tuple[AdmissionPolicy, bytes], verdict: _Verdict) -> None:
        with self._lock:
            self._entries[key] = verdict
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)


_VERDICTS: Final = _VerdictMemo(VERDICT_MEMO_ENTRIES)


def _verdict(
    item: Mapping[str, Any], tool: str, policy: AdmissionPolicy, scanned: bytes | None = None
) -> _Verdict:
    """Every check of one descriptor that does not depend on the rest of the listing (``scanned``: its
    exact bytes, for the screens; the verdict is the same without them)."""
    try:
        _check_name(tool)
        _check_descriptor(item, policy, scanned)
    except AdmissionError as refusal:
        return refusal.category, refusal.message
    except RecursionError:
        return "invalid_schema", "schema is nested too deeply"
    return None


def _admit(
    descriptors: Iterable[Any],
    policy: AdmissionPolicy,
    memo: _VerdictMemo | None,
    *,
    screen: bool = True,
    exact_keys: Sequence[bytes | None] | None = None,
) -> AdmissionReport:
    """``memo``: the verdict memo (``None``: none); ``screen=False`` checks every descriptor the long way
    (the reference the screens are tested against). ``exact_keys``: each item's :func:`exact_value_key`,
    when the caller computed them already (the host core keys its listing memo by them): encoding a
    descriptor is a large part of a warm admission, so it is done once."""
    items = list(descriptors)
    if exact_keys is not None and len(exact_keys) != len(items):
        raise ValueError("exact_keys must have one entry per descriptor")
    names = [item.get("name") if isinstance(item, Mapping) else None for item in items]
    counts = Counter(name for name in names if isinstance(name, str))
    admitted: dict[str, dict[str, Any]] = {}
    rejected: list[Rejection] = []
    for index, (item, name) in enumerate(zip(items, names, strict=True)):
        tool = name if isinstance(name, str) and name else None
        try:
            if not isinstance(item, Mapping):
                raise AdmissionError("malformed", "descriptor must be a JSON object")
            if tool is None:
                raise AdmissionError("malformed", "name must be a non-empty string")
            _check_name(tool)
            if counts[tool] > 1:
                raise AdmissionError("duplicate_name", f"{counts[tool]} descriptors share this name")
            # One exact encoding serves the memo key and the screens.
            if exact_keys is not None:
                exact = exact_keys[index]
            else:
                exact = exact_value_key(item) if memo is not None or screen else None
            key = memo.key_of(exact, policy) if memo is not None else None
            known, verdict = memo.get(key) if memo is not None and key is not None else (False, None)
            if not known:
                verdict = _verdict(cast(Mapping[str, Any], item), tool, policy, exact if screen else None)
                if memo is not None and key is not None:
                    memo.put(key, verdict)
            if verdict is not None:
                raise AdmissionError(*verdict)
        except AdmissionError as refusal:
            rejected.append(
                {
                    "tool": tool,
                    "index": index,
                    "category": refusal.category,
                    "reason": refusal.message,
                    "descriptor": item,
                }
            )
            continue
        except RecursionError:
            rejected.append(
                {
                    "tool": tool,
                    "index": index,
                    "category": "invalid_schema",
                    "reason": "schema is nested too deeply",
                    "descriptor": item,
                }
            )
            continue
        admitted[tool] = dict(cast(Mapping[str, Any], item))
    return AdmissionReport(admitted=admitted, rejected=rejected)
