"""Navigation describes composite arguments as such (issue 29): ``anyOf``/``oneOf``/``allOf`` name their
branches, so a caller knows an argument takes one of several shapes before it reads the full schema."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agent_connector_sdk.cli import main
from agent_connector_sdk.core.disclosure_navigation import summarize_arguments


def _label(schema: Any) -> str:
    summary, _ = summarize_arguments({"type": "object", "properties": {"x": schema}})
    return str(summary[0]["type"])


@pytest.mark.parametrize(
    ("schema", "label"),
    [
        ({"anyOf": [{"type": "object", "properties": {}}, {"type": "integer"}]}, "anyOf(object, integer)"),
        # A union of bare types is a type list, and says so the same way.
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, "string|integer"),
        ({"oneOf": [{"type": "string"}, {"type": "null"}]}, "string|null"),
        ({"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}, "oneOf(Cat, Dog)"),
        ({"allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"a": {}}}]}, "allOf(Base, object)"),
        ({"anyOf": [{"type": "object", "properties": {}}, {"type": "null"}]}, "anyOf(object, null)"),
        # A composite with a declared type is still described by its branches.
        ({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, "oneOf(any, any)"),
        (
            {"type": "array", "items": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/Id"}]}},
            "anyOf(string, Id)[]",
        ),
        ({"anyOf": [{"type": "null", "title": "t"}] * 9}, "anyOf(" + ", ".join(["null"] * 8) + ", …)"),
        # Plain shapes keep their labels.
        ({"type": ["string", "null"]}, "string|null"),
        ({"type": "array", "items": {"type": "string"}}, "string[]"),
        ({"type": "array"}, "array"),
        ({"enum": ["a", "b"]}, "enum"),
        ({"properties": {}}, "object"),
        ({}, "any"),
    ],
)
def test_composite_arguments_are_described_as_such(schema: dict[str, Any], label: str) -> None:
    assert _label(schema) == label


def test_a_deeply_nested_composite_stays_bounded() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(50):
        schema = {"anyOf": [schema, schema]}
    label = _label(schema)
    assert label.startswith("anyOf(anyOf(") and len(label) <= 65


def test_review_shows_the_same_labels(tmp_path: Path) -> None:
    descriptor = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {
                "pet": {"anyOf": [{"type": "object", "properties": {}}, {"type": "integer"}]},
                "q": {"type": ["string", "null"]},
            },
        },
    }
    path = tmp_path / "tool.json"
    path.write_text(json.dumps(descriptor), encoding="utf-8")
    out = io.StringIO()
    assert main(["review", "--descriptor", str(path)], out=out) == 0
    text = out.getvalue()
    assert "pet: anyOf(object, integer)" in text and "q: string|null" in text  # one argument per line
