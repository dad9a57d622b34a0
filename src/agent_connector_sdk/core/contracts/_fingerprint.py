"""Admit: a tool's contract fingerprint — what a person approved, as digests (pure, sans-I/O).

A *contract* is every part of a tool descriptor a host, a model or a person acts on (fingerprint
version 2, :data:`CONTRACT_FIELDS`): ``name``, ``title``, ``description``, ``icons`` (the host fetches
and shows them), ``inputSchema``, ``outputSchema``, ``annotations``, ``execution`` (task support), the
``_meta`` keys a host acts on (:data:`HOST_META_KEYS`: the UI resource an MCP Apps host renders, and the
Apps SDK's equivalents) and the **header map** (each ``x-mcp-header`` argument → its ``Mcp-Param-*``
name, read with the spec placement). Other ``_meta`` keys are left out: transport and vendor metadata
(tags, timing, tracing) that change no call, no display and no permission, and that servers rewrite
freely. Version 1 (locks written before version 2, :data:`CONTRACT_FIELDS_V1`) had no ``icons``,
``execution`` nor ``_meta``; it is still computed to read those locks.

Encoding (documented, stable): the project's canonical JSON — the one schema disclosure uses
(:func:`~agent_connector_sdk.core.schema_disclosure._encoding.canonical_json_bytes`: sorted keys,
separators ``,`` and ``:``, UTF-8 with literal non-ASCII, non-finite numbers refused) — **not** RFC 8785
JCS. The two agree on every descriptor whose numbers are integers or shortest-repr floats and whose keys
are ASCII; they may differ on key order for non-BMP keys (code points vs UTF-16 units) and on float
spelling (Python ``repr`` vs ECMAScript). A fingerprint is only ever compared with one computed here.

The hashed value is ``{field: value}`` over the fields present (``headers`` always: ``{}`` without
annotations, ``null`` when the annotations are invalid), after one normalization that makes what
provably means the same not drift: object keys are sorted by the encoding; the order-free arrays of
JSON Schema — ``required`` and ``type`` lists — are sorted (other arrays, ``enum``, ``prefixItems``,
``anyOf``, ..., keep their order); and, in version 2, numbers are read by value (``1``, ``1.0`` and
``1e0`` are one number to JSON Schema: an integral float is written as the integer) and a schema's
local ``$ref`` to ``#/$defs/NAME`` (or ``#/definitions/NAME``) standing alone is replaced by the
definition it names (:func:`inline_local_refs`: only where that is provably the same schema — no
``$id``, no dynamic reference, no cycle — and within a size bound; a definition no reference is left
to is dropped).

Three digests come out, all lowercase hex SHA-256:

* ``sha256`` — the whole contract (the lock's identity of "this tool as approved");
* ``contract_sha256`` — everything but the name, so a rename (same contract, new name) is recognised;
* ``fields`` — one digest per field present, so a drift names the fields that changed without ever
  storing or printing a value.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from agent_connector_sdk.core.contracts._headers import header_annotations
from agent_connector_sdk.core.contracts.errors import AdmissionError
from agent_connector_sdk.core.schema_disclosure import SchemaDisclosureError, canonical_json_bytes

__all__ = [
    "CONTRACT_FIELDS",
    "CONTRACT_FIELDS_V1",
    "ENCODING",
    "HOST_META_KEYS",
    "ContractField",
    "ContractFingerprint",
    "contract_view",
    "equivalent_view",
    "fingerprint",
    "fingerprint_view",
]

ContractField = Literal[
    "name",
    "title",
    "description",
    "icons",
    "inputSchema",
    "outputSchema",
    "annotations",
    "execution",
    "_meta",
    "headers",
]
CONTRACT_FIELDS: Final[tuple[ContractField, ...]] = get_args(ContractField)
"""Fingerprint version 2 (every lock written now): the fields compared, in report order."""
CONTRACT_FIELDS_V1: Final[tuple[ContractField, ...]] = (
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "headers",
)
"""Fingerprint version 1 (locks of format 1): read only, to compare against those locks."""
HOST_META_KEYS: Final[tuple[str, ...]] = (
    "ui",  # MCP Apps (SEP-1865): {resourceUri, visibility, ...} — the UI the host renders
    "ui/resourceUri",  # MCP Apps, the earlier flat spelling
    "openai/outputTemplate",  # Apps SDK: the UI resource the host renders
    "openai/widgetAccessible",  # Apps SDK: the rendered UI may call tools
    "openai/visibility",  # Apps SDK: whether the model sees the tool
)
"""The ``_meta`` keys a host acts on; only these are part of the contract."""
FingerprintVersion = Literal[1, 2]
ENCODING: Final = "agent-connector-canonical-json-1"
"""Names the canonical encoding in lock files (see the module docstring)."""
_DESCRIPTOR_FIELDS: Final = tuple(field for field in CONTRACT_FIELDS if field not in ("_meta", "headers"))
_DESCRIPTOR_FIELDS_V1: Final = CONTRACT_FIELDS_V1[:-1]
_ORDER_FREE: Final = frozenset({"required", "type"})
_MAX_DEPTH: Final = 200
"""Nesting a contract may have: below the interpreter's recursion limit, and below the depth a lock file
(and a review report) can serialize — what cannot be stored cannot be approved."""


@dataclass(frozen=True, slots=True)
class ContractFingerprint:
    """The digests of one tool's contract (see the module docstring)."""

    name: str
    sha256: str
    contract_sha256: str
    fields: Mapping[str, str]


def _normalized(value: Any) -> Any:
    """``value`` with the order-free arrays of JSON Schema (``required``, ``type``) sorted.

    Copy on write: a part with nothing to sort is returned as it is (never modified), so a schema
    already in order costs one visit per node and no allocation. Dict and list subclasses are always
    copied into plain ones (what the encoding accepts). Only arrays of strings are sorted: anything else
    is left for the schema check to judge. Depth is bounded (200), below the interpreter's recursion
    limit, so a hostile nesting is a refusal, not a RecursionError.
    """
    return _normalize(value, 0, False)


def _normalize(item: Any, depth: int, integral: bool) -> Any:
    if depth > _MAX_DEPTH:
        raise AdmissionError("malformed", "descriptor nests too deeply to fingerprint")
    kind = type(item)
    if kind is float:  # version 2: an integral number is written as the integer (1.0 is 1)
        return int(item) if integral and item.is_integer() else item
    if kind is dict or (kind is not list and isinstance(item, dict)):
        copy: dict[str, Any] | None = None if kind is dict else dict(item)
        for member, child in item.items():
            if (
                member in _ORDER_FREE
                and isinstance(child, list)
                and all(isinstance(entry, str) for entry in child)
            ):
                new = sorted(child)
                if type(child) is list and new == child:
                    new = child
            else:
                new = _normalize(child, depth + 1, integral)
            if new is not child:
                if copy is None:
                    copy = dict(item)
                copy[member] = new
        return item if copy is None else copy
    if kind is list or isinstance(item, list):
        items: list[Any] | None = None if kind is list else list(item)
        for index, child in enumerate(item):
            new = _normalize(child, depth + 1, integral)
            if new is not child:
                if items is None:
                    items = list(item)
                items[index] = new
        return item if items is None else items
    return item


_MAX_INLINED_NODES: Final = 50_000
"""Nodes a schema may grow to by inlining its local references (past it, it is kept as written)."""
_DEF_KEYS: Final = ("$defs", "definitions")
_BASE_CHANGING: Final = frozenset(
    {"$id", "id", "$dynamicRef", "$recursiveRef", "$dynamicAnchor", "$recursiveAnchor"}
)


def _integral_numbers(value: Any) -> Any:
    """``value`` with every integral finite float written as the integer (``1.0`` → ``1``): JSON
    Schema compares numbers by value, so the two spellings mean the same. Copy on write."""
    if type(value) is float:
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        copy: dict[str, Any] | None = None
        for key, child in value.items():
            new = _integral_numbers(child)
            if new is not child:
                if copy is None:
                    copy = dict(value)
                copy[key] = new
        return value if copy is None else copy
    if isinstance(value, list):
        items: list[Any] | None = None
        for index, child in enumerate(value):
            new = _integral_numbers(child)
            if new is not child:
                if items is None:
                    items = list(value)
                items[index] = new
        return value if items is None else items
    return value


def _def_target(ref: Any, definitions: Mapping[str, Mapping[str, Any]]) -> tuple[str, str] | None:
    if not isinstance(ref, str):
        return None
    for key in _DEF_KEYS:
        prefix = f"#/{key}/"
        if ref.startswith(prefix):
            name = ref[len(prefix) :]
            if "/" in name or "%" in name:
                return None
            name = name.replace("~1", "/").replace("~0", "~")
            if name in definitions.get(key, {}):
                return key, name
    return None


def _base_changing(value: Any, root: bool = True) -> bool:
    if isinstance(value, dict):
        if any(key in _BASE_CHANGING for key in value if not (root and key in ("$id", "id"))):
            return True
        return any(_base_changing(child, False) for child in value.values())
    if isinstance(value, list):
        return any(_base_changing(child, False) for child in value)
    return False


_MAX_DEFINITIONS: Final = 2_000
"""Definitions a schema may have for its references to be inlined (past it, it is kept as written)."""


def _references(value: Any, definitions: Mapping[str, Mapping[str, Any]]) -> set[tuple[str, str]]:
    """The definitions ``value`` refers to (any local ``$ref`` naming one)."""
    found: set[tuple[str, str]] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            target = _def_target(item.get("$ref"), definitions)
            if target is not None:
                found.add(target)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _on_cycles(definitions: Mapping[str, Mapping[str, Any]]) -> set[tuple[str, str]]:
    """The definitions that refer to themselves, directly or through others (never inlined)."""
    graph = {
        (key, name): _references(body, definitions)
        for key, named in definitions.items()
        for name, body in named.items()
    }
    cyclic: set[tuple[str, str]] = set()
    for start in graph:
        seen: set[tuple[str, str]] = set()
        stack = list(graph[start])
        while stack:
            node = stack.pop()
            if node == start:
                cyclic.add(start)
                break
            if node not in seen:
                seen.add(node)
                stack.extend(graph.get(node, ()))
    return cyclic


def inline_local_refs(schema: Any) -> Any:
    """``schema`` with each ``{"$ref": "#/$defs/NAME"}`` (or ``#/definitions/NAME``, and nothing else
    in that object) replaced by the definition it names, recursively, and the definitions no reference
    is left to dropped: the same schema written inline. Left as written (the same object) when that is
    not provably the same: a nested ``$id`` or a dynamic reference (the base a ``#`` is read from could
    move), or when inlining would pass :data:`_MAX_INLINED_NODES` or nest deeper than a contract may
    (200: what cannot be fingerprinted cannot be approved). A reference to a definition on a
    cycle (a tree that refers to itself) stays a reference and keeps its definition, and so does one
    with sibling keywords (draft-07 ignores them, 2020-12 applies them). Idempotent."""
    if not isinstance(schema, dict) or not any(isinstance(schema.get(key), dict) for key in _DEF_KEYS):
        return schema
    definitions = {key: schema[key] for key in _DEF_KEYS if isinstance(schema.get(key), dict)}
    if _base_changing(schema) or sum(len(named) for named in definitions.values()) > _MAX_DEFINITIONS:
        return schema
    cyclic = _on_cycles(definitions)
    budget = [_MAX_INLINED_NODES]
    kept: set[tuple[str, str]] = set()

    def walk(value: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > _MAX_DEPTH:  # no bigger, and no deeper than a contract may nest
            raise OverflowError
        if isinstance(value, dict):
            target = _def_target(value.get("$ref"), definitions)
            if target is not None and len(value) == 1 and target not in cyclic:
                return walk(definitions[target[0]][target[1]], depth)
            if target is not None:
                kept.add(target)
            return {key: walk(child, depth + 1) for key, child in value.items()}
        if isinstance(value, list):
            return [walk(child, depth + 1) for child in value]
        return value

    try:
        body = {key: walk(child, 1) for key, child in schema.items() if key not in definitions}
        pending = list(kept)
        done: set[tuple[str, str]] = set()
        kept_defs: dict[str, dict[str, Any]] = {}
        while pending:  # a kept definition is inlined too, and keeps whatever it refers to
            target = pending.pop()
            if target in done:
                continue
            done.add(target)
            before = set(kept)
            kept_defs.setdefault(target[0], {})[target[1]] = walk(definitions[target[0]][target[1]], 2)
            pending.extend(kept - before)
    except (OverflowError, RecursionError):
        return schema
    for key in _DEF_KEYS:
        if key in kept_defs:
            body[key] = dict(sorted(kept_defs[key].items()))
    return body


def _header_map(input_schema: Any) -> dict[str, str] | None:
    try:
        annotations = header_annotations(input_schema, placement="spec")
    except AdmissionError:
        return None  # invalid annotations are a contract of their own: "none usable"
    return {annotation.pointer: annotation.header for annotation in annotations}


def _host_meta(meta: Any) -> Any:
    """The host-facing part of ``_meta`` (``None``: nothing a host acts on). A ``_meta`` that is not an
    object is kept whole: its shape is the Admit gate's business, and a change to it is still seen."""
    if not isinstance(meta, Mapping):
        return meta
    kept = {key: meta[key] for key in HOST_META_KEYS if key in meta}
    return kept or None


def contract_view(descriptor: Mapping[str, Any], version: FingerprintVersion = 2) -> dict[str, Any]:
    """The normalized ``{field: value}`` a fingerprint hashes (fields absent from the descriptor are
    absent here; ``headers`` is always present; ``_meta`` only when it holds a host-facing key)."""
    fields = _DESCRIPTOR_FIELDS if version == 2 else _DESCRIPTOR_FIELDS_V1
    integral = version == 2
    view: dict[str, Any] = {
        field: _normalize(descriptor[field], 0, integral) for field in fields if field in descriptor
    }
    if version == 2 and "_meta" in descriptor:
        meta = _host_meta(descriptor["_meta"])
        if meta is not None:
            view["_meta"] = _normalize(meta, 0, integral)
    if version == 2:
        for field in ("inputSchema", "outputSchema"):
            if field in view:
                view[field] = inline_local_refs(view[field])
    view["headers"] = _header_map(descriptor.get("inputSchema"))
    return view


def equivalent_view(view: Mapping[str, Any]) -> dict[str, Any]:
    """``view`` (a version 2 :func:`contract_view`, or a lock's stored contract) with what provably
    means the same written one way: integral numbers as integers everywhere, local references of the
    schemas inlined. Idempotent; returns an equal dict when there is nothing to rewrite (so a contract
    stored before this normalization existed is compared as it would be written now)."""
    out = {field: _integral_numbers(value) for field, value in view.items()}
    for field in ("inputSchema", "outputSchema"):
        if field in out:
            out[field] = inline_local_refs(out[field])
    return out


def _canonical(value: Any) -> bytes:
    try:
        return canonical_json_bytes(value)
    except SchemaDisclosureError as error:
        # e.g. a lone surrogate in a description: not encodable, so not approvable.
        raise AdmissionError("malformed", f"descriptor cannot be fingerprinted: {error.message}") from None


def _object_bytes(members: Mapping[str, bytes]) -> bytes:
    """The canonical JSON of ``{field: value}`` from each value's canonical bytes: keys sorted as the
    encoding sorts them, the same separators. Byte for byte what encoding the whole object gives (a
    test holds them equal), without walking and encoding every schema three times."""
    return b"{" + b",".join(_canonical(key) + b":" + members[key] for key in sorted(members)) + b"}"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint(descriptor: Mapping[str, Any], version: FingerprintVersion = 2) -> ContractFingerprint:
    """Fingerprint one wire descriptor (camelCase dict with a string ``name``); ``version=1`` computes
    the digests locks of format 1 hold.

    Raises :class:`AdmissionError` (``malformed``) for a descriptor without a string name, or one the
    canonical encoding refuses (not JSON data, a lone surrogate, nesting deeper than 200).
    """
    name = descriptor.get("name") if isinstance(descriptor, Mapping) else None
    if not isinstance(name, str) or not name:
        raise AdmissionError("malformed", "name must be a non-empty string")
    return fingerprint_view(contract_view(descriptor, version))


def fingerprint_view(view: Mapping[str, Any]) -> ContractFingerprint:
    """The digests of a :func:`contract_view` (with its ``name``): how a lock's stored contract is
    checked against its stored digests. Raises :class:`AdmissionError` as :func:`fingerprint` does."""
    name = view.get("name")
    if not isinstance(name, str) or not name:
        raise AdmissionError("malformed", "name must be a non-empty string")
    encoded = {field: _canonical(value) for field, value in view.items()}
    body = {field: data for field, data in encoded.items() if field != "name"}
    return ContractFingerprint(
        name=name,
        sha256=_sha256(_object_bytes(encoded)),
        contract_sha256=_sha256(_object_bytes(body)),
        fields={field: _sha256(data) for field, data in encoded.items()},
    )
