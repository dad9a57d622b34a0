"""``load_openapi``: a JSON document is used as parsed; a YAML one is made JSON data first."""

from __future__ import annotations

import json
from pathlib import Path

from agent_connector_sdk.cli.sources import load_openapi

_YAML = """\
openapi: 3.1.0
info: {title: t, version: 1}
paths:
  /items:
    get:
      operationId: list_items
      x-released: 2024-05-01
      responses:
        200: {description: ok}
"""


def test_yaml_integer_keys_and_dates_become_json_data(tmp_path: Path) -> None:
    path = tmp_path / "api.yaml"
    path.write_text(_YAML, encoding="utf-8")
    source = load_openapi(str(path))
    operation = source.document["paths"]["/items"]["get"]
    assert operation["responses"] == {"200": {"description": "ok"}}  # YAML's int key 200, as JSON has it
    assert operation["x-released"] == "2024-05-01"  # a YAML date, as text
    assert source.raw == _YAML.encode()
    assert json.loads(json.dumps(source.document)) == source.document


def test_json_document_is_the_parse_of_its_exact_bytes(tmp_path: Path) -> None:
    raw = b'{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {"/a": {}}, "x": 1.5e300}'
    path = tmp_path / "api.json"
    path.write_bytes(raw)
    source = load_openapi(str(path))
    assert source.raw == raw
    assert source.document == json.loads(raw)
