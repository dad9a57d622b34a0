"""Verified disclosures of search-first children, content-addressed and bounded (pure: no I/O).

A hidden tool's descriptor is reconstructed from a disclosure whose bytes were checked against the
digests its navigation entry names. What the entry says (name, title, description, hints, digests,
fragment count, manifest URI) is the tool's *contract identity*: hashed, it is the key under which the
verified descriptor is kept. The same key can never answer for other bytes (a changed tool has a new
key), so a hit needs no second read, across searches, calls, reconnects and ``--check`` runs alike.

Bounded in entries per child, entries in total and bytes in total (LRU): a child inventing names under
every search fills at most its own share and pushes out only its own entries first.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final

from agent_connector_sdk.core.disclosure_navigation import SchemaNavigation
from agent_connector_sdk.core.schema_disclosure._encoding import canonical_json_bytes, sha256_hex

__all__ = [
    "DEFAULT_VERIFIED_BYTES",
    "DEFAULT_VERIFIED_PER_CHILD",
    "DEFAULT_VERIFIED_TOTAL",
    "VerifiedCache",
    "contract_key",
]

DEFAULT_VERIFIED_PER_CHILD: Final = 4_000
"""Verified descriptors kept per child (GitHub's 1,223 operations fit three times)."""
DEFAULT_VERIFIED_TOTAL: Final = 20_000
"""Verified descriptors kept across all children."""
DEFAULT_VERIFIED_BYTES: Final = 48 * 1024 * 1024
"""Bytes of verified descriptors (their canonical JSON) kept across all children: 48 MiB."""


def contract_key(entry: SchemaNavigation) -> str:
    """The SHA-256 of everything a navigation entry says about its tool's contract."""
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
    ) -> None:
        if min(per_child, total, max_bytes) < 1:
            raise ValueError("bounds must be positive")
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
