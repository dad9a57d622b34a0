"""Caller-controlled text in log lines: always escaped, so no name, header or argument can forge a line.

``quoted(text)`` is the JSON string literal of ``text`` with every non-ASCII and control character
escaped (a newline becomes ``\\n``), cut to ``MAX_LOGGED_CHARS`` first. Use it for every ``%s`` that
carries something a caller chose (tool names, argument names, forwarded addresses); values are never
logged at all.
"""

from __future__ import annotations

import json
from typing import Final

__all__ = ["MAX_LOGGED_CHARS", "quoted"]

MAX_LOGGED_CHARS: Final = 200
"""Longest caller-chosen text a log line carries (cut and marked beyond)."""


def quoted(text: object) -> str:
    """``text`` as an escaped, bounded JSON string literal, safe to put in one log line."""
    raw = text if isinstance(text, str) else str(text)
    if len(raw) > MAX_LOGGED_CHARS:
        raw = raw[:MAX_LOGGED_CHARS] + "…"
    return json.dumps(raw, ensure_ascii=True)
