"""Invoke: JSON Schema 2020-12 validation of tool arguments, shared with output validation.

Two engines, one verdict. The *schema* is checked once, at compile time, by python-jsonschema
(``Draft202012Validator.check_schema``) and the ``referencing`` library; *instances* are then
validated by ``jsonschema_rs`` (a Rust implementation of Draft 2020-12), chosen by benchmark
(``python -m bench.validator_choice``: several times faster per call, which is most of the server
gate's overhead). ``tests/contracts/test_validator_engines.py`` checks that both engines agree on
validity for every schema/instance pair the contract tests use and for generated small schemas.

The compile-time check uses a ``referencing`` registry that **never retrieves anything**: the only
documents a ``$ref`` can reach are the schema itself (its ``$defs``, anchors and embedded ``$id``
resources) and the official metaschemas bundled with ``jsonschema-specifications``. A ``$ref`` to any
other URI — ``http://…``, ``file:…``, a relative reference against a remote ``$id`` — is a typed
refusal (``unresolvable_ref``), never a fetch. Every ``$ref``/``$dynamicRef`` is resolved once when the
schema is compiled, so an unresolvable reference in a branch the instance never takes is refused too
(fail closed).

Dialect: a schema without ``$schema`` is 2020-12 (the MCP default); an explicit
``https://json-schema.org/draft/2020-12/schema`` is accepted; any other ``$schema``, at the root or
in an embedded resource, is refused as ``unsupported_dialect``.

The Rust validator is built with a ``retriever`` that refuses every URI as well, so even a reference
the pre-check missed could never be fetched (it fails compilation → ``unresolvable_ref``).

``format`` is an annotation, not an assertion (the 2020-12 default; ``validate_formats=False``). Why:
format checks differ between implementations and, in python-jsonschema, depend on which optional
packages happen to be installed, so asserting them would let a client and a server disagree about the
same arguments. A tool that needs a format enforced states it with ``pattern`` (or in its own code).

Where the engines differ (documented, pinned by tests):

* ``pattern`` / ``patternProperties`` use ECMA-262-style regular expressions, as JSON Schema
  specifies, not Python's ``re``: ``\\d`` and ``\\w`` match ASCII only (Python ``re`` on ``str``
  also matches e.g. Arabic-Indic digits). A pattern must be valid in **both** dialects, or the schema
  is refused as ``invalid_schema``: python-jsonschema's ``check_schema`` compiles it with Python ``re``
  (refusing ``\\p{L}``), and jsonschema_rs checks the ``regex`` format with ECMA-262 syntax
  (refusing Python-only ``\\Z``, ``(?P=name)``, ``a{,3}``, ``\\N{…}``).
* ``multipleOf`` with a fractional divisor is decided exactly (``0.3`` is a multiple of ``0.1``);
  python-jsonschema uses float division and says it is not.
* Python values beyond JSON: a ``tuple`` counts as an array (python-jsonschema only accepts ``list``);
  ``inf``/``nan`` are not numbers (python-jsonschema accepts them); a value the engine cannot read
  as JSON (a non-string key, ``bytes``, an ``int`` subclass other than ``bool``, an arbitrary object)
  is refused as "not JSON data" where a keyword inspects it. Wire JSON has none of these.
* Reported keyword names follow the engine: a ``false`` subschema is ``falseSchema`` (pointing at the
  member), ``dependentRequired`` is reported as ``required`` at the missing member, and
  ``minContains``/``maxContains`` as ``contains``.
* Depth: for a schema with ``$ref``/``$dynamicRef`` (the only way validation can recurse as deep as
  the instance), an instance nested deeper than :data:`MAX_INSTANCE_DEPTH` containers is refused
  before the Rust engine sees it, because deep recursion there overflows the native stack (a crash,
  not an exception).
* Which failure is reported when several keywords fail: a heuristic modelled on python-jsonschema's
  ``best_match`` (shallowest instance path, ``anyOf``/``oneOf`` last, descending into their branches
  while one branch error is clearly the most specific). Validity never depends on it.

Compiled validators are cached in a bounded LRU keyed by the SHA-256 of the schema's canonical JSON
text (sorted keys, compact separators), so equal schemas share one entry whatever their key order
and a schema mutated in place is recompiled. Per-call lookups go through a cheaper exact key first
(:func:`exact_value_key`, type-exact ``marshal`` bytes of the schema), which has the same property.
The default bound is :data:`VALIDATOR_CACHE_SIZE` entries; schema-level refusals are cached as well,
so a hostile schema costs one compilation.

Messages name the failing keyword and a JSON-pointer path into the instance, never the value.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import jsonschema_rs
import referencing.exceptions
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
from jsonschema_specifications import REGISTRY as _METASCHEMAS  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from agent_connector_sdk.mcp.contracts.errors import ArgumentError
from agent_connector_sdk.mcp.contracts.pointers import json_pointer

__all__ = [
    "DRAFT_2020_12",
    "MAX_INSTANCE_DEPTH",
    "VALIDATOR_CACHE_SIZE",
    "SchemaFailure",
    "ValidatorCache",
    "check_schema",
    "clear_validator_cache",
    "default_validator_cache",
    "exact_value_key",
    "validate_arguments",
    "validate_instance",
]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
"""The only dialect this project validates (absent ``$schema`` means this one)."""

VALIDATOR_CACHE_SIZE = 256
"""Default bound of the process-wide compiled-validator cache (entries, least recently used evicted)."""

MAX_INSTANCE_DEPTH = 200
"""Deepest container nesting validated against a schema that can recurse (``$ref``/``$dynamicRef``).

The same bound as pydantic-core's JSON parser, so nothing parsed from the wire is refused by it."""

FailureKind = Literal["instance", "unsupported_dialect", "invalid_schema", "unresolvable_ref"]

# Keywords whose values are data, not subschemas: a "$schema" or "$ref" inside them is not a keyword.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


@dataclass(frozen=True, slots=True)
class SchemaFailure:
    """Why an instance was not accepted, free of any instance value.

    ``kind`` is ``"instance"`` when the schema is usable and the instance breaks it; otherwise the schema
    itself is refused (``unsupported_dialect``, ``invalid_schema``, ``unresolvable_ref``). ``path`` is a
    JSON pointer into the instance (``""`` for the root); ``keyword`` the failing schema keyword.
    """

    kind: FailureKind
    keyword: str
    path: str
    message: str


class _RetrievalRefused(Exception):
    """Raised by the registry's retrieve hook; referencing wraps it into ``Unretrievable``."""


def _refuse_retrieval(uri: str) -> Resource[Any]:
    # The whole point: an unknown URI is an error, never a reason to open a URL or a file.
    raise _RetrievalRefused(uri)


# Local-only registry. jsonschema combines it with the bundled metaschemas (no I/O). Passing it
# explicitly also matters: without a registry jsonschema falls back to one that *does* fetch over HTTP.
_OFFLINE_REGISTRY: Registry[Any] = Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]


def _canonical_key(schema: Any) -> str | None:
    """SHA-256 of the canonical JSON text, or ``None`` when the schema is not JSON at all."""
    try:
        text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _is_2020_12(uri: str) -> bool:
    return uri.rstrip("#") == DRAFT_2020_12


def _check_dialects_and_refs(schema: Any) -> SchemaFailure | None:
    """Refuse foreign dialects and resolve every ``$ref``/``$dynamicRef`` statically, offline."""
    root = DRAFT202012.create_resource(schema)
    # The same construction jsonschema uses internally, so what resolves here resolves there.
    resolver = _METASCHEMAS.combine(_OFFLINE_REGISTRY).resolver_with_root(root)
    # Walk with a resolver per subresource so relative refs use the right base URI ($id scoping).
    # (referencing.Resolver is not re-exported publicly, hence Any.)
    stack: list[tuple[Resource[Any], Any]] = [(root, resolver)]
    while stack:
        resource, resolver = stack.pop()
        contents = resource.contents
        if not isinstance(contents, Mapping):
            continue
        dialect = contents.get("$schema")
        if dialect is not None and not (isinstance(dialect, str) and _is_2020_12(dialect)):
            return SchemaFailure(
                "unsupported_dialect", "$schema", "", "schema declares a dialect other than 2020-12"
            )
        for keyword in ("$ref", "$dynamicRef"):
            ref = contents.get(keyword)
            if ref is None:
                continue
            if not isinstance(ref, str):
                return SchemaFailure("invalid_schema", keyword, "", f"'{keyword}' must be a string")
            try:
                resolver.lookup(ref)
            except referencing.exceptions.Unresolvable:
                return SchemaFailure(
                    "unresolvable_ref",
                    keyword,
                    "",
                    f"'{keyword}' does not resolve inside the schema (remote references are never fetched)",
                )
        for sub in DRAFT202012.subresources_of(contents):
            child = DRAFT202012.create_resource(sub)
            stack.append((child, resolver.in_subresource(child)))
    return None


def _refuse_rs_retrieval(uri: str) -> Any:
    # jsonschema_rs calls this for any URI its own registry lacks; refusing makes compilation fail.
    raise _RetrievalRefused(uri)


def _has_reference(schema: Any) -> bool:
    """Whether ``$ref``/``$dynamicRef`` appears anywhere (conservative: data keywords included)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if "$ref" in node or "$dynamicRef" in node:
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


class _Compiled:
    __slots__ = ("failure", "guard_depth", "validator")

    def __init__(
        self,
        validator: jsonschema_rs.Validator | None,
        failure: SchemaFailure | None,
        guard_depth: bool = False,
    ) -> None:
        self.validator = validator
        self.failure = failure
        # Only a schema with references can make validation recurse as deep as the instance.
        self.guard_depth = guard_depth


def _compile(schema: Any) -> _Compiled:
    if not isinstance(schema, (Mapping, bool)):
        return _Compiled(
            None, SchemaFailure("invalid_schema", "", "", "a schema must be an object or boolean")
        )
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as err:
        where = json_pointer(list(err.absolute_path))
        return _Compiled(
            None,
            SchemaFailure(
                "invalid_schema", str(err.validator), "", f"schema is invalid at '{where}' ({err.validator})"
            ),
        )
    except RecursionError:
        return _Compiled(None, SchemaFailure("invalid_schema", "", "", "schema is nested too deeply"))
    try:
        failure = _check_dialects_and_refs(schema)
    except RecursionError:
        failure = SchemaFailure("invalid_schema", "", "", "schema is nested too deeply")
    except (referencing.exceptions.Unresolvable, referencing.exceptions.CannotDetermineSpecification):
        failure = SchemaFailure("unresolvable_ref", "$ref", "", "schema references do not resolve offline")
    if failure is not None:
        return _Compiled(None, failure)
    try:
        validator = jsonschema_rs.validator_for(
            schema if isinstance(schema, bool) else dict(schema),
            validate_formats=False,
            retriever=_refuse_rs_retrieval,
        )
    except jsonschema_rs.ValidationError as err:
        if isinstance(err.kind, jsonschema_rs.ValidationErrorKind.Referencing):
            return _Compiled(
                None,
                SchemaFailure("unresolvable_ref", "$ref", "", "schema references do not resolve offline"),
            )
        # The engine checks the schema against the 2020-12 metaschema itself, asserting ``format:
        # regex`` with ECMA-262 syntax: a Python-only pattern (``\Z``, ``(?P=name)``) lands here.
        where = json_pointer(err.instance_path)
        keyword = err.kind.name
        return _Compiled(
            None,
            SchemaFailure(
                "invalid_schema", keyword, "", f"schema is invalid at '{where}' ({keyword}, jsonschema_rs)"
            ),
        )
    except (ValueError, jsonschema_rs.ReferencingError):
        # Backstop for what check_schema lets through but the engine refuses (e.g. a regex it cannot
        # compile, or a reference it cannot resolve without retrieval).
        return _Compiled(None, SchemaFailure("invalid_schema", "", "", "schema is refused by the validator"))
    return _Compiled(validator, None, _has_reference(schema))


def exact_value_key(value: Any) -> bytes | None:
    """Bytes that determine ``value`` exactly (built-in JSON-ish types only), or ``None``.

    ``marshal`` (format 2: no back-references) writes each object with its type, so ``True``, ``1`` and
    ``1.0`` differ, as do key orders: equal bytes mean an equal value of the same types (they decode back
    to it), so a cache keyed by them can never hand out an entry built for other content — a schema edited
    in place simply misses. Equal content may still yield different bytes (key order, string interning);
    that only costs a cache miss. About 6x cheaper than the canonical JSON digest (~0.7 µs against ~4 µs
    for a typical tool schema), which matters because it runs on every call. Objects marshal cannot
    write (subclasses, custom types, cycles, excessive depth) give ``None``.
    """
    try:
        return marshal.dumps(value, 2)
    except (ValueError, TypeError):
        return None


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
        exact = exact_value_key(schema)
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
            return _Compiled(None, SchemaFailure("invalid_schema", "", "", "schema is not valid JSON data"))
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


_DEFAULT_CACHE = ValidatorCache()


def default_validator_cache() -> ValidatorCache:
    """The process-wide cache used when no ``cache`` is passed."""
    return _DEFAULT_CACHE


def clear_validator_cache() -> None:
    """Empty the process-wide cache (tests, or after unloading many tools)."""
    _DEFAULT_CACHE.clear()


_WEAK_KEYWORDS = frozenset({"anyOf", "oneOf"})


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
        # Point at the missing member: the *name* comes from the schema, so it is safe to show.
        parts.append(error.kind.property)
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


_TOO_DEEP = SchemaFailure("instance", "", "", "value is nested too deeply to validate")
_NOT_JSON = SchemaFailure("instance", "", "", "value is not JSON data")


def check_schema(schema: Any, *, cache: ValidatorCache | None = None) -> SchemaFailure | None:
    """Compile ``schema`` as :func:`validate_instance` would (cached) and return why it cannot be used.

    ``None`` means every instance check against it will run. Admission calls this so that a tool it
    admits can always be validated: both engines must accept the schema (see the module docstring).
    """
    return (_DEFAULT_CACHE if cache is None else cache)._get(schema).failure


def validate_instance(
    schema: Any, instance: Any, *, cache: ValidatorCache | None = None
) -> SchemaFailure | None:
    """Validate ``instance`` against ``schema`` (JSON Schema 2020-12); ``None`` means it conforms.

    Pure: no I/O, no remote ``$ref`` (see the module docstring). The compiled validator comes from
    ``cache`` (default: the process-wide bounded cache). When several keywords fail, the most relevant
    one is reported (see the module docstring). The returned failure never contains instance values.
    """
    compiled = (_DEFAULT_CACHE if cache is None else cache)._get(schema)
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
        return SchemaFailure("unresolvable_ref", "$ref", "", "schema references cannot be resolved offline")
    except (ValueError, TypeError, OverflowError) as err:
        # The engine's conversion refuses non-JSON values (non-string keys, arbitrary objects) and
        # values nested beyond its own recursion limit; its text names a type, never a value.
        return _TOO_DEEP if "ecursion" in str(err) else _NOT_JSON
    if not errors:  # defensive: is_valid and iter_errors never disagree
        return SchemaFailure("instance", "", "", "value fails the schema")
    return _describe(_best(errors))


def validate_arguments(
    tool: Mapping[str, Any], arguments: Mapping[str, Any] | None, *, cache: ValidatorCache | None = None
) -> None:
    """Invoke gate: check ``arguments`` against the wire descriptor's ``inputSchema``.

    ``tool`` is the wire descriptor dict (camelCase). ``None`` arguments are validated as ``{}`` (the
    ``tools/call`` params member is optional). Raises :class:`ArgumentError` with category:

    - ``invalid_arguments`` — the arguments are not an object, or fail the schema; ``.path`` is a JSON
      pointer into the arguments and the message names the failing keyword, never the value;
    - ``invalid_schema`` — the descriptor has no usable ``inputSchema``;
    - ``unsupported_dialect`` — ``$schema`` other than 2020-12;
    - ``unresolvable_ref`` — a ``$ref`` that does not resolve inside the schema (never fetched).
    """
    schema = tool.get("inputSchema") if isinstance(tool, Mapping) else None
    if not isinstance(schema, Mapping):
        raise ArgumentError("invalid_schema", "tool descriptor has no inputSchema object")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise ArgumentError("invalid_arguments", "arguments must be a JSON object", path="")
    # jsonschema's "object" type is ``dict``; a read-only Mapping view must not fail as "not an object".
    instance = arguments if isinstance(arguments, dict) else dict(arguments)
    failure = validate_instance(schema, instance, cache=cache)
    if failure is None:
        return
    if failure.kind == "instance":
        raise ArgumentError(
            "invalid_arguments",
            f"arguments refused: {failure.message}",
            path=failure.path,
        )
    raise ArgumentError(failure.kind, f"inputSchema refused: {failure.message}", path="")
