"""Messages that say what happened and what to do — never misdirect: a refused token is said to be
refused (not "pass a token"), an address without a scheme is told how to write the URL, an OpenAPI
error names the document's own place, and a nested-header finding says what is valid and what is a
project rule."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from agent_connector_sdk.cli import main
from agent_connector_sdk.connectors.openapi import document_place
from agent_connector_sdk.demo.lab_service import OPERATOR_TOKEN, lab_service_app
from tests.support.http_server import serve_asgi


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv), io.StringIO()) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_a_refused_token_is_said_to_be_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # The lab runs in this process, and FastMCP's auth middleware logs "Auth error returned" at INFO
    # *after* it has sent the 401: on a busy machine that line came after the review had ended and put
    # the fastmcp logger back to INFO, and landed on the CLI's stderr. The server's records are not
    # the CLI's output: they stay below the level that prints (the conftest restores the level after).
    logging.getLogger("fastmcp.server.auth").setLevel(logging.WARNING)
    with serve_asgi(lab_service_app()) as url:
        refused = _error(capsys, "review", url, "--token", "not-the-lab-token")
        header = _error(capsys, "review", url, "--header", "Authorization: Bearer not-the-lab-token")
        missing = _error(capsys, "review", url)
    for line in (refused, header):
        assert line.endswith(
            "answered HTTP 401 (unauthorized): invalid_token; the credentials sent were refused"
        )
        assert "pass credentials" not in line and "not-the-lab-token" not in line
    assert missing.endswith("answered HTTP 401 (unauthorized); pass credentials with --token or --header")


@pytest.mark.parametrize(
    ("typed", "url"),
    [
        ("127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp"),
        ("localhost:8000", "http://localhost:8000/mcp"),
        ("localhost/mcp", "http://localhost/mcp"),
        ("[::1]:8000/mcp", "http://[::1]:8000/mcp"),
        ("mcp.example.com", "http://mcp.example.com/mcp"),
    ],
)
def test_an_address_without_a_scheme_is_told_the_url(
    capsys: pytest.CaptureFixture[str], typed: str, url: str
) -> None:
    line = _error(capsys, "review", typed)
    said = f"agent-connector: {json.dumps(typed)} is neither a URL nor a program on PATH"
    assert line == f"{said}; for an HTTP server write {url}"


@pytest.mark.parametrize("typed", ["server.py", "no-such-mcp-program", "build.v2/server"])
def test_a_program_name_is_still_run_as_a_program(capsys: pytest.CaptureFixture[str], typed: str) -> None:
    line = _error(capsys, "review", typed)
    assert f"cannot start {typed}: program not found" in line


def test_an_openapi_error_names_the_documents_own_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = tmp_path / "pets.yaml"
    document.write_text(
        "openapi: 3.1.0\ninfo: {title: pets, version: '1'}\npaths:\n  /pets:\n    get:\n"
        "      operationId: listPets\n      parameters:\n        - name: limit\n          in: query\n"
        "          schema: {type: 5}\n      responses:\n        '200': {description: ok}\n",
        encoding="utf-8",
    )
    line = _error(
        capsys, "serve", "--openapi", str(document), "--upstream", "http://127.0.0.1:9", "--port", "0"
    )
    place = "paths./pets.get.parameters[0].schema.type"
    assert line.startswith(f"agent-connector: invalid OpenAPI document at {place}: Input should be ")
    assert "Parameter" not in line and "str-enum" not in line and "DataType" not in line


def test_document_place_keeps_the_documents_keys_and_drops_the_parsers_names() -> None:
    document: dict[str, Any] = {
        "paths": {
            "/a": {
                "post": {
                    "requestBody": {
                        "content": {"application/json": {"schema": {"properties": {"Schema": {"type": []}}}}}
                    }
                }
            }
        }
    }
    location = (
        "paths",
        "/a",
        "post",
        "requestBody",
        "RequestBody",
        "content",
        "application/json",
        "MediaType",
        "schema",
        "Schema",
        "properties",
        "Schema",
        "Schema",
        "type",
        "str-enum[DataType]",
    )
    place = document_place(location, document)
    assert place == "paths./a.post.requestBody.content.application/json.schema.properties.Schema.type"
    assert document_place(("Nothing", 3), document) == "the document's root"


def test_the_nested_header_finding_says_valid_by_spec_stricter_by_project_rule(
    tmp_path: Path,
) -> None:
    tools = tmp_path / "tools.json"
    nested = {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}}
    tools.write_text(
        json.dumps(
            {
                "tools": [
                    {"name": "route", "inputSchema": {"type": "object", "properties": {"target": nested}}}
                ]
            }
        ),
        encoding="utf-8",
    )
    out = io.StringIO()
    assert main(["review", "--descriptor", str(tools), "--json"], out) == 0
    (finding,) = json.loads(out.getvalue())["tools"][0]["findings"]
    assert finding["rule"] == "header-placement"
    assert finding["message"] == (
        "x-mcp-header on a nested property: the spec allows it since 2026-06-17; this project's rule keeps "
        "annotations on root properties (earlier clients drop such a tool)"
    )


def test_a_call_of_a_tool_the_server_does_not_have_says_so_and_names_the_closest() -> None:
    with serve_asgi(lab_service_app()) as url:
        outputs = {}
        for typed in ("search_evidenc", "zzz"):
            out = io.StringIO()
            assert main(["review", url, "--token", OPERATOR_TOKEN, "--call", typed], out) == 0
            outputs[typed] = out.getvalue()
    (typo,) = [line for line in outputs["search_evidenc"].splitlines() if line.startswith("call ")]
    assert typo == (
        "call     search_evidenc: unknown_tool — no listed or searchable tool has this name "
        "(did you mean search_evidence?)"
    )
    (unlike,) = [line for line in outputs["zzz"].splitlines() if line.startswith("call ")]
    assert unlike == "call     zzz: unknown_tool — no listed or searchable tool has this name"
