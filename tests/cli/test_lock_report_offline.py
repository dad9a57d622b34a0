"""``review --descriptor … --lock`` in-process: what --strict fails on, approvals refused with one line,
old locks, and hostile values in the drift report (sanitized, bounded)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agent_connector_sdk.cli import main
from agent_connector_sdk.core.contracts import fingerprint

TOOL: dict[str, Any] = {
    "name": "route",
    "description": "Routes one shipment.",
    "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "maxLength": 8}}},
}


def _files(tmp_path: Path, new: dict[str, Any]) -> tuple[Path, Path, Path]:
    old_file, new_file, lock = tmp_path / "old.json", tmp_path / "new.json", tmp_path / "lock.json"
    old_file.write_text(json.dumps([TOOL]), "utf-8")
    new_file.write_text(json.dumps([new]), "utf-8")
    assert main(["review", "--descriptor", str(old_file), "--write-lock", str(lock)], io.StringIO()) == 0
    return old_file, new_file, lock


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["review", *argv], out), out.getvalue()


def test_strict_fails_on_escalation_and_breaking_and_on_anything_only_when_asked(tmp_path: Path) -> None:
    cosmetic = {**TOOL, "description": "Routes  one shipment.\n"}
    _, new, lock = _files(tmp_path, cosmetic)
    code, out = _run("--descriptor", str(new), "--lock", str(lock), "--strict")
    assert code == 0 and "route: changed (description), cosmetic" in out and "0 findings (" in out
    assert _run("--descriptor", str(new), "--lock", str(lock), "--strict", "--fail-on-any-drift")[0] == 1
    widened = {**TOOL, "inputSchema": {"type": "object", "properties": {"region": {"type": "string"}}}}
    new.write_text(json.dumps([widened]), "utf-8")
    code, out = _run("--descriptor", str(new), "--lock", str(lock), "--strict")
    assert code == 1 and "/inputSchema/properties/region/maxLength: removed (was 8)" in out


def test_a_format_1_lock_says_to_rewrite_it_and_fails_strict_on_unknown_drift(tmp_path: Path) -> None:
    _, new, lock = _files(tmp_path, {**TOOL, "description": "Routes  one shipment."})
    raw = json.loads(lock.read_text("utf-8"))
    raw["lock_version"] = 1
    (entry,) = raw["servers"][0]["tools"]
    del entry["contract"], entry["approved_diff"]
    old = fingerprint(TOOL, 1)
    entry.update(sha256=old.sha256, contract_sha256=old.contract_sha256, fields=dict(old.fields))
    lock.write_text(json.dumps(raw), "utf-8")
    code, out = _run("--descriptor", str(new), "--lock", str(lock), "--strict")
    assert code == 1  # whitespace only, but a digest cannot tell: unknown fails closed
    assert "digests only (format 1)" in out and "route: changed (description), unknown" in out


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--approve", "nope"], "--approve nope: no such tool"),
        (["--approve", "route@xyz"], "8 to 64 lowercase hex digits"),
        (["--approve", "route@00000000"], "route has drifted differently since"),
        (["--approve", "route", "--write-lock", "x.json"], "does not go with --write-lock"),
    ],
)
def test_an_approval_that_cannot_hold_is_one_line_and_writes_nothing(
    tmp_path: Path, extra: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, new, lock = _files(tmp_path, {**TOOL, "description": "Routes two shipments."})
    before = lock.read_text("utf-8")
    code, _ = _run("--descriptor", str(new), "--lock", str(lock), *extra)
    assert code == 2 and fragment in capsys.readouterr().err
    assert lock.read_text("utf-8") == before


def test_approving_what_has_not_drifted_or_without_a_lock_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, _, lock = _files(tmp_path, TOOL)
    assert _run("--descriptor", str(old), "--lock", str(lock), "--approve", "route")[0] == 2
    assert "has not drifted" in capsys.readouterr().err
    assert _run("--descriptor", str(old), "--approve", "route")[0] == 2
    assert "need --lock FILE" in capsys.readouterr().err


def test_hostile_values_in_a_drift_are_sanitized_and_bounded(tmp_path: Path) -> None:
    hostile = {
        **TOOL,
        "description": "Routes one shipment.\x1b[2J\x1b]0;pwned\x07 [bold]now[/bold] \u202eevil",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "maxLength": 8, "enum": ["x" * 100] * 50}},
        },
    }
    _, new, lock = _files(tmp_path, hostile)
    code, out = _run("--descriptor", str(new), "--lock", str(lock))
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "[bold]now[/bold]" in out  # shown as text, never interpreted as markup
    code, text = _run("--descriptor", str(new), "--lock", str(lock), "--json")
    (drift,) = json.loads(text)["lock"]["tools"]
    by_pointer = {change["pointer"]: change for change in drift["changes"]}
    enum = by_pointer["/inputSchema/properties/region/enum"]
    assert enum["truncated"] is True and enum["new"].startswith("<array of ")
    assert "\x1b" not in text and "\u202e" not in text
