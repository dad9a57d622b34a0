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
annotations, ``null`` when the annotations are invalid), after one normalization that makes *reordering*
not drift: object keys are sorted by the encoding, and the order-free arrays of JSON Schema —
``required`` and ``type`` lists — are sorted. Other arrays (``enum``, ``prefixItems``, ``anyOf``, ...)
keep their order.

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
from agent_connector_sdk.core.schema_disclosure._encoding import canonical_json_bytes
from agent_connector_sdk.core.schema_disclosure._errors import SchemaDisclosureError

__all__ = [
    "CONTRACT_FIELDS",
    "CONTRACT_FIELDS_V1",
    "ENCODING",
    "HOST_META_KEYS",
    "ContractField",
    "ContractFingerprint",
    "contract_view",
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
    return _normalize(value, 0)


def _normalize(item: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise AdmissionError("malformed", "descriptor nests too deeply to fingerprint")
    kind = type(item)
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
                new = _normalize(child, depth + 1)
            if new is not child:
                if copy is None:
                    copy = dict(item)
                copy[member] = new
        return item if copy is None else copy
    if kind is list or isinstance(item, list):
        items: list[Any] | None = None if kind is list else list(item)
        for index, child in enumerate(item):
            new = _normalize(child, depth + 1)
            if new is not child:
                if items is None:
                    items = list(item)
                items[index] = new
        return item if items is None else items
    return item


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
    view: dict[str, Any] = {field: _normalized(descriptor[field]) for field in fields if field in descriptor}
    if version == 2 and "_meta" in descriptor:
        meta = _host_meta(descriptor["_meta"])
        if meta is not None:
            view["_meta"] = _normalized(meta)
    view["headers"] = _header_map(descriptor.get("inputSchema"))
    return view


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
