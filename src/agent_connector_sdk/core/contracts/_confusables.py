"""Admit: names a person cannot tell apart — confusable skeletons and escaped rendering (pure).

A rename from ``read_file`` to ``reаd_file`` (U+0430 CYRILLIC SMALL LETTER A) reads as no change at
all; a new tool named like an approved one borrows its trust. Two names are *confusable* when they
differ but share a *skeleton* in the sense of Unicode TR39: NFKC, then every character replaced by
the representative of its class of homoglyphs, then look-alike ASCII sequences (``rn`` for ``m``)
folded the same way. The homoglyph classes come from Unicode's ``confusables.txt`` as the
``confusable-homoglyphs`` package ships it (loaded once, on first use, bounded by that table).

:func:`escaped` renders a name so a person sees what it is made of: every character outside printable
ASCII as ``\\uXXXX`` (or ``\\UXXXXXXXX``).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable

__all__ = ["confusable_with", "escaped", "skeleton"]


@functools.cache
def _tables() -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
    """``(character → ASCII look-alike, ((ASCII sequence, look-alike), ...))``.

    The table lists, per character, its homoglyphs. What a tool name is confused with is an ASCII name
    (the charset the spec recommends), so each character that looks like an ASCII one maps to it, and
    the few ASCII look-alike groups (``l``/``1``/``I``/``|``, ``O``/``0``) fold to one member. No
    transitive closure over the whole table: that chains unrelated letters together (``s`` … ``f``).
    """
    from confusable_homoglyphs.confusables import confusables_data  # a 10k-entry table: load on use

    ascii_groups: dict[str, str] = {}
    for char, glyphs in confusables_data.items():
        if len(char) == 1 and char.isascii():
            group = {char} | {text for glyph in glyphs if len(text := glyph["c"]) == 1 and text.isascii()}
            for member in group:
                ascii_groups[member] = min(group | {ascii_groups.get(member, member)})

    def ascii_of(char: str) -> str:
        return ascii_groups.get(char, char)

    mapping: dict[str, str] = {}
    sequences: set[tuple[str, str]] = set()
    for char, glyphs in confusables_data.items():
        if len(char) != 1:
            continue
        for glyph in glyphs:
            text = glyph["c"].strip("\u200e\u200f")  # the table wraps RTL glyphs in direction marks
            if char.isascii() and len(text) == 1 and not text.isascii():
                mapping.setdefault(text, ascii_of(char))
            elif not char.isascii() and len(text) == 1 and text.isascii():
                mapping.setdefault(char, ascii_of(text))
            elif char.isascii() and 1 < len(text) <= 3 and text.isascii() and text.isalnum():
                sequences.add((text, ascii_of(char)))  # "rn" looks like "m"
    mapping.update({char: rep for char, rep in ascii_groups.items() if char != rep})
    return mapping, tuple(sorted(sequences, key=lambda item: (-len(item[0]), item[0])))


def skeleton(name: str) -> str:
    """The TR39-style skeleton of ``name`` (equal skeletons: the names look alike)."""
    mapping, sequences = _tables()
    text = "".join(mapping.get(char, char) for char in unicodedata.normalize("NFKC", name))
    for sequence, representative in sequences:
        if sequence in text:
            text = text.replace(sequence, representative)
    return text


def confusable_with(name: str, others: Iterable[str]) -> str | None:
    """The first of ``others`` (in sorted order) that differs from ``name`` but looks like it."""
    own = skeleton(name)
    return next((other for other in sorted(set(others)) if other != name and skeleton(other) == own), None)


def escaped(name: str) -> str:
    """``name`` with every character outside printable ASCII as ``\\uXXXX`` / ``\\UXXXXXXXX`` (and a
    backslash doubled), so look-alikes read differently."""
    out = []
    for char in name:
        if char == "\\":
            out.append("\\\\")
        elif " " <= char <= "~":
            out.append(char)
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return "".join(out)
