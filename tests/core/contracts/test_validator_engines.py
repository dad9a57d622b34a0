"""The instance engine (jsonschema_rs) against python-jsonschema: same verdicts, documented differences.

``validate_instance`` checks schemas with python-jsonschema and validates instances with jsonschema_rs
(see the module docstring of ``contracts._validation``). These tests hold the two engines to the same
validity verdict on every schema/instance pair the contract tests use and on generated small schemas,
and pin the places where we ship a deliberate difference (``pattern`` regex dialect, ``format``,
depth, non-JSON values).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.validators import validator_for  # type: ignore[import-untyped]
from referencing import Registry

from agent_connector_sdk.core.contracts import ValidatorCache, validate_instance
from agent_connector_sdk.core.contracts import _json_schema as json_schema
from agent_connector_sdk.core.contracts import _validation as validation
from agent_connector_sdk.core.contracts._validation import MAX_INSTANCE_DEPTH
from tests.support.schema_cases import (
    ANY_JSON_STRUCTURED_CONTENT,
    ARRAY_TOOL,
    D4,
    D6,
    D7,
    D2019,
    D2020,
    DIALECT_CASES,
    DIALECT_INVALID_SCHEMAS,
    DIALECT_VALID_SCHEMAS,
    DYNAMIC_TREE_SCHEMA,
    EMBEDDED_RESOURCE_SCHEMA,
    LOCAL_REFS_SCHEMA,
    REGION_TOOL,
    SECRET,
)
from tests.support.schema_server import recording_schema_server

_NO_FETCH: Registry[Any] = Registry()  # python-jsonschema reference: no retrieval either


def reference_validator(schema: Any) -> Any:
    """python-jsonschema's validator class for ``schema``, chosen by python-jsonschema itself from
    ``$schema`` (2020-12 when absent): independent of our dialect table."""
    return validator_for(schema, default=Draft202012Validator)


def reference_is_valid(schema: Any, instance: Any) -> bool:
    """python-jsonschema's verdict (the schema's dialect, format as annotation, nothing fetched)."""
    return bool(reference_validator(schema)(schema, registry=_NO_FETCH).is_valid(instance))


def engine_is_valid(schema: Any, instance: Any) -> bool:
    failure = validate_instance(schema, instance)
    assert failure is None or failure.kind == "instance", failure
    return failure is None


# --- every pair the contract tests use ----------------------------------------------------------------

_REGION = REGION_TOOL["inputSchema"]
_LOCAL_REFS = LOCAL_REFS_SCHEMA
_DATA_KEYWORDS = {
    "type": "object",
    "properties": {"doc": {"const": {"$schema": "draft-07", "$ref": "http://127.0.0.1:1/x.json"}}},
}
_ERROR_OUTPUT = {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}

CONTRACT_PAIRS: list[tuple[Any, Any]] = [
    (_REGION, {"region": "eu", "limit": 3, "filter": {"tag": "ab"}, "a/b~c": True}),
    (_REGION, {"region": "us"}),
    (_REGION, {"region": SECRET}),
    (_REGION, {"region": "eu", "limit": SECRET}),
    (_REGION, {"region": "eu", "limit": 0}),
    (_REGION, {"region": "eu", "limit": True}),
    (_REGION, {"region": "eu", "filter": {"tag": SECRET}}),
    (_REGION, {"region": "eu", "a/b~c": SECRET}),
    (_REGION, {"limit": 2}),
    (_REGION, {}),
    (_REGION, {"region": "eu", SECRET: 1}),
    ({"type": "object"}, {}),
    ({"type": "object", "properties": {"e": {"format": "email"}}}, {"e": "not an email"}),
    ({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}, {}),
    (_DATA_KEYWORDS, {"doc": {"$schema": "draft-07", "$ref": "http://127.0.0.1:1/x.json"}}),
    (_LOCAL_REFS, {"a": 1, "b": "x", "c": True, "meta": {"type": "string"}}),
    (_LOCAL_REFS, {"b": 3}),
    (_LOCAL_REFS, {"meta": {"type": 5}}),
    ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": "some text"}),
    (DYNAMIC_TREE_SCHEMA, {"children": [{"children": []}]}),
    (DYNAMIC_TREE_SCHEMA, {"children": [1]}),
    (EMBEDDED_RESOURCE_SCHEMA, {"a": 1}),
    (EMBEDDED_RESOURCE_SCHEMA, {"a": "z"}),
    # test_results.py
    (ARRAY_TOOL["outputSchema"], [1, 2, 3]),
    (ARRAY_TOOL["outputSchema"], {"items": [1, 2, 3]}),
    (ARRAY_TOOL["outputSchema"], [1, "two", 3]),
    *ANY_JSON_STRUCTURED_CONTENT,
    ({"type": "object"}, None),
    (_ERROR_OUTPUT, {"message": "boom"}),
    (_ERROR_OUTPUT, {"error": "boom"}),
    ({"type": "array"}, []),
    ({"type": "array"}, [1]),
    ({"type": "string"}, 3),
]


@pytest.mark.parametrize(("schema", "instance"), CONTRACT_PAIRS)
def test_engines_agree_on_every_contract_test_pair(schema: Any, instance: Any) -> None:
    assert engine_is_valid(schema, instance) == reference_is_valid(schema, instance)


# --- generated small schemas (no pattern/format: tested separately below) -------------------------------

_NAMES = st.sampled_from(["a", "b", "c"])
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=5),
    st.sampled_from([-1.5, 0.0, 0.5, 2.0, 3.25]),
    st.sampled_from(["", "a", "xy", "hello"]),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_NAMES, inner, max_size=3)),
    max_leaves=8,
)
_TYPES = st.sampled_from(["null", "boolean", "integer", "number", "string", "array", "object"])
_NUMBER = st.one_of(st.integers(min_value=-3, max_value=3), st.sampled_from([-0.5, 0.5, 1.5]))
_COUNT = st.integers(min_value=0, max_value=3)

_PLAIN_LEAVES = st.one_of(
    st.booleans(),
    st.builds(
        lambda t: {"type": t}, st.one_of(_TYPES, st.lists(_TYPES, min_size=1, max_size=3, unique=True))
    ),
    st.builds(lambda v: {"enum": v}, st.lists(_SCALARS, min_size=1, max_size=3)),
    st.builds(lambda v: {"const": v}, _JSON),
    st.builds(
        lambda k, n: {k: n},
        st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]),
        _NUMBER,
    ),
    st.builds(
        lambda k, n: {k: n},
        st.sampled_from(["minLength", "maxLength", "minItems", "maxItems", "minProperties"]),
        _COUNT,
    ),
    st.builds(lambda names: {"required": names}, st.lists(_NAMES, max_size=3, unique=True)),
)
_LEAF_SCHEMAS = st.one_of(_PLAIN_LEAVES, st.just({"$ref": "#/$defs/d"}))


def _extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    subs = st.lists(inner, min_size=1, max_size=3)
    return st.one_of(
        st.builds(lambda props: {"properties": props}, st.dictionaries(_NAMES, inner, max_size=3)),
        st.builds(lambda s: {"items": s}, inner),
        st.builds(lambda ss: {"prefixItems": ss}, subs),
        st.builds(lambda ss, s: {"prefixItems": ss, "items": s}, subs, inner),
        st.builds(lambda ss: {"anyOf": ss}, subs),
        st.builds(lambda ss: {"oneOf": ss}, subs),
        st.builds(lambda s: {"not": s}, inner),
        st.builds(
            lambda s, extra: {"additionalProperties": s, "properties": extra},
            inner,
            st.dictionaries(_NAMES, inner, max_size=2),
        ),
        st.builds(lambda ss: {"allOf": ss}, subs),
    )


_SUBSCHEMAS = st.recursive(_LEAF_SCHEMAS, _extend, max_leaves=6)
_DEFINITION = st.recursive(_PLAIN_LEAVES, _extend, max_leaves=4)  # never refers to itself
_ROOTS = st.builds(lambda body, d: {"allOf": [body], "$defs": {"d": d}}, _SUBSCHEMAS, _DEFINITION)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_ROOTS, instance=_JSON)
def test_engines_agree_on_generated_schemas(schema: dict[str, Any], instance: Any) -> None:
    assert engine_is_valid(schema, instance) == reference_is_valid(schema, instance)


# --- every dialect: the semantics that differ, and generated schemas per dialect ------------------------


@pytest.mark.parametrize(
    ("label", "schema", "instance", "valid"), DIALECT_CASES, ids=[case[0] for case in DIALECT_CASES]
)
def test_engines_agree_on_every_dialect_case(label: str, schema: Any, instance: Any, valid: bool) -> None:
    assert reference_is_valid(schema, instance) is valid
    assert engine_is_valid(schema, instance) is valid


@pytest.mark.parametrize(
    ("label", "schema", "usable"),
    [(label, schema, False) for label, schema in DIALECT_INVALID_SCHEMAS]
    + [(label, schema, True) for label, schema in DIALECT_VALID_SCHEMAS],
    ids=[case[0] for case in DIALECT_INVALID_SCHEMAS + DIALECT_VALID_SCHEMAS],
)
def test_meta_schema_verdicts_agree_in_every_dialect(label: str, schema: Any, usable: bool) -> None:
    try:
        reference_validator(schema).check_schema(schema)
        reference_usable = True
    except Exception:
        reference_usable = False
    assert reference_usable is usable
    assert (validation.check_schema(schema) is None) is usable


@pytest.mark.parametrize("dialect", [D2019, D2020])
def test_dependencies_in_modern_dialects_is_a_documented_difference(dialect: str) -> None:
    # jsonschema_rs keeps applying the deprecated `dependencies` (the test suite's optional
    # dependencies-compatibility behaviour); python-jsonschema ignores it from 2019-09 on. Ours is the
    # stricter verdict, and both ends of this project run the same engine.
    schema = {"$schema": dialect, "dependencies": {"bar": ["foo"]}}
    assert not engine_is_valid(schema, {"bar": 2})
    assert reference_is_valid(schema, {"bar": 2})
    assert engine_is_valid(schema, {"bar": 2, "foo": 1})


_LEGACY = (D4, D6, D7)


def _dialect_roots(dialect: str) -> st.SearchStrategy[Any]:
    """Small valid schemas of ``dialect`` mixing the keywords whose meaning differs between dialects:
    ``$ref`` with siblings, tuple ``items``/``additionalItems``, ``dependencies``, draft-04 boolean
    ``exclusiveMaximum``, boolean subschemas (not in draft-04), ``definitions`` vs ``$defs``."""
    defs = "definitions" if dialect in _LEGACY else "$defs"
    numbers = ["minimum", "maximum"] + ([] if dialect == D4 else ["exclusiveMinimum", "exclusiveMaximum"])
    plain: list[st.SearchStrategy[Any]] = [
        st.builds(lambda t: {"type": t}, _TYPES),
        st.builds(
            lambda v: {"enum": v},
            st.lists(_SCALARS, min_size=1, max_size=3, unique_by=lambda v: (type(v) is bool, v)),
        ),
        st.builds(lambda k, n: {k: n}, st.sampled_from(numbers), _NUMBER),
        st.builds(lambda k, n: {k: n}, st.sampled_from(["minLength", "maxItems", "minProperties"]), _COUNT),
        st.builds(lambda names: {"required": names}, st.lists(_NAMES, min_size=1, max_size=3, unique=True)),
    ]
    if dialect == D4:
        plain.append(st.builds(lambda n, b: {"maximum": n, "exclusiveMaximum": b}, _NUMBER, st.booleans()))
    else:
        plain.extend([st.booleans(), st.builds(lambda v: {"const": v}, _JSON)])
    plain_leaves = st.one_of(*plain)
    leaves = st.one_of(
        plain_leaves,
        st.just({"$ref": f"#/{defs}/d"}),
        # A reference with a sibling: ignored in draft-04..07, applied from 2019-09 on.
        st.builds(
            lambda sibling: {"$ref": f"#/{defs}/d", **sibling},
            plain_leaves.filter(lambda s: isinstance(s, dict)),
        ),
    )

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        subs = st.lists(inner, min_size=1, max_size=3)
        options = [
            st.builds(lambda props: {"properties": props}, st.dictionaries(_NAMES, inner, max_size=3)),
            st.builds(lambda s: {"items": s}, inner),
            st.builds(lambda ss: {"anyOf": ss}, subs),
            st.builds(lambda ss: {"oneOf": ss}, subs),
            st.builds(lambda s: {"not": s}, inner),
        ]
        if dialect == D2020:
            options.append(st.builds(lambda ss, s: {"prefixItems": ss, "items": s}, subs, inner))
        else:
            options.append(st.builds(lambda ss, s: {"items": ss, "additionalItems": s}, subs, inner))
        if dialect in _LEGACY:
            options.append(
                st.builds(lambda deps: {"dependencies": deps}, st.dictionaries(_NAMES, inner, max_size=2))
            )
        else:
            options.append(
                st.builds(lambda deps: {"dependentSchemas": deps}, st.dictionaries(_NAMES, inner, max_size=2))
            )
        return st.one_of(*options)

    body = st.recursive(leaves, extend, max_leaves=6)
    definition = st.recursive(plain_leaves, extend, max_leaves=4)
    return st.builds(lambda b, d: {"$schema": dialect, "allOf": [b], defs: {"d": d}}, body, definition)


_PER_DIALECT_ROOTS = {dialect: _dialect_roots(dialect) for dialect in (D4, D6, D7, D2019, D2020)}


@pytest.mark.parametrize("dialect", list(_PER_DIALECT_ROOTS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_engines_agree_on_generated_schemas_in_every_dialect(dialect: str, data: st.DataObject) -> None:
    schema = data.draw(_PER_DIALECT_ROOTS[dialect], label="schema")
    instance = data.draw(_JSON, label="instance")
    reference_validator(schema).check_schema(schema)  # the generator only makes valid schemas
    assert engine_is_valid(schema, instance) == reference_is_valid(schema, instance)


# --- pattern: ECMA-262 regex semantics (what JSON Schema specifies), not Python re ----------------------


@pytest.mark.parametrize(
    ("pattern", "value", "valid"),
    [
        ("^\\d+$", "2026", True),
        ("^\\d+$", "12a", False),
        ("^[a-z0-9-]+$", "eu-west-1", True),
        ("^[a-z0-9-]+$", "EU", False),
        ("ab", "xxabxx", True),  # unanchored: a search, in both engines
        ("^(?=.*x)", "yyx", True),  # look-ahead works
    ],
)
def test_ascii_patterns_agree(pattern: str, value: str, valid: bool) -> None:
    schema = {"type": "string", "pattern": pattern}
    assert engine_is_valid(schema, value) is valid
    assert reference_is_valid(schema, value) is valid


@pytest.mark.parametrize("value", ["\u0663", "\u0968\u0966", "\uff11"])  # Arabic-Indic, Devanagari, fullwidth
def test_digit_class_is_ascii_only_unlike_python_re(value: str) -> None:
    schema = {"type": "string", "pattern": "^\\d+$"}
    assert not engine_is_valid(schema, value)  # ECMA-262 \d is [0-9]
    assert reference_is_valid(schema, value)  # Python re's \d is any Unicode decimal digit


def test_word_class_is_ascii_only_unlike_python_re() -> None:
    schema = {"type": "string", "pattern": "^\\w+$"}
    assert not engine_is_valid(schema, "stra\u00dfe")
    assert reference_is_valid(schema, "stra\u00dfe")
    assert engine_is_valid(schema, "strasse_1")


@pytest.mark.parametrize("pattern", ["^abc\\Z", "(?P<n>x)(?P=n)", "a{,3}", "\\N{DIGIT ONE}"])
def test_pattern_only_python_re_accepts_is_an_invalid_schema(pattern: str) -> None:
    # Valid for Python re, not ECMA-262 with the u flag: refused at compile time, naming where.
    schema = {"type": "object", "properties": {"p": {"type": "string", "pattern": pattern}}}
    failure = validate_instance(schema, {})
    assert failure is not None and failure.kind == "invalid_schema"
    assert "/properties/p/pattern" in failure.message


def test_pattern_properties_follow_the_same_regex_dialect() -> None:
    schema = {"type": "object", "patternProperties": {"^\\d+$": {"type": "integer"}}}
    assert not engine_is_valid(schema, {"7": "x"})
    assert engine_is_valid(schema, {"\u0663": "x"})  # not a match for \d here, so unconstrained


# --- format: an annotation only ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "value"),
    [
        ("email", "not an email"),
        ("date-time", "yesterday"),
        ("date", "2026-13-45"),
        ("ipv4", "999.1.1.1"),
        ("uuid", "nope"),
        ("uri", "::"),
        ("regex", "("),
        ("no-such-format", "x"),
    ],
)
def test_format_is_never_asserted(fmt: str, value: str) -> None:
    schema = {"type": "string", "format": fmt}
    assert validate_instance(schema, value) is None
    assert reference_is_valid(schema, value)
    # Still a string schema: format does not switch off the other keywords.
    failure = validate_instance(schema, 5)
    assert failure is not None and failure.keyword == "type"


# --- nothing is fetched even if the offline pre-check were bypassed -------------------------------------


@pytest.fixture
def schema_server() -> Iterator[tuple[str, list[str]]]:
    with recording_schema_server() as served:
        yield served


def test_engine_retriever_refuses_when_the_precheck_is_bypassed(
    schema_server: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, requests = schema_server
    monkeypatch.setattr(json_schema, "_check_dialects_and_refs", lambda schema, dialect: None)
    cache = ValidatorCache(maxsize=4)
    for schema in (
        {"type": "object", "properties": {"x": {"$ref": f"{base}/x.json"}}},
        {"$id": f"{base}/root.json", "type": "object", "properties": {"x": {"$ref": "other.json"}}},
    ):
        failure = validate_instance(schema, {"x": "hello"}, cache=cache)
        assert failure is not None and failure.kind == "unresolvable_ref"
    assert requests == []


# --- depth and non-JSON values: refused, never a crash ----------------------------------------------------

_RECURSIVE = {"$ref": "#/$defs/n", "$defs": {"n": {"items": {"$ref": "#/$defs/n"}}}}


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth - 1):
        value = [value]
    return [value] if depth else value


def test_depth_bound_is_exact_for_recursive_schemas() -> None:
    assert validate_instance(_RECURSIVE, _nested(MAX_INSTANCE_DEPTH)) is None
    failure = validate_instance(_RECURSIVE, _nested(MAX_INSTANCE_DEPTH + 1))
    assert failure is not None and failure.kind == "instance" and "too deeply" in failure.message


def test_very_deep_instance_in_a_small_thread_stack_is_refused_not_a_crash() -> None:
    # Without the bound, jsonschema_rs recurses per level and overflows a small native stack (SIGSEGV).
    results: list[Any] = []
    previous = threading.stack_size(256 * 1024)
    try:
        for depth in (MAX_INSTANCE_DEPTH, 5000):  # the bound itself must fit in a small stack too
            worker = threading.Thread(
                target=lambda d=depth: results.append(validate_instance(_RECURSIVE, _nested(d)))
            )
            worker.start()
            worker.join()
    finally:
        threading.stack_size(previous)
    assert len(results) == 2 and results[0] is None
    assert results[1] is not None and "too deeply" in results[1].message


def test_cyclic_value_is_refused() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    failure = validate_instance(_RECURSIVE, cyclic)
    assert failure is not None and failure.kind == "instance"


@pytest.mark.parametrize("value", [{1: "x"}, {"a": object()}, [object()]])
def test_non_json_values_are_refused(value: Any) -> None:
    # (The engine converts lazily: a value is refused where a keyword inspects it.)
    schema = {
        "type": ["object", "array"],
        "additionalProperties": {"type": "string"},
        "items": {"type": "string"},
    }
    failure = validate_instance(schema, value)
    assert failure is not None and (failure.kind, failure.message) == ("instance", "value is not JSON data")


def test_tuple_counts_as_an_array() -> None:
    # Documented difference: python-jsonschema only accepts list; wire JSON never has tuples.
    assert validate_instance({"type": "array", "items": {"type": "integer"}}, (1, 2)) is None


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_floats_are_not_numbers(value: float) -> None:
    # Documented difference: JSON has no such numbers; python-jsonschema accepts them as "number".
    failure = validate_instance({"type": "number"}, value)
    assert failure is not None and (failure.keyword, failure.path) == ("type", "")
    assert reference_is_valid({"type": "number"}, value)


def test_fractional_multiple_of_is_exact() -> None:
    # Documented difference: python-jsonschema's float division says 0.3 is not a multiple of 0.1.
    assert validate_instance({"multipleOf": 0.1}, 0.3) is None
    assert not reference_is_valid({"multipleOf": 0.1}, 0.3)
    failure = validate_instance({"multipleOf": 0.1}, 0.35)
    assert failure is not None and failure.keyword == "multipleOf"


# --- reporting: keyword and path from the engine, never its message (which quotes the value) -------------


def test_failure_inside_any_of_points_at_the_specific_branch_error() -> None:
    schema = {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"n": {"type": "integer"}}}]}
    failure = validate_instance(schema, {"n": SECRET})
    assert failure is not None
    assert (failure.keyword, failure.path) == ("type", "/n")
    assert SECRET not in failure.message


def test_first_missing_required_member_is_reported() -> None:
    failure = validate_instance({"type": "object", "required": ["b", "a"]}, {})
    assert failure is not None and (failure.keyword, failure.path) == ("required", "/b")
