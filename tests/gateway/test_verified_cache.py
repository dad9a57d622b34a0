"""The verified-disclosure cache (content-addressed, LRU-bounded per child, in total and in bytes) and
the search merge (interleaved by rank, each name once, bounded)."""

from __future__ import annotations

from typing import Any

from agent_connector_sdk.core.search import merge_by_rank
from agent_connector_sdk.gateway._verified import VerifiedCache, contract_key
from tests.support.navigation import navigation_entry


def _descriptor(name: str, padding: int = 0) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "description": "x" * padding}}


def test_the_key_is_the_whole_contract_an_entry_states() -> None:
    base = contract_key(navigation_entry())
    assert contract_key(navigation_entry()) == base
    for change in (
        {"name": "other"},
        {"description": "deletes every record"},
        {"schema_sha256": "c" * 64},
        {"annotations": {"destructiveHint": True}},
        {"title": "T"},
    ):
        assert contract_key(navigation_entry(**change)) != base, change


def test_each_child_is_bounded_alone_and_evicts_its_own_least_recent_first() -> None:
    cache = VerifiedCache(per_child=3, total=100, max_bytes=1 << 20)
    cache.put("honest", "h", _descriptor("h"))
    for index in range(10):  # a child inventing names fills only its own share
        cache.put("liar", f"k{index}", _descriptor(f"t{index}"))
        if index == 1:
            assert cache.get("liar", "k0") is not None  # used: kept over k1
    assert cache.count("liar") == 3 and cache.count("honest") == 1
    assert cache.get("honest", "h") == _descriptor("h")
    assert cache.get("liar", "k9") is not None and cache.get("liar", "k1") is None


def test_total_entries_and_bytes_are_bounded() -> None:
    cache = VerifiedCache(per_child=100, total=5, max_bytes=1 << 20)
    for index in range(8):
        cache.put(f"c{index}", "k", _descriptor("t"))
    assert len(cache) == 5 and cache.get("c0", "k") is None and cache.get("c7", "k") is not None
    small = VerifiedCache(per_child=100, total=100, max_bytes=3_000)
    for index in range(10):
        small.put("c", f"k{index}", _descriptor("t", padding=900))
    assert small.bytes <= 3_000 and len(small) == 3
    small.put("c", "huge", _descriptor("t", padding=10_000))  # above the whole budget: not kept
    assert small.get("c", "huge") is None and small.bytes <= 3_000


def test_a_cached_descriptor_is_a_fresh_copy() -> None:
    cache = VerifiedCache()
    cache.put("c", "k", _descriptor("t"))
    first = cache.get("c", "k")
    assert first is not None
    first["name"] = "edited"
    assert cache.get("c", "k") == _descriptor("t")


def test_the_gateway_merge_fuses_by_rank_once_each_and_bounded() -> None:
    # The gateway's own ranking and the children's answers are fused by reciprocal rank
    # (core.search.merge_by_rank): a tool two lists agree on comes first, ties keep first appearance.
    own = ["gw_a", "gw_b", "gw_c"]
    child = ["x_1", "gw_b", "x_2"]
    other = ["y_1"]
    assert merge_by_rank([own, child, other], limit=10) == ["gw_b", "gw_a", "x_1", "y_1", "gw_c", "x_2"]
    assert merge_by_rank([own, child, other], limit=4) == ["gw_b", "gw_a", "x_1", "y_1"]
    assert merge_by_rank([], limit=5) == [] and merge_by_rank([[], []], limit=5) == []


def test_touch_says_whether_a_contract_is_held_and_keeps_it_recent() -> None:
    cache = VerifiedCache(per_child=2, total=10, max_bytes=1 << 20)
    cache.put("c", "a", _descriptor("a"))
    cache.put("c", "b", _descriptor("b"))
    assert cache.touch("c", "a") and not cache.touch("c", "zz") and not cache.touch("other", "a")
    cache.put("c", "d", _descriptor("d"))  # "b" is now the least recent
    assert cache.get("c", "b") is None and cache.get("c", "a") is not None
