"""What a served app reads from an OpenAPI document besides its operations: its concrete server URL
and its ``info`` (pure, light)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["concrete_server_url", "document_info"]


def concrete_server_url(document: Mapping[str, Any]) -> str | None:
    """The document's ``servers[0].url`` when it is a concrete absolute URL (no ``{variables}``)."""
    servers = document.get("servers")
    first = servers[0] if isinstance(servers, list) and servers else None
    url = first.get("url") if isinstance(first, Mapping) else None
    if isinstance(url, str) and url.startswith(("http://", "https://")) and "{" not in url:
        return url
    return None


def document_info(document: Mapping[str, Any]) -> tuple[str, str | None]:
    """``(title, version)`` from the document's ``info`` (``serverInfo`` of the served tools)."""
    info = document.get("info")
    title = info.get("title") if isinstance(info, Mapping) else None
    version = info.get("version") if isinstance(info, Mapping) else None
    return (
        title if isinstance(title, str) and title else "OpenAPI",
        str(version) if isinstance(version, str | int | float) else None,
    )
