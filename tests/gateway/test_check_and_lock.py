"""``gateway --check --json [--strict]`` as evidence worth keeping, and ``gateway --lock``: a drifted
child contract is not published until the lock approves it. Real children over Streamable HTTP; the
CLI runs in-process (its entry function), as a user's shell would run it."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker  # type: ignore[import-untyped]

from agent_connector_sdk.cli import main
from agent_connector_sdk.core.contracts import admit_tools
from agent_connector_sdk.core.contracts.lock import ContractLock, lock_admission
from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
from agent_connector_sdk.mcp.server import gated_http_app
from agent_connector_sdk.serving.process import ONE_LINE_LOGGERS
from tests.core.contracts.test_drift_corpus import EQUIVALENT_ENCODINGS, RUG_PULLS, WORK, _catalog
from tests.support.gateway import call, rpc, wait_for
from tests.support.gateway_children import CatalogChild, Misbehaving, weather_server
from tests.support.gateway_log import gateway_log
from tests.support.http_server import serve_asgi

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schemas" / "gateway-check.schema.json").read_text("utf-8")
)


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    """The CLI configures its one-line logging on the process's loggers: undo it for the next test."""
    saved = {
        name: (lg.handlers[:], lg.propagate, lg.level)
        for name in ONE_LINE_LOGGERS
        if (lg := logging.getLogger(name))
    }
    yield
    for name, (handlers, propagate, level) in saved.items():
        logger = logging.getLogger(name)
        logger.handlers, logger.propagate = handlers, propagate
        logger.setLevel(level)
    logging.getLogger("agent_connector_sdk.gateway").setLevel(logging.NOTSET)


def cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


@pytest.fixture(scope="module")
def children() -> Iterator[tuple[str, str, Misbehaving]]:
    bad = Misbehaving()
    with (
        serve_asgi(gated_http_app(weather_server(), stateless_http=True)) as weather,
        serve_asgi(bad.server().streamable_http_app(stateless_http=True)) as bad_url,
    ):
        yield weather, bad_url, bad


def _config(tmp_path: Path, weather: str, bad: str, probe: str) -> Path:
    path = tmp_path / "gateway.toml"
    path.write_text(
        f'[children.weather]\nurl = "{weather}"\n\n[children.weather.probe]\n{probe}\n\n'
        f'[children.bad]\nurl = "{bad}"\n',
        encoding="utf-8",
    )
    return path


def test_check_json_is_one_object_conforming_to_its_published_schema(
    children: tuple[str, str, Misbehaving], tmp_path: Path
) -> None:
    weather, bad, _ = children
    config = _config(
        tmp_path, weather, bad, 'tool = "route"\narguments = { region = "eu-west", priority = 2 }'
    )
    code, out = cli("gateway", "--check", "--json", "--config", str(config))
    assert code == 0, out
    report: dict[str, Any] = json.loads(out)
    Draft202012Validator(SCHEMA, format_checker=FormatChecker()).validate(report)
    assert report["status"] == "degraded" and report["passed"] is False
    by_name = {child["name"]: child for child in report["children"]}
    assert by_name["weather"]["server"]["name"] == "weather"
    assert by_name["weather"]["protocol_version"] == "2026-07-28"
    # The operator's probe, with arguments the harmless default could never supply.
    assert by_name["weather"]["validated_result"] == {
        "tool": "weather_route",
        "source": "configured",
        "outcome": "ok",
        "structured": True,
        "reason": None,
    }
    assert "eu-west" not in out  # probe arguments are sent, never recorded
    assert [(r["tool"], r["category"]) for r in by_name["bad"]["rejected"]] == [("leaky", "sensitive_header")]
    assert {(p["child"], p["kind"]) for p in report["problems"]} == {("bad", "rejected"), ("bad", "no_probe")}

    # The digests are the ones `review --write-lock` records for the same child.
    lock_file = tmp_path / "weather.lock.json"
    code, _ = cli("review", weather, "--write-lock", str(lock_file))
    assert code == 0
    (entry,) = ContractLock.from_json(lock_file.read_text("utf-8")).servers
    locked = {tool.name: (tool.sha256, tool.contract_sha256, tool.fields) for tool in entry.tools}
    admitted = {
        t["child_tool"]: (t["sha256"], t["contract_sha256"], t["fields"])
        for t in by_name["weather"]["admitted"]
    }
    assert admitted == {
        name: (sha, contract, dict(fields)) for name, (sha, contract, fields) in locked.items()
    }


def test_strict_fails_on_a_rejection_or_a_failed_probe(
    children: tuple[str, str, Misbehaving], tmp_path: Path
) -> None:
    weather, bad, _ = children
    good = _config(tmp_path, weather, bad, 'tool = "forecast"')
    assert cli("gateway", "--check", "--config", str(good))[0] == 0
    code, out = cli("gateway", "--check", "--strict", "--config", str(good))
    assert code == 1  # bad's leaky tool is rejected
    assert "leaky: sensitive_header" in out and out.splitlines()[-1].startswith(
        "status: degraded (not passed"
    )

    only_weather = tmp_path / "weather-only.toml"
    only_weather.write_text(
        f'[children.weather]\nurl = "{weather}"\n[children.weather.probe]\ntool = "forecast"\n',
        encoding="utf-8",
    )
    code, out = cli("gateway", "--check", "--strict", "--config", str(only_weather))
    assert (code, out.splitlines()[-1]) == (0, "status: ok (passed; 0 problem(s))")

    only_weather.write_text(
        f'[children.weather]\nurl = "{weather}"\n[children.weather.probe]\ntool = "nosuch"\n',
        encoding="utf-8",
    )
    code, out = cli("gateway", "--check", "--strict", "--config", str(only_weather))
    assert code == 1
    assert "validated result: weather_nosuch: not_published: the child lists no such tool (configured)" in out

    # Arguments the tool's schema refuses are a failed probe, refused at the gateway (Invoke).
    only_weather.write_text(
        f'[children.weather]\nurl = "{weather}"\n[children.weather.probe]\ntool = "route"\n'
        "arguments = { priority = 1 }\n",
        encoding="utf-8",
    )
    code, out = cli("gateway", "--check", "--strict", "--json", "--config", str(only_weather))
    assert code == 1
    probe = json.loads(out)["children"][0]["validated_result"]
    assert probe["tool"] == "weather_route" and probe["outcome"] not in ("ok", "tool_error")


def test_a_drifted_tool_waits_for_the_lock_to_approve_it(
    children: tuple[str, str, Misbehaving], tmp_path: Path
) -> None:
    _, bad_url, bad = children
    lock_file = tmp_path / "gateway.lock.json"
    bad.version = 1
    try:
        assert cli("review", bad_url, "--write-lock", str(lock_file))[0] == 0
        bad.version = 2  # morph's input schema changes under the same name: a rug pull
        config = GatewayConfig(children=(ChildSpec("bad", url=bad_url),), lock=lock_file, relist_interval=0.1)
        gateway = Gateway(config)
        with gateway_log() as log, serve_asgi(gateway.http_app()) as url:
            catalog = gateway.children["bad"].catalog
            assert catalog is not None
            drift = {r.tool: r for r in catalog.rejected}
            assert drift["morph"].category == "contract_drift"
            assert "inputSchema" in drift["morph"].reason
            assert set(catalog.tools) == {"bad_listing", "bad_ok"}
            _status, refused = rpc(url, "tools/call", {"name": "bad_morph", "arguments": {"b": 1}})
            assert refused["error"]["code"] == -32602
            calls_before = bad.calls.count("morph")

            # The operator approves the new contract; the next re-list publishes it.
            assert cli("review", bad_url, "--write-lock", str(lock_file))[0] == 0
            gateway.children["bad"].request_relist()
            wait_for(lambda: gateway.tool("bad_morph") is not None, timeout=10, what="morph published")
            assert call(url, "bad_morph", {"b": 1})["content"][0]["text"] == "morph v2"
            assert bad.calls.count("morph") == calls_before + 1
        # The operator's view: one line per state change, names and categories only.
        assert log.matching("child bad tools rejected (2): leaky (sensitive_header), morph (contract_drift)")
        assert log.matching("child bad generation moved 0 -> 1: 1 added, 0 changed, 0 removed, 1 rejected")
        assert log.matching("child bad tools rejected (1): leaky (sensitive_header)")
    finally:
        bad.version = 1


def test_a_child_without_a_lock_entry_publishes_nothing(
    children: tuple[str, str, Misbehaving], tmp_path: Path
) -> None:
    weather, bad_url, _ = children
    lock_file = tmp_path / "weather.lock.json"
    assert cli("review", weather, "--write-lock", str(lock_file))[0] == 0
    code, out = cli(
        "gateway",
        "--check",
        "--json",
        "--lock",
        str(lock_file),
        "--child",
        f"weather={weather}",
        "--child",
        f"bad={bad_url}",
    )
    assert code == 0
    by_name = {child["name"]: child for child in json.loads(out)["children"]}
    assert len(by_name["weather"]["admitted"]) == 4 and by_name["weather"]["rejected"] == []
    assert by_name["bad"]["admitted"] == []
    assert {r["category"] for r in by_name["bad"]["rejected"]} <= {"contract_drift", "sensitive_header"}
    assert "the tool is not in the contract lock" in {r["reason"] for r in by_name["bad"]["rejected"]}
    code, out = cli(
        "gateway", "--check", "--lock", str(tmp_path / "missing.json"), "--child", f"weather={weather}"
    )
    assert code == 2 and out == ""


def test_the_rug_pulls_review_fails_on_are_withdrawn_by_the_gateway_lock(tmp_path: Path) -> None:
    """``gateway --lock`` withdraws each tool of the drift corpus's seven rug pulls (the classes
    ``review --strict`` fails on), and publishes the tools whose contract only changed encoding (an
    equal number spelled otherwise, a ``$ref`` inlined): what provably means the same is no drift."""
    approved = _catalog(WORK)
    child = CatalogChild(approved)
    lock_file = tmp_path / "workspace.lock.json"
    # The mcp 2.3 low-level server leaves `execution` out of its listings (it offers no tasks), so the
    # task-support rug pull cannot travel over this wire: the Admit test below covers it.
    over_the_wire = [mutation for mutation in RUG_PULLS if mutation.id != "task-support-opened"]
    with serve_asgi(child.server().streamable_http_app(stateless_http=True)) as url:
        assert cli("review", url, "--write-lock", str(lock_file))[0] == 0
        pulled = json.loads(json.dumps(approved))
        for mutation in (*over_the_wire, *EQUIVALENT_ENCODINGS):
            for step in mutation.steps:
                step(pulled)
        child.tools = pulled
        code, out = cli("gateway", "--check", "--json", "--lock", str(lock_file), "--child", f"work={url}")
        # The same listing reviewed against the same lock fails --strict on the same tools.
        review_code, review_out = cli("review", url, "--lock", str(lock_file), "--strict", "--json")
    assert code == 0, out
    (work,) = json.loads(out)["children"]
    withdrawn = {r["tool"]: r for r in work["rejected"]}
    rug_pulled = {expected.tool for mutation in over_the_wire for expected in mutation.expect}
    assert rug_pulled == {"get_order", "read_file", "delete_file", "send_email", "list_orders"}
    assert set(withdrawn) == rug_pulled
    assert {r["category"] for r in withdrawn.values()} == {"contract_drift"}
    assert [tool["child_tool"] for tool in work["admitted"]] == ["export_report"]  # not pulled here
    assert review_code == 1
    failing = {drift["tool"] for drift in json.loads(review_out)["lock"]["tools"] if drift["fails"]}
    assert failing == rug_pulled


def test_an_equivalent_encoding_stays_published_under_the_gateway_lock(tmp_path: Path) -> None:
    approved = _catalog(WORK)
    child = CatalogChild(approved)
    lock_file = tmp_path / "workspace.lock.json"
    with serve_asgi(child.server().streamable_http_app(stateless_http=True)) as url:
        assert cli("review", url, "--write-lock", str(lock_file))[0] == 0
        spelled = json.loads(json.dumps(approved))
        for mutation in EQUIVALENT_ENCODINGS:
            for step in mutation.steps:
                step(spelled)
        assert spelled != approved
        child.tools = spelled
        code, out = cli("gateway", "--check", "--json", "--lock", str(lock_file), "--child", f"work={url}")
    assert code == 0, out
    (work,) = json.loads(out)["children"]
    assert work["rejected"] == []
    assert len(work["admitted"]) == len(approved)


@pytest.mark.parametrize("mutation", RUG_PULLS, ids=lambda mutation: mutation.id)
def test_the_lock_admission_the_gateway_runs_withdraws_each_rug_pull(mutation: Any) -> None:
    """The gateway holds each child to its lock through the host core's Admit
    (:func:`lock_admission`): each of the seven rug pulls, task support included, is withdrawn there."""
    approved = _catalog(WORK)
    pulled = json.loads(json.dumps(approved))
    for step in mutation.steps:
        step(pulled)
    lock = ContractLock().with_server("work", approved)
    report = lock_admission(pulled, admit_tools(pulled), lock.server("work"))
    (expected,) = mutation.expect
    assert [(r["tool"], r["category"]) for r in report.rejected] == [(expected.tool, "contract_drift")]
    assert set(report.admitted) == {tool["name"] for tool in approved} - {expected.tool}
