"""The CLI's side of the OpenAPI document checks (issue 29), in-process: a YAML alias bomb is one line
naming the rule (and costs nothing), ``disclose`` lists operations left out and prints a document's
names only through the one sanitizer, and ``serve``'s refusals are one line each."""

from __future__ import annotations

import io
import json
import logging
import resource
import time
from pathlib import Path
from typing import Any

import pytest

from agent_connector_sdk.cli import main
from agent_connector_sdk.cli.app import _DEFAULT_MAX_UPSTREAM_BYTES
from agent_connector_sdk.cli.errors import CliError
from agent_connector_sdk.cli.sources import YAML_EXPANSION_FLOOR, load_openapi
from agent_connector_sdk.connectors import DEFAULT_MAX_UPSTREAM_BYTES, OpenAPISource
from agent_connector_sdk.serving import ServingError
from agent_connector_sdk.serving.openapi_app import build_openapi_app
from agent_connector_sdk.serving.process import _OneLine


def _bomb(levels: int) -> str:
    lines = ["openapi: 3.1.0", "info: {title: t, version: '1'}", "paths: {}", 'a0: &a0 ["lol"]']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(argv, out=out)
    return code, out.getvalue(), capsys.readouterr().err


@pytest.mark.parametrize("levels", [8, 9])
def test_a_yaml_alias_bomb_is_one_line_naming_the_rule(
    tmp_path: Path, levels: int, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb(levels), encoding="utf-8")
    assert path.stat().st_size < 600
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.thread_time()  # CPU time of the command (in-process): its cost, not the machine's load
    code, out, err = _run(["disclose", "--openapi", str(path)], capsys)
    assert time.thread_time() - started < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before < 50_000  # KiB
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "YAML aliases expand the document to more than 100,000 nodes" in err
    assert "aliases may expand a document to at most 10 times its own nodes" in err


def test_a_recursive_alias_is_refused_and_ordinary_anchors_load(tmp_path: Path) -> None:
    recursive = tmp_path / "recursive.yaml"
    recursive.write_text("openapi: 3.1.0\npaths: {}\nloop: &x [1, *x]\n", encoding="utf-8")
    with pytest.raises(CliError, match="refers to a node that contains it"):
        load_openapi(str(recursive))
    shared = tmp_path / "shared.yaml"
    shared.write_text(
        "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n"
        "  /a: {get: &op {responses: {'200': {description: ok}}}}\n"
        "  /b: {get: *op}\n",
        encoding="utf-8",
    )
    document = load_openapi(str(shared)).document
    assert document["paths"]["/a"]["get"] == document["paths"]["/b"]["get"]
    # A document legitimately this large through aliases is still read (the floor).
    many = tmp_path / "many.yaml"
    items = ", ".join(["*s"] * (YAML_EXPANSION_FLOOR // 20))
    many.write_text(f"openapi: 3.1.0\npaths: {{}}\ns: &s [1, 2, 3, 4, 5, 6, 7, 8]\nlist: [{items}]\n")
    assert len(load_openapi(str(many)).document["list"]) == YAML_EXPANSION_FLOOR // 20


def test_deep_nesting_is_one_line(tmp_path: Path) -> None:
    for name, text in (("deep.yaml", "a: " + "[" * 50_000), ("deep.json", "[" * 200_000 + "]" * 200_000)):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(CliError):
            load_openapi(str(path))


HOSTILE = "list\x1b[31mRED\u202eevil"


def _hostile_document() -> dict[str, Any]:
    def op(operation_id: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {
            "operationId": operation_id,
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}},
        }

    return {
        "openapi": "3.1.0",
        "info": {"title": "t\x1b]0;owned\x07itle", "version": "1"},
        "paths": {
            "/a": {"get": op(HOSTILE, {"type": "object"})},
            "/b": {"get": op("gone\u202e[bold]x", {"$ref": "#/components/schemas/Missing"})},
        },
    }


def test_disclose_prints_document_names_only_through_the_sanitizer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(_hostile_document()), encoding="utf-8")
    code, out, err = _run(["disclose", "--openapi", str(path)], capsys)
    assert code == 1, err  # one operation refused
    for raw in ("\x1b", "\u202e", "\x07"):
        assert raw not in out and raw not in err
    assert "\\x1b[31mRED\\u202eevil" in out  # the operationId, shown escaped
    assert "refused  1 operation:" in out
    assert (
        "gone\\u202e[bold]x: unresolvable_ref — $ref #/components/schemas/Missing resolves to nothing" in out
    )
    code, out, _ = _run(["disclose", "--openapi", str(path), "--json"], capsys)
    assert "\u202e" not in out and "\x1b" not in out
    report = json.loads(out)
    assert report["refusals"][0]["category"] == "unresolvable_ref"
    assert report["disclosures"][0]["manifest"]["operation"] == HOSTILE  # escaped, not changed
    code, _, err = _run(["disclose", "--openapi", str(path), "--strict-refs"], capsys)
    assert code == 2 and "resolves to nothing" in err and "\u202e" not in err


def test_serve_refuses_duplicates_and_reserved_names_in_one_line(tmp_path: Path) -> None:
    def source(paths: dict[str, Any]) -> OpenAPISource:
        document = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": paths}
        return OpenAPISource(raw=json.dumps(document).encode(), document=document)

    done = {"responses": {"204": {"description": "done"}}}
    duplicates = source(
        {"/a": {"delete": {**done, "operationId": "drop"}}, "/b": {"delete": {**done, "operationId": "drop"}}}
    )
    with pytest.raises(ServingError) as refused:
        build_openapi_app(duplicates, upstream="http://127.0.0.1:9")
    assert str(refused.value) == (
        'duplicate operationId "drop": DELETE /a and DELETE /b; OpenAPI requires operationIds to be unique '
        "(to serve it anyway: --allow-duplicate-operation-ids)"
    )
    _, tools = build_openapi_app(
        duplicates, upstream="http://127.0.0.1:9", allow_duplicate_operation_ids=True
    )
    assert tools == 2
    for reserved in ("call_tool", "search_tools"):
        with pytest.raises(ServingError, match=f'would be the tool "{reserved}"'):
            build_openapi_app(
                source({"/x": {"post": {**done, "operationId": reserved}}}), upstream="http://127.0.0.1:9"
            )


def test_serve_options_only_apply_to_openapi_and_the_bound_is_positive(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for argv, says in (
        (["serve", "--strict-refs"], "--strict-refs only applies with --openapi"),
        (["serve", "--allow-duplicate-operation-ids"], "--allow-duplicate-operation-ids only applies with"),
        (["serve", "--max-upstream-bytes", "10"], "--max-upstream-bytes only applies with --openapi"),
        (["serve", "--openapi", "x.json", "--max-upstream-bytes", "0"], "must be a positive number of bytes"),
    ):
        code, _, err = _run(argv, capsys)
        assert code == 2 and says in err, err
    assert _DEFAULT_MAX_UPSTREAM_BYTES == DEFAULT_MAX_UPSTREAM_BYTES


def test_serve_log_lines_go_through_the_one_sanitizer() -> None:
    record = logging.LogRecord(
        "agent_connector_sdk.cli.serve", logging.WARNING, "", 0, "%s", (HOSTILE,), None
    )
    line = _OneLine().format(record)
    assert "\x1b" not in line and "\u202e" not in line
    assert line == "warning agent_connector_sdk.cli.serve: list\\x1b[31mRED\\u202eevil"


def test_serve_names_each_operation_it_leaves_out_in_one_warning_line() -> None:
    document = _hostile_document()
    source = OpenAPISource(raw=json.dumps(document).encode(), document=document)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_OneLine())
    serve_logger = logging.getLogger("agent_connector_sdk.cli.serve")
    serve_logger.addHandler(handler)
    try:
        _, tools = build_openapi_app(source, upstream="http://127.0.0.1:9")
    finally:
        serve_logger.removeHandler(handler)
    assert tools == 1
    lines = stream.getvalue().splitlines()
    assert lines == [
        'warning agent_connector_sdk.cli.serve: operation "gone\\u202e[bold]x" left out: '
        "$ref #/components/schemas/Missing resolves to nothing in the document"
    ]
