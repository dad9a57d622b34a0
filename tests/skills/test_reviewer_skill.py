"""The reviewer skill: shipped, served over the Skills extension (SEP-2640), and followed step by step.

The test fetches the skill from the lab as a host would (``skills/list``, then every file checked
against the size and SHA-256 digest the entry promised), runs each step's commands exactly as the
skill writes them (variables substituted) on the lab's descriptors, and checks each step's output.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import fastmcp
from fastmcp.skills import Skill, SkillsClientExtension
from jsonschema import Draft4Validator  # type: ignore[import-untyped]

from agent_connector_sdk.demo.lab_service import OPERATOR_TOKEN, lab_service_app
from agent_connector_sdk.skills import REVIEWER_SKILL, reviewer_skill
from tests.support.cli import Run, run_cli_in_process
from tests.support.http_server import serve_asgi
from tests.support.sarif_schema import official_sarif_schema

ROOT = Path(__file__).resolve().parents[2]
PACKAGED = ROOT / "src" / "agent_connector_sdk" / "skills" / REVIEWER_SKILL / "SKILL.md"
REPOSITORY_COPY = ROOT / "skills" / REVIEWER_SKILL / "SKILL.md"
_STEP = re.compile(r"^### (\d+)\. (.+?)\n(.*?)(?=^### |\Z)", re.MULTILINE | re.DOTALL)
_SH = re.compile(r"```sh\n(.*?)```", re.DOTALL)


def _steps(text: str) -> list[tuple[int, str, list[str]]]:
    steps = []
    for number, title, body in _STEP.findall(text):
        commands = [line for block in _SH.findall(body) for line in block.splitlines() if line.strip()]
        steps.append((int(number), title, commands))
    return steps


def test_the_skill_ships_once_with_one_command_per_step() -> None:
    assert REPOSITORY_COPY.read_bytes() == PACKAGED.read_bytes()  # skills/ is the wheel's copy
    skill = reviewer_skill()
    assert skill.name == REVIEWER_SKILL and skill.files["SKILL.md"] == PACKAGED.read_bytes()
    text = PACKAGED.read_text(encoding="utf-8")
    for term in ("descriptor", "sample results", "pagination behaviour", "completion policy"):
        assert term in text  # the lesson's inputs
    for term in ("admission decision", "result-validation plan", "header policy", "failure tests"):
        assert term in text  # and outputs
    steps = _steps(text)
    assert [number for number, _, _ in steps] == list(range(1, len(steps) + 1))
    assert all(commands and commands[0].startswith("agent-connector review") for _, _, commands in steps)
    flags = " ".join(line for _, _, commands in steps for line in commands)
    for flag in ("--descriptor", "--emit-tests", "--call", "--write-lock", "--lock", "--sarif", "--strict"):
        assert flag in flags


async def _fetch_skill(url: str) -> tuple[list[Any], Skill]:
    client = fastmcp.Client(url, auth=OPERATOR_TOKEN, extensions=[SkillsClientExtension()])
    async with client:
        listed = await client.list_skills()
        (entry,) = [s for s in listed if s.frontmatter.name == REVIEWER_SKILL]
        return listed, await client.read_skill(str(entry.uri))  # verifies size and digest per file


def _run(line: str, variables: dict[str, str], cwd: Path) -> Run:
    """One line of the skill as written: ``agent-connector`` through its entry function (exit code and
    streams as a user sees them, without a process start-up per step), ``python -m pytest`` as a process
    (the emitted file is run as a user runs it, outside this test session)."""
    words = [variables.get(word, word) for word in shlex.split(line)]
    redirect = None
    if ">" in words:
        at = words.index(">")
        words, redirect = words[:at], words[at + 1]
    if words[0] == "agent-connector":
        done = run_cli_in_process(*words[1:], cwd=cwd, timeout=300)
    else:
        assert words[:3] == ["python", "-m", "pytest"], words
        argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *words[3:]]
        path = os.pathsep.join(filter(None, [str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH")]))
        process = subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONPATH": path, "COLUMNS": "200", "NO_COLOR": "1"},
            stdin=subprocess.DEVNULL,
        )
        done = Run(process.returncode, process.stdout, process.stderr)
    if redirect is not None:
        (cwd / redirect).write_text(done.out, encoding="utf-8")
    return done


def _tool(report: dict[str, Any], name: str) -> dict[str, Any]:
    matches: list[dict[str, Any]] = [t for t in report["tools"] if t["name"] == name]
    (tool,) = matches
    return tool


def test_following_the_skill_on_the_lab_produces_every_output(tmp_path: Path) -> None:
    with serve_asgi(lab_service_app()) as url:
        listed, skill = anyio.run(_fetch_skill, url)
        assert skill.files["SKILL.md"] == PACKAGED.read_bytes()
        (entry,) = listed
        assert entry.resources[0].digest == reviewer_skill().manifest.files["SKILL.md"].digest
        variables = {
            "$URL": url,
            "$TOKEN": OPERATOR_TOKEN,
            "$TOOL": "search_evidence",
            "$ARGUMENTS": json.dumps({"query": "routing audit", "region": "Zürich west", "limit": 3}),
        }
        results: dict[int, list[Run]] = {}
        for number, _, commands in _steps(skill.files["SKILL.md"].decode("utf-8")):
            results[number] = [_run(line, variables, tmp_path) for line in commands]

    # 1. Discover: descriptors (listed and disclosed), pagination behaviour, completion policy, skills.
    (discover,) = results[1]
    assert discover.code == 0, discover.err
    review = json.loads((tmp_path / "review.json").read_text(encoding="utf-8"))
    assert "" in review["page_trace"]  # the lab's "" cursor was followed, not taken as the end
    assert _tool(review, "search_evidence")["found"] == "search"
    assert review["completion"]["values"] and len(review["completion"]["values"]) <= 100
    assert [s["name"] for s in review["skills"]] == [REVIEWER_SKILL]

    # 2. Admission decision: the unsafe descriptors are refused, named by category; --strict exits 1.
    (admission,) = results[2]
    assert admission.code == 1
    assert "sensitive_header" in admission.out and "fetch_report" in admission.out

    # 3. Header policy: Unicode routing values travel base64-wrapped; unsafe integers are refused.
    (headers,) = results[3]
    offline = json.loads(headers.out)
    rules = {r["header"]: r for r in _tool(offline, "route_shipment")["headers"]["rules"]}
    samples = {s["value"]: s for s in rules["Mcp-Param-Region"]["samples"]}
    assert samples["Zürich west"]["encoding"] == "base64"
    assert any(s["encoding"] == "refused" for s in rules["Mcp-Param-Priority"]["samples"])

    # 4. Result-validation plan: an array promised, and the sample result validated against it.
    (sample,) = results[4]
    call_report = json.loads(sample.out)
    assert _tool(call_report, "search_evidence")["output_kind"] == "array"
    assert call_report["call"]["outcome"] == "validated"
    assert call_report["call"]["headers_sent"] == ["Mcp-Param-Region"]

    # 5. Failure tests: written, and every case is refused by the gates when run.
    emitted, ran = results[5]
    assert emitted.code == 0 and (tmp_path / "test_contract_failures.py").exists()
    assert ran.code == 0, ran.out[-2000:]
    assert re.search(r"(\d+) passed", ran.out) and "failed" not in ran.out

    # 6. Approval: a lock with every reviewed tool, digests only.
    (approve,) = results[6]
    assert approve.code == 0, approve.err
    lock = json.loads((tmp_path / "contracts.lock.json").read_text(encoding="utf-8"))
    locked = {t["name"] for t in lock["servers"][0]["tools"]}
    assert {"search_evidence", "route_shipment", "fetch_report"} <= locked

    # 7. CI gate: no drift against the fresh lock (the lab's rejections still make --strict exit 1),
    # and the SARIF log is valid against the official schema.
    (gate,) = results[7]
    assert gate.code == 1
    assert "0 tools drifted" in gate.out
    log = json.loads((tmp_path / "review.sarif").read_text(encoding="utf-8"))
    assert not list(Draft4Validator(official_sarif_schema()).iter_errors(log))
    assert {r["ruleId"] for r in log["runs"][0]["results"]} >= {"admit/sensitive_header"}
