"""Admit: tool-poisoning findings in the text a model reads — names, titles and descriptions (pure).

A tool description is read by the model, not by the person who approved the tool, which makes it the
place to hide instructions ("tool poisoning"). Three project rules (the spec is silent on all three,
so they are *findings* by default and rejections only in the ``strict`` profile; category
``tool_poisoning``):

* ``hidden-unicode`` — characters a person reviewing the text cannot see but a model reads: Unicode
  tag characters (U+E0000–U+E007F, which spell ASCII invisibly), zero-width characters (U+200B–U+200D,
  U+2060–U+2064, U+FEFF, U+180E) and bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
  U+2066–U+2069), which reorder what is displayed;
* ``instruction-markup`` — text dressed up as instructions to the model: ``<IMPORTANT>``-style tags
  (``important``, ``system``, ``instructions``, ``secret``, ``hidden``, ``admin``, ``critical``,
  ``override`` ...), chat-template tokens (``<|im_start|>``, ``[INST]``) and the classic phrases
  ("ignore previous instructions", "do not tell the user");
* ``cross-reference`` — the text names another tool of the same listing, or another server the host
  knows of: a tool's description should describe that tool, and "when calling send_email, also ..."
  is how one tool steers another's use.

Messages name the field, the rule and counts or code-point classes; they never quote the text.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Final

from agent_connector_sdk.mcp.contracts.admission import AdmissionReport
from agent_connector_sdk.mcp.contracts.findings import Finding

__all__ = [
    "POISONING_CATEGORY",
    "POISONING_RULES",
    "SEARCH_PAIR",
    "hidden_characters",
    "poisoning_admission",
    "poisoning_findings",
]

POISONING_CATEGORY: Final = "tool_poisoning"
POISONING_RULES: Final = ("hidden-unicode", "instruction-markup", "cross-reference")
SEARCH_PAIR: Final = frozenset({"search_tools", "call_tool"})
"""A search transform's two synthetic tools (FastMCP's default names): they name each other by design,
so those two references are not findings."""
_TEXT_FIELDS: Final = ("name", "title", "description")

_HIDDEN_CLASSES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("tag characters U+E0000-E007F", re.compile("[\U000e0000-\U000e007f]")),
    ("zero-width characters", re.compile("[\u200b-\u200d\u2060-\u2064\ufeff\u180e]")),
    ("bidirectional controls", re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")),
)
_MARKUP_TAGS: Final = (
    "important",
    "system",
    "instructions?",
    "secret",
    "hidden",
    "admin",
    "critical",
    "override",
    "prompt",
    "assistant",
    "tool_?instructions?",
)
_MARKUP: Final = re.compile(
    r"<\s*/?\s*(?:" + "|".join(_MARKUP_TAGS) + r")\b[^<>]{0,200}>"  # <IMPORTANT>, </system>, <secret x=1>
    r"|<\|[a-z_]{2,32}\|>"  # chat-template tokens: <|im_start|>, <|system|>
    r"|\[/?(?:INST|SYS)\]"  # Llama-style [INST] / [SYS]
    r"|\bignore\s+(?:all\s+)?(?:the\s+)?(?:previous|prior|above|earlier)\s+instructions\b"
    r"|\bdo\s+not\s+(?:tell|inform|mention\s+(?:this\s+)?to|alert|notify)\s+the\s+user\b",
    re.IGNORECASE,
)
_NAME_CHARS: Final = "A-Za-z0-9_.-"


def hidden_characters(text: str) -> dict[str, int]:
    """``class -> count`` of the hidden characters in ``text`` (empty when there are none)."""
    found: dict[str, int] = {}
    if text.isascii():  # every hidden class is outside ASCII
        return found
    for label, pattern in _HIDDEN_CLASSES:
        count = len(pattern.findall(text))
        if count:
            found[label] = count
    return found


_NAME_RUN: Final = re.compile(rf"[{_NAME_CHARS}]+")


def _markup_spans(text: str) -> int:
    """How many :data:`_MARKUP` spans ``text`` holds. ASCII text with none of the literals every
    alternative needs (``<``, ``[``, ``ignore``, ``do`` and ``not``; case-folded, which for ASCII is
    lowering) holds none, so the regex is skipped; other text (e.g. U+212A KELVIN SIGN matches ``k``
    under ``IGNORECASE``) always gets it. Differentially tested against the regex."""
    if text.isascii() and "<" not in text and "[" not in text:
        lowered = text.lower()
        if "ignore" not in lowered and ("do" not in lowered or "not" not in lowered):
            return 0
    return len(_MARKUP.findall(text))


def _mention_tokens(text: str) -> frozenset[str] | None:
    """Every name :func:`_mentions` can find in an ASCII ``text``, lowercased; ``None`` for other text.

    Why: checking each of a listing's names against each description is O(tools²) regex searches (a
    1,000-tool listing took minutes). For ASCII text the match is a token test: a mention starts where
    a run of name characters starts (the look-behind) and ends at the run's end, or just before the
    run's final ``.`` (the look-aheads allow a ``.`` only when no name character follows it). So the
    mentions are exactly each run and, when it ends in ``.``, the run without it. Non-ASCII text keeps
    the regex: with ``IGNORECASE`` a class like ``[A-Za-z]`` also matches e.g. KELVIN SIGN."""
    if not text.isascii():
        return None
    # Lowering ASCII text first changes no run's extent (the name characters are closed under it).
    tokens = set(_NAME_RUN.findall(text.lower()))
    tokens.update([token[:-1] for token in tokens if token.endswith(".")])
    return frozenset(tokens)


def _mentioned(text: str, tokens: frozenset[str] | None, name: str) -> bool:
    """:func:`_mentions`, by token lookup where :func:`_mention_tokens` applies (ASCII text and a name
    made of name characters only), else by the regex."""
    if tokens is not None and name.isascii() and _NAME_RUN.fullmatch(name):
        return name.lower() in tokens
    return _mentions(text, name)


def _mention_pattern(name: str) -> re.Pattern[str]:
    # A sentence's full stop after a name still ends the token ("... send_email."), a dot inside does not.
    pattern = rf"(?<![{_NAME_CHARS}]){re.escape(name)}(?![A-Za-z0-9_-])(?!\.[{_NAME_CHARS}])"
    return re.compile(pattern, re.IGNORECASE)


def _mentions(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` as a whole token (not inside a longer identifier)."""
    return _mention_pattern(name).search(text) is not None


# With IGNORECASE an ASCII name character matches exactly the characters whose case fold is its own,
# plus these two (checked over every code point by tests/contracts/test_poisoning.py).
_FOLD_LIKE_I: Final = str.maketrans({"\u0130": "i", "\u0131": "i"})


class _NameIndex:
    """The names one listing's texts are searched for, indexed once (per listing, so bounded by it).

    :func:`_mentioned` per (text, name) pair is O(tools²) for a listing: 1.5 million pairs, seconds, at
    GitHub's 1,223 tools. Here an ASCII text costs one lookup per token of its own (exactly
    :func:`_mentioned`'s token test); any other text is searched with the regex only for the names whose
    case fold occurs in the text's (a regex match implies that occurrence: with ``IGNORECASE`` an ASCII
    character only matches characters folding to it, and U+0130/U+0131 to ``i``); names that are not
    plain name-character runs keep the regex for every text. Differentially tested against the pairwise
    search in ``tests/contracts/test_poisoning.py``.
    """

    def __init__(self, names: Iterable[str]) -> None:
        self.by_token: dict[str, list[str]] = {}
        self.plain: list[tuple[str, str]] = []  # (lowercase = case fold for ASCII, name)
        self.irregular: list[str] = []
        self._patterns: dict[str, re.Pattern[str]] = {}
        for name in sorted(set(names)):
            if name.isascii() and _NAME_RUN.fullmatch(name):
                self.by_token.setdefault(name.lower(), []).append(name)
                self.plain.append((name.lower(), name))
            else:
                self.irregular.append(name)

    def _search(self, text: str, name: str) -> bool:
        pattern = self._patterns.get(name)
        if pattern is None:
            pattern = self._patterns[name] = _mention_pattern(name)
        return pattern.search(text) is not None

    def mentioned(self, text: str, tokens: frozenset[str] | None) -> set[str]:
        """The names ``text`` mentions (``tokens``: :func:`_mention_tokens` of it)."""
        found: set[str] = set()
        if tokens is not None:
            for token in tokens:
                names = self.by_token.get(token)
                if names:
                    found.update(names)
        else:
            folded = text.translate(_FOLD_LIKE_I).casefold()
            found.update(name for key, name in self.plain if key in folded and self._search(text, name))
        found.update(name for name in self.irregular if self._search(text, name))
        return found


def poisoning_findings(
    descriptor: Mapping[str, Any],
    *,
    other_tools: Iterable[str] = (),
    other_servers: Collection[str] = (),
) -> list[Finding]:
    """The poisoning findings of one descriptor's ``name``, ``title`` and ``description``.

    ``other_tools`` are the other names of the same listing (a tool naming itself is fine);
    ``other_servers`` are names of other servers the host talks to. Names shorter than three
    characters are never matched (too many accidental hits). Non-string fields are skipped: the
    descriptor's shape is the Admit gate's business.
    """
    own = descriptor.get("name")
    return _findings(
        descriptor, _NameIndex(_eligible(other_tools)), _NameIndex(_eligible(other_servers)), {own}
    )


def _eligible(names: Iterable[Any]) -> set[str]:
    return {name for name in names if isinstance(name, str) and len(name) >= 3}


def _findings(
    descriptor: Mapping[str, Any], tools: _NameIndex, servers: _NameIndex, not_tools: Collection[Any]
) -> list[Finding]:
    """:func:`poisoning_findings` with the names indexed (``not_tools``: tool names never reported)."""
    findings: list[Finding] = []
    for field in _TEXT_FIELDS:
        text = descriptor.get(field)
        if not isinstance(text, str) or not text:
            continue
        path = f"/{field}"
        hidden = hidden_characters(text)
        if hidden:
            classes = ", ".join(f"{count} {label}" for label, count in hidden.items())
            message = f"{field} contains invisible text: {classes}"
            findings.append(Finding("hidden-unicode", POISONING_CATEGORY, message, path))
        if field == "name":
            continue  # a name cannot carry markup or references that the charset check would not catch
        markup = _markup_spans(text)
        if markup:
            findings.append(
                Finding(
                    "instruction-markup",
                    POISONING_CATEGORY,
                    f"{field} contains {markup} instruction-like markup "
                    f"{'span' if markup == 1 else 'spans'} addressed to the model",
                    path,
                )
            )
        tokens = _mention_tokens(text)
        named_tools = sorted(tools.mentioned(text, tokens).difference(not_tools))
        named_servers = sorted(servers.mentioned(text, tokens))
        if named_tools or named_servers:
            parts = []
            if named_tools:
                parts.append(f"other tools ({', '.join(named_tools)})")
            if named_servers:
                parts.append(f"other servers ({', '.join(named_servers)})")
            findings.append(
                Finding("cross-reference", POISONING_CATEGORY, f"{field} names {' and '.join(parts)}", path)
            )
    return findings


def poisoning_admission(
    descriptors: Sequence[Any], report: AdmissionReport, *, strict: bool, other_servers: Collection[str] = ()
) -> tuple[AdmissionReport, dict[str, tuple[Finding, ...]]]:
    """Apply the poisoning rules to an admission report, by profile (pure).

    ``strict=False`` (the ``default`` profile): every admitted tool stays admitted; its findings are
    returned by name. ``strict=True``: a tool with any finding moves to ``rejected`` with category
    ``tool_poisoning`` (the reason lists the rules), and no findings are returned for it. Other names of
    the same listing are the ``cross-reference`` candidates.
    """
    tools = _NameIndex(_eligible(report.admitted))
    servers = _NameIndex(_eligible(other_servers))
    # Only string names can be admitted (and a hostile listing's name may be an unhashable list).
    positions = {
        name: i
        for i, item in enumerate(descriptors)
        if isinstance(item, Mapping) and isinstance(name := item.get("name"), str)
    }
    admitted: dict[str, dict[str, Any]] = {}
    rejected = list(report.rejected)
    findings: dict[str, tuple[Finding, ...]] = {}
    for name, descriptor in report.admitted.items():
        # A tool naming itself is fine, and so is one of the search pair naming the other.
        not_tools = SEARCH_PAIR if name in SEARCH_PAIR else {name}
        found = tuple(_findings(descriptor, tools, servers, not_tools))
        if found and strict:
            rules = ", ".join(sorted({f"{f.rule} at {f.path}" for f in found}))
            rejected.append(
                {
                    "tool": name,
                    "index": positions.get(name, -1),
                    "category": POISONING_CATEGORY,
                    "reason": f"tool poisoning: {rules}",
                    "descriptor": descriptor,
                }
            )
            continue
        admitted[name] = descriptor
        if found:
            findings[name] = found
    rejected.sort(key=lambda rejection: rejection["index"])
    return AdmissionReport(admitted=admitted, rejected=rejected), findings
