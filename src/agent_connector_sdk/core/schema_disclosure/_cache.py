"""Bounded, exact caches behind disclosure reads at catalog scale (pure: no I/O, no FastMCP objects).

A disclosure read must hash the visible tool's *current* schemas and serve the manifest or fragment of
exactly that document. Two things make that cost grow with schema size on every read; both are cached
here, and both caches are keyed so that an entry can never answer for a schema it was not computed from:

* :class:`SchemaIdentityMemo` — schema *fingerprint* → digests and fragment count. The fingerprint is
  SHA-256 over the schemas' ``marshal`` (version 2) bytes: marshal is exact about types and values
  (``True``, ``1`` and ``1.0`` differ; subclasses are refused) and writes no back-references, so equal
  fingerprints mean equal values, hence equal canonical JSON, hence equal digests. An in-place edit of
  a schema dict changes its fingerprint, so no identity (``id()``) is trusted. Computing a fingerprint
  costs a fraction of canonical JSON + SHA-256, and nothing that depends on the catalog's size.
* :class:`DisclosureCache` — ``(alias, schema_sha256)`` → the :class:`SchemaDisclosure` built from the
  schemas with that digest. The key *is* the content identity, so a cached disclosure is by construction
  the one a fresh build from the current schemas produces (the build is deterministic in its inputs:
  operation, alias, source digest, schemas — see :class:`DisclosureOrigin`).

Both are LRU-bounded (entries, and for disclosures also fragment text bytes) and thread-safe: a server
may run the same registry from several threads' event loops.
"""

from __future__ import annotations

import hashlib
import marshal
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

# Its siblings directly, not the folder's door: the door re-exports this module.
from agent_connector_sdk.core.schema_disclosure._build import build_schema_disclosure, split_utf8
from agent_connector_sdk.core.schema_disclosure._encoding import (
    SchemaDigests,
    SourceDigest,
    encode_schema_document,
)
from agent_connector_sdk.core.schema_disclosure._errors import SchemaDisclosureError
from agent_connector_sdk.core.schema_disclosure._models import SchemaDisclosure

__all__ = [
    "DEFAULT_DISCLOSURE_CACHE_BYTES",
    "DEFAULT_DISCLOSURE_CACHE_ENTRIES",
    "DEFAULT_IDENTITY_MEMO_ENTRIES",
    "BoundedLRU",
    "DisclosureCache",
    "DisclosureOrigin",
    "FrozenSchemaMemo",
    "FrozenSchemaView",
    "SchemaIdentity",
    "SchemaIdentityMemo",
    "SchemaProvenance",
    "schema_fingerprint",
]

DEFAULT_IDENTITY_MEMO_ENTRIES: Final = 4096
"""Fingerprint → identity entries kept (each ~300 bytes: a digest tuple, no schema text)."""
DEFAULT_DISCLOSURE_CACHE_ENTRIES: Final = 256
"""Built disclosures kept at most (most recently read first)."""
DEFAULT_DISCLOSURE_CACHE_BYTES: Final = 64 * 1024 * 1024
"""Fragment text bytes kept at most across cached disclosures (the largest GitHub tool uses ~430 KB)."""

K = TypeVar("K")
V = TypeVar("V")


class BoundedLRU(Generic[K, V]):
    """A least-recently-used map bounded by entry count and by a total ``weight`` (e.g. bytes).

    An entry heavier than ``max_weight`` on its own is not stored (the caller still gets its value).
    """

    def __init__(self, max_entries: int, max_weight: int | None = None) -> None:
        if max_entries < 1 or (max_weight is not None and max_weight < 1):
            raise ValueError("cache bounds must be positive")
        self._max_entries = max_entries
        self._max_weight = max_weight
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    @property
    def weight(self) -> int:
        return self._weight

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            self._items.move_to_end(key)
            return found[0]

    def put(self, key: K, value: V, weight: int = 0) -> None:
        with self._lock:
            previous = self._items.pop(key, None)
            if previous is not None:
                self._weight -= previous[1]
            if self._max_weight is not None and weight > self._max_weight:
                return
            self._items[key] = (value, weight)
            self._weight += weight
            while len(self._items) > self._max_entries or (
                self._max_weight is not None and self._weight > self._max_weight
            ):
                _, (_, dropped) = self._items.popitem(last=False)
                self._weight -= dropped

    def discard(self, predicate: Callable[[K], bool]) -> None:
        with self._lock:
            for key in [key for key in self._items if predicate(key)]:
                self._weight -= self._items.pop(key)[1]


def schema_fingerprint(input_schema: Any, output_schema: Any) -> bytes | None:
    """SHA-256 of the schemas' exact ``marshal`` bytes, or ``None`` when they are not plain data."""
    try:
        return hashlib.sha256(marshal.dumps((input_schema, output_schema), 2)).digest()
    except (ValueError, RecursionError):
        return None


@dataclass(frozen=True, slots=True)
class SchemaIdentity:
    """What a tool's current schemas hash to: their digests and the disclosure's fragment count."""

    digests: SchemaDigests
    fragment_count: int


class SchemaIdentityMemo:
    """Fingerprint → :class:`SchemaIdentity`, bounded. ``identify`` raises ``SchemaDisclosureError``
    (never memoized) for schemas that cannot be disclosed, exactly as hashing them would."""

    def __init__(self, max_entries: int = DEFAULT_IDENTITY_MEMO_ENTRIES) -> None:
        self._entries: BoundedLRU[bytes, SchemaIdentity] = BoundedLRU(max_entries)

    def __len__(self) -> int:
        return len(self._entries)

    def identify(self, input_schema: Any, output_schema: Any) -> SchemaIdentity:
        fingerprint = schema_fingerprint(input_schema, output_schema)
        if fingerprint is not None:
            known = self._entries.get(fingerprint)
            if known is not None:
                return known
        document, digests = encode_schema_document(input_schema, output_schema)
        identity = SchemaIdentity(digests, len(split_utf8(document)))
        if fingerprint is not None:
            self._entries.put(fingerprint, identity)
        return identity


@dataclass(frozen=True, slots=True)
class FrozenSchemaView:
    """A tool's wire-form schemas (after listing middleware) and their identity, derived from the
    source schema objects ``source_input``/``source_output`` (held, so their ``id`` cannot be reused)."""

    source_input: Any
    source_output: Any
    wire_input: Any
    wire_output: Any
    identity: SchemaIdentity


class FrozenSchemaMemo:
    """Source schema *objects* → :class:`FrozenSchemaView`, bounded. Only for servers that declare their
    registered schemas frozen (never edited in place; a change replaces the tool or assigns new dicts):
    then the objects' identity cannot outlive a change, and a read skips both the listing middleware's
    walk and the fingerprint — O(1) in the schema's size too. Entries hold the source objects, so an
    ``id`` is never reused while its entry lives."""

    def __init__(self, max_entries: int = DEFAULT_IDENTITY_MEMO_ENTRIES) -> None:
        self._views: BoundedLRU[tuple[int, int], FrozenSchemaView] = BoundedLRU(max_entries)

    def __len__(self) -> int:
        return len(self._views)

    def get(self, source_input: Any, source_output: Any) -> FrozenSchemaView | None:
        view = self._views.get((id(source_input), id(source_output)))
        if view is None or view.source_input is not source_input or view.source_output is not source_output:
            return None
        return view

    def put(self, view: FrozenSchemaView) -> None:
        self._views.put((id(view.source_input), id(view.source_output)), view)


@dataclass(frozen=True, slots=True)
class DisclosureOrigin:
    """Where a tool's disclosures come from: the operation it was generated from and the source
    document's digest. With the tool's current schemas this fixes its disclosure byte for byte, so a
    registry can build (and rebuild after a wire-form change, e.g. new listing middleware) on first read
    instead of at start-up.

    An origin vouches only for the schemas its tool was derived into, never for whatever the tool holds
    later: ``source_schemas`` are those ``(input_schema, output_schema)`` objects as the generator made
    them (e.g. the OpenAPI connector records them as FastMCP builds each tool). Without them, the
    registry takes the tool's schemas at registration. A tool whose schemas are replaced afterwards is
    refused as stale — its disclosure would name a source it did not come from — until a new origin (or
    disclosure) is registered for it. Not part of equality: two origins naming the same operation and
    source are the same origin.
    """

    operation: str
    source_sha256: str
    source_schemas: tuple[Any, Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        SourceDigest(self.source_sha256)  # validates: 64 lowercase hex characters
        if type(self.operation) is not str or not self.operation or len(self.operation) > 1024:
            raise SchemaDisclosureError("invalid_schema", "operation must be a non-empty string")
        if self.source_schemas is not None and (
            type(self.source_schemas) is not tuple or len(self.source_schemas) != 2
        ):
            raise SchemaDisclosureError(
                "invalid_schema", "source_schemas must be (input_schema, output_schema)"
            )

    @classmethod
    def of(cls, disclosure: SchemaDisclosure) -> DisclosureOrigin:
        return cls(disclosure.manifest.operation, disclosure.manifest.source_sha256)


def _content_key(input_schema: Any, output_schema: Any) -> bytes | None:
    """An exact content key of a schema pair (equal keys, equal values with types: ``1``, ``1.0`` and
    ``True`` differ), or ``None`` when the pair has no exact key (not JSON, or past the bounds)."""
    fingerprint = schema_fingerprint(input_schema, output_schema)
    if fingerprint is not None:
        return b"marshal:" + fingerprint
    try:
        _, digests = encode_schema_document(input_schema, output_schema)
    except SchemaDisclosureError:
        return None
    return b"canonical:" + digests.schema_sha256.encode()


class SchemaProvenance:
    """The schema pairs an origin vouches for, and whether a tool's current schemas are one of them.

    ``frozen`` (the server never edits registered schemas in place): the very same objects are vouched
    for at O(1); other objects when their content equals a vouched pair's (keyed once, lazily). Not
    frozen: an in-place edit would move the vouched objects too, so their content keys are taken *now*
    and every check compares content. A pair with no exact content key is never vouched for (fail
    closed).
    """

    __slots__ = ("_frozen", "_keys", "_pairs")

    def __init__(self, pairs: Sequence[tuple[Any, Any]], *, frozen: bool) -> None:
        self._pairs = tuple(pairs)
        self._frozen = frozen
        self._keys: frozenset[bytes] | None = None if frozen else self._content_keys()

    def _content_keys(self) -> frozenset[bytes]:
        keys = (_content_key(input_schema, output_schema) for input_schema, output_schema in self._pairs)
        return frozenset(key for key in keys if key is not None)

    def vouches_for(self, input_schema: Any, output_schema: Any) -> bool:
        if self._frozen and any(
            input_schema is vouched_input and output_schema is vouched_output
            for vouched_input, vouched_output in self._pairs
        ):
            return True
        keys = self._keys
        if keys is None:  # frozen: the vouched objects never change, so key them once (a benign race)
            keys = self._keys = self._content_keys()
        return _content_key(input_schema, output_schema) in keys


def _fragment_bytes(disclosure: SchemaDisclosure) -> int:
    return disclosure.manifest.schema_bytes


class DisclosureCache:
    """``(alias, schema_sha256)`` → disclosure, LRU-bounded by entries and fragment text bytes.

    ``get_or_build`` builds from the given schemas on a miss; because the key is the digest of those
    very schemas (checked before a cached value is returned), a hit is what the build would produce.
    Pinned disclosures (registered explicitly) are kept outside the bound, as the caller gave them.
    """

    def __init__(
        self,
        max_entries: int = DEFAULT_DISCLOSURE_CACHE_ENTRIES,
        max_bytes: int = DEFAULT_DISCLOSURE_CACHE_BYTES,
    ) -> None:
        self._built: BoundedLRU[tuple[str, str], SchemaDisclosure] = BoundedLRU(max_entries, max_bytes)
        self._pinned: dict[str, SchemaDisclosure] = {}

    def __len__(self) -> int:
        return len(self._built)

    @property
    def cached_bytes(self) -> int:
        return self._built.weight

    def pin(self, alias: str, disclosure: SchemaDisclosure) -> None:
        self._pinned[alias] = disclosure
        self.forget(alias)

    def pinned(self, alias: str) -> SchemaDisclosure | None:
        return self._pinned.get(alias)

    def forget(self, alias: str) -> None:
        self._built.discard(lambda key: key[0] == alias)

    def unpin(self, alias: str) -> None:
        self._pinned.pop(alias, None)
        self.forget(alias)

    def get_or_build(
        self,
        alias: str,
        origin: DisclosureOrigin,
        identity: SchemaIdentity,
        input_schema: Any,
        output_schema: Any,
    ) -> SchemaDisclosure:
        digest = identity.digests.schema_sha256
        pinned = self._pinned.get(alias)
        if pinned is not None:
            if (
                pinned.manifest.schema_sha256 == digest
                and pinned.manifest.input_schema_sha256 == identity.digests.input_schema_sha256
                and pinned.manifest.output_schema_sha256 == identity.digests.output_schema_sha256
            ):
                return pinned
            # An explicitly registered disclosure vouches for exactly its own schemas: a tool whose
            # schema was replaced since is refused as stale, never disclosed under the registered
            # operation and source_sha256 (a source the new schema did not come from).
            raise SchemaDisclosureError("stale", "the schemas differ from the registered disclosure")
        key = (alias, digest)
        cached = self._built.get(key)
        if (
            cached is not None
            and cached.manifest.operation == origin.operation
            and (cached.manifest.source_sha256 == origin.source_sha256)
        ):
            return cached
        built = build_schema_disclosure(
            operation=origin.operation,
            alias=alias,
            source=SourceDigest(origin.source_sha256),
            input_schema=input_schema,
            output_schema=output_schema,
        )
        if built.manifest.schema_sha256 != digest:  # the schemas changed under us: never cache a mismatch
            raise SchemaDisclosureError("invalid_schema", "schemas changed while building")
        self._built.put(key, built, _fragment_bytes(built))
        return built
