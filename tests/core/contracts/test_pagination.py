"""Discover gate: cursor walking — "" followed, null stops, repeats and cycles refused early, page limit."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.contracts import CursorWalk, Pagination, apaginate, paginate
from agent_connector_sdk.core.contracts.errors import PaginationError


class Listing:
    """A fake server listing: cursor (None = first request) → page. Counts every fetch."""

    def __init__(self, pages: Mapping[str | None, Any]) -> None:
        self.pages = pages
        self.calls: list[str | None] = []

    def fetch(self, cursor: str | None) -> Any:
        self.calls.append(cursor)
        return self.pages[cursor]

    async def afetch(self, cursor: str | None) -> Any:
        await asyncio.sleep(0)
        return self.fetch(cursor)


def run_both(pages: Mapping[str | None, Any], **kwargs: Any) -> tuple[Pagination, list[str | None]]:
    """Run paginate and apaginate over the same listing; they must agree exactly."""
    sync_listing, async_listing = Listing(pages), Listing(pages)
    got = paginate(sync_listing.fetch, **kwargs)
    agot = asyncio.run(apaginate(async_listing.afetch, **kwargs))
    assert (got.items, got.trace) == (agot.items, agot.trace)
    assert sync_listing.calls == async_listing.calls
    return got, sync_listing.calls


def refuse_both(pages: Mapping[str | None, Any], **kwargs: Any) -> tuple[PaginationError, list[str | None]]:
    sync_listing, async_listing = Listing(pages), Listing(pages)
    with pytest.raises(PaginationError) as info:
        paginate(sync_listing.fetch, **kwargs)
    with pytest.raises(PaginationError) as ainfo:
        asyncio.run(apaginate(async_listing.afetch, **kwargs))
    assert (info.value.category, info.value.trace) == (ainfo.value.category, ainfo.value.trace)
    assert sync_listing.calls == async_listing.calls
    return info.value, sync_listing.calls


def test_empty_string_cursor_is_followed() -> None:
    got, calls = run_both({None: {"tools": ["a"], "nextCursor": ""}, "": {"tools": ["b"]}})
    assert got.items == ["a", "b"]
    assert got.trace == [None, ""] == calls


def test_explicit_null_cursor_stops() -> None:
    got, calls = run_both({None: {"tools": ["a"], "nextCursor": None}, "": {"tools": ["never"]}})
    assert (got.items, calls) == (["a"], [None])


def test_missing_cursor_stops() -> None:
    got, calls = run_both({None: {"tools": ["a", "b"]}})
    assert (got.items, got.trace, calls) == (["a", "b"], [None], [None])


def test_cursor_is_sent_exactly_as_received() -> None:
    odd = " ünï/code==\t "
    got, calls = run_both({None: {"tools": [1], "nextCursor": odd}, odd: {"tools": [2]}})
    assert calls == [None, odd] and got.items == [1, 2]


def test_repeated_cursor_is_refused_before_another_request() -> None:
    err, calls = refuse_both(
        {None: {"tools": [1], "nextCursor": "x"}, "x": {"tools": [2], "nextCursor": "x"}}
    )
    assert err.category == "repeated_cursor"
    assert calls == [None, "x"] == err.trace
    assert err.gate == "discover"


def test_repeated_empty_cursor_is_refused() -> None:
    err, calls = refuse_both({None: {"tools": [], "nextCursor": ""}, "": {"tools": [], "nextCursor": ""}})
    assert (err.category, calls) == ("repeated_cursor", [None, ""])


def test_cycle_is_refused_after_exactly_one_request_per_distinct_cursor() -> None:
    pages = {
        None: {"tools": [0], "nextCursor": "a"},
        "a": {"tools": [1], "nextCursor": "b"},
        "b": {"tools": [2], "nextCursor": "a"},
    }
    err, calls = refuse_both(pages)
    assert err.category == "repeated_cursor"
    assert calls == [None, "a", "b"] == err.trace


@pytest.mark.parametrize("cursor", [5, 0, True, ["a"], {"c": 1}, 1.5])
def test_non_string_cursor_is_refused_before_another_request(cursor: Any) -> None:
    err, calls = refuse_both({None: {"tools": [1], "nextCursor": cursor}})
    assert (err.category, calls, err.trace) == ("invalid_cursor", [None], [None])


def endless(n_items: int = 1) -> Mapping[str | None, Any]:
    class Endless(dict[str | None, Any]):
        def __missing__(self, cursor: str | None) -> Any:
            index = 0 if cursor is None else int(cursor) + 1
            return {"tools": [index] * n_items, "nextCursor": str(index)}

    return Endless()


def test_page_limit_is_enforced_before_exceeding_it() -> None:
    err, calls = refuse_both(endless(), max_pages=3)
    assert err.category == "page_limit"
    assert calls == [None, "0", "1"] == err.trace


def test_listing_ending_exactly_at_the_limit_is_fine() -> None:
    pages = {
        None: {"tools": [0], "nextCursor": "a"},
        "a": {"tools": [1], "nextCursor": "b"},
        "b": {"tools": [2]},
    }
    got, calls = run_both(pages, max_pages=3)
    assert got.items == [0, 1, 2] and len(calls) == 3


def test_default_limit_is_100_pages() -> None:
    err, calls = refuse_both(endless())
    assert (err.category, len(calls)) == ("page_limit", 100)


@pytest.mark.parametrize(
    "page",
    [{"nextCursor": None}, {"tools": None}, {"tools": {"a": 1}}, {"tools": "abc"}, ["tools"], None, "page"],
)
def test_malformed_page_is_refused(page: Any) -> None:
    err, calls = refuse_both({None: page})
    assert (err.category, calls) == ("malformed_page", [None])


def test_items_key_selects_the_list() -> None:
    got, _ = run_both(
        {None: {"resources": ["r"], "nextCursor": "n"}, "n": {"resources": ["s"]}}, items_key="resources"
    )
    assert got.items == ["r", "s"]
    err, _ = refuse_both({None: {"resources": ["r"]}})  # default items_key is "tools"
    assert err.category == "malformed_page"


def test_fetch_errors_propagate_unchanged() -> None:
    def fetch(cursor: str | None) -> Mapping[str, Any]:
        raise ConnectionError("peer went away")

    with pytest.raises(ConnectionError):
        paginate(fetch)


def test_state_machine_refuses_misuse() -> None:
    walk = CursorWalk()
    with pytest.raises(RuntimeError):
        walk.accept({"tools": []})
    assert walk.next_request() is None
    with pytest.raises(RuntimeError):
        walk.next_request()
    with pytest.raises(RuntimeError):
        walk.result()
    walk.accept({"tools": [1]})
    assert walk.done and walk.result() == Pagination(items=[1], trace=[None])
    failed = CursorWalk()
    failed.next_request()
    with pytest.raises(PaginationError):
        failed.accept({"tools": [], "nextCursor": 3})
    with pytest.raises(RuntimeError):
        failed.next_request()


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_max_pages_must_be_positive(bad: Any) -> None:
    with pytest.raises(ValueError):
        CursorWalk(max_pages=bad)


# --- properties over random finite page chains -----------------------------------------------------

cursors = st.lists(st.text(max_size=6), unique=True, max_size=8)
item_lists = st.lists(st.integers(), max_size=3)


@settings(max_examples=60, deadline=None)
@given(chain=cursors, data=st.data())
def test_any_finite_chain_is_walked_in_order(chain: list[str], data: st.DataObject) -> None:
    keys: list[str | None] = [None, *chain]
    items = [data.draw(item_lists) for _ in keys]
    pages: dict[str | None, Any] = {}
    for index, key in enumerate(keys):
        page: dict[str, Any] = {"tools": items[index]}
        if index + 1 < len(keys):
            page["nextCursor"] = keys[index + 1]
        elif data.draw(st.booleans()):
            page["nextCursor"] = None
        pages[key] = page
    got, calls = run_both(pages)
    assert calls == keys == got.trace
    assert got.items == [item for chunk in items for item in chunk]


@settings(max_examples=60, deadline=None)
@given(chain=cursors.filter(bool), data=st.data())
def test_any_cycle_is_refused_after_exactly_the_distinct_requests(
    chain: list[str], data: st.DataObject
) -> None:
    back_to = data.draw(st.sampled_from(chain))
    keys: list[str | None] = [None, *chain]
    pages: dict[str | None, dict[str, Any]] = {
        key: {"tools": [], "nextCursor": keys[i + 1] if i + 1 < len(keys) else back_to}
        for i, key in enumerate(keys)
    }
    err, calls = refuse_both(pages)
    assert err.category == "repeated_cursor"
    assert calls == keys == err.trace


@settings(max_examples=30, deadline=None)
@given(length=st.integers(min_value=1, max_value=12), limit=st.integers(min_value=1, max_value=12))
def test_page_limit_property(length: int, limit: int) -> None:
    keys: list[str | None] = [None, *[str(i) for i in range(1, length)]]
    pages = {
        key: {"tools": [i], "nextCursor": keys[i + 1] if i + 1 < length else None}
        for i, key in enumerate(keys)
    }
    if length <= limit:
        got, calls = run_both(pages, max_pages=limit)
        assert got.items == list(range(length)) and len(calls) == length
    else:
        err, calls = refuse_both(pages, max_pages=limit)
        assert err.category == "page_limit" and len(calls) == limit
