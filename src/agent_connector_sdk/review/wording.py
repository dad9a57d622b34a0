"""Small wording helpers shared by the report's shapers (SARIF, lock) and the CLI's renderer."""

from __future__ import annotations

import json
from typing import Any

from agent_connector_sdk.sanitize import sanitize_text

__all__ = ["count", "short_json"]


def count(number: int, singular: str, plural: str | None = None) -> str:
    """``1 tool``, ``2 tools``, with thousands separators."""
    word = singular if number == 1 else (plural or singular + "s")
    return f"{number:,} {word}"


def short_json(value: Any, limit: int = 120) -> str:
    """Compact JSON of ``value``, sanitized and capped at about ``limit`` characters."""
    return sanitize_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")), limit)
