"""Schemas, tools and verdicts shared by the contract tests and the validator-engine differential.

The dialect cases follow the JSON Schema Test Suite: the same schema, or the same keyword, means
different things in different drafts, and each dialect must be evaluated as itself.
"""

from __future__ import annotations

from typing import Any

D4 = "http://json-schema.org/draft-04/schema#"
D6 = "http://json-schema.org/draft-06/schema#"
D7 = "http://json-schema.org/draft-07/schema#"
D2019 = "https://json-schema.org/draft/2019-09/schema"
D2020 = "https://json-schema.org/draft/2020-12/schema"
LEGACY = (D4, D6, D7)  # a `$ref` overrides its siblings
MODERN = (D2019, D2020)


def _in(dialect: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"$schema": dialect, **schema}


_REF_WITH_SIBLING_LEGACY = {
    "definitions": {"reffed": {"type": "array"}},
    "properties": {"foo": {"$ref": "#/definitions/reffed", "maxItems": 2}},
}
_REF_WITH_SIBLING_MODERN = {
    "$defs": {"reffed": {"type": "array"}},
    "properties": {"foo": {"$ref": "#/$defs/reffed", "maxItems": 2}},
}
_TREE_2019 = {
    "$recursiveAnchor": True,
    "type": "object",
    "properties": {"children": {"type": "array", "items": {"$recursiveRef": "#"}}},
}
_EMBEDDED_ID_DRAFT4 = {
    "id": "http://tools.invalid/root.json",
    "definitions": {"a": {"id": "a.json", "type": "integer"}},
    "properties": {"p": {"$ref": "a.json"}},
}

# (label, schema, instance, valid): the verdict the dialect's own semantics give.
DIALECT_CASES: list[tuple[str, dict[str, Any], Any, bool]] = [
    # ref.json "ref overrides any sibling keywords" (draft4-7) / "ref applies alongside sibling keywords"
    *[
        (f"ref sibling ignored {d}", _in(d, _REF_WITH_SIBLING_LEGACY), {"foo": [1, 2, 3]}, True)
        for d in LEGACY
    ],
    *[(f"ref target applies {d}", _in(d, _REF_WITH_SIBLING_LEGACY), {"foo": "x"}, False) for d in LEGACY],
    *[
        (f"ref sibling applies {d}", _in(d, _REF_WITH_SIBLING_MODERN), {"foo": [1, 2, 3]}, False)
        for d in MODERN
    ],
    *[(f"ref sibling ok {d}", _in(d, _REF_WITH_SIBLING_MODERN), {"foo": [1, 2]}, True) for d in MODERN],
    # maximum.json (draft4): exclusiveMaximum is a boolean modifier of maximum
    ("draft-04 exclusiveMaximum below", _in(D4, {"maximum": 3.0, "exclusiveMaximum": True}), 2.2, True),
    ("draft-04 exclusiveMaximum boundary", _in(D4, {"maximum": 3.0, "exclusiveMaximum": True}), 3.0, False),
    ("draft-04 inclusive maximum", _in(D4, {"maximum": 3.0, "exclusiveMaximum": False}), 3.0, True),
    *[
        (f"exclusiveMaximum number {d}", _in(d, {"exclusiveMaximum": 3.0}), 3.0, False)
        for d in (D6, D7, D2020)
    ],
    # items.json: array-form items + additionalItems before 2020-12; prefixItems ignored there
    *[
        (
            f"tuple items {d}",
            _in(d, {"items": [{"type": "integer"}], "additionalItems": False}),
            [1, 2],
            False,
        )
        for d in (D4, D6, D7, D2019)
    ],
    ("prefixItems unknown in draft-07", _in(D7, {"prefixItems": [{"type": "integer"}]}), ["x"], True),
    ("prefixItems in 2020-12", _in(D2020, {"prefixItems": [{"type": "integer"}]}), ["x"], False),
    # dependencies.json (draft4-7) vs dependentRequired (2019-09+)
    *[(f"dependencies {d}", _in(d, {"dependencies": {"bar": ["foo"]}}), {"bar": 2}, False) for d in LEGACY],
    # (2019-09 and 2020-12 still apply `dependencies`: the test suite's optional dependencies-compatibility
    # behaviour, which jsonschema_rs follows and python-jsonschema does not; pinned in the engine test.)
    (
        "dependentRequired unknown in draft-07",
        _in(D7, {"dependentRequired": {"bar": ["foo"]}}),
        {"bar": 2},
        True,
    ),
    ("dependentRequired in 2019-09", _in(D2019, {"dependentRequired": {"bar": ["foo"]}}), {"bar": 2}, False),
    # const.json: not a draft-04 keyword
    ("const unknown in draft-04", _in(D4, {"const": 1}), 2, True),
    *[(f"const {d}", _in(d, {"const": 1}), 2, False) for d in (D6, D7, D2020)],
    # if-then-else.json: draft-07 and later
    (
        "if ignored in draft-06",
        _in(D6, {"if": {"required": ["a"]}, "then": {"required": ["b"]}}),
        {"a": 1},
        True,
    ),
    (
        "if applies in draft-07",
        _in(D7, {"if": {"required": ["a"]}, "then": {"required": ["b"]}}),
        {"a": 1},
        False,
    ),
    # unevaluatedProperties.json: 2019-09 and later
    ("unevaluatedProperties unknown in draft-07", _in(D7, {"unevaluatedProperties": False}), {"a": 1}, True),
    ("unevaluatedProperties in 2019-09", _in(D2019, {"unevaluatedProperties": False}), {"a": 1}, False),
    # type.json / zeroTerminatedFloats: 1.0 is an integer from draft-06 on, not in draft-04
    ("1.0 not an integer in draft-04", _in(D4, {"type": "integer"}), 1.0, False),
    *[(f"1.0 is an integer {d}", _in(d, {"type": "integer"}), 1.0, True) for d in (D6, D7, D2019, D2020)],
    # $recursiveRef (2019-09) and draft-04 `id` scoping for embedded resources
    ("recursiveRef tree ok", _in(D2019, _TREE_2019), {"children": [{"children": []}]}, True),
    ("recursiveRef tree bad", _in(D2019, _TREE_2019), {"children": [{"children": [1]}]}, False),
    ("draft-04 id resolves embedded", _in(D4, _EMBEDDED_ID_DRAFT4), {"p": 1}, True),
    ("draft-04 id resolves embedded bad", _in(D4, _EMBEDDED_ID_DRAFT4), {"p": "x"}, False),
    # contains: draft-06 and later
    ("contains unknown in draft-04", _in(D4, {"contains": {"type": "integer"}}), ["a"], True),
    ("contains in draft-06", _in(D6, {"contains": {"type": "integer"}}), ["a"], False),
]

# (label, schema): valid in one dialect, refused by the meta-schema of the one it declares.
DIALECT_INVALID_SCHEMAS: list[tuple[str, dict[str, Any]]] = [
    ("boolean exclusiveMaximum in draft-06", _in(D6, {"maximum": 3, "exclusiveMaximum": True})),
    ("boolean exclusiveMaximum in draft-07", _in(D7, {"maximum": 3, "exclusiveMaximum": True})),
    ("number exclusiveMaximum in draft-04", _in(D4, {"exclusiveMaximum": 3})),
    ("boolean subschema in draft-04", _in(D4, {"properties": {"a": False}})),
    ("array items in 2020-12", _in(D2020, {"items": [{"type": "integer"}]})),
    ("definitions checked in draft-07", _in(D7, {"definitions": {"x": {"type": 1}}})),
    ("$defs checked in 2020-12", _in(D2020, {"$defs": {"x": {"type": 1}}})),
]

# Valid only because the keyword is unknown to the declared dialect (so its content is not checked).
DIALECT_VALID_SCHEMAS: list[tuple[str, dict[str, Any]]] = [
    ("$defs is not a draft-07 keyword", _in(D7, {"$defs": {"x": {"type": 1}}})),
    ("boolean subschema in draft-06", _in(D6, {"properties": {"a": False}})),
    ("array items in 2019-09", _in(D2019, {"items": [{"type": "integer"}]})),
]

# --- the Consume gate
ARRAY_TOOL = {
    "name": "numbers",
    "inputSchema": {"type": "object"},
    "outputSchema": {"type": "array", "items": {"type": "integer"}},
}

ANY_JSON_STRUCTURED_CONTENT: list[tuple[Any, Any]] = [
    ({"type": "string"}, "hello"),
    ({"type": "string"}, ""),
    ({"type": "number"}, 2.5),
    ({"type": "integer"}, 0),
    ({"type": "boolean"}, False),
    ({"type": "null"}, None),
    ({"type": ["object", "null"]}, None),
    ({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": 1}),
    (True, {"anything": ["goes"]}),
]

# --- the Invoke gate
SECRET = "tok-SECRET-9f3a"

REGION_TOOL: dict[str, Any] = {
    "name": "t",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "enum": ["eu", "us"]},
            "limit": {"type": "integer", "minimum": 1},
            "filter": {"$ref": "#/$defs/Filter"},
            "a/b~c": {"type": "boolean"},
        },
        "required": ["region"],
        "additionalProperties": False,
        "$defs": {"Filter": {"type": "object", "properties": {"tag": {"type": "string", "maxLength": 4}}}},
    },
}

DYNAMIC_TREE_SCHEMA: dict[str, Any] = {
    "$id": "urn:tree",
    "$dynamicAnchor": "node",
    "type": "object",
    "properties": {"children": {"type": "array", "items": {"$dynamicRef": "#node"}}},
}
"""A recursive tree through ``$dynamicRef``: resolves locally, never over the network."""
EMBEDDED_RESOURCE_SCHEMA: dict[str, Any] = {
    "$defs": {
        "x": {
            "$id": "urn:emb",
            "$defs": {"y": {"type": "integer"}},
            "properties": {"a": {"$ref": "#/$defs/y"}},
        }
    },
    "$ref": "urn:emb",
}
"""A pointer inside an embedded resource: it resolves against that resource, not the root."""

LOCAL_REFS_SCHEMA: dict[str, Any] = {
    "$id": "urn:example:root",
    "type": "object",
    "properties": {
        "a": {"$ref": "#/$defs/A"},
        "b": {"$ref": "urn:example:b"},
        "c": {"$ref": "#c-anchor"},
        "meta": {"$ref": "https://json-schema.org/draft/2020-12/schema"},
    },
    "$defs": {
        "A": {"type": "integer"},
        "B": {"$id": "urn:example:b", "type": "string"},
        "C": {"$anchor": "c-anchor", "type": "boolean"},
    },
}
