"""The one JSON Schema module every gate uses: dialects, offline references, compile + cache, failures.

Admit (:mod:`._admission`), Invoke (:mod:`._validation`), Execute (the server's argument check and
:mod:`._headers`' annotation reader) and Consume (:mod:`._results`) all reach JSON Schema through this
module, so a schema means the same thing at every gate: one dialect table, one offline registry, one
compiled-validator cache, one schema walker and one set of failure categories.

**Dialects** (SEP-1613). A schema without ``$schema`` is 2020-12, the MCP default. A schema may declare
another dialect; the five in :data:`DIALECTS` are supported, each validated with its *own* meta-schema
and instance semantics (draft-04: boolean ``exclusiveMaximum``/``exclusiveMinimum``, ``id``; draft-04 to
draft-07: a ``$ref`` makes its sibling keywords ignored; ``definitions`` vs ``$defs``; array-form
``items`` + ``additionalItems`` before 2020-12, ``prefixItems`` after; ``dependencies`` before 2019-09;
``$recursiveRef`` in 2019-09, ``$dynamicRef`` in 2020-12). ``$schema`` must be the dialect's canonical
URI, with or without its empty fragment ``#``; anything else (another spelling such as ``https://`` for
draft-07, a custom meta-schema, a non-string) is ``unsupported_dialect``. A document mixing dialects (an
embedded ``$schema`` that differs from the root's) is refused as ``unsupported_dialect`` too: fail closed
rather than guess how the two engines would scope it. Which of the five a host accepts is its policy
(:class:`~agent_connector_sdk.core.contracts._admission.AdmissionPolicy` ``dialects``), applied through
:func:`check_schema`'s ``dialects``.

**Two engines, one verdict.** The *schema* is checked once, at compile time, by python-jsonschema (the
dialect's ``check_schema``) and the ``referencing`` library; *instances* are then validated by
``jsonschema_rs`` with the validator class of the same dialect (picked here from the dialect table, never
guessed by either engine from ``$schema``), chosen by benchmark (``python -m bench.validator_choice``:
several times faster per call). ``tests/core/contracts/test_validator_engines.py`` checks that both engines
agree on validity in every dialect.

**Offline references.** The registry **never retrieves anything**: the only documents a ``$ref`` can
reach are the schema itself (its ``$defs``/``definitions``, anchors and embedded ``$id``/``id``
resources) and the official meta-schemas bundled with ``jsonschema-specifications``. A ``$ref`` to any
other URI is a typed refusal (``unresolvable_ref``), never a fetch. Every ``$ref`` (and ``$dynamicRef``
in 2020-12, ``$recursiveRef`` in 2019-09) at any schema position is resolved once when the schema is
compiled, so an unresolvable reference in a branch the instance never takes — or beside a draft-07
``$ref`` that ignores it — is refused too (fail closed). The Rust validator is built with a
``retriever`` that refuses every URI as well.

``format`` is an annotation, not an assertion, in every dialect (``validate_formats=False``): format
checks differ between implementations and, in python-jsonschema, depend on optional packages, so
asserting them would let a client and a server disagree about the same arguments.

Where the engines differ (documented, pinned by tests):

* ``pattern`` / ``patternProperties`` are ECMA-262 regular expressions with the ``u`` flag, as JSON
  Schema specifies, never Python's ``re``: ``\\p{L}``, named groups ``(?<year>\\d{4})`` and ``\\u{…}``
  are accepted; ``\\d`` and ``\\w`` match ASCII only and ``\\s`` every ECMA white space (U+00A0,
  U+FEFF, U+2028 ...). Whether a pattern is valid is decided by ``regress`` (a Rust implementation of
  ECMA-262 regexes, the one python-jsonschema's ``regex`` format uses), and the validator's engine must
  compile it too: a pattern either refuses (``\\Z``, ``(?P<name>…)``, ``(?i)``, ``a{,3}``, an identity
  escape such as ``\\-`` outside a class) is refused as ``invalid_schema`` at every gate. Matching
  is the engine's (``tests/core/contracts/test_ecma_patterns.py`` pins both engines' answers).
* ``multipleOf`` with a fractional divisor is decided exactly (``0.3`` is a multiple of ``0.1``).
* Python values beyond JSON: a ``tuple`` counts as an array; ``inf``/``nan`` are not numbers; a value
  the engine cannot read as JSON is refused as "not JSON data" where a keyword inspects it.
* Reported keyword names follow the engine (``falseSchema``, ``required`` for ``dependentRequired``,
  ``contains`` for ``minContains``/``maxContains``).
* Depth: for a schema with references (the only way validation can recurse as deep as the instance),
  an instance nested deeper than :data:`MAX_INSTANCE_DEPTH` containers is refused before the Rust
  engine sees it, because deep recursion there overflows the native stack.
* Which failure is reported when several keywords fail: a heuristic modelled on python-jsonschema's
  ``best_match``. Validity never depends on it.

**Admission screen.** :func:`screen_schemas` clears the schemas a host admits without compiling them:
one Rust pass per schema against the dialect's meta-schema with formats asserted (a ``regex`` must be
valid ECMA-262 and compile in the engine), for schemas whose exact bytes hold no reference or identifier
keyword. It only ever answers "certainly accepted" (differentially tested against :func:`check_schema`);
anything else takes the full check. A screened schema's validator is compiled, and cached, when a call
first needs it: compiling every schema of a 1,223-tool catalog was most of a cold admission.

**Cache.** Compiled validators live in a bounded LRU keyed by the SHA-256 of the schema's canonical JSON
text; per-call lookups go through a cheaper exact key first (:func:`exact_value_key`). Schema refusals
are cached as well, so a hostile schema costs one compilation. The dialect is part of the schema's
content, so one key can never stand for two dialects.

**Failures.** :class:`SchemaFailure` ``kind`` is ``instance`` or one of :data:`SCHEMA_FAILURE_KINDS`
(``invalid_schema``, ``unsupported_dialect``, ``unresolvable_ref``), and every gate reports a schema
failure under exactly that category. (Compatibility: before this module, Admit reported an invalid
schema as ``malformed`` and Consume as ``invalid_output_schema``; both are now ``invalid_schema``.)
Messages name keywords and JSON pointers, never values.
"""

from __future__ import annotations

import functools
import hashlib
import json
import marshal
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, cast

import jsonschema  # type: ignore[import-untyped]
import jsonschema_rs
import referencing.exceptions
import regress
from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
from jsonschema_specifications import REGISTRY as _METASCHEMAS  # type: ignore[import-untyped]
from referencing import Registry, Resource, Specification
from referencing import jsonschema as referencing_jsonschema

from agent_connector_sdk.core.contracts._pointers import json_pointer
from agent_connector_sdk.core.contracts.errors import AdmissionError

__all__ = [
    "ALL_DIALECTS",
    "DEFAULT_DIALECT",
    "DIALECTS",
    "DRAFT_2020_12",
    "MAX_INSTANCE_DEPTH",
    "MAX_SCHEMA_DEPTH",
    "SCHEMA_FAILURE_KINDS",
    "VALIDATOR_CACHE_SIZE",
    "Dialect",
    "DialectName",
    "FailureKind",
    "SchemaFailure",
    "SchemaKey",
    "SchemaPosition",
    "ValidatorCache",
    "check_schema",
    "clear_validator_cache",
    "default_validator_cache",
    "dialect_of",
    "ecma_regex_valid",
    "exact_value_key",
    "iter_schema_positions",
    "validate_instance",
    "validate_keyed",
]

DialectName = Literal["draft-04", "draft-06", "draft-07", "2019-09", "2020-12"]
FailureKind = Literal["instance", "invalid_schema", "unsupported_dialect", "unresolvable_ref"]

SCHEMA_FAILURE_KINDS: Final[frozenset[str]] = frozenset(
    {"invalid_schema", "unsupported_dialect", "unresolvable_ref"}
)
"""The categories every gate uses for a schema it cannot evaluate (the schema's fault, not the value's)."""

DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"
"""The MCP default dialect (an absent ``$schema`` means this one)."""

VALIDATOR_CACHE_SIZE: Final = 256
"""Default bound of the process-wide compiled-validator cache (entries, least recently used evicted)."""

MAX_INSTANCE_DEPTH: Final = 200
"""Deepest container nesting validated against a schema that can recurse (it has references).

The same bound as pydantic-core's JSON parser, so nothing parsed from the wire is refused by it."""

MAX_SCHEMA_DEPTH: Final = 512
"""Deepest schema position (in JSON-pointer segments) the walker accepts."""


@dataclass(frozen=True, slots=True)
class Dialect:
    """One supported JSON Schema dialect and how both engines evaluate it.

    ``ref_overrides_siblings``: a ``$ref`` makes every other keyword of its schema object ignored
    (draft-04 to draft-07). ``reference_keywords``: the keywords that reference another schema.
    """

    name: DialectName
    uri: str
    python_validator: Any  # a jsonschema validator class (the library is untyped)
    rust_validator: Any  # a jsonschema_rs validator class
    specification: Specification[Any]
    ref_overrides_siblings: bool
    reference_keywords: tuple[str, ...]


DIALECTS: Final[Mapping[DialectName, Dialect]] = {
    dialect.name: dialect
    for dialect in (
        Dialect(
            "draft-04",
            "http://json-schema.org/draft-04/schema",
            jsonschema.Draft4Validator,
            jsonschema_rs.Draft4Validator,
            referencing_jsonschema.DRAFT4,
            True,
            ("$ref",),
        ),
        Dialect(
            "draft-06",
            "http://json-schema.org/draft-06/schema",
            jsonschema.Draft6Validator,
            jsonschema_rs.Draft6Validator,
            referencing_jsonschema.DRAFT6,
            True,
            ("$ref",),
        ),
        Dialect(
            "draft-07",
            "http://json-schema.org/draft-07/schema",
            jsonschema.Draft7Validator,
            jsonschema_rs.Draft7Validator,
            referencing_jsonschema.DRAFT7,
            True,
            ("$ref",),
        ),
        Dialect(
            "2019-09",
            "https://json-schema.org/draft/2019-09/schema",
            jsonschema.Draft201909Validator,
            jsonschema_rs.Draft201909Validator,
            referencing_jsonschema.DRAFT201909,
            False,
            ("$ref", "$recursiveRef"),
        ),
        Dialect(
            "2020-12",
            DRAFT_2020_12,
            jsonschema.Draft202012Validator,
            jsonschema_rs.Draft202012Validator,
            referencing_jsonschema.DRAFT202012,
            False,
            ("$ref", "$dynamicRef"),
        ),
    )
}
"""The supported dialects by name. ``uri`` is the canonical ``$schema`` (``#`` optional)."""

ALL_DIALECTS: Final[frozenset[DialectName]] = frozenset(DIALECTS)
DEFAULT_DIALECT: Final = DIALECTS["2020-12"]

_BY_URI: Final[Mapping[str, Dialect]] = {
    spelling: dialect for dialect in DIALECTS.values() for spelling in (dialect.uri, dialect.uri + "#")
}
_ANY_REFERENCE: Final = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})


def dialect_of(schema: Any) -> Dialect | None:
    """The dialect ``schema`` declares at its root: 2020-12 when there is no ``$schema`` (or the schema
    is a boolean), ``None`` when ``$schema`` is anything but a supported dialect's canonical URI."""
    if not isinstance(schema, Mapping) or "$schema" not in schema:
        return DEFAULT_DIALECT
    declared = schema["$schema"]
    return _BY_URI.get(declared) if isinstance(declared, str) else None


# ------------------------------------------------------------------------------------------ walker

# Keywords whose values are subschemas, by shape: the union over the five dialects (entering a keyword a
# dialect does not know only means looking at more places, which every caller treats conservatively).
# Data keywords (`const`, `enum`, `default`, `examples`) are never entered, and `$ref` is never followed.
_SUBSCHEMA_SINGLE: Final = frozenset(
    {
        "additionalItems",
        "additionalProperties",
        "contains",
        "contentSchema",
        "else",
        "if",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_SUBSCHEMA_LIST: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SUBSCHEMA_MAP: Final = frozenset({"$defs", "definitions", "dependentSchemas", "patternProperties"})
# `items` is one schema or (before 2020-12) an array of them; `dependencies` maps to a schema or (as
# `dependentRequired` later) an array of names.
_ITEMS: Final = "items"
_DEPENDENCIES: Final = "dependencies"


@dataclass(frozen=True, slots=True)
class SchemaPosition:
    """One schema position found by :func:`iter_schema_positions`.

    ``parts`` (the pointer's segments) and ``pointer`` locate it in the schema; ``properties_path`` is
    the chain of ``properties`` keys from the root, or ``None`` once any other keyword (``items``,
    ``oneOf``, ``$defs``, ...) has been crossed or
    the position is ignored. ``ignored`` is true when the dialect never evaluates it: it sits beside a
    ``$ref`` (draft-04 to draft-07), or below such a position.
    """

    parts: tuple[str, ...]
    properties_path: tuple[str, ...] | None
    schema: Mapping[str, Any]
    ignored: bool = False

    @property
    def pointer(self) -> str:
        # Spelled on demand: most walks only look for a keyword and name the place when they refuse
        # (spelling every position's pointer was a large share of a cold admission).
        return json_pointer(self.parts)


def iter_schema_positions(
    schema: Any, *, dialect: Dialect | None = None, max_depth: int = MAX_SCHEMA_DEPTH
) -> Iterator[SchemaPosition]:
    """Every schema object in ``schema``, in document order, with an explicit stack (no recursion).

    ``dialect`` defaults to the one the root declares (:func:`dialect_of`; an unknown one is walked like
    2020-12). Only subschema keywords are entered (never data keywords, never through ``$ref``). In a
    dialect where ``$ref`` overrides its siblings, the siblings are still walked but marked ``ignored``.
    A position more than ``max_depth`` pointer segments deep raises :class:`AdmissionError`
    (``invalid_schema``): the spec asks implementations to bound composition cost.
    """
    if dialect is None:
        dialect = dialect_of(schema) or DEFAULT_DIALECT
    overrides = dialect.ref_overrides_siblings
    stack: list[tuple[tuple[str, ...], tuple[str, ...] | None, Any, bool]] = [((), (), schema, False)]
    while stack:
        parts, path, node, ignored = stack.pop()
        if type(node) is not dict and not isinstance(node, Mapping):  # (a dict first: no ABC check)
            continue
        if len(parts) > max_depth:
            raise AdmissionError("invalid_schema", f"schema nests deeper than {max_depth} keywords")
        node = cast(Mapping[str, Any], node)
        yield SchemaPosition(parts, None if ignored else path, node, ignored)
        below_ignored = ignored or (overrides and "$ref" in node)
        children: list[tuple[tuple[str, ...], tuple[str, ...] | None, Any, bool]] = []
        for keyword, sub in node.items():
            if keyword == "properties" and isinstance(sub, Mapping):
                for name, child in cast(Mapping[str, Any], sub).items():
                    child_path = None if path is None else (*path, name)
                    children.append(((*parts, keyword, name), child_path, child, below_ignored))
            elif keyword in _SUBSCHEMA_SINGLE:
                children.append(((*parts, keyword), None, sub, below_ignored))
            elif keyword == _ITEMS:
                if isinstance(sub, list):
                    children.extend(
                        ((*parts, keyword, str(i)), None, child, below_ignored) for i, child in enumerate(sub)
                    )
                else:
                    children.append(((*parts, keyword), None, sub, below_ignored))
            elif keyword in _SUBSCHEMA_LIST and isinstance(sub, list):
                children.extend(
                    ((*parts, keyword, str(i)), None, child, below_ignored) for i, child in enumerate(sub)
                )
            elif (keyword in _SUBSCHEMA_MAP or keyword == _DEPENDENCIES) and isinstance(sub, Mapping):
                # (A `dependencies` array of names is not a Mapping, so it is skipped by the stack.)
                children.extend(
                    ((*parts, keyword, name), None, child, below_ignored)
                    for name, child in cast(Mapping[str, Any], sub).items()
                )
        stack.extend(reversed(children))


# ------------------------------------------------------------------------------------------ failures


@dataclass(frozen=True, slots=True)
class SchemaFailure:
    """Why an instance was not accepted, free of any instance value.

    ``kind`` is ``"instance"`` when the schema is usable and the instance breaks it; otherwise the schema
    itself is refused (one of :data:`SCHEMA_FAILURE_KINDS`). ``path`` is a JSON pointer into the
    instance (``""`` for the root); ``keyword`` the failing schema keyword.
    """

    kind: FailureKind
    keyword: str
    path: str
    message: str


def _schema_failure(kind: FailureKind, keyword: str, message: str) -> SchemaFailure:
    return SchemaFailure(kind, keyword, "", message)


_TOO_DEEP_SCHEMA: Final = _schema_failure("invalid_schema", "", "schema is nested too deeply")


# ------------------------------------------------------------------------------------------ references


class _RetrievalRefused(Exception):
    """Raised by the registry's retrieve hook; referencing wraps it into ``Unretrievable``."""


def _refuse_retrieval(uri: str) -> Resource[Any]:
    # The whole point: an unknown URI is an error, never a reason to open a URL or a file.
    raise _RetrievalRefused(uri)


# Local-only registry combined with the bundled meta-schemas (no I/O). Passing it explicitly also
# matters: without a registry python-jsonschema falls back to one that *does* fetch over HTTP.
_OFFLINE_REGISTRY: Final[Registry[Any]] = _METASCHEMAS.combine(
    Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]
)


def _nearest(resolvers: Mapping[str, Any], pointer: str) -> Any:
    # Ancestors are visited before descendants, so trimming segments always reaches a recorded one.
    while pointer not in resolvers:
        pointer = pointer.rsplit("/", 1)[0] if "/" in pointer else ""
    return resolvers[pointer]


def _check_dialects_and_refs(schema: Any, dialect: Dialect) -> SchemaFailure | None:
    """Refuse mixed dialects and resolve every reference statically, offline, at every position."""
    spec = dialect.specification
    root = spec.create_resource(schema)
    # (referencing.Resolver is not re-exported publicly, hence Any.)
    resolvers: dict[str, Any] = {}
    root_resolver = _OFFLINE_REGISTRY.resolver_with_root(root)
    for position in iter_schema_positions(schema, dialect=dialect):
        contents = position.schema
        pointer = position.pointer
        if pointer == "":
            resolver = root_resolver
        else:
            parent = _nearest(resolvers, pointer.rsplit("/", 1)[0])
            # Relative references resolve against the nearest enclosing `$id`/`id` (as the dialect scopes
            # it: legacy drafts ignore an `$id` beside `$ref`).
            resolver = parent.in_subresource(spec.create_resource(contents))
        resolvers[pointer] = resolver
        if pointer and "$schema" in contents and dialect_of(contents) is not dialect:
            where = pointer
            return _schema_failure(
                "unsupported_dialect",
                "$schema",
                f"'$schema' at '{where}' differs from the root's {dialect.name} (mixed dialects are refused)",
            )
        for keyword in dialect.reference_keywords:
            reference = contents.get(keyword)
            if reference is None:
                continue
            where = f"{pointer}/{keyword}"
            if not isinstance(reference, str):
                return _schema_failure("invalid_schema", keyword, f"'{where}' must be a string")
            try:
                resolver.lookup(reference)
            except referencing.exceptions.Unresolvable:
                return _schema_failure(
                    "unresolvable_ref",
                    keyword,
                    f"'{where}' does not resolve inside the schema (remote references are never fetched)",
                )
    return None


def _refuse_rs_retrieval(uri: str) -> Any:
    # jsonschema_rs calls this for any URI its own registry lacks; refusing makes compilation fail.
    raise _RetrievalRefused(uri)


def _has_reference(schema: Any, dialect: Dialect) -> bool:
    """Whether any schema position holds a reference keyword (of any dialect: conservative)."""
    return any(_ANY_REFERENCE.intersection(p.schema) for p in iter_schema_positions(schema, dialect=dialect))


# ------------------------------------------------------------------------------------------ compile


class _Compiled:
    __slots__ = ("dialect", "failure", "guard_depth", "validator")

    def __init__(
        self,
        validator: jsonschema_rs.Validator | None,
        failure: SchemaFailure | None,
        dialect: Dialect | None = None,
        guard_depth: bool = False,
    ) -> None:
        self.validator = validator
        self.failure = failure
        self.dialect = dialect
        # Only a schema with references can make validation recurse as deep as the instance.
        self.guard_depth = guard_depth


def _refused(failure: SchemaFailure, dialect: Dialect | None = None) -> _Compiled:
    return _Compiled(None, failure, dialect)


_ECMA_FLAGS: Final = "u"
"""ECMA-262's Unicode mode, which JSON Schema asks for: ``\\p{…}`` and ``\\u{…}`` are understood and
Annex B's leniency (``\\Z`` read as ``Z``, ``a{,3}`` as literal text) is refused."""


def ecma_regex_valid(pattern: str) -> bool:
    """Whether ``pattern`` is a valid ECMA-262 regular expression (``u`` flag), as ``regress`` parses it.
    Parsing is linear and bounded by ``regress`` (it refuses absurd nesting instead of recursing)."""
    try:
        regress.Regex(pattern, _ECMA_FLAGS)
    except regress.RegressError:
        return False
    return True


def _pattern_failure(schema: Any, dialect: Dialect) -> SchemaFailure | None:
    """The first ``pattern`` or ``patternProperties`` key, at any schema position, that is not valid
    ECMA-262 (the engine's own compilation then checks that it can run it)."""
    for position in iter_schema_positions(schema, dialect=dialect):
        node = position.schema
        pattern = node.get("pattern")
        if isinstance(pattern, str) and not ecma_regex_valid(pattern):
            return _schema_failure(
                "invalid_schema",
                "pattern",
                f"'{position.pointer}/pattern' is not an ECMA-262 regular expression (u flag)",
            )
        keyed = node.get("patternProperties")
        if isinstance(keyed, Mapping):
            for key in keyed:
                if isinstance(key, str) and not ecma_regex_valid(key):
                    return _schema_failure(
                        "invalid_schema",
                        "patternProperties",
                        f"a key of '{position.pointer}/patternProperties' is not an ECMA-262 regular "
                        "expression (u flag)",
                    )
    return None


def _rust_meta_valid(schema: Any) -> bool:
    """Whether jsonschema_rs finds ``schema`` valid against its ``$schema`` meta-schema (2020-12 when
    absent, as here); ``False`` whenever it cannot say (the python-jsonschema check then decides)."""
    try:
        if not jsonschema_rs.meta.is_valid(schema):
            return False
        # What python-jsonschema's meta check adds: its format checker parses every regex (with
        # `regress`, as ECMA-262; our policy refuses a pattern either engine cannot compile). One walk
        # over every object, data included: a superset of the schema positions, so a "pattern" string in,
        # say, a `default` that is no regex only sends the schema to the exact check, never lets one
        # through.
        stack: list[Any] = [schema]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                pattern = node.get("pattern")
                if type(pattern) is str and not ecma_regex_valid(pattern):
                    return False
                keyed = node.get("patternProperties")
                if isinstance(keyed, dict) and not all(
                    isinstance(key, str) and ecma_regex_valid(key) for key in keyed
                ):
                    return False
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    except Exception:  # an engine refusal of any kind, a bad regex, a deep schema: not a verdict
        return False
    return True


def _compile(schema: Any) -> _Compiled:
    if not isinstance(schema, (Mapping, bool)):
        return _refused(_schema_failure("invalid_schema", "", "a schema must be an object or boolean"))
    dialect = dialect_of(schema)
    if dialect is None:
        return _refused(
            _schema_failure(
                "unsupported_dialect", "$schema", "'$schema' is not a supported JSON Schema dialect"
            )
        )
    try:
        # Meta-schema check: jsonschema_rs's first (~50x faster at GitHub size; it asserts ``format:
        # regex`` as ECMA-262, which the JSON Schema spec names). Only when it refuses does the
        # python-jsonschema check run, for the keyword and path it reports (the verdict is unchanged:
        # a schema it passes still meets the engine's own check below).
        if not _rust_meta_valid(schema):
            dialect.python_validator.check_schema(schema)
    except SchemaError as err:
        where = json_pointer(list(err.absolute_path))
        return _refused(
            _schema_failure(
                "invalid_schema",
                str(err.validator),
                f"schema is not valid {dialect.name} at '{where}' ({err.validator} keyword)",
            ),
            dialect,
        )
    except RecursionError:
        return _refused(_TOO_DEEP_SCHEMA, dialect)
    try:
        # ECMA-262, not whatever the engine (or python-jsonschema's Annex B reading) would also take.
        failure = _pattern_failure(schema, dialect) or _check_dialects_and_refs(schema, dialect)
        guard_depth = _has_reference(schema, dialect)
    except (RecursionError, AdmissionError):
        failure, guard_depth = _TOO_DEEP_SCHEMA, False
    except (referencing.exceptions.Unresolvable, referencing.exceptions.CannotDetermineSpecification):
        failure, guard_depth = (
            _schema_failure("unresolvable_ref", "$ref", "schema references do not resolve offline"),
            False,
        )
    if failure is not None:
        return _refused(failure, dialect)
    try:
        validator = dialect.rust_validator(
            schema if isinstance(schema, bool) else dict(schema),
            validate_formats=False,
            retriever=_refuse_rs_retrieval,
        )
    except jsonschema_rs.ValidationError as err:
        if isinstance(err.kind, jsonschema_rs.ValidationErrorKind.Referencing):
            return _refused(
                _schema_failure("unresolvable_ref", "$ref", "schema references do not resolve offline"),
                dialect,
            )
        # The engine checks the schema against the dialect's meta-schema itself, asserting ``format:
        # regex`` with ECMA-262 syntax: a Python-only pattern (``\Z``, ``(?P=name)``) lands here.
        where = json_pointer(err.instance_path)
        keyword = err.kind.name
        return _refused(
            _schema_failure(
                "invalid_schema", keyword, f"schema is invalid at '{where}' ({keyword}, jsonschema_rs)"
            ),
            dialect,
        )
    except (ValueError, jsonschema_rs.ReferencingError):
        # Backstop for what check_schema lets through but the engine refuses.
        return _refused(_schema_failure("invalid_schema", "", "schema is refused by the validator"), dialect)
    return _Compiled(validator, None, dialect, guard_depth)


def _canonical_key(schema: Any) -> str | None:
    """SHA-256 of the canonical JSON text, or ``None`` when the schema is not JSON at all."""
    try:
        text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def exact_value_key(value: Any) -> bytes | None:
    """Bytes that determine ``value`` exactly (built-in JSON-ish types only), or ``None``.

    ``marshal`` (format 2: no back-references) writes each object with its type, so ``True``, ``1`` and
    ``1.0`` differ, as do key orders: equal bytes mean an equal value of the same types (they decode back
    to it), so a cache keyed by them can never hand out an entry built for other content — a schema edited
    in place simply misses. Equal content may still yield different bytes (key order, string interning);
    that only costs a cache miss. About 6x cheaper than the canonical JSON digest, which matters because
    it runs on every call. Objects marshal cannot write (subclasses, custom types, cycles, excessive
    depth) give ``None``.
    """
    try:
        return marshal.dumps(value, 2)
    except (ValueError, TypeError):
        return None


@dataclass(frozen=True, slots=True)
class SchemaKey:
    """A schema held as its :func:`exact_value_key` bytes, for a gate that checks against it many times.

    The bytes are the schema: they are immutable, determine its value exactly (types included, so
    ``1``, ``1.0`` and ``True`` differ), and a validator cache miss compiles a copy decoded from them,
    never an object someone else holds. So a tool admitted once pays for serializing its schema once,
    not on every call (``marshal`` of GitHub's larger output schemas costs a millisecond and more), and
    the cache stays exactly as discriminating as when it is given the schema itself. Make one with
    :meth:`of`.
    """

    exact: bytes

    @classmethod
    def of(cls, schema: Any) -> SchemaKey | None:
        """The key of ``schema`` as it is now, or ``None`` when :func:`exact_value_key` cannot encode it
        (then validate the schema itself)."""
        exact = exact_value_key(schema)
        return None if exact is None else cls(exact)


class ValidatorCache:
    """Thread-safe LRU of compiled validators keyed by canonical schema digest, bounded by ``maxsize``.

    A second LRU of the same bound maps :func:`exact_value_key` bytes to digest keys, so the per-call
    lookup skips the canonical JSON serialization and hash; a miss there (or an entry evicted meanwhile)
    falls back to the digest. Recency is tracked on the digest entries either way.
    """

    def __init__(self, maxsize: int = VALIDATOR_CACHE_SIZE) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[str, _Compiled] = OrderedDict()
        self._exact: OrderedDict[bytes, str] = OrderedDict()  # exact key -> digest key
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, schema: object) -> bool:
        key = _canonical_key(schema)
        return key is not None and key in self._entries

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._exact.clear()
            self.hits = self.misses = 0

    def _get(self, schema: Any) -> _Compiled:
        return self._get_exact(schema, exact_value_key(schema))

    def _get_keyed(self, key: SchemaKey) -> _Compiled:
        """The validator for the schema ``key`` holds: a hit costs no serialization of the schema; a
        miss decodes a fresh copy from the key's bytes, so what is compiled is exactly what they say."""
        with self._lock:
            digest = self._exact.get(key.exact)
            entry = self._entries.get(digest) if digest is not None else None
            if entry is not None and digest is not None:
                self._exact.move_to_end(key.exact)
                self._entries.move_to_end(digest)
                self.hits += 1
                return entry
        return self._get_exact(marshal.loads(key.exact), key.exact)

    def _get_exact(self, schema: Any, exact: bytes | None) -> _Compiled:
        """``exact``: :func:`exact_value_key` of ``schema`` (or bytes decoding to a value equal to it in
        type and content), or ``None``."""
        if exact is not None:
            with self._lock:
                digest = self._exact.get(exact)
                entry = self._entries.get(digest) if digest is not None else None
                if entry is not None and digest is not None:
                    self._exact.move_to_end(exact)
                    self._entries.move_to_end(digest)
                    self.hits += 1
                    return entry
        key = _canonical_key(schema)
        if key is None:
            return _refused(_schema_failure("invalid_schema", "", "schema is not valid JSON data"))
        entry = self._get_by_digest(schema, key)
        if exact is not None:
            with self._lock:
                self._exact[exact] = key
                self._exact.move_to_end(exact)
                while len(self._exact) > self.maxsize:
                    self._exact.popitem(last=False)
        return entry

    def _get_by_digest(self, schema: Any, key: str) -> _Compiled:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return entry
            self.misses += 1
        # Compile outside the lock: a slow schema must not block other callers (a rare double
        # compile of the same schema is harmless).
        entry = _compile(schema)
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
        return entry


_DEFAULT_CACHE: Final = ValidatorCache()


def default_validator_cache() -> ValidatorCache:
    """The process-wide cache used when no ``cache`` is passed."""
    return _DEFAULT_CACHE


def clear_validator_cache() -> None:
    """Empty the process-wide cache and the admission screen's regex memo (tests, benchmarks of a cold
    start, or after unloading many tools)."""
    _DEFAULT_CACHE.clear()
    _regex_usable_memo.cache_clear()


# ------------------------------------------------------------------------------------------ validate

_WEAK_KEYWORDS: Final = frozenset({"anyOf", "oneOf"})


def _relevance(error: jsonschema_rs.ValidationError) -> tuple[int, bool]:
    # Like python-jsonschema's best_match key: shallower failures first, then not a weak combinator.
    return (-len(error.instance_path), error.kind.name not in _WEAK_KEYWORDS)


def _branch_errors(error: jsonschema_rs.ValidationError) -> list[jsonschema_rs.ValidationError]:
    kind = error.kind
    if isinstance(
        kind,
        (
            jsonschema_rs.ValidationErrorKind.AnyOf,
            jsonschema_rs.ValidationErrorKind.OneOfNotValid,
        ),
    ):
        return [branch_error for branch in kind.context for branch_error in branch]
    return []


def _best(errors: list[jsonschema_rs.ValidationError]) -> jsonschema_rs.ValidationError:
    """The most relevant failure; inside a failed ``anyOf``/``oneOf``, the clearly most specific one."""
    best = max(errors, key=_relevance)
    while context := _branch_errors(best):
        # Descend while a single branch error is the most specific (deepest), as best_match does.
        ranked = sorted(context, key=_relevance)
        if len(ranked) >= 2 and _relevance(ranked[0]) == _relevance(ranked[1]):
            break
        best = ranked[0]
    return best


def _describe(error: jsonschema_rs.ValidationError) -> SchemaFailure:
    """Turn the engine's error into a value-free failure (its own ``message`` quotes the value)."""
    keyword = error.kind.name
    parts: list[object] = list(error.instance_path)
    if isinstance(error.kind, jsonschema_rs.ValidationErrorKind.Required):
        # Point at the missing member: the *name* comes from the schema, so it is safe to show. There is
        # no value to fail a keyword: say it is missing.
        parts.append(error.kind.property)
        path = json_pointer(parts)
        return SchemaFailure("instance", keyword, path, f"'{path}' is missing (schema keyword '{keyword}')")
    path = json_pointer(parts)
    return SchemaFailure("instance", keyword, path, f"value at '{path}' fails schema keyword '{keyword}'")


def _too_deep(instance: Any, limit: int) -> bool:
    """Whether containers nest deeper than ``limit`` (iterative: a cyclic value is simply too deep)."""
    if not isinstance(instance, (dict, list, tuple)):
        return False
    stack: list[tuple[Any, int]] = [(instance, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, (dict, list, tuple)):
                stack.append((child, depth + 1))
    return False


_TOO_DEEP: Final = SchemaFailure("instance", "", "", "value is nested too deeply to validate")
_NOT_JSON: Final = SchemaFailure("instance", "", "", "value is not JSON data")


def check_schema(
    schema: Any, *, dialects: Iterable[DialectName] | None = None, cache: ValidatorCache | None = None
) -> SchemaFailure | None:
    """Compile ``schema`` as :func:`validate_instance` would (cached) and return why it cannot be used.

    ``None`` means every instance check against it will run. ``dialects`` (default: all five) is the set
    a caller accepts: a valid schema of another supported dialect is ``unsupported_dialect`` for it.
    Admission calls this (for whatever :func:`screen_schemas` cannot clear) so that a tool it admits can
    always be validated by the later gates.
    """
    compiled = (_DEFAULT_CACHE if cache is None else cache)._get(schema)
    if compiled.failure is not None:
        return compiled.failure
    if dialects is None or compiled.dialect is None:
        return None
    allowed = dialects if isinstance(dialects, (set, frozenset)) else frozenset(dialects)
    if compiled.dialect.name not in allowed:
        return _schema_failure(
            "unsupported_dialect",
            "$schema",
            f"schema dialect {compiled.dialect.name} is not accepted by this policy",
        )
    return None


# ------------------------------------------------------------------------------------------ screen

SCREEN_MAX_DEPTH: Final = 128
"""Deepest JSON nesting :func:`screen_schemas` accepts as a precondition (its engine recurses per level)."""

# Any keyword that makes compilation register an identifier or resolve a reference starts with one of
# these (``$ref``, ``$dynamicRef``/``$dynamicAnchor``, ``$recursiveRef``/``$recursiveAnchor``, ``$id``,
# ``$anchor``, ``$vocabulary``); draft-04's ``id`` is why draft-04 never takes the screen.
_SCREEN_REFUSES: Final = re.compile(rb"\$(?:ref|dynamic|recursive|id|anchor|vocabulary)")
_SCREEN_REFUSES_OR_SCHEMA: Final = re.compile(rb"\$(?:ref|dynamic|recursive|id|anchor|vocabulary|schema)")
_SCHEMA_KEY: Final = b"$schema"
_SCREEN_DIALECTS: Final = frozenset({"draft-06", "draft-07", "2019-09", "2020-12"})
_REGEX_MEMO_LENGTH: Final = 512  # longer patterns are judged every time (the memo stays small)


@functools.lru_cache(maxsize=2048)
def _regex_usable_memo(dialect_name: DialectName, pattern: str) -> bool:
    return _regex_usable(dialect_name, pattern)


def _regex_usable(dialect_name: DialectName, pattern: str) -> bool:
    """Whether ``pattern`` is valid ECMA-262 and compiles in the dialect's engine both as a ``pattern``
    and as a ``patternProperties`` key: exactly the two places compilation reads a regex."""
    if not ecma_regex_valid(pattern):
        return False
    try:
        DIALECTS[dialect_name].rust_validator(
            {"pattern": pattern, "patternProperties": {pattern: True}},
            validate_formats=False,
            retriever=_refuse_rs_retrieval,
        )
    except Exception:  # any refusal of either engine: not usable, the full check reports why
        return False
    return True


def _screen_validator(dialect: Dialect, every_pattern: bool) -> jsonschema_rs.Validator:
    """The dialect's meta-schema with every format asserted (``regex`` judged by :func:`_regex_usable`)
    and, with ``every_pattern``, every ``pattern`` string and ``patternProperties`` key of any object,
    data included, judged the same way: what :func:`_compile`'s meta-schema check, its ECMA-262
    walk and the engine's own compilation (which asserts the meta-schema's formats in draft-06/07)
    would refuse."""

    def regex(pattern: str) -> bool:
        if len(pattern) > _REGEX_MEMO_LENGTH:
            return _regex_usable(dialect.name, pattern)
        return _regex_usable_memo(dialect.name, pattern)

    every = {"$ref": "#/definitions/every"}
    wrapper = {
        "allOf": [{"$ref": dialect.uri}, every if every_pattern else True],
        "definitions": {
            "every": {
                "properties": {
                    "pattern": {"allOf": [{"format": "regex"}, every]},
                    "patternProperties": {"allOf": [{"propertyNames": {"format": "regex"}}, every]},
                },
                "additionalProperties": every,
                "items": every,
            }
        },
    }
    return cast(
        jsonschema_rs.Validator,
        dialect.rust_validator(
            wrapper, validate_formats=True, formats={"regex": regex}, retriever=_refuse_rs_retrieval
        ),
    )


_SCREENS: dict[tuple[DialectName, bool], jsonschema_rs.Validator] = {}  # two per dialect at most
_PATTERN_KEY: Final = b"pattern"  # also the start of "patternProperties"


def screen_schemas(schemas: Iterable[Any], scanned: bytes, *, dialects: Iterable[DialectName]) -> bool:
    """``True`` only when :func:`check_schema` is certain to accept every schema of ``schemas`` (with
    these ``dialects``), established without compiling a validator; ``False`` means "not established",
    never "refused": call :func:`check_schema` for the verdict and its reason.

    Preconditions (the caller's): ``scanned`` contains the :func:`exact_value_key` bytes of every schema
    (those of an object holding them all will do: the format writes members in place, without
    back-references), and no schema nests deeper than :data:`SCREEN_MAX_DEPTH`.

    Why it is exact. Compiling (``_compile``) refuses a schema for its dialect, its meta-schema, a regex
    that is not ECMA-262 or that the engine cannot compile, a mixed dialect, an unresolvable reference, or
    whatever else the engine's own compilation refuses. The screen establishes, in one engine pass per
    schema: a supported dialect other than draft-04 (whose ``id`` would be an identifier); no byte
    sequence in ``scanned`` that could begin a reference or identifier keyword (so nothing is registered
    or resolved) and no ``$schema`` besides the roots' (no mixed dialects); validity against the dialect's
    meta-schema with every format asserted, ``regex`` meaning "valid ECMA-262 and compiles in the engine
    as ``pattern`` and as ``patternProperties`` key"; and every ``pattern``/``patternProperties`` anywhere
    passing the same regex test (a superset of what the full check's ECMA-262 walk looks at). Nothing else
    is known to make compilation fail on such a schema: ``tests/core/contracts/test_schema_screen.py`` checks
    that differentially against the full check, and a schema that still failed to compile at a later gate
    would be refused there (``invalid_schema``), never run unchecked.
    Saving the compilation matters at admission: it is most of the cost of a large catalog, and the
    validator is built (and cached) when a call first needs it.
    """
    allowed = dialects if isinstance(dialects, (set, frozenset)) else frozenset(dialects)
    roots = 0
    checked: list[tuple[Dialect, dict[str, Any]]] = []
    for schema in schemas:
        if type(schema) is not dict:
            return False
        dialect = dialect_of(schema)
        if dialect is None or dialect.name not in _SCREEN_DIALECTS or dialect.name not in allowed:
            return False
        roots += "$schema" in schema
        checked.append((dialect, schema))
    if roots == 0:  # then any "$schema" is one too many: one scan finds either
        if _SCREEN_REFUSES_OR_SCHEMA.search(scanned):
            return False
    elif _SCREEN_REFUSES.search(scanned) or scanned.count(_SCHEMA_KEY) != roots:
        return False
    # Without the bytes of "pattern" there is no pattern anywhere: the meta-schema check alone decides.
    every_pattern = _PATTERN_KEY in scanned
    for dialect, schema in checked:
        validator = _SCREENS.get((dialect.name, every_pattern))
        if validator is None:
            validator = _SCREENS.setdefault(
                (dialect.name, every_pattern), _screen_validator(dialect, every_pattern)
            )
        try:
            if not validator.is_valid(schema):
                return False
        except Exception:  # whatever the engine cannot read (not JSON, ...): the full check decides
            return False
    return True


def validate_instance(
    schema: Any, instance: Any, *, cache: ValidatorCache | None = None
) -> SchemaFailure | None:
    """Validate ``instance`` against ``schema`` in the dialect it declares; ``None`` means it conforms.

    Pure: no I/O, no remote ``$ref`` (see the module docstring). The compiled validator comes from
    ``cache`` (default: the process-wide bounded cache). When several keywords fail, the most relevant
    one is reported. The returned failure never contains instance values.
    """
    return _validate_compiled((_DEFAULT_CACHE if cache is None else cache)._get(schema), instance)


def validate_keyed(
    key: SchemaKey, instance: Any, *, cache: ValidatorCache | None = None
) -> SchemaFailure | None:
    """:func:`validate_instance` against the schema ``key`` holds: the same verdict, the same failure
    (``tests/core/contracts/test_schema_key.py`` checks that differentially), without serializing the
    schema to find its validator."""
    return _validate_compiled((_DEFAULT_CACHE if cache is None else cache)._get_keyed(key), instance)


def _validate_compiled(compiled: _Compiled, instance: Any) -> SchemaFailure | None:
    if compiled.failure is not None:
        return compiled.failure
    validator = compiled.validator
    assert validator is not None
    if compiled.guard_depth and _too_deep(instance, MAX_INSTANCE_DEPTH):
        return _TOO_DEEP
    try:
        if validator.is_valid(instance):
            return None
        errors = list(validator.iter_errors(instance))
    except jsonschema_rs.ValidationError:
        # Backstop: every ref was resolved at compile time, but never let one turn into a crash or fetch.
        return _schema_failure("unresolvable_ref", "$ref", "schema references cannot be resolved offline")
    except (ValueError, TypeError, OverflowError) as err:
        # The engine's conversion refuses non-JSON values (non-string keys, arbitrary objects) and
        # values nested beyond its own recursion limit; its text names a type, never a value.
        return _TOO_DEEP if "ecursion" in str(err) else _NOT_JSON
    if not errors:  # defensive: is_valid and iter_errors never disagree
        return SchemaFailure("instance", "", "", "value fails the schema")
    return _describe(_best(errors))
