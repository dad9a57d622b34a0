"""Make a server-controlled string safe to print: one sanitizer for every place that shows one.

Placeholder with the agreed name and signature until the hardening branch's module lands (that one
wins on merge). A string a server chose (tool error text, a JSON-RPC message, a result's text) can hold
terminal escapes or bidi overrides that rewrite what a reader sees; they are shown escaped instead.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_LIMIT", "sanitize_text"]

DEFAULT_LIMIT: Final = 2000
_BIDI: Final = frozenset({0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)})


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def sanitize_text(s: str, limit: int = DEFAULT_LIMIT) -> str:
    """``s`` with C0/C1 controls, DEL and bidi controls escaped (``\\x1b``, ``\\u202e``), newline and
    tab kept, cut to ``limit`` characters (``…`` marks a cut)."""
    out: list[str] = []
    for char in s[: limit + 1]:
        code = ord(char)
        if char in "\n\t":
            out.append(char)
        elif code < 0x20 or 0x7F <= code <= 0x9F or code in _BIDI:
            out.append(_escape(char))
        else:
            out.append(char)
    text = "".join(out)
    return text if len(s) <= limit and len(text) <= limit else text[:limit] + "…"
