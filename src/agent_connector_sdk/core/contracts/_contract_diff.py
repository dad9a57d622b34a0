"""Admit: what changed in a tool's contract — where, from what to what, and what kind of change (pure).

:func:`diff_contracts` compares two contract views (:func:`~._fingerprint.contract_view`: normalized,
so reordered keys and ``required``/``type`` arrays are already equal) and returns one
:class:`ContractChange` per changed location: an RFC 6901 pointer into the contract
(``/inputSchema/properties/path/pattern``, ``/annotations/readOnlyHint``, ``/_meta/ui/resourceUri``),
the old and the new value, a word-level diff for descriptions and titles (with what the new text
*adds* that a reviewer must not miss called out: an address, a URL, a path, an instruction-shaped
sentence), and a class. Classes follow **who must look**: a lock is an approval, so every change a
person would have to approve again fails the gate (``review --lock --strict``) by default.

* ``escalation`` — the tool may now do, take or show more than what was approved, or looks safer than
  it is: a hint moving either way (``destructiveHint`` true → false makes hosts skip confirmation), a
  new argument (even an optional one: a ``bcc``), an input constraint removed or widened (an argument
  no longer required too), a header annotation added, removed or renamed (gateways and proxies route
  and authorize by it), task support offered, a changed default of a boolean switch, text that gains
  instruction-like markup, hidden characters, an exfiltration instruction, a safety claim or another
  tool's name (a title), or that starts steering another tool, a new UI resource, an icon fetched from
  another address;
* ``breaking`` — arguments that were valid may now be refused (an input constraint added or
  narrowed, an argument removed: a narrowing can also steer, a ``const`` leaves the model one value),
  or the output may hold what consumers did not expect (an output constraint removed or widened),
  or calls now need task support, or calls made as tasks now fail;
* ``compatible`` — a change a person must re-read, that grants nothing and breaks no caller: what
  the model reads reworded (descriptions, titles, examples, at any depth), a non-boolean default, an
  annotation keyword. It fails ``--strict`` unless ``--allow-compatible`` is given;
* ``narrowing`` — the tool only returns less (an output constraint added, an output member now
  guaranteed, an output schema newly declared) and nothing a model reads or a host decides on moved;
* ``cosmetic`` — provably the same: whitespace only, an order-free array reordered (``enum``,
  ``anyOf``/``oneOf``/``allOf``), an annotation hint or task support made explicit at its default.
  Equal numbers spelled differently (``1``, ``1.0``, ``1e0``) and a local ``$ref`` against the schema
  it names are not drift at all (:func:`~._fingerprint.contract_view` normalizes them).

Classes are ordered (:data:`SEVERITIES`); a tool's class is its most severe change's. Where a change
cannot be placed (a pattern rewritten, a ``$ref`` retargeted) it takes the more severe reading: the
comparison fails closed. Reasons name the rule, never a value; values are returned as they are, for
the caller to sanitize and bound before display.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from agent_connector_sdk.core.contracts._exfiltration import (
    ADDRESS,
    URL,
    argument_strings,
    exfiltration_targets,
)
from agent_connector_sdk.core.contracts._pointers import json_pointer
from agent_connector_sdk.core.contracts._poisoning import poisoning_findings

__all__ = [
    "REAPPROVAL",
    "SEVERITIES",
    "Callout",
    "ChangeKind",
    "ContractChange",
    "Severity",
    "WordEdit",
    "diff_contracts",
    "most_severe",
    "name_derived_title",
    "word_diff",
]

Severity = Literal["cosmetic", "narrowing", "compatible", "breaking", "escalation"]
SEVERITIES: Final[tuple[Severity, ...]] = ("cosmetic", "narrowing", "compatible", "breaking", "escalation")
"""Ascending: a tool's class is the last of these any of its changes has."""
REAPPROVAL: Final[frozenset[Severity]] = frozenset({"compatible", "breaking", "escalation"})
"""The classes a person must approve again (``review --lock --strict`` fails on them by default)."""
ChangeKind = Literal["added", "removed", "changed"]
_RANK: Final = {severity: rank for rank, severity in enumerate(SEVERITIES)}
_MAX_WORDS: Final = 3000
"""Texts longer than this (in tokens) are shown as a whole old and new, not word by word (bounded cost)."""


@dataclass(frozen=True, slots=True)
class WordEdit:
    """One run of a word-level text diff: kept (``equal``), ``delete``d from the old or ``insert``ed."""

    op: Literal["equal", "delete", "insert"]
    text: str


CalloutKind = Literal["address", "url", "path", "instruction"]


@dataclass(frozen=True, slots=True)
class Callout:
    """Something a text change *adds* that a reviewer must not miss in a word diff: an e-mail
    ``address``, a ``url``, a file ``path`` or an ``instruction``-shaped sentence (the new text's
    own words, for the caller to sanitize and bound)."""

    kind: CalloutKind
    text: str


@dataclass(frozen=True, slots=True)
class ContractChange:
    """One changed location of a contract. ``old`` is ``None`` when ``added`` and ``new`` when
    ``removed`` (``kind`` says which: JSON ``null`` is a value)."""

    pointer: str
    kind: ChangeKind
    old: Any
    new: Any
    severity: Severity
    reason: str
    words: tuple[WordEdit, ...] = ()
    callouts: tuple[Callout, ...] = ()


def most_severe(severities: Iterable[Severity]) -> Severity | None:
    """The most severe of ``severities`` (``None`` for none)."""
    return max(severities, key=_RANK.__getitem__, default=None)


def name_derived_title(title: Any, name: str) -> bool:
    """Whether ``title`` only spells ``name`` (FastMCP derives ``Cancel Order`` from
    ``cancel_order``): equal once case-folded with separators and punctuation removed."""
    if not isinstance(title, str):
        return False
    return _letters(title) == _letters(name)


def _letters(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


_TOKEN: Final = re.compile(r"\s+|\w+|[^\w\s]")


def word_diff(old: str, new: str) -> tuple[WordEdit, ...]:
    """A word-level diff of two texts (whitespace runs and punctuation are tokens of their own).
    Texts past :data:`_MAX_WORDS` tokens are one deletion and one insertion (the cost stays bounded)."""
    before, after = _TOKEN.findall(old), _TOKEN.findall(new)
    if len(before) > _MAX_WORDS or len(after) > _MAX_WORDS:
        return (WordEdit("delete", old), WordEdit("insert", new))
    edits: list[WordEdit] = []

    def add(op: Literal["equal", "delete", "insert"], tokens: Sequence[str]) -> None:
        text = "".join(tokens)
        if not text:
            return
        if edits and edits[-1].op == op:
            edits[-1] = WordEdit(op, edits[-1].text + text)
        else:
            edits.append(WordEdit(op, text))

    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add("equal", before[i1:i2])
        else:
            add("delete", before[i1:i2])
            add("insert", after[j1:j2])
    return tuple(edits)


# -- the structural walk -------------------------------------------------------------------------

_SET_LIKE: Final = frozenset({"required", "type", "enum"})
"""Arrays whose order means nothing: compared as sets (``required``/``type`` come sorted already)."""


def _encoded(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _same(old: Any, new: Any) -> bool:
    # ``==`` alone says 1 == True == 1.0; the fingerprint's encoding does not.
    return type(old) is type(new) and old == new and _encoded(old) == _encoded(new)


@dataclass(frozen=True, slots=True)
class _Raw:
    parts: tuple[str | int, ...]
    kind: ChangeKind
    old: Any
    new: Any


def _walk(old: Any, new: Any, parts: tuple[str | int, ...]) -> Iterator[_Raw]:
    if _same(old, new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            if key not in new:
                yield _Raw((*parts, key), "removed", old[key], None)
            elif key not in old:
                yield _Raw((*parts, key), "added", None, new[key])
            else:
                yield from _walk(old[key], new[key], (*parts, key))
        return
    if isinstance(old, list) and isinstance(new, list) and not (parts and parts[-1] in _SET_LIKE):
        if parts and parts[-1] in _ORDER_FREE_SCHEMAS and _same_members(old, new):
            yield _Raw(parts, "changed", old, new)  # one change, classed cosmetic: only the order moved
            return
        yield from _walk_list(old, new, parts)
        return
    yield _Raw(parts, "changed", old, new)


_ORDER_FREE_SCHEMAS: Final = frozenset({"anyOf", "oneOf", "allOf"})
"""Composition keywords whose order does not change what validates (the fingerprint keeps their order,
so a reorder is drift; the diff calls it cosmetic)."""


def _same_members(old: list[Any], new: list[Any]) -> bool:
    return sorted(map(_encoded, old)) == sorted(map(_encoded, new))


def _walk_list(old: list[Any], new: list[Any], parts: tuple[str | int, ...]) -> Iterator[_Raw]:
    """Align two arrays on equal items (an insertion is one change, not a cascade), then walk the
    items that were replaced pairwise; what is left over is added or removed."""
    matcher = difflib.SequenceMatcher(
        None, [_encoded(item) for item in old], [_encoded(item) for item in new], autojunk=False
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        pairs = min(i2 - i1, j2 - j1)
        for offset in range(pairs):
            yield from _walk(old[i1 + offset], new[j1 + offset], (*parts, j1 + offset))
        for index in range(i1 + pairs, i2):
            yield _Raw((*parts, index), "removed", old[index], None)
        for index in range(j1 + pairs, j2):
            yield _Raw((*parts, index), "added", None, new[index])


# -- classification ------------------------------------------------------------------------------

_Verdict = tuple[Severity, str]
_COSMETIC_ORDER: Final[_Verdict] = ("cosmetic", "the same members in another order")


@dataclass(frozen=True, slots=True)
class _Context:
    """What classifying one change may consult: the other tools' names, both views, and the strings
    the current tool's arguments name (an address they name is no exfiltration)."""

    names: Sequence[str]
    old_view: Mapping[str, Any]
    new_view: Mapping[str, Any]
    named: frozenset[str]


def _text_markers(text: str) -> dict[str, int]:
    """How many hidden-character and instruction-markup findings ``text`` raises as a description."""
    counts: dict[str, int] = {}
    for finding in poisoning_findings({"description": text}):
        counts[finding.rule] = counts.get(finding.rule, 0) + 1
    return counts


def _mentioned(text: str, names: Sequence[str]) -> frozenset[str]:
    """The names ``text`` steers by the poisoning rules' ``cross-reference`` test (a sibling named as
    the trigger of an instruction; a plain pointer is documentation), name by name (a text that steers
    one more tool than before is the escalation, whatever it steered already).

    For ASCII text only the ASCII names that occur in it (lowered) can be mentioned, so only those —
    and every non-ASCII name, which case-insensitive matching may fold onto ASCII — are tested: one
    substring test per name, not a regex per name per text (a listing whose every description changed
    was quadratic). Differentially tested against testing every name."""
    if text.isascii():
        folded = text.lower()
        names = [name for name in names if not name.isascii() or name.lower() in folded]
    return frozenset(
        name
        for name in names
        if any(
            f.rule == "cross-reference" for f in poisoning_findings({"description": text}, other_tools=[name])
        )
    )


def _named_in(text: str, names: Sequence[str]) -> frozenset[str]:
    """The other tools' names ``text`` holds as whole tokens (a title that names another tool passes
    itself off as it)."""
    tokens = set(re.findall(r"[A-Za-z0-9_.-]+", text.lower()))
    tokens.update(token.rstrip(".") for token in list(tokens))
    return frozenset(name for name in names if len(name) >= 3 and name.lower() in tokens)


_SAFETY_CLAIM: Final = re.compile(
    r"\b(?:safe(?:ly)?|harmless|read[\s_-]?only|non[\s-]?destructive|side[\s-]?effect[\s-]?free|"
    r"no\s+side[\s-]?effects?|does\s+not\s+(?:modify|change|write|delete|alter)|never\s+(?:modifies|"
    r"writes|deletes|changes))\b",
    re.IGNORECASE,
)
_TEXT_REASONS: Final = {
    "instruction-markup": "instruction-like text added (addressed to the model)",
    "hidden-unicode": "invisible characters added",
}


def _text(kind: ChangeKind, old: Any, new: Any, ctx: _Context, *, title: bool = False) -> _Verdict:
    """Text the model reads: whitespace alone is cosmetic; markup, hidden characters, an exfiltration
    instruction, a new safety claim, a title that names another tool, or steering another tool is an
    escalation; any other wording is ``compatible`` (to re-read, and re-approve)."""
    before = old if isinstance(old, str) else ""
    after = new if isinstance(new, str) else ""
    if kind == "changed" and isinstance(old, str) and isinstance(new, str) and old.split() == new.split():
        return "cosmetic", "whitespace only"
    if after:
        was, now = _text_markers(before), _text_markers(after)
        for rule, reason in _TEXT_REASONS.items():
            if now.get(rule, 0) > was.get(rule, 0):
                return "escalation", reason
        if set(exfiltration_targets(after, ctx.named)) - set(exfiltration_targets(before, ctx.named)):
            return "escalation", "now tells the model to send data to an address or URL no argument names"
        if len(_SAFETY_CLAIM.findall(after)) > len(_SAFETY_CLAIM.findall(before)):
            return "escalation", "now claims the tool is safe: hosts and models may skip confirmation"
        if title and _named_in(after, ctx.names) - _named_in(before, ctx.names):
            return "escalation", "the title now names another tool: it passes itself off as it"
        if _mentioned(after, ctx.names) - _mentioned(before, ctx.names):
            return "escalation", "now steers another tool's use"
    if kind == "removed":
        return "compatible", "text removed (the model reads it)"
    if kind == "added":
        return "compatible", "text added (the model reads it)"
    return "compatible", "wording changed (the model reads it)"


# -- what a text change adds that a reviewer must not miss ---------------------------------------

_PATH: Final = re.compile(
    r"(?<![\w/:.~<-])(?:~|\.{1,2})?/(?:[\w.@-]+/)*[\w.@-]*[\w@-]|\b[A-Za-z]:\\[\w\\.-]*[\w-]"
)
_SENTENCE: Final = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))+(?:[.!?]+(?=\s|$)|$)")
"""A sentence ends at ``.``, ``!`` or ``?`` followed by a space or the end (not at the dots of an
address, a URL or a path) or at a line break."""
_INSTRUCTION_SHAPE: Final = re.compile(
    r"^\W*(?:also|always|never|before|after|first|then|please|important|note\s+to|remember|make\s+sure|"
    r"be\s+sure|do\s+not|don'?t|ignore|disregard|instead|you\s+(?:must|should|need|have|will))\b"
    r"|\b(?:you|the\s+(?:model|assistant|agent|ai|llm))\s+(?:must|should|need\s+to|have\s+to|shall)\b"
    r"|\b(?:always|never)\b",
    re.IGNORECASE,
)
_MAX_CALLOUTS: Final = 20


def _sentences(text: str) -> list[str]:
    return [" ".join(match.group(0).split()) for match in _SENTENCE.finditer(text) if match.group(0).strip()]


def callouts(old: str, new: str, named: frozenset[str] = frozenset()) -> tuple[Callout, ...]:
    """What ``new`` adds over ``old`` that a word diff lets a reviewer miss: each e-mail address, URL
    and file path not in the old text, and each new sentence shaped like an instruction to the model
    (an imperative opening with "also", "always", "before", "ignore"..., "you must", or an exfiltration
    instruction). At most 20, in order of appearance."""
    found: list[Callout] = []
    seen: set[tuple[str, str]] = set()

    def add(kind: CalloutKind, text: str) -> None:
        if (kind, text) not in seen and len(found) < _MAX_CALLOUTS:
            seen.add((kind, text))
            found.append(Callout(kind, text))

    urls = [match.group(0).rstrip(".,;:!?") for match in URL.finditer(new)]
    old_urls = {match.group(0).rstrip(".,;:!?") for match in URL.finditer(old)}
    for match in ADDRESS.finditer(new):
        if match.group(0) not in old:
            add("address", match.group(0))
    for url in urls:
        if url not in old_urls:
            add("url", url)
    bare, bare_old = URL.sub(" ", ADDRESS.sub(" ", new)), URL.sub(" ", ADDRESS.sub(" ", old))
    old_paths = set(_PATH.findall(bare_old))
    for path in _PATH.findall(bare):
        if path not in old_paths:
            add("path", path)
    old_sentences = set(_sentences(old))
    for sentence in _sentences(new):
        if sentence in old_sentences:
            continue
        if _INSTRUCTION_SHAPE.search(sentence) or exfiltration_targets(sentence, named):
            add("instruction", sentence)
    return tuple(found)


# Annotation hints: (default per the spec, the value that grants more, what granting it means, what the
# other direction means). Both directions change what a host decides: more power, or fewer confirmations.
_HINTS: Final[dict[str, tuple[bool, bool, str, str]]] = {
    "readOnlyHint": (
        False,
        False,
        "the tool may now write (readOnlyHint no longer true)",
        "the tool now claims to be read-only: hosts may skip confirmation (readOnlyHint now true)",
    ),
    "destructiveHint": (
        True,
        True,
        "the tool may now destroy data (destructiveHint now true)",
        "the tool now looks safer: hosts may skip confirmation (destructiveHint now false)",
    ),
    "idempotentHint": (
        False,
        False,
        "repeated calls may now have further effects (idempotentHint)",
        "the tool now claims repeated calls are harmless: hosts may retry it (idempotentHint now true)",
    ),
    "openWorldHint": (
        True,
        True,
        "the tool may now reach outside systems (openWorldHint now true)",
        "the tool now claims to stay inside its system: hosts may trust it more (openWorldHint now false)",
    ),
}


def _annotation(rest: tuple[str | int, ...], kind: ChangeKind, old: Any, new: Any, ctx: _Context) -> _Verdict:
    if not rest:
        return "escalation", "annotations replaced by a value that is not an object"
    key = rest[0]
    if key == "title" and len(rest) == 1:
        return _text(kind, old, new, ctx, title=True)
    hint = _HINTS.get(str(key)) if len(rest) == 1 else None
    if hint is None:
        return "compatible", "annotation changed"
    default, granting, meaning, safer = hint
    was = old if kind != "added" and isinstance(old, bool) else default
    now = new if kind != "removed" and isinstance(new, bool) else default
    if kind != "removed" and not isinstance(new, bool):
        return "escalation", f"{key} is not a boolean: hosts read the spec's default"
    if was == now:
        return "cosmetic", f"{key} at the spec's default either way"
    if now == granting:
        return "escalation", meaning
    return "escalation", safer


def _execution(rest: tuple[str | int, ...], kind: ChangeKind, old: Any, new: Any) -> _Verdict:
    if rest != ("taskSupport",):
        return (
            ("escalation", "execution changed: hosts decide how to call by it")
            if rest
            else (
                "escalation",
                "execution replaced",
            )
        )
    was = old if kind != "added" else "forbidden"
    now = new if kind != "removed" else "forbidden"
    if was == now:
        return "cosmetic", "taskSupport at the spec's default either way"
    if now == "required":
        return "breaking", "calls now need task support (taskSupport required)"
    if now == "forbidden":
        return "breaking", "calls made as tasks now fail (taskSupport forbidden)"
    return "escalation", "the tool may now run as a background task (taskSupport changed)"


_UI_POINTERS: Final = frozenset({("ui", "resourceUri"), ("ui/resourceUri",), ("openai/outputTemplate",)})


def _meta(rest: tuple[str | int, ...], kind: ChangeKind) -> _Verdict:
    if rest in _UI_POINTERS or (not rest[1:] and rest[:1] == ("ui",)):
        if kind == "removed":
            return "compatible", "the tool no longer names a UI resource"
        return "escalation", "the host now renders a different UI resource"
    return "escalation", "a _meta key the host acts on changed"


def _origin(src: Any) -> tuple[str, str] | None:
    if not isinstance(src, str):
        return None
    parts = urlsplit(src)
    return parts.scheme.lower(), parts.netloc.lower()


def _icons(rest: tuple[str | int, ...], kind: ChangeKind, new: Any, old_icons: Any) -> _Verdict:
    old_list = [icon for icon in old_icons if isinstance(icon, dict)] if isinstance(old_icons, list) else []
    known_origins = {_origin(icon.get("src")) for icon in old_list}
    known_sources = {icon.get("src") for icon in old_list}
    if kind == "removed":
        return "compatible", "icon removed"
    sources: list[Any] = []
    if rest[1:] == ("src",):
        sources = [new]
    elif len(rest) <= 1:
        items = new if isinstance(new, list) else [new]
        sources = [item.get("src") for item in items if isinstance(item, dict)]
    if any(_origin(src) not in known_origins for src in sources):
        return "escalation", "the host now fetches an icon from a new origin"
    if any(src not in known_sources for src in sources):
        return "escalation", "the host now fetches an icon from another address"
    return "compatible", "icon changed"


_HEADER_GONE: Final = (
    "an argument no longer travels in its HTTP header: gateways and proxies that route or authorize by it "
    "no longer see it"
)


def _headers(rest: tuple[str | int, ...], kind: ChangeKind, new: Any) -> _Verdict:
    if not rest:  # the whole map: null (invalid annotations) on one side
        if new is None:
            return "breaking", "the header annotations became invalid: hosts drop the tool"
        return "escalation", "new header annotations: argument values now travel in HTTP headers"
    if kind == "removed":
        return "escalation", _HEADER_GONE
    if kind == "changed":
        return "escalation", "header renamed: gateways and proxies read the old name"
    return "escalation", "new header annotation: an argument's value now travels in an HTTP header"


# -- JSON Schema ---------------------------------------------------------------------------------

_NAMED_SUBSCHEMAS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SUBSCHEMA: Final = frozenset(
    {
        "items",
        "additionalProperties",
        "unevaluatedProperties",
        "additionalItems",
        "unevaluatedItems",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
    }
)
_SUBSCHEMA_LISTS: Final = frozenset({"anyOf", "oneOf", "allOf", "prefixItems", "items"})
_UPPER: Final = frozenset(
    {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)
_LOWER: Final = frozenset(
    {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
)
_CONSTRAINTS: Final = frozenset(
    {"pattern", "format", "multipleOf", "const", "contentEncoding", "contentMediaType", "dependentRequired"}
)
_OPEN_SCHEMAS: Final = frozenset(
    {"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"}
)
_TEXT_KEYWORDS: Final = frozenset({"description", "title"})

Effect = Literal["widen", "narrow", "both", "neutral"]


def _split_schema(
    rest: tuple[str | int, ...],
) -> tuple[tuple[str | int, ...], str | int | None, tuple[str | int, ...]]:
    """Split a pointer inside a schema into (path to the innermost schema object, the keyword of that
    schema it goes through, what lies below the keyword's value that is not a schema)."""
    index = 0
    schema_end = 0
    while index < len(rest):
        key = rest[index]
        named = key in _NAMED_SUBSCHEMAS and index + 1 < len(rest)
        listed = key in _SUBSCHEMA_LISTS and index + 1 < len(rest) and isinstance(rest[index + 1], int)
        if named or listed:
            index += 2
            schema_end = index
        elif key in _SUBSCHEMA and index + 1 < len(rest):
            index += 1
            schema_end = index
        else:
            break
    if schema_end == len(rest):
        return rest, None, ()
    return rest[:schema_end], rest[schema_end], rest[schema_end + 1 :]


def _schema_effect(
    keyword: str | int | None,
    below: tuple[str | int, ...],
    kind: ChangeKind,
    old: Any,
    new: Any,
    path: tuple[str | int, ...],
) -> tuple[Effect, str] | None:
    """What a change does to the set of valid instances; ``None`` when it is not a validation change."""
    if keyword is None:  # a whole (sub)schema
        parent = path[-2] if len(path) >= 2 else None
        if parent == "properties":
            if kind == "added":
                return "neutral", "new optional property"
            if kind == "removed":
                return "narrow", "property removed"
        if parent in ("anyOf", "oneOf"):
            return ("widen", "alternative added") if kind == "added" else ("narrow", "alternative removed")
        if parent in ("allOf",):
            return ("narrow", "condition added") if kind == "added" else ("widen", "condition removed")
        if parent in ("$defs", "definitions"):
            return "neutral", "definition changed (each $ref to it is compared where it is used)"
        if old is True or new is False or old == {}:
            return "narrow", "schema now refuses what it accepted"
        if new is True or old is False or new == {}:
            return "widen", "schema now accepts anything"
        if kind == "added":
            return "narrow", "schema added"
        if kind == "removed":
            return "widen", "schema removed"
        return "both", "schema replaced"
    if below and keyword not in _SET_LIKE and keyword not in _CONSTRAINTS:
        if keyword in _TEXT_KEYWORDS or keyword in ("examples", "x-mcp-header"):
            pass
        else:
            return "both", f"{keyword} changed"
    if keyword in _SET_LIKE:
        before = set(map(_encoded, old)) if isinstance(old, list) else None
        after = set(map(_encoded, new)) if isinstance(new, list) else None
        if keyword == "type" and isinstance(old, str):
            before = {_encoded(old)}
        if keyword == "type" and isinstance(new, str):
            after = {_encoded(new)}
        if kind == "added":
            return "narrow", f"{keyword} added"
        if kind == "removed":
            return "widen", f"{keyword} removed"
        if before is None or after is None:
            return "both", f"{keyword} changed"
        if before == after:
            return "neutral", "order"  # set-equal: reordered only
        grew, shrank = bool(after - before), bool(before - after)
        if grew and shrank:
            return "both", f"{keyword} members replaced"
        return ("widen", f"{keyword} gained members") if grew else ("narrow", f"{keyword} lost members")
    if keyword in _UPPER or keyword in _LOWER:
        if kind == "added":
            return "narrow", f"{keyword} added"
        if kind == "removed":
            return "widen", f"{keyword} removed"
        if (
            isinstance(old, int | float)
            and isinstance(new, int | float)
            and not isinstance(old, bool)
            and not isinstance(new, bool)
        ):
            higher = new > old
            if (keyword in _UPPER) == higher:
                return "widen", f"{keyword} relaxed"
            return "narrow", f"{keyword} tightened"
        return "both", f"{keyword} changed"
    if keyword == "uniqueItems":
        if bool(new) and not bool(old if kind != "added" else False):
            return "narrow", "items must now be unique"
        return "widen", "items need no longer be unique"
    if keyword in _CONSTRAINTS or keyword in ("$ref", "$dynamicRef", "dependentRequired"):
        if kind == "added":
            return "narrow", f"{keyword} added"
        if kind == "removed":
            return "widen", f"{keyword} removed"
        return "both", f"{keyword} changed"
    if keyword in _OPEN_SCHEMAS or keyword in _SUBSCHEMA or keyword in _SUBSCHEMA_LISTS:
        if kind == "added":
            if new is True or new == {}:
                return "neutral", f"{keyword} stated at its default"
            return "narrow", f"{keyword} added"
        if kind == "removed":
            if old is True or old == {}:
                return "neutral", f"{keyword} stated at its default"
            return "widen", f"{keyword} removed"
        if old is False or new is True:
            return "widen", f"{keyword} now allows more"
        if new is False or old is True:
            return "narrow", f"{keyword} now allows less"
        return "both", f"{keyword} changed"
    if keyword == "$schema":
        return "both", "the schema dialect changed"
    return None


def _required(kind: ChangeKind, old: Any, new: Any, output: bool) -> _Verdict:
    before = {_encoded(name) for name in old} if kind != "added" and isinstance(old, list) else set()
    after = {_encoded(name) for name in new} if kind != "removed" and isinstance(new, list) else set()
    if (kind != "added" and not isinstance(old, list)) or (kind != "removed" and not isinstance(new, list)):
        return (
            ("breaking", "required is not an array") if output else ("escalation", "required is not an array")
        )
    if before == after:
        return _COSMETIC_ORDER
    if output:
        if before - after:
            return "breaking", "an output member is no longer guaranteed (required)"
        return "narrowing", "an output member is now guaranteed (required)"
    if after - before:
        return "escalation", "new required argument: every call must now send it"
    return "escalation", "an argument is no longer required: calls may now leave it out"


_PROSE: Final = frozenset({"description", "title", "examples"})


def _prose(value: Any) -> str:
    """Every description, title and example string inside ``value`` (a schema part), joined: what a
    model reads of it."""
    out: list[str] = []
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack and len(out) < 10_000:
        item, prose = stack.pop()
        if isinstance(item, str):
            if prose:
                out.append(item)
        elif isinstance(item, dict):
            stack.extend((inner, key in _PROSE) for key, inner in item.items())
        elif isinstance(item, list):
            stack.extend((inner, prose) for inner in item)
    return "\n".join(reversed(out))


def _with_prose(verdict: _Verdict, kind: ChangeKind, old: Any, new: Any, ctx: _Context) -> _Verdict:
    """A schema part added, removed or replaced whole: the text inside it is read by the model, so
    the change is at least ``compatible``, and an escalation when that text gains what :func:`_text`
    escalates."""
    if not isinstance(new, dict | list) and not isinstance(old, dict | list):
        return verdict
    before, after = _prose(old) if kind != "added" else "", _prose(new) if kind != "removed" else ""
    if before == after:
        return verdict
    severity, reason = _text("changed", before, after, ctx)
    if severity == "escalation" and _RANK[verdict[0]] < _RANK["escalation"]:
        return "escalation", f"{verdict[1]}; its text: {reason}"
    if _RANK[verdict[0]] < _RANK["compatible"]:
        return "compatible", f"{verdict[1]}; it holds text the model reads"
    return verdict


def _schema(
    field: str, rest: tuple[str | int, ...], kind: ChangeKind, old: Any, new: Any, ctx: _Context
) -> _Verdict:
    output = field == "outputSchema"
    if not rest:
        if output:
            if kind == "added":
                return "narrowing", "output schema now declared"
            if kind == "removed":
                return "breaking", "output schema removed: consumers lose its guarantee"
        return ("breaking", "schema replaced") if output else ("escalation", "input schema replaced")
    path, keyword, below = _split_schema(rest)
    if keyword in _TEXT_KEYWORDS and not below:
        return _text(kind, old, new, ctx, title=keyword == "title")
    if keyword == "examples":
        if isinstance(old, str) or isinstance(new, str):
            return _text(kind, old, new, ctx)
        return "compatible", "examples changed (the model reads them)"
    if keyword == "x-mcp-header":
        if kind == "removed":
            return "escalation", _HEADER_GONE
        if kind == "changed":
            return "escalation", "header renamed: gateways and proxies read the old name"
        return "escalation", "new header annotation: an argument's value now travels in an HTTP header"
    if keyword == "default":
        if not output and (isinstance(old, bool) or isinstance(new, bool)):
            return "escalation", "the default of a switch changed"
        return "compatible", "default changed (what a call that leaves it out does)"
    if keyword == "required" and not below:
        return _required(kind, old, new, output)
    if keyword == "properties" and not below:
        if kind == "removed":
            return (
                ("breaking", "every property removed")
                if not output
                else ("breaking", "output properties removed")
            )
        if output:
            return "compatible", "output properties declared"
        return "escalation", "arguments declared: the model may now send them"
    if (
        (keyword == "enum" or keyword in _ORDER_FREE_SCHEMAS)
        and not below
        and isinstance(old, list)
        and isinstance(new, list)
        and _same_members(old, new)
    ):
        return _COSMETIC_ORDER
    effect = _schema_effect(keyword, below, kind, old, new, path)
    if effect is None:
        return "compatible", f"{keyword} changed (an annotation the model may read)"
    what, reason = effect
    if what == "neutral":
        if reason == "order":
            return "cosmetic", reason
        if reason == "new optional property":
            if output:
                return "narrowing", "new output property"
            return "escalation", "new argument (optional): the model may now send it"
        return "compatible", reason
    if output:
        if what == "narrow":
            return "narrowing", f"output {reason}: consumers get less than they may expect"
        return "breaking", f"output {reason}: consumers may get what they did not expect"
    if what == "narrow":
        return "breaking", f"{reason}: arguments that were valid may now be refused"
    return "escalation", f"{reason}: the tool now accepts arguments it refused"


def _classify(raw: _Raw, ctx: _Context) -> _Verdict:
    field = str(raw.parts[0])
    rest = raw.parts[1:]
    if field in ("title", "description") and not rest:
        return _text(raw.kind, raw.old, raw.new, ctx, title=field == "title")
    if field == "annotations":
        return _annotation(rest, raw.kind, raw.old, raw.new, ctx)
    if field == "execution":
        return _execution(rest, raw.kind, raw.old, raw.new)
    if field == "_meta":
        return _meta(rest, raw.kind) if rest else ("escalation", "_meta replaced")
    if field == "icons":
        return _icons(rest, raw.kind, raw.new, ctx.old_view.get("icons"))
    if field == "headers":
        return _headers(rest, raw.kind, raw.new)
    if field in ("inputSchema", "outputSchema"):
        verdict = _schema(field, rest, raw.kind, raw.old, raw.new, ctx)
        return _with_prose(verdict, raw.kind, raw.old, raw.new, ctx)
    if field == "name":
        return "breaking", "renamed: calls by the old name fail"
    return "compatible", f"{field} changed"


_OBJECT_FIELDS: Final = ("annotations", "execution", "_meta")
"""Absent and ``{}`` mean the same for these (every member has a default): compared member by member."""


def diff_contracts(
    old_view: Mapping[str, Any],
    new_view: Mapping[str, Any],
    *,
    other_names: Iterable[str] = (),
    set_aside: Iterable[str] = (),
) -> tuple[ContractChange, ...]:
    """Every changed location between two contract views, in pointer order, classified.

    ``other_names``: the other tools' names (text that starts steering one of them, or a title that
    names one, is an escalation). ``set_aside``: top-level fields not compared (a rename sets aside
    ``name``, and ``title`` when it only spells the name). Text changes carry a word diff and their
    :func:`callouts`. Pure; cost linear in the views' size (arrays are aligned with difflib, which
    is quadratic in the length of one array at worst, bounded by the descriptor bounds of Admit).
    """
    names = other_names if isinstance(other_names, list | tuple) else list(other_names)
    ctx = _Context(names, old_view, new_view, argument_strings(new_view))
    skipped = set(set_aside)
    changes: list[ContractChange] = []
    for field in sorted((old_view.keys() | new_view.keys()) - skipped):
        absent: Any = {} if field in _OBJECT_FIELDS else None
        before = old_view.get(field, absent)
        after = new_view.get(field, absent)
        if field in _OBJECT_FIELDS and (before is None or after is None):
            before = {} if before is None else before
            after = {} if after is None else after
        if field not in old_view and field not in _OBJECT_FIELDS:
            raws: Iterable[_Raw] = [_Raw((field,), "added", None, after)]
        elif field not in new_view and field not in _OBJECT_FIELDS:
            raws = [_Raw((field,), "removed", before, None)]
        else:
            raws = _walk(before, after, (field,))
        for raw in raws:
            severity, reason = _classify(raw, ctx)
            words: tuple[WordEdit, ...] = ()
            called: tuple[Callout, ...] = ()
            text_change = raw.parts[-1] in _TEXT_KEYWORDS or (
                len(raw.parts) >= 2 and raw.parts[-2] == "examples"
            )
            if text_change and isinstance(raw.new, str):
                old_text = raw.old if isinstance(raw.old, str) else ""
                if raw.kind == "changed" and isinstance(raw.old, str):
                    words = word_diff(raw.old, raw.new)
                called = callouts(old_text, raw.new, ctx.named)
            elif raw.kind != "removed" and isinstance(raw.new, dict | list) and raw.parts[0] != "_meta":
                called = callouts(
                    _prose(raw.old) if raw.kind == "changed" else "", _prose(raw.new), ctx.named
                )
            changes.append(
                ContractChange(
                    json_pointer(raw.parts), raw.kind, raw.old, raw.new, severity, reason, words, called
                )
            )
    return tuple(changes)
