"""Admit: what changed in a tool's contract — where, from what to what, and what kind of change (pure).

:func:`diff_contracts` compares two contract views (:func:`~._fingerprint.contract_view`: normalized,
so reordered keys and ``required``/``type`` arrays are already equal) and returns one
:class:`ContractChange` per changed location: an RFC 6901 pointer into the contract
(``/inputSchema/properties/path/pattern``, ``/annotations/readOnlyHint``, ``/_meta/ui/resourceUri``),
the old and the new value, a word-level diff for descriptions and titles, and a class:

* ``escalation`` — the tool may now do, receive or show more than what was approved: a new
  write/destructive/open-world capability (annotation hints, with the spec's defaults), an input
  constraint removed or widened, a new required argument, a new header annotation, a changed default of
  a boolean switch, instruction-like or invisible text added (the poisoning rules), a new UI resource,
  an icon from a new origin;
* ``breaking`` — arguments that were valid may now be refused (an input constraint added or
  narrowed, an argument removed), or the output may hold what consumers did not expect (an output
  constraint removed or widened), or calls now need task support;
* ``compatible`` — a change a person should read that grants nothing and breaks no caller (a
  reworded description, a new optional argument, a narrower output);
* ``cosmetic`` — nothing a caller, model or host could notice: whitespace only, an order-free
  array reordered (``enum``, ``anyOf``/``oneOf``/``allOf``), an annotation hint made explicit at its
  default.

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

from agent_connector_sdk.core.contracts._pointers import json_pointer
from agent_connector_sdk.core.contracts._poisoning import poisoning_findings

__all__ = [
    "SEVERITIES",
    "ChangeKind",
    "ContractChange",
    "Severity",
    "WordEdit",
    "diff_contracts",
    "most_severe",
    "name_derived_title",
    "word_diff",
]

Severity = Literal["cosmetic", "compatible", "breaking", "escalation"]
SEVERITIES: Final[tuple[Severity, ...]] = ("cosmetic", "compatible", "breaking", "escalation")
"""Ascending: a tool's class is the last of these any of its changes has."""
ChangeKind = Literal["added", "removed", "changed"]
_RANK: Final = {severity: rank for rank, severity in enumerate(SEVERITIES)}
_MAX_WORDS: Final = 3000
"""Texts longer than this (in tokens) are shown as a whole old and new, not word by word (bounded cost)."""


@dataclass(frozen=True, slots=True)
class WordEdit:
    """One run of a word-level text diff: kept (``equal``), ``delete``d from the old or ``insert``ed."""

    op: Literal["equal", "delete", "insert"]
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


_TEXT_REASONS: Final = {
    "instruction-markup": "instruction-like text added (addressed to the model)",
    "hidden-unicode": "invisible characters added",
}


def _text(kind: ChangeKind, old: Any, new: Any, other_names: Sequence[str]) -> _Verdict:
    before = old if isinstance(old, str) else ""
    after = new if isinstance(new, str) else ""
    if kind == "changed" and isinstance(old, str) and isinstance(new, str) and old.split() == new.split():
        return "cosmetic", "whitespace only"
    if after:
        was, now = _text_markers(before), _text_markers(after)
        for rule, reason in _TEXT_REASONS.items():
            if now.get(rule, 0) > was.get(rule, 0):
                return "escalation", reason
        if _mentioned(after, other_names) - _mentioned(before, other_names):
            return "escalation", "now steers another tool's use"
    if kind == "removed":
        return "compatible", "text removed"
    if kind == "added":
        return "compatible", "text added"
    return "compatible", "wording changed"


# Annotation hints: (default per the spec, the value that grants more, what granting it means).
_HINTS: Final[dict[str, tuple[bool, bool, str]]] = {
    "readOnlyHint": (False, False, "the tool may now write (readOnlyHint no longer true)"),
    "destructiveHint": (True, True, "the tool may now destroy data (destructiveHint now true)"),
    "idempotentHint": (False, False, "repeated calls may now have further effects (idempotentHint)"),
    "openWorldHint": (True, True, "the tool may now reach outside systems (openWorldHint now true)"),
}


def _annotation(
    rest: tuple[str | int, ...], kind: ChangeKind, old: Any, new: Any, names: Sequence[str]
) -> _Verdict:
    if not rest:
        return "escalation", "annotations replaced by a value that is not an object"
    key = rest[0]
    if key == "title" and len(rest) == 1:
        return _text(kind, old, new, names)
    hint = _HINTS.get(str(key)) if len(rest) == 1 else None
    if hint is None:
        return "compatible", "annotation changed"
    default, granting, meaning = hint
    was = old if kind != "added" and isinstance(old, bool) else default
    now = new if kind != "removed" and isinstance(new, bool) else default
    if kind != "removed" and not isinstance(new, bool):
        return "escalation", f"{key} is not a boolean: hosts read the spec's default"
    if was == now:
        return "cosmetic", f"{key} at the spec's default either way"
    if now == granting:
        return "escalation", meaning
    return "compatible", f"{key}: the tool claims less than before"


def _execution(rest: tuple[str | int, ...], kind: ChangeKind, old: Any, new: Any) -> _Verdict:
    if rest != ("taskSupport",):
        return ("compatible", "execution hint changed") if rest else ("breaking", "execution replaced")
    was = old if kind != "added" else "forbidden"
    now = new if kind != "removed" else "forbidden"
    if was == now:
        return "cosmetic", "taskSupport at the spec's default either way"
    if now == "required":
        return "breaking", "calls now need task support (taskSupport required)"
    return "compatible", "task support changed"


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


def _icons(rest: tuple[str | int, ...], kind: ChangeKind, old: Any, new: Any, old_icons: Any) -> _Verdict:
    known = (
        {_origin(icon.get("src")) for icon in old_icons if isinstance(icon, dict)}
        if isinstance(old_icons, list)
        else set()
    )
    if kind == "removed":
        return "compatible", "icon removed"
    sources: list[Any] = []
    if rest[1:] == ("src",):
        sources = [new]
    elif len(rest) <= 1:
        items = new if isinstance(new, list) else [new]
        sources = [item.get("src") for item in items if isinstance(item, dict)]
    if any(_origin(src) not in known for src in sources):
        return "escalation", "the host now fetches an icon from a new origin"
    return "compatible", "icon changed"


def _headers(rest: tuple[str | int, ...], kind: ChangeKind, old: Any, new: Any) -> _Verdict:
    if not rest:  # the whole map: null (invalid annotations) on one side
        if new is None:
            return "breaking", "the header annotations became invalid: hosts drop the tool"
        return "escalation", "new header annotations: argument values now travel in HTTP headers"
    if kind == "removed":
        return "compatible", "an argument no longer travels in an HTTP header"
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
        return "compatible", "an output member is now guaranteed (required)"
    if after - before:
        return "escalation", "new required argument: every call must now send it"
    return "compatible", "an argument is no longer required"


def _schema(
    field: str,
    rest: tuple[str | int, ...],
    kind: ChangeKind,
    old: Any,
    new: Any,
    names: Sequence[str],
    old_view: Mapping[str, Any],
) -> _Verdict:
    output = field == "outputSchema"
    if not rest:
        if output:
            if kind == "added":
                return "compatible", "output schema now declared"
            if kind == "removed":
                return "breaking", "output schema removed: consumers lose its guarantee"
        return ("breaking", "schema replaced") if output else ("escalation", "input schema replaced")
    path, keyword, below = _split_schema(rest)
    if keyword in _TEXT_KEYWORDS and not below:
        return _text(kind, old, new, names)
    if keyword == "x-mcp-header":
        if kind == "removed":
            return "compatible", "an argument no longer travels in an HTTP header"
        return "escalation", "new header annotation: an argument's value now travels in an HTTP header"
    if keyword == "default":
        if not output and (isinstance(old, bool) or isinstance(new, bool)):
            return "escalation", "the default of a switch changed"
        return "compatible", "default changed"
    if keyword == "required" and not below:
        return _required(kind, old, new, output)
    if keyword == "properties" and not below:
        if kind == "removed":
            return (
                ("breaking", "every property removed")
                if not output
                else ("breaking", "output properties removed")
            )
        return "compatible", "properties declared"
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
        return "compatible", f"{keyword} changed (an annotation: no effect on validation)"
    what, reason = effect
    if what == "neutral":
        return ("cosmetic", reason) if reason == "order" else ("compatible", reason)
    if output:
        if what == "narrow":
            return "compatible", f"output {reason}: consumers get less than they may expect"
        return "breaking", f"output {reason}: consumers may get what they did not expect"
    if what == "narrow":
        return "breaking", f"{reason}: arguments that were valid may now be refused"
    return "escalation", f"{reason}: the tool now accepts arguments it refused"


def _classify(raw: _Raw, names: Sequence[str], old_view: Mapping[str, Any]) -> _Verdict:
    field = str(raw.parts[0])
    rest = raw.parts[1:]
    if field in ("title", "description") and not rest:
        return _text(raw.kind, raw.old, raw.new, names)
    if field == "annotations":
        return _annotation(rest, raw.kind, raw.old, raw.new, names)
    if field == "execution":
        return _execution(rest, raw.kind, raw.old, raw.new)
    if field == "_meta":
        return _meta(rest, raw.kind) if rest else ("escalation", "_meta replaced")
    if field == "icons":
        return _icons(rest, raw.kind, raw.old, raw.new, old_view.get("icons"))
    if field == "headers":
        return _headers(rest, raw.kind, raw.old, raw.new)
    if field in ("inputSchema", "outputSchema"):
        return _schema(field, rest, raw.kind, raw.old, raw.new, names, old_view)
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

    ``other_names``: the other tools' names (text that starts steering one of them is an escalation).
    ``set_aside``: top-level fields not compared (a rename sets aside ``name``, and ``title`` when it
    only spells the name). Pure; cost linear in the views' size (arrays are aligned with difflib, which
    is quadratic in the length of one array at worst, bounded by the descriptor bounds of Admit).
    """
    names = other_names if isinstance(other_names, list | tuple) else list(other_names)
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
            severity, reason = _classify(raw, names, old_view)
            words: tuple[WordEdit, ...] = ()
            if (
                raw.kind == "changed"
                and isinstance(raw.old, str)
                and isinstance(raw.new, str)
                and raw.parts[-1] in _TEXT_KEYWORDS
            ):
                words = word_diff(raw.old, raw.new)
            changes.append(
                ContractChange(json_pointer(raw.parts), raw.kind, raw.old, raw.new, severity, reason, words)
            )
    return tuple(changes)
