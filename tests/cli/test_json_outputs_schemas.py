"""Every JSON output is described by a published schema, generated from its model, and real output
validates against it: ``disclose --json`` here (``review --json``, ``review --mcp-config --json`` and
the lock have their own tests)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from agent_connector_sdk.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = """openapi: 3.1.0
info: {title: pets, version: "1"}
servers: [{url: "https://pets.example"}]
paths:
  /pets/{id}:
    get:
      operationId: getPet
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object, properties: {name: {type: string}}}
"""


def test_disclose_json_validates_against_its_published_schema(tmp_path: Path) -> None:
    document = tmp_path / "pets.yaml"
    document.write_text(DOCUMENT, encoding="utf-8")
    out = io.StringIO()
    assert main(["disclose", "--openapi", str(document), "--verify", "--json"], out) == 0
    report = json.loads(out.getvalue())
    schema = json.loads((ROOT / "schemas" / "disclose-report.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    errors = [error.message for error in Draft202012Validator(schema).iter_errors(report)]
    assert errors == []
    assert [d["verified"] for d in report["disclosures"]] == [True]
    assert report["disclosures"][0]["manifest"]["alias"] and report["refusals"] == []
    # The schema is strict enough to catch a broken document.
    report["disclosures"][0]["verified"] = "yes"
    assert list(Draft202012Validator(schema).iter_errors(report))
