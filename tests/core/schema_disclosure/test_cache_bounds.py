"""The read-path caches stay within their bounds and never answer for schemas they were not built from."""

from __future__ import annotations

from typing import Any

import pytest

from agent_connector_sdk.core.schema_disclosure import SourceDigest
from agent_connector_sdk.core.schema_disclosure.cache import (
    BoundedLRU,
    DisclosureCache,
    DisclosureOrigin,
    SchemaIdentityMemo,
)
from tests.support.disclosure_servers import big_input_schema

ORIGIN = DisclosureOrigin("op", SourceDigest.of(b"source").sha256)


def test_lru_keeps_at_most_max_entries_and_max_weight() -> None:
    lru: BoundedLRU[int, str] = BoundedLRU(max_entries=3, max_weight=10)
    for key in range(20):
        lru.put(key, str(key), weight=4)
        assert len(lru) <= 3 and lru.weight <= 10
    assert lru.get(19) == "19" and lru.get(18) == "18" and lru.get(17) is None
    lru.put(100, "too heavy", weight=11)
    assert lru.get(100) is None and lru.weight <= 10
    with pytest.raises(ValueError):
        BoundedLRU(0)


def test_identity_memo_is_bounded_and_exact_under_in_place_edits() -> None:
    memo = SchemaIdentityMemo(max_entries=8)
    schemas = [big_input_schema(3, note=str(i)) for i in range(50)]
    for schema in schemas:
        memo.identify(schema, None)
        assert len(memo) <= 8
    edited = schemas[-1]
    before = memo.identify(edited, None)
    edited["properties"]["field_000"]["type"] = "integer"  # same object, new content
    after = memo.identify(edited, None)
    assert after.digests.schema_sha256 != before.digests.schema_sha256


def test_disclosure_cache_is_bounded_in_entries_and_bytes() -> None:
    memo = SchemaIdentityMemo()
    cache = DisclosureCache(max_entries=4, max_bytes=40_000)
    for i in range(30):
        schema: dict[str, Any] = big_input_schema(120, note=str(i))  # ~ 9 KB canonical
        identity = memo.identify(schema, None)
        built = cache.get_or_build(f"t{i}", ORIGIN, identity, schema, None)
        assert built.manifest.schema_sha256 == identity.digests.schema_sha256
        assert len(cache) <= 4 and cache.cached_bytes <= 40_000
    assert len(cache) >= 1


def test_disclosure_cache_hit_equals_a_fresh_build() -> None:
    memo = SchemaIdentityMemo()
    cache = DisclosureCache()
    schema = big_input_schema(200)
    identity = memo.identify(schema, None)
    first = cache.get_or_build("t", ORIGIN, identity, schema, None)
    again = cache.get_or_build("t", ORIGIN, identity, schema, None)
    assert again is first
    fresh = DisclosureCache().get_or_build("t", ORIGIN, identity, schema, None)
    assert fresh == first
    other_origin = DisclosureOrigin("other-op", ORIGIN.source_sha256)
    assert cache.get_or_build("t", other_origin, identity, schema, None).manifest.operation == "other-op"
