"""Discover: follow ``nextCursor`` pages safely, as one pure state machine with two drivers.

:class:`CursorWalk` never performs I/O: it says which cursor to send next (:meth:`CursorWalk.next_request`)
and judges each page it is given (:meth:`CursorWalk.accept`). :func:`paginate` (sync ``fetch_page``)
and :func:`apaginate` (async ``fetch_page``) only loop over it, so the two cannot drift.

Rules (MCP 2026-07-28 pagination, read strictly):

- the first request carries no cursor (``None``); every later one carries exactly the string the
  previous page returned — cursors are opaque: never parsed, trimmed or compared beyond equality;
- ``""`` is a cursor like any other and is followed (it does not mean "end");
- a missing ``nextCursor`` or an explicit ``null`` ends the walk;
- a ``nextCursor`` that is not a string is refused (``invalid_cursor``) before another request;
- a cursor already sent (a server repeating itself or cycling) is refused (``repeated_cursor``) before
  it would be sent again, so a cycle costs exactly one request per distinct cursor;
- at most ``max_pages`` requests; a page limit reached while the server still offers a cursor is
  refused (``page_limit``) rather than silently truncating the listing;
- each page must be an object whose ``items_key`` member is a list (``malformed_page``).

Refusals raise :class:`PaginationError` carrying ``.trace``: the cursors sent so far (``None`` for the
first request). Messages never include cursor values (they are opaque server state).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_connector_sdk.core.contracts.errors import PaginationCategory, PaginationError

__all__ = ["DEFAULT_MAX_PAGES", "CursorWalk", "Pagination", "apaginate", "paginate"]

DEFAULT_MAX_PAGES = 100

_State = Literal["ready", "awaiting_page", "done", "failed"]


@dataclass(frozen=True, slots=True)
class Pagination:
    """A finished listing: every item in server order, and the cursors sent (``None`` first)."""

    items: list[Any] = field(default_factory=list)
    trace: list[str | None] = field(default_factory=list)


class CursorWalk:
    """The pagination state machine: ``next_request()`` → (caller fetches) → ``accept(page)``, until ``done``.

    Calling the methods out of turn is a programming error (``RuntimeError``), not a contract refusal.
    After a :class:`PaginationError` the walk is ``failed`` and accepts nothing more.
    """

    def __init__(self, *, max_pages: int = DEFAULT_MAX_PAGES, items_key: str = "tools") -> None:
        if isinstance(max_pages, bool) or not isinstance(max_pages, int) or max_pages < 1:
            raise ValueError("max_pages must be a positive integer")
        self.max_pages = max_pages
        self.items_key = items_key
        self.items: list[Any] = []
        self.trace: list[str | None] = []
        self._sent: set[str] = set()
        self._next: str | None = None
        self._state: _State = "ready"

    @property
    def done(self) -> bool:
        """True once the listing ended normally."""
        return self._state == "done"

    def next_request(self) -> str | None:
        """The cursor to send next (``None`` for the first request) and record it in the trace."""
        if self._state != "ready":
            raise RuntimeError(f"next_request() called in state {self._state!r}")
        cursor = self._next
        self.trace.append(cursor)
        if cursor is not None:
            self._sent.add(cursor)
        self._state = "awaiting_page"
        return cursor

    def _refuse(self, category: PaginationCategory, message: str) -> PaginationError:
        self._state = "failed"
        return PaginationError(category, message, trace=self.trace)

    def accept(self, page: object) -> None:
        """Judge the page answering the last request; on success the walk is ``ready`` again or ``done``."""
        if self._state != "awaiting_page":
            raise RuntimeError(f"accept() called in state {self._state!r}")
        if not isinstance(page, Mapping):
            raise self._refuse("malformed_page", "a page must be an object")
        items = page.get(self.items_key)
        if not isinstance(items, list):
            raise self._refuse(
                "malformed_page", f"page member '{self.items_key}' is required and must be a list"
            )
        following = page.get("nextCursor")
        if following is not None:
            if not isinstance(following, str):
                raise self._refuse("invalid_cursor", "'nextCursor' must be a string or null")
            if following in self._sent:
                raise self._refuse(
                    "repeated_cursor",
                    f"the server returned a cursor already sent (after {len(self.trace)} pages)",
                )
            if len(self.trace) >= self.max_pages:
                raise self._refuse("page_limit", f"the listing did not end within {self.max_pages} pages")
        self.items.extend(items)
        self._next = following
        self._state = "done" if following is None else "ready"

    def result(self) -> Pagination:
        """The finished listing; only valid once :attr:`done`."""
        if self._state != "done":
            raise RuntimeError(f"result() called in state {self._state!r}")
        return Pagination(items=list(self.items), trace=list(self.trace))


def paginate(
    fetch_page: Callable[[str | None], Mapping[str, Any]],
    *,
    max_pages: int = DEFAULT_MAX_PAGES,
    items_key: str = "tools",
) -> Pagination:
    """Walk a listing with a synchronous ``fetch_page(cursor)``; see the module docstring for the rules.

    Exceptions raised by ``fetch_page`` (transport or protocol errors) propagate unchanged: they are not
    contract refusals.
    """
    walk = CursorWalk(max_pages=max_pages, items_key=items_key)
    while not walk.done:
        walk.accept(fetch_page(walk.next_request()))
    return walk.result()


async def apaginate(
    fetch_page: Callable[[str | None], Awaitable[Mapping[str, Any]]],
    *,
    max_pages: int = DEFAULT_MAX_PAGES,
    items_key: str = "tools",
) -> Pagination:
    """:func:`paginate` for an async ``fetch_page`` — the same :class:`CursorWalk`, awaited."""
    walk = CursorWalk(max_pages=max_pages, items_key=items_key)
    while not walk.done:
        walk.accept(await fetch_page(walk.next_request()))
    return walk.result()
