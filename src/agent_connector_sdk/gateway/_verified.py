"""Verified disclosures of search-first children, content-addressed and bounded (pure: no I/O).

A hidden tool's descriptor is reconstructed from a disclosure whose bytes were checked against the
digests its navigation entry names. What the entry says (name, title, description, hints, digests,
fragment count, manifest URI) is the tool's *contract identity*: hashed, it is the key under which the
verified descriptor is kept. The same key can never answer for other bytes (a changed tool has a new
key), so a hit needs no second read, across searches, calls, reconnects and ``--check`` runs alike.

Bounded in entries per child, entries in total and bytes in total (LRU): a child inventing names under
every search fills at most its own share and pushes out only its own entries first.

A second tier, ``shared`` (:class:`SharedDisclosures`; in Redis when the gateway has a shared state
store, ``state._disclosures``), sits behind the LRU so replicas share the work and a restart starts
warm. It holds each tool's canonical schema document, and a value read from it is never trusted: its
digests are computed again and must equal the ones the child's entry states now
(:func:`descriptor_from_document`), else it is a miss and the child is read.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final, Protocol

from agent_connector_sdk.core.disclosure_navigation import SchemaNavigation
from agent_connector_sdk.core.schema_disclosure import SchemaDisclosureError, canonical_json_bytes
from agent_connector_sdk.core.schema_disclosure.encoding import encode_schema_document, sha256_hex

__all__ = [
    "DEFAULT_VERIFIED_BYTES",
    "DEFAULT_VERIFIED_PER_CHILD",
    "DEFAULT_VERIFIED_TOTAL",
    "SharedDisclosures",
    "VerifiedCache",
    "contract_key",
    "descriptor_from_document",
    "descriptor_of",
]

DEFAULT_VERIFIED_PER_CHILD: Final = 4_000
"""Verified descriptors kept per child (GitHub's 1,223 operations fit three times)."""
DEFAULT_VERIFIED_TOTAL: Final = 20_000
"""Verified descriptors kept across all children."""
DEFAULT_VERIFIED_BYTES: Final = 48 * 1024 * 1024
"""Bytes of verified descriptors (their canonical JSON) kept across all children: 48 MiB."""


_KNOWN_KEYS: Final = 8_192
"""Contract keys remembered by the entry fields they hash (a warm search hashes none of its entries)."""
_keys: OrderedDict[tuple[Any, ...], str] = OrderedDict()


def contract_key(entry: SchemaNavigation) -> str:
    """The SHA-256 of everything a navigation entry says about its tool's contract.

    Remembered (bounded, LRU) by the very values it is computed from, the non-string ones with their
    types (``True == 1`` in a tuple, not in JSON): equal fields are an equal identity, so the remembered
    key is the one hashing would give again (``tests/gateway/test_contract_key_memo.py``)."""
    hints = entry.annotations
    headers = entry.headers
    fields = (
        entry.name,
        entry.title,
        entry.description,
        entry.input_schema_sha256,
        entry.output_schema_sha256,
        entry.schema_sha256,
        (entry.fragment_count, type(entry.fragment_count)),
        entry.manifest_uri,
        None
        if hints is None
        else tuple(
            (value, type(value))
            for value in (
                hints.readOnlyHint,
                hints.destructiveHint,
                hints.idempotentHint,
                hints.openWorldHint,
            )
        ),
        None if headers is None else tuple((tuple(h.argument), h.header, h.type) for h in headers),
    )
    known = _keys.get(fields)
    if known is not None:
        _keys.move_to_end(fields)
        return known
    key = hashed_contract_key(entry)
    _keys[fields] = key
    while len(_keys) > _KNOWN_KEYS:
        _keys.popitem(last=False)
    return key


def hashed_contract_key(entry: SchemaNavigation) -> str:
    """:func:`contract_key`, computed (never remembered)."""
    hints = None if entry.annotations is None else entry.annotations.model_dump(exclude_none=True)
    headers = None if entry.headers is None else [header.model_dump(mode="json") for header in entry.headers]
    identity = {
        "name": entry.name,
        "title": entry.title,
        "description": entry.description,
        "input": entry.input_schema_sha256,
        "output": entry.output_schema_sha256,
        "schema": entry.schema_sha256,
        "fragments": entry.fragment_count,
        "manifest": entry.manifest_uri,
        "hints": hints,
        "headers": headers,
    }
    return sha256_hex(canonical_json_bytes(identity))


def descriptor_of(entry: SchemaNavigation, input_schema: Any, output_schema: Any) -> dict[str, Any]:
    """The wire-shaped descriptor of a hidden tool: what its navigation entry says, and the schemas its
    verified disclosure reconstructed."""
    descriptor: dict[str, Any] = {"name": entry.name, "inputSchema": input_schema}
    if entry.title is not None:
        descriptor["title"] = entry.title
    if entry.description is not None:
        descriptor["description"] = entry.description
    if output_schema is not None:
        descriptor["outputSchema"] = output_schema
    if entry.annotations is not None:
        hints = entry.annotations.model_dump(exclude_none=True)
        if hints:
            descriptor["annotations"] = hints
    return descriptor


def schema_document(descriptor: dict[str, Any]) -> bytes:
    """The canonical schema document of a verified descriptor (what ``schema_sha256`` is computed over)."""
    return encode_schema_document(descriptor["inputSchema"], descriptor.get("outputSchema"))[0]


def descriptor_from_document(entry: SchemaNavigation, document: bytes) -> dict[str, Any] | None:
    """The descriptor ``entry`` states, with the schemas of ``document`` — only when the document is
    canonical and its digests are exactly the entry's (``None`` otherwise: corrupt or foreign bytes)."""
    try:
        decoded = json.loads(document)
        if not isinstance(decoded, dict) or set(decoded) != {"inputSchema", "outputSchema"}:
            return None
        canonical, digests = encode_schema_document(
            decoded["inputSchema"], decoded["outputSchema"], decoded_json=True
        )
    except (ValueError, RecursionError, SchemaDisclosureError):
        return None
    if (
        canonical != document
        or digests.schema_sha256 != entry.schema_sha256
        or digests.input_schema_sha256 != entry.input_schema_sha256
        or digests.output_schema_sha256 != entry.output_schema_sha256
    ):
        return None
    return descriptor_of(entry, decoded["inputSchema"], decoded["outputSchema"])


class SharedDisclosures(Protocol):
    """A shared, bounded store of verified schema documents by ``(child, contract key)``.

    Never raises for an unreachable store (a miss; a write skipped): it only saves work."""

    async def get(self, child: str, key: str) -> bytes | None: ...

    async def put(self, child: str, key: str, document: bytes) -> None: ...


@dataclass(frozen=True, slots=True)
class _Held:
    child: str
    body: bytes


class VerifiedCache:
    """``(child, contract key) → verified descriptor``; LRU within ``per_child``, ``total`` and
    ``max_bytes``. Descriptors are held as JSON bytes and handed out as fresh copies."""

    def __init__(
        self,
        *,
        per_child: int = DEFAULT_VERIFIED_PER_CHILD,
        total: int = DEFAULT_VERIFIED_TOTAL,
        max_bytes: int = DEFAULT_VERIFIED_BYTES,
        shared: SharedDisclosures | None = None,
    ) -> None:
        if min(per_child, total, max_bytes) < 1:
            raise ValueError("bounds must be positive")
        self.shared = shared
        """The second tier (``None``: in memory only, the default); settable before the first use."""
        self.shared_hits = 0
        self.shared_refused = 0
        """Values the shared tier held that did not match the entry's digests (read from the child)."""
        self.per_child = per_child
        self.total = total
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, str], _Held] = OrderedDict()
        self._by_child: dict[str, OrderedDict[str, None]] = {}
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def bytes(self) -> int:
        return self._bytes

    def count(self, child: str) -> int:
        return len(self._by_child.get(child, ()))

    def get(self, child: str, key: str) -> dict[str, Any] | None:
        held = self._entries.get((child, key))
        if held is None:
            return None
        self._entries.move_to_end((child, key))
        self._by_child[child].move_to_end(key)
        descriptor: dict[str, Any] = json.loads(held.body)
        return descriptor

    async def recall(self, child: str, key: str, entry: SchemaNavigation) -> dict[str, Any] | None:
        """``get``, then the shared tier: a shared value counts only when its digests are the entry's."""
        descriptor = self.get(child, key)
        if descriptor is not None or self.shared is None:
            return descriptor
        document = await self.shared.get(child, key)
        if document is None:
            return None
        descriptor = descriptor_from_document(entry, document)
        if descriptor is None:
            self.shared_refused += 1
            return None
        self.shared_hits += 1
        self.put(child, key, descriptor)
        return descriptor

    async def remember(self, child: str, key: str, descriptor: dict[str, Any]) -> None:
        """``put``, and into the shared tier (its canonical schema document)."""
        self.put(child, key, descriptor)
        if self.shared is not None:
            await self.shared.put(child, key, schema_document(descriptor))

    def touch(self, child: str, key: str) -> bool:
        """Whether ``key`` is held (and mark it recently used), without decoding the descriptor."""
        if (child, key) not in self._entries:
            return False
        self._entries.move_to_end((child, key))
        self._by_child[child].move_to_end(key)
        return True

    def put(self, child: str, key: str, descriptor: dict[str, Any]) -> None:
        body = json.dumps(descriptor, separators=(",", ":")).encode()
        if len(body) > self.max_bytes:
            return  # one descriptor above the whole budget is verified again next time
        self._drop((child, key))
        self._entries[(child, key)] = _Held(child, body)
        mine = self._by_child.setdefault(child, OrderedDict())
        mine[key] = None
        self._bytes += len(body)
        while len(mine) > self.per_child:
            self._drop((child, next(iter(mine))))
        while len(self._entries) > self.total or self._bytes > self.max_bytes:
            self._drop(next(iter(self._entries)))

    def forget(self, child: str) -> None:
        for key in list(self._by_child.get(child, ())):
            self._drop((child, key))

    def _drop(self, key: tuple[str, str]) -> None:
        held = self._entries.pop(key, None)
        if held is None:
            return
        self._bytes -= len(held.body)
        mine = self._by_child[held.child]
        del mine[key[1]]
        if not mine:
            del self._by_child[held.child]
