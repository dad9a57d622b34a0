"""The regex side of a search: FastMCP's semantics, bounded (pure).

A pattern matches a tool when it is found (not anchored) anywhere in the tool's regex text
(:meth:`SearchDocument.regex_text`), case-insensitively, by a linear-time engine (Rust's ``regex``
through ``pydantic_core``, as FastMCP's ``RegexSearchTransform`` does): no lookarounds or
backreferences, and no pattern can backtrack for long. Invalid or overlong patterns match nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from pydantic_core import SchemaError, SchemaValidator, ValidationError, core_schema

__all__ = ["MAX_PATTERN_CHARS", "RegexMatcher", "compile_pattern", "looks_like_regex", "pattern_words"]

MAX_PATTERN_CHARS: Final = 1_000  # FastMCP's own bound

# Characters that make a pattern more than a literal phrase. ``.`` is not among them: prose ends its
# sentences with one, and as a regex it matches the very character it stands for as well.
_OPERATORS: Final = frozenset("|*+?^$[](){}\\")
# Prose ends questions with "?" (and exclamations with "!"): a last "?" alone makes no regex.
_SENTENCE_END: Final = re.compile(r"[?!.\s]+\Z")
# Escapes that stand for a class of characters, not a letter of a word (``\bissue\b`` reads "issue").
_CLASS_ESCAPE: Final = re.compile(r"\\[bBdDsSwWAzZnrtfv]|\\p\{[^}]*\}|\\P\{[^}]*\}|\\.")


class RegexMatcher:
    """A compiled case-insensitive search pattern."""

    __slots__ = ("_validator",)

    def __init__(self, validator: SchemaValidator) -> None:
        self._validator = validator

    def matches(self, text: str) -> bool:
        try:
            self._validator.validate_python(text)
        except ValidationError:
            return False
        return True

    def matching(self, texts: Sequence[str]) -> list[int]:
        """The positions of ``texts`` the pattern matches, in order."""
        return [position for position, text in enumerate(texts) if self.matches(text)]


def compile_pattern(pattern: str) -> RegexMatcher | None:
    """The matcher of ``pattern``, or ``None`` for an invalid, unsupported or overlong pattern."""
    if len(pattern) > MAX_PATTERN_CHARS or not pattern:
        return None
    try:
        validator = SchemaValidator(
            core_schema.str_schema(pattern=f"(?i){pattern}", regex_engine="rust-regex")
        )
    except SchemaError:
        return None
    return RegexMatcher(validator)


def looks_like_regex(pattern: str) -> bool:
    """Whether ``pattern`` uses regex operators (alternation, repetition, anchors, groups, classes,
    escapes) rather than being a phrase. A question mark ending the text is punctuation, not an
    operator: "who watches this repo?" is a request."""
    return any(character in _OPERATORS for character in _SENTENCE_END.sub("", pattern))


def pattern_words(pattern: str) -> str:
    """The literal words of a pattern, for ranking what it matches: ``\\bgeo(code|coding)\\b|address``
    reads ``geo code coding address``. Class escapes become spaces; operators separate words."""
    without_escapes = _CLASS_ESCAPE.sub(" ", pattern)
    return re.sub(r"[|*+?^$\[\](){}.]", " ", without_escapes)
