"""The published JSON Schema artifacts validate real manifests and fragments, and are up to date."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from agent_connector_sdk.core.schema_disclosure import SchemaDisclosure
from scripts.generate_schema_disclosure import build_artifacts, main, render

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"


def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def validators() -> tuple[Draft202012Validator, Draft202012Validator]:
    manifest_schema = _load("schema-manifest.schema.json")
    fragment_schema = _load("schema-fragment.schema.json")
    registry: Registry[Any] = Registry().with_resources(
        [
            (schema["$id"], Resource.from_contents(schema, default_specification=DRAFT202012))
            for schema in (manifest_schema, fragment_schema)
        ]
    )
    for schema in (manifest_schema, fragment_schema):
        Draft202012Validator.check_schema(schema)
    return (
        Draft202012Validator(manifest_schema, registry=registry),
        Draft202012Validator(fragment_schema, registry=registry),
    )


def test_fragment_schema_refers_to_the_shared_identity_by_id() -> None:
    manifest_schema = _load("schema-manifest.schema.json")
    fragment_schema = _load("schema-fragment.schema.json")
    assert "SchemaIdentity" in manifest_schema["$defs"]
    assert fragment_schema["$ref"] == manifest_schema["$id"] + "#/$defs/SchemaIdentity"
    assert "alias" not in fragment_schema["properties"]  # not repeated


def test_real_manifest_and_fragments_validate(
    validators: tuple[Draft202012Validator, Draft202012Validator], disclosure: SchemaDisclosure
) -> None:
    manifest_validator, fragment_validator = validators
    manifest_validator.validate(json.loads(disclosure.manifest.model_dump_json()))
    for fragment in disclosure.fragments:
        fragment_validator.validate(json.loads(fragment.model_dump_json()))


@pytest.mark.parametrize(
    "changes",
    [{"unknown": 1}, {"version": "1"}, {"version": True}, {"fragment_count": "3"}, {"alias": "a b"}],
)
def test_unknown_field_or_coerced_type_fails(
    validators: tuple[Draft202012Validator, Draft202012Validator],
    disclosure: SchemaDisclosure,
    changes: dict[str, Any],
) -> None:
    manifest_validator, fragment_validator = validators
    manifest = {**json.loads(disclosure.manifest.model_dump_json()), **changes}
    fragment = {**json.loads(disclosure.fragments[0].model_dump_json()), **changes}
    assert not manifest_validator.is_valid(manifest)
    assert not fragment_validator.is_valid(fragment)


def test_fragment_only_fields_fail_on_the_manifest(
    validators: tuple[Draft202012Validator, Draft202012Validator], disclosure: SchemaDisclosure
) -> None:
    manifest_validator, fragment_validator = validators
    fragment = json.loads(disclosure.fragments[0].model_dump_json())
    assert not manifest_validator.is_valid(fragment)
    assert not fragment_validator.is_valid({**fragment, "index": "0"})
    del fragment["text"]
    assert not fragment_validator.is_valid(fragment)


def test_committed_artifacts_are_current() -> None:
    for name, schema in build_artifacts().items():
        assert (SCHEMAS / name).read_text(encoding="utf-8") == render(schema), name
    assert main(["--check"]) == 0


def test_check_names_a_stale_artifact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    import scripts.generate_schema_disclosure as generator

    monkeypatch.setattr(generator, "SCHEMAS", tmp_path)
    monkeypatch.setattr(generator, "ROOT", tmp_path.parent)
    assert generator.main([]) == 0
    (tmp_path / "schema-fragment.schema.json").write_text("{}", encoding="utf-8")
    assert generator.main(["--check"]) == 1
    assert "schema-fragment.schema.json" in capsys.readouterr().err
