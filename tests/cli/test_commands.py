"""``serve``, ``disclose``, the offline reviewer and every bad input: as a user runs them."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml  # type: ignore[import-untyped]

from tests.support.cli import ROOT, assert_one_line_error, run_cli, run_cli_in_process

PETS = {
    "openapi": "3.1.0",
    "info": {"title": "Pet Store", "version": "2.4.1"},
    "servers": [{"url": "http://127.0.0.1:9"}],
    "paths": {
        "/pets/{id}": {
            "get": {
                "operationId": "getPet",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


def _yaml(tmp_path: Path, document: dict[str, Any], name: str = "pets.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def test_review_prints_the_packaged_report_schema() -> None:
    run = run_cli("review", "--json-schema")
    assert run.code == 0
    published = (Path(ROOT) / "schemas" / "review-report.schema.json").read_text(encoding="utf-8")
    assert run.out == published and json.loads(run.out)["title"] == "ReviewReport"


def test_help_and_version_everywhere() -> None:
    commands: tuple[list[str], ...] = (
        [],
        ["review"],
        ["serve"],
        ["disclose"],
        ["state"],
        ["state", "disable"],
        ["state", "enable"],
        ["state", "status"],
    )
    for command in commands:
        helped = run_cli(*command, "--help")
        assert helped.code == 0 and "Usage: agent-connector" in helped.out
        assert ":class:" not in helped.out and "``" not in helped.out  # no raw reST markup
        version = run_cli(*command, "--version")
        assert version.code == 0 and version.out.strip() == "0.1.0", command


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["review"], "exactly one of"),
        (["review", "not-a-url"], "not-a-url: program not found"),  # a bare word: a stdio command
        (["review", "example.invalid:8000"], "neither a URL nor a program on PATH"),
        (["review", "ftp://example.invalid/mcp"], "not an http(s) URL"),
        (["review", "http://127.0.0.1:9/mcp", "--call", "x", "--arguments", "{"], "not valid JSON"),
        (["review", "http://127.0.0.1:9/mcp", "--call", "x", "--arguments", "[1]"], "JSON object"),
        (["review", "http://127.0.0.1:9/mcp", "--timeout", "0"], "--timeout"),
        (["review", "http://127.0.0.1:9/mcp", "--header", "no colon"], "--header"),
        (["review", "--nope"], "--nope"),
        (["serve", "--port", "99999"], "between 0 and 65535"),
        (["serve", "--port", "abc"], "--port"),
        (["serve", "--host", "0.0.0.0"], "demo tokens"),
        (["serve", "--host", "no-such-host.invalid"], "--host"),
        (["serve", "--state", "ftp://state.invalid"], "--state"),
        (["serve", "--replica-id", "bad id!"], "replica_id"),
        (["disclose", "--operation", "no/such-op"], "no operation or tool named"),
        (["disclose", "--openapi", "/no/such/file.json"], "no such file"),
    ],
)
def test_bad_input_is_exit_2_and_one_line(argv: list[str], says: str) -> None:
    assert_one_line_error(run_cli(*argv), says)


def test_bad_documents_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    (tmp_path / "broken.yaml").write_text("a: [b", encoding="utf-8")
    (tmp_path / "swagger.yaml").write_text("swagger: '2.0'\npaths: {}\n", encoding="utf-8")
    empty = _yaml(tmp_path, {**PETS, "paths": {}}, "empty.yaml")
    no_server = _yaml(
        tmp_path, {key: value for key, value in PETS.items() if key != "servers"}, "noserver.yaml"
    )
    assert_one_line_error(
        run_cli_in_process("disclose", "--openapi", str(tmp_path / "broken.json")), "not valid JSON"
    )
    assert_one_line_error(run_cli_in_process("disclose", "--openapi", str(tmp_path / "broken.yaml")), "YAML")
    assert_one_line_error(
        run_cli_in_process("disclose", "--openapi", str(tmp_path / "swagger.yaml")), "Swagger 2.0"
    )
    assert_one_line_error(run_cli_in_process("disclose", "--openapi", str(empty)), "no operations")
    assert_one_line_error(
        run_cli_in_process("serve", "--openapi", str(no_server), "--port", "0"), "--upstream"
    )
    # disclose makes no calls: no concrete server URL is needed.
    assert run_cli_in_process("disclose", "--openapi", str(no_server)).code == 0


def test_a_document_the_openapi_parser_refuses_is_one_line_without_its_values(tmp_path: Path) -> None:
    secretish = "value-from-the-document-" + "x" * 20
    pets = json.loads(json.dumps(PETS))
    operation = next(iter(next(iter(pets["paths"].values())).values()))
    operation["parameters"] = [
        {"name": "q", "in": "query", "description": secretish, "schema": {"type": "string", "minLength": -1}}
    ]
    bad = _yaml(tmp_path, pets, "negative.yaml")
    for argv in (["serve", "--openapi", str(bad), "--port", "0"], ["disclose", "--openapi", str(bad)]):
        run = run_cli_in_process(*argv)  # FastMCP's log records land in the captured stderr too
        assert_one_line_error(
            run, "invalid OpenAPI document at paths.", "minLength", "greater than or equal to 0"
        )
        assert secretish not in run.err  # FastMCP's parser logs and its error list carry the values


def test_stdio_server_that_dies_is_one_line_quoting_its_stderr(tmp_path: Path) -> None:
    script = tmp_path / "dies.py"
    script.write_text(
        "import sys\nsys.stderr.write('boom: missing config\\n')\nsys.exit(3)\n", encoding="utf-8"
    )
    run = run_cli("review", "--", sys.executable, str(script))
    assert_one_line_error(run, "closed before an answer arrived", "server stderr: boom: missing config")


def test_disclose_embedded_default_summary_out_and_verify(tmp_path: Path) -> None:
    run = run_cli_in_process("disclose", "--out", str(tmp_path / "out"), "--verify")
    assert run.code == 0, run.err
    assert "10 disclosures (118 fragments" in run.out
    assert "issues_list_events_for_timeline" in run.out and "428,709" in run.out
    assert "verified 10 of 10 reconstructed intact from the files" in run.out
    assert "refused  none" in run.out
    timeline = tmp_path / "out" / "issues_list_events_for_timeline"
    assert len(list((timeline / "fragments").iterdir())) == 105
    manifest = json.loads((timeline / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["fragment_count"] == 105


def test_verify_from_files_catches_a_corrupted_fragment(tmp_path: Path) -> None:
    from agent_connector_sdk.cli.disclose import build_disclosures, verify_disclosure, write_disclosures
    from agent_connector_sdk.connectors import load_github_extract

    run = build_disclosures(load_github_extract(), operation="issues/list-events-for-timeline")
    write_disclosures(run, tmp_path)
    (disclosure,) = run.disclosures.values()
    assert verify_disclosure(disclosure, tmp_path) is None
    fragment = tmp_path / disclosure.manifest.alias / "fragments" / "7.json"
    body = json.loads(fragment.read_text(encoding="utf-8"))
    body["text"] = body["text"][:-1] + ("a" if body["text"][-1] != "a" else "b")
    fragment.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    assert verify_disclosure(disclosure, tmp_path) == "corrupt"


def test_disclose_yaml_document(tmp_path: Path) -> None:
    run = run_cli_in_process("disclose", "--openapi", str(_yaml(tmp_path, PETS)), "--json")
    assert run.code == 0, run.err
    (entry,) = run.json()["disclosures"]
    assert entry["manifest"]["alias"] == "getPet" and entry["manifest"]["operation"] == "getPet"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _spawn_cli(*args: str) -> subprocess.Popen[str]:
    """``agent-connector ARGS`` as a long-running process (``serve``), its output piped for reading."""
    return subprocess.Popen(
        [sys.executable, "-c", "from agent_connector_sdk.cli import main_exit; main_exit()", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": ROOT},
        cwd=ROOT,
    )


def test_serve_openapi_yaml_announces_real_port_and_server_info(tmp_path: Path) -> None:
    server = _spawn_cli("serve", "--openapi", str(_yaml(tmp_path, PETS)), "--port", "0")
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith("serving 1 OpenAPI tool behind search at http://127.0.0.1:"), line
        url = line.split(" at ")[-1].strip()
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert port != 0
        busy = run_cli_in_process("serve", "--port", str(port))
        assert_one_line_error(busy, "already in use")
        report = run_cli_in_process("review", url, "--json")
        assert report.code == 0, report.err
        data = report.json()
        assert data["server"]["name"] == "Pet Store" and data["server"]["version"] == "2.4.1"
        (pet,) = [t for t in data["tools"] if t["name"] == "getPet"]
        assert pet["found"] == "search" and pet["disclosure"]["verified"] is True
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert "Traceback" not in (server.stderr.read() if server.stderr else "")


def test_offline_descriptor_review_and_emitted_tests_run(tmp_path: Path) -> None:
    descriptors = {
        "tools": [
            {
                "name": "route",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"},
                        "priority": {
                            "type": "integer",
                            "minimum": 0,
                            "maximum": 9,
                            "x-mcp-header": "Priority",
                        },
                        "shard": {"type": "integer", "x-mcp-header": "Shard"},
                    },
                    "required": ["region"],
                    "additionalProperties": False,
                },
                "outputSchema": {"type": "array", "items": {"type": "string"}},
            },
            {
                "name": "leaky",
                "inputSchema": {
                    "type": "object",
                    "properties": {"password": {"type": "string", "x-mcp-header": "Password"}},
                },
            },
        ]
    }
    source = tmp_path / "tools.json"
    source.write_text(json.dumps(descriptors), encoding="utf-8")
    emitted = tmp_path / "test_route_failures.py"
    run = run_cli_in_process(
        "review", "--descriptor", str(source), "--emit-tests", str(emitted), "--json", "--strict"
    )
    assert run.code == 1, run.err  # "leaky" is rejected: a finding
    report = run.json()
    assert report["target"]["kind"] == "descriptor"
    assert report["summary"] == {
        "admitted": ["route"],
        "rejected": ["leaky"],
        "disclosure_failures": [],
        "findings": 1,
        "project_findings": 0,
        "drifted": 0,
    }
    text = emitted.read_text(encoding="utf-8")
    assert "Mcp-Param-Shard: unsafe integer" in text and "an unknown property" in text
    assert "above its maximum" in text and "structuredContent is not the promised array" in text
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(emitted)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    assert result.returncode == 0, result.stdout[-2000:]
    assert " passed" in result.stdout and "failed" not in result.stdout


def test_serve_as_a_replica_answers_health_and_names_itself() -> None:
    server = _spawn_cli("serve", "--state", "memory://", "--replica-id", "eu-1", "--port", "0")
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith("serving 8 tools of the contract lab behind search"), line
        url = line.split(" at ")[-1].strip()
        health = httpx2.get(url.removesuffix("/mcp") + "/healthz", timeout=10)
        assert health.status_code == 200
        assert health.headers["agent-connector-replica"] == "eu-1"
        assert health.json()["state"]["backend"] == "memory"
        report = run_cli_in_process("review", url, "--json", "--token", "lab-operator-demo-token")
        assert report.code == 0, report.err
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert "Traceback" not in (server.stderr.read() if server.stderr else "")
