"""RFC 6901 JSON pointers: how every gate names a place in a schema, arguments or a result."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["json_pointer"]


def json_pointer(parts: Iterable[object]) -> str:
    """The pointer for a sequence of object keys and array indexes (``~`` → ``~0``, ``/`` → ``~1``);
    ``""`` is the document root."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)
