"""Merging ranked lists by rank alone (reciprocal rank fusion), for results of different rankers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypeVar

__all__ = ["merge_by_rank"]

T = TypeVar("T")

# The constant of reciprocal rank fusion (Cormack, Clarke & Büttcher 2009): large enough that the first
# places of different lists weigh alike, which is what lists scored on different scales need.
RRF_K: Final = 60


def merge_by_rank(ranked_lists: Sequence[Sequence[T]], *, limit: int) -> list[T]:
    """Merge ranked lists into one of at most ``limit`` items by reciprocal rank fusion.

    Each item scores ``sum(1 / (RRF_K + rank))`` over the lists it appears in (rank from 1); an item is
    kept once (equal items are one item; its first place in a list counts). Stable: equal scores keep
    the order of first appearance (list by list, place by place), so merging one list returns it.
    """
    if limit <= 0:
        return []
    scores: list[float] = []
    items: list[T] = []
    position: dict[object, int] = {}
    unhashable: list[int] = []
    for ranked in ranked_lists:
        seen_here: set[int] = set()
        for rank, item in enumerate(ranked, start=1):
            slot = _slot(item, items, position, unhashable)
            if slot is None:
                slot = len(items)
                items.append(item)
                scores.append(0.0)
                try:
                    position[item] = slot
                except TypeError:
                    unhashable.append(slot)
            if slot in seen_here:
                continue  # a list naming an item twice counts its first place only
            seen_here.add(slot)
            scores[slot] += 1.0 / (RRF_K + rank)
    order = sorted(range(len(items)), key=lambda slot: (-scores[slot], slot))
    return [items[slot] for slot in order[:limit]]


def _slot(item: object, items: list[T], position: dict[object, int], unhashable: list[int]) -> int | None:
    try:
        return position.get(item)
    except TypeError:
        for slot in unhashable:
            if items[slot] == item:
                return slot
        return None
