"""Admit: a tool's contract fingerprint — what a person approved, as digests (pure, sans-I/O).

A *contract* is the part of a tool descriptor a host and a model rely on: ``name``, ``title``,
``description``, ``inputSchema``, ``outputSchema``, ``annotations`` and the **header map** (each
``x-mcp-header`` argument → its ``Mcp-Param-*`` name, read with the spec placement). ``icons`` and
``_meta`` are not part of it (presentation and transport metadata; they do not change what a call
means).

Encoding (documented, stable): the project's canonical JSON — the one schema disclosure uses
(:func:`~agent_connector_sdk.mcp.schema_disclosure.encoding.canonical_json_bytes`: sorted keys,
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
from typing import Any, Final, Literal

from agent_connector_sdk.mcp.contracts.errors import AdmissionError
from agent_connector_sdk.mcp.contracts.headers import header_annotations
from agent_connector_sdk.mcp.schema_disclosure.encoding import canonical_json_bytes
from agent_connector_sdk.mcp.schema_disclosure.errors import SchemaDisclosureError

__all__ = [
    "CONTRACT_FIELDS",
    "ENCODING",
    "ContractField",
    "ContractFingerprint",
    "contract_view",
    "fingerprint",
]

ContractField = Literal[
    "name", "title", "description", "inputSchema", "outputSchema", "annotations", "headers"
]
CONTRACT_FIELDS: Final[tuple[ContractField, ...]] = (
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "headers",
)
ENCODING: Final = "agent-connector-canonical-json-1"
"""Names the canonical encoding in lock files (see the module docstring)."""
_DESCRIPTOR_FIELDS: Final = CONTRACT_FIELDS[:-1]
_ORDER_FREE: Final = frozenset({"required", "type"})
_MAX_DEPTH: Final = 512


@dataclass(frozen=True, slots=True)
class ContractFingerprint:
    """The digests of one tool's contract (see the module docstring)."""

    name: str
    sha256: str
    contract_sha256: str
    fields: Mapping[str, str]


def _normalized(value: Any) -> Any:
    """A copy where the order-free arrays of JSON Schema (``required``, ``type``) are sorted.

    Iterative over an explicit stack, so a hostile nesting depth is a refusal, not a RecursionError.
    Only arrays of strings are sorted: anything else is left for the schema check to judge.
    """
    root: dict[str, Any] = {"": value}
    stack: list[tuple[Any, Any, Any, int]] = [(root, "", value, 0)]
    while stack:
        parent, key, item, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise AdmissionError("malformed", "descriptor nests too deeply to fingerprint")
        if isinstance(item, dict):
            copy: dict[str, Any] = {}
            parent[key] = copy
            for member, child in item.items():
                if (
                    member in _ORDER_FREE
                    and isinstance(child, list)
                    and all(isinstance(entry, str) for entry in child)
                ):
                    copy[member] = sorted(child)
                else:
                    stack.append((copy, member, child, depth + 1))
        elif isinstance(item, list):
            items: list[Any] = [None] * len(item)
            parent[key] = items
            for index, child in enumerate(item):
                stack.append((items, index, child, depth + 1))
        else:
            parent[key] = item
    return root[""]


def _header_map(input_schema: Any) -> dict[str, str] | None:
    try:
        annotations = header_annotations(input_schema, placement="spec")
    except AdmissionError:
        return None  # invalid annotations are a contract of their own: "none usable"
    return {annotation.pointer: annotation.header for annotation in annotations}


def contract_view(descriptor: Mapping[str, Any]) -> dict[str, Any]:
    """The normalized ``{field: value}`` a fingerprint hashes (fields absent from the descriptor are
    absent here; ``headers`` is always present)."""
    view: dict[str, Any] = {
        field: _normalized(descriptor[field]) for field in _DESCRIPTOR_FIELDS if field in descriptor
    }
    view["headers"] = _header_map(descriptor.get("inputSchema"))
    return view


def _digest(value: Any) -> str:
    try:
        return hashlib.sha256(canonical_json_bytes(value)).hexdigest()
    except SchemaDisclosureError as error:
        # e.g. a lone surrogate in a description: not encodable, so not approvable.
        raise AdmissionError("malformed", f"descriptor cannot be fingerprinted: {error.message}") from None


def fingerprint(descriptor: Mapping[str, Any]) -> ContractFingerprint:
    """Fingerprint one wire descriptor (camelCase dict with a string ``name``).

    Raises :class:`AdmissionError` (``malformed``) for a descriptor without a string name, or one the
    canonical encoding refuses (not JSON data, a lone surrogate, nesting deeper than 512).
    """
    name = descriptor.get("name") if isinstance(descriptor, Mapping) else None
    if not isinstance(name, str) or not name:
        raise AdmissionError("malformed", "name must be a non-empty string")
    view = contract_view(descriptor)
    fields = {field: _digest(value) for field, value in view.items()}
    body = {field: value for field, value in view.items() if field != "name"}
    return ContractFingerprint(name=name, sha256=_digest(view), contract_sha256=_digest(body), fields=fields)
