"""The one sanitizer for every server-controlled string that reaches a person (pure, no I/O).

A server chooses its name and version, tool names, titles, descriptions, property names and types,
cursors, JSON-RPC error messages and the last line a dying stdio server writes on stderr. Printed
raw, such a string can drive the operator's terminal: ESC/CSI/OSC sequences recolour, move the cursor,
rewrite earlier lines or set the window title and clipboard; a BEL rings; CR and LF draw fake lines
(a tool named ``crlf\\r\\nX-Evil: 1``); bidi controls (U+202E) make text read in another order than it
is stored. :func:`sanitize_text` shows every such character escaped (``\\x1b``, ``\\u202e``) and caps
the length with a visible marker, so a person always sees what was sent and never more than a screen
of it. :func:`sanitize_json` does the same for a JSON document (``--json``): what JSON leaves raw
(DEL, C1 controls, bidi controls, line/paragraph separators, lone surrogates) becomes a ``\\uXXXX``
escape, which decodes to the identical string.

Escaped: C0 controls (U+0000–U+001F, including TAB, CR and LF), DEL (U+007F), C1 controls
(U+0080–U+009F, among them the one-byte CSI U+009B), the bidi controls U+061C, U+200E, U+200F,
U+202A–U+202E and U+2066–U+2069, the separators U+2028/U+2029, and lone surrogates (which no terminal
encoding can write: printing one would crash the writer).
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["DEFAULT_LIMIT", "UNSAFE_CHARACTERS", "sanitize_json", "sanitize_text"]

DEFAULT_LIMIT: Final = 512
"""Characters of output (escapes counted) before the cut; the marker says how many were left out."""

_BEYOND_C0: Final = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
"""DEL, C1, bidi controls, the separators and lone surrogates: one class for both functions, so text
and every JSON artifact (``--json``, SARIF, the lock and pin files) escape the same characters."""

UNSAFE_CHARACTERS: Final = re.compile(f"[\x00-\x1f{_BEYOND_C0}]")
"""Every character :func:`sanitize_text` shows escaped (see the module docstring)."""

# C0 controls are left to the JSON serializer, which must escape them (they can only occur in strings).
_JSON_UNSAFE: Final = re.compile(f"[{_BEYOND_C0}]")


def _escaped(character: str) -> str:
    point = ord(character)
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


def sanitize_text(s: Any, limit: int = DEFAULT_LIMIT) -> str:
    """``s`` (``str()`` of it when not a string) with unsafe characters escaped, at most ``limit``
    characters long plus a marker ``…[+N chars]`` naming how many characters of ``s`` were cut.

    An escape is never split by the cut. The result contains no character of
    :data:`UNSAFE_CHARACTERS`, whatever ``s`` is.
    """
    text = s if isinstance(s, str) else str(s)
    limit = max(int(limit), 1)
    parts: list[str] = []
    used = 0
    position = 0
    while position < len(text) and used < limit:
        # Only the window that can still fit is searched: the plain text before a match always fits.
        match = UNSAFE_CHARACTERS.search(text, position, position + limit - used)
        if match is None:
            run = text[position : position + limit - used]
            parts.append(run)
            used += len(run)
            position += len(run)
            break
        parts.append(text[position : match.start()])
        used += match.start() - position
        position = match.start()
        escape = _escaped(match.group())
        if used + len(escape) > limit:
            break
        parts.append(escape)
        used += len(escape)
        position = match.end()
    if position < len(text):
        parts.append(f"…[+{len(text) - position} chars]")
    return "".join(parts)


def sanitize_json(document: str) -> str:
    """A JSON text with DEL, C1, bidi controls and U+2028/U+2029 written as ``\\uXXXX`` escapes.

    Valid only for JSON produced by a serializer that already escapes C0 controls (every conforming
    one must): those characters can then only occur inside strings, where the escape means the same
    character, so the parsed value is unchanged.
    """
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", document)
