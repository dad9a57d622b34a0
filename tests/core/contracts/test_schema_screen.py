"""The admission screens are exact: they only ever clear what the full checks would accept.

``screen_schemas`` says "certainly accepted" without compiling a validator; whenever it does, the full
:func:`check_schema` (meta-schema, both regex engines, offline references, the Rust compilation) must
accept the same schema — hypothesis draws schemas in every dialect from a vocabulary built to hit what
only compilation catches (ECMA-only and Python-only regexes, in schema and data positions, bad ``$id``
and anchors, references, embedded ``$schema``, odd numbers). ``screened_bound_crossed`` must equal the
size/depth walk on any value (``None``/int keys, tuples, bytes and sets included), and admission with
the screens must equal admission without them, report for report, under random policies.
"""

from __future__ import annotations

import marshal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.contracts import (
    AdmissionPolicy,
    ValidatorCache,
    json_bound_crossed,
    validate_instance,
)
from agent_connector_sdk.core.contracts import _admission as admission
from agent_connector_sdk.core.contracts import _json_schema as json_schema
from agent_connector_sdk.core.contracts import _sizes as sizes
from agent_connector_sdk.core.contracts._json_schema import (
    ALL_DIALECTS,
    DIALECTS,
    check_schema,
    screen_schemas,
)
from agent_connector_sdk.core.contracts._sizes import screened_bound_crossed

DIALECT_URIS = [d.uri for d in DIALECTS.values()] + [d.uri + "#" for d in DIALECTS.values()]
PATTERNS = [
    "^[a-z]+$",
    "\\d+",
    "",
    "\\Z",  # Python only
    "(?P<n>x)(?P=n)",  # Python only
    "(?<n>x)",  # ECMA only (Python 3.11 refuses it)
    "\\p{L}",  # ECMA (unicode) only
    "[[:alpha:]]",
    "(",
    "a{2,1}",
    "(?=a)b",
    "(?<=a)b",
    "\\1(a)",
    "\\cA",
    "a\\",
]
SCALARS: dict[str, list[Any]] = {
    "type": ["string", "object", "array", "integer", "null", "nope", ["string", "null"], ["a", "a"]],
    "pattern": [*PATTERNS, 1],
    "minLength": [0, 1, -1, 1.0, 1.5, 2**64, 2**70, True, "3"],
    "maximum": [1, 1.5, 1e308, 2**80, "x", True],
    "exclusiveMinimum": [True, 1, 0.5],
    "multipleOf": [0, 0.1, -1, 1e-320, 2],
    "enum": [[], [1], [1, 1], "x"],
    "const": [None, {"pattern": "("}, [1]],
    "required": [[], ["a"], ["a", "a"], "a", [1]],
    "format": ["date-time", "regex", "unknown-format", 1],
    "$ref": ["#", "#/$defs/a", "#/definitions/a", "#/$defs/missing", "http://example.com/x", "o.json", 5],
    "$id": ["http://example.com/s", "::bad", "x y", "#frag", "urn:x"],
    "id": ["http://example.com/s", "::bad", "x"],
    "$anchor": ["a", "1bad"],
    "$dynamicAnchor": ["a"],
    "$dynamicRef": ["#a", "#missing"],
    "$recursiveRef": ["#"],
    "$recursiveAnchor": [True, 1],
    "$schema": [*DIALECT_URIS, "http://example.com/meta", 3],
    "$vocabulary": [{"https://json-schema.org/draft/2020-12/vocab/core": True}],
    "contentEncoding": ["base64", "nope"],
    "default": [{"pattern": "\\Z"}, {"patternProperties": {"(": 1}}, {"pattern": "(?<n>x)"}, "x"],
    "examples": [[{"pattern": "("}], "x"],
    "uniqueItems": [True, "x"],
    "minItems": [0, -2],
    "dependencies": [{"a": ["b"]}, {"a": ["b", "b"]}],
    "dependentRequired": [{"a": ["b"]}, {"a": [1]}],
    "x-mcp-header": ["Region"],
    "$comment": ["c"],
}
SINGLE = ["additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "items",
          "additionalItems", "unevaluatedProperties", "contentSchema"]  # fmt: skip
LISTS = ["allOf", "anyOf", "oneOf", "prefixItems", "items"]
MAPS = ["properties", "$defs", "definitions", "dependentSchemas", "dependencies"]


def _keyword(children: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[str, Any]]:
    scalar = st.sampled_from(sorted(SCALARS)).flatmap(
        lambda key: st.sampled_from(SCALARS[key]).map(lambda value: (key, value))
    )
    single = st.tuples(st.sampled_from(SINGLE), children)
    many = st.tuples(st.sampled_from(LISTS), st.lists(children, max_size=2))
    keyed = st.tuples(
        st.sampled_from(MAPS), st.dictionaries(st.sampled_from(["a", "b"]), children, max_size=2)
    )
    patterned = st.tuples(
        st.just("patternProperties"), st.dictionaries(st.sampled_from(PATTERNS), children, max_size=2)
    )
    return st.one_of(scalar, scalar, single, many, keyed, patterned)


def _schema(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(_keyword(children), max_size=4).map(dict)


SCHEMAS: st.SearchStrategy[Any] = st.recursive(st.booleans() | st.just({}), _schema, max_leaves=12)
ROOTS = st.tuples(st.sampled_from([None, *DIALECT_URIS]), _schema(SCHEMAS)).map(
    lambda pair: pair[1] if pair[0] is None else {"$schema": pair[0], **pair[1]}
)


def _full(schema: Any, dialects: frozenset[Any] = ALL_DIALECTS) -> Any:
    return check_schema(schema, dialects=dialects, cache=ValidatorCache(4))


@pytest.mark.filterwarnings("ignore:Possible nested set:FutureWarning")  # re on "[[:alpha:]]"
@settings(max_examples=600, deadline=None)
@given(ROOTS, st.sets(st.sampled_from(sorted(ALL_DIALECTS - {"2020-12"}))))
def test_a_screened_schema_is_one_the_full_check_accepts(schema: Any, others: set[Any]) -> None:
    dialects = frozenset({"2020-12", *others})
    if screen_schemas([schema], marshal.dumps(schema, 2), dialects=dialects):
        assert _full(schema, dialects) is None
        # ... and its validator really compiles (what a later gate will build on first use).
        cache = ValidatorCache(4)
        cache._get(schema)
        assert next(iter(cache._entries.values())).validator is not None


@settings(max_examples=200, deadline=None)
@given(st.lists(ROOTS, min_size=1, max_size=2), st.text(max_size=12))
def test_the_screen_judges_several_schemas_against_their_holders_bytes(
    schemas: list[Any], extra: str
) -> None:
    holder = {"description": extra, "schemas": schemas}
    if screen_schemas(schemas, marshal.dumps(holder, 2), dialects=ALL_DIALECTS):
        assert all(_full(schema) is None for schema in schemas)


ACCEPTED = [
    {"type": "object", "properties": {"q": {"type": "string", "pattern": "^[a-z]+$"}}, "required": ["q"]},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": False},
    {"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "object", "minProperties": 1},
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "default": {"pattern": "x"}},
]
NOT_SCREENED = {
    "ECMA-invalid pattern": {"type": "object", "properties": {"s": {"type": "string", "pattern": "\\p{"}}},
    "Python-only pattern": {"type": "object", "properties": {"s": {"type": "string", "pattern": "\\Z"}}},
    "ECMA-invalid pattern in data": {"type": "object", "default": {"pattern": "(?P<n>x)"}},
    "bad $id": {"$id": "::bad", "type": "object"},
    "local $ref": {"type": "object", "$defs": {"a": {}}, "properties": {"a": {"$ref": "#/$defs/a"}}},
    "embedded $schema": {"type": "object", "properties": {"a": {"$schema": DIALECTS["draft-07"].uri}}},
    "draft-04": {"$schema": DIALECTS["draft-04"].uri, "type": "object"},
    "meta-schema": {"type": "object", "minProperties": -1},
    "boolean": True,
}


@pytest.mark.parametrize("schema", ACCEPTED)
def test_plain_schemas_are_screened_and_accepted(schema: Any) -> None:
    assert screen_schemas([schema], marshal.dumps(schema, 2), dialects=ALL_DIALECTS)
    assert _full(schema) is None


@pytest.mark.parametrize("name", sorted(NOT_SCREENED))
def test_what_only_the_full_check_can_judge_is_never_screened(name: str) -> None:
    schema: Any = NOT_SCREENED[name]
    assert not screen_schemas([schema], marshal.dumps(schema, 2), dialects=ALL_DIALECTS)


def test_a_dialect_outside_the_policy_is_never_screened() -> None:
    schema = {"$schema": DIALECTS["draft-07"].uri, "type": "object"}
    assert not screen_schemas([schema], marshal.dumps(schema, 2), dialects={"2020-12"})
    failure = _full(schema, frozenset({"2020-12"}))
    assert failure is not None and failure.kind == "unsupported_dialect"


# ---------------------------------------------------------------------------------------- sizes

_keys = st.text(max_size=5) | st.none() | st.booleans() | st.integers(-3, 2**40) | st.floats(allow_nan=False)
_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.binary(max_size=4)
    | st.just(...)
    | st.frozensets(st.integers(0, 3), max_size=2)
)
_values = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(_keys, inner, max_size=4)
        | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=40,
)


@settings(max_examples=600, deadline=None)
@given(_values, st.integers(0, 600), st.integers(0, 6) | st.integers(120, 140))
def test_screened_bounds_equal_the_walk(value: Any, max_bytes: int, max_depth: int) -> None:
    expected = json_bound_crossed(value, max_bytes=max_bytes, max_depth=max_depth)
    screened = screened_bound_crossed(
        value, marshal.dumps(value, 2), max_bytes=max_bytes, max_depth=max_depth
    )
    assert screened == expected


@settings(max_examples=600, deadline=None)
@given(_values, st.integers(0, 600))
def test_the_size_alone_is_the_walks_verdict(value: Any, max_bytes: int) -> None:
    # Without a depth bound (a result's size, per call) a marshal screen may clear the value unwalked.
    assert json_bound_crossed(value, max_bytes=max_bytes) == sizes._walk(
        value, max_bytes=max_bytes, max_depth=None
    )


def test_the_size_screen_clears_a_large_answer_and_the_walk_still_refuses_it() -> None:
    answer = {"content": [{"type": "text", "text": "x" * 100_000}], "structuredContent": {"n": [1] * 5000}}
    measured = 0
    for bound in (10**7, 200_000, 100_000, 1000):
        walked = sizes._walk(answer, max_bytes=bound, max_depth=None)
        assert json_bound_crossed(answer, max_bytes=bound) == walked
        measured += walked is None
    assert measured == 2  # cleared under the two large bounds, refused under the small ones
    assert sizes._bytes_screen(answer, 10**7)  # the large bound is cleared by the screen itself
    deep: Any = 1
    for _ in range(3000):  # deeper than marshal writes: the walk decides
        deep = [deep]
    assert not sizes._bytes_screen(deep, 10**7)
    assert json_bound_crossed(deep, max_bytes=10**7) is None
    assert json_bound_crossed(deep, max_bytes=100) == "bytes"


@pytest.mark.parametrize("levels", [64, 65, 66, 1500])
def test_screened_depth_equals_the_walk_around_the_bound(levels: int) -> None:
    value: Any = "x"
    for level in range(levels):
        value = {"a": value} if level % 2 else [value]
    expected = json_bound_crossed(value, max_bytes=1 << 20, max_depth=64)
    assert screened_bound_crossed(value, marshal.dumps(value, 2), max_bytes=1 << 20, max_depth=64) == expected
    assert expected == (None if levels <= 65 else "depth")


# ------------------------------------------------------------------------------------- admission


@st.composite
def _descriptors(draw: st.DrawFn) -> Any:
    item: dict[str, Any] = {"name": draw(st.sampled_from(["a", "b", "c", "dup"])), "inputSchema": draw(ROOTS)}
    if draw(st.booleans()):
        item["inputSchema"] = {"type": "object", **item["inputSchema"]}
    if draw(st.booleans()):
        item["inputSchema"]["properties"] = {
            draw(st.sampled_from(["region", "token", "n"])): draw(
                st.sampled_from(
                    [
                        {"type": "string", "x-mcp-header": "Region"},
                        {"type": "number", "x-mcp-header": "N"},
                        {"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": "X"}}},
                        {"type": "string"},
                    ]
                )
            )
        }
    if draw(st.booleans()):
        item["outputSchema"] = draw(st.one_of(ROOTS, st.just({"x-mcp-header": "O"}), st.just("no")))
    if draw(st.booleans()):
        item["description"] = draw(
            st.sampled_from(["$ref in prose", "a pattern", "$schema", "x-mcp-header", "é"])
        )
    return item


POLICIES = st.builds(
    AdmissionPolicy,
    profile=st.sampled_from(["strict", "spec"]),
    dialects=st.sets(st.sampled_from(sorted(ALL_DIALECTS))).map(lambda d: frozenset({"2020-12", *d})),
    max_descriptor_bytes=st.sampled_from([60, 200, 1 << 20]),
    max_schema_depth=st.sampled_from([2, 4, 64, 200]),
    max_mirrored_headers=st.sampled_from([1, 32]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_descriptors(), max_size=4), POLICIES)
def test_admission_with_screens_equals_admission_without(listing: list[Any], policy: AdmissionPolicy) -> None:
    assert admission._admit(listing, policy, None) == admission._admit(listing, policy, None, screen=False)


def test_a_screened_admission_compiles_no_validator_and_the_call_still_validates() -> None:
    schema = {
        "type": "object",
        "properties": {"screened-only": {"type": "integer"}},
        "required": ["screened-only"],
    }
    json_schema.clear_validator_cache()
    report = admission._admit([{"name": "lazy", "inputSchema": schema}], AdmissionPolicy(), None)
    assert list(report.admitted) == ["lazy"]
    assert schema not in json_schema.default_validator_cache()  # nothing compiled at Admit
    failure = validate_instance(schema, {"screened-only": "x"})  # compiled here, on first use
    assert failure is not None and failure.keyword == "type"
    assert schema in json_schema.default_validator_cache()


@pytest.mark.filterwarnings("ignore:Possible nested set:FutureWarning")
@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(ALL_DIALECTS)), st.sampled_from(PATTERNS) | st.text(max_size=8))
def test_the_regex_memo_answers_as_the_uncached_judgment(dialect: Any, pattern: str) -> None:
    assert json_schema._regex_usable_memo(dialect, pattern) == json_schema._regex_usable(dialect, pattern)
    assert json_schema._regex_usable_memo(dialect, pattern) == json_schema._regex_usable(dialect, pattern)


@pytest.mark.parametrize(
    ("levels", "pattern", "category"), [(60, "^a$", None), (127, "^a$", None), (127, "\\Z", "invalid_schema")]
)
def test_deep_schemas_at_the_screen_depth_are_judged_like_the_full_check(
    levels: int, pattern: str, category: str | None
) -> None:
    schema: Any = {"type": "string", "pattern": pattern}
    for _ in range(levels // 2):
        schema = {"type": "object", "properties": {"a": schema}}
    listing = [{"name": "deep", "inputSchema": schema}]
    policy = AdmissionPolicy(max_schema_depth=128)
    screened = admission._admit(listing, policy, None)
    assert screened == admission._admit(listing, policy, None, screen=False)
    assert [rejection["category"] for rejection in screened.rejected] == ([category] if category else [])
