"""A report people can read at 80 and 160 columns (a terminal, and the width of piped output): the lab's
review pinned as golden output at both widths (a changed layout is a visible diff), no line wider than
the screen, no name broken mid-word, the server's line breaks shown as line breaks (sanitized), no Python
values, a legend, and colour as ``NO_COLOR``/``FORCE_COLOR`` say. A labelled line's wrapped lines stay
under its value column at every width. A real npm server (the pinned ``server-memory`` over stdio) and a
hostile one are pinned the same way.

Regenerate the golden files after a deliberate change, then read the diff::

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/cli/test_report_layout.py -q
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from rich.console import Console

from agent_connector_sdk.cli import main
from agent_connector_sdk.cli.console import output_console
from agent_connector_sdk.cli.render import render_review
from agent_connector_sdk.demo.lab_service import OPERATOR_TOKEN, lab_service_app
from agent_connector_sdk.review.report import (
    AdmissionVerdict,
    CallReport,
    FindingReport,
    HeaderPolicy,
    HeaderRule,
    HeaderSample,
    ReviewReport,
    ReviewSummary,
    SkillEntry,
    Target,
    ToolReview,
)
from tests.support.http_server import serve_asgi

if TYPE_CHECKING:
    from scripts.interop import Toolchain

GOLDEN = Path(__file__).parent / "golden"


def _matches_golden(text: str, name: str) -> None:
    """``text`` (trailing spaces dropped) is the golden file ``name``; ``UPDATE_GOLDEN=1`` rewrites it."""
    text = "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
    golden = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


CALL = [
    "--call",
    "search_evidence",
    "--arguments",
    '{"query": "routing audit", "region": "Zürich west", "limit": 3}',
]


@pytest.fixture(scope="module")
def lab_reviews() -> dict[str, str]:
    """The lab's review as JSON and as text at 80 and 160 columns (one lab, three reviews)."""
    reviews: dict[str, str] = {}
    saved = os.environ.get("COLUMNS")
    try:
        with serve_asgi(lab_service_app()) as url:
            for name, columns in (("json", "200"), ("80", "80"), ("160", "160")):
                os.environ["COLUMNS"] = columns
                out = io.StringIO()
                argv = [
                    "review",
                    url,
                    "--token",
                    OPERATOR_TOKEN,
                    *CALL,
                    *(["--json"] if name == "json" else []),
                ]
                assert main(argv, out) == 0
                reviews[name] = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", out.getvalue())
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved
    return reviews


@pytest.mark.parametrize("columns", [80, 160])
def test_the_labs_review_matches_its_golden_output(lab_reviews: dict[str, str], columns: int) -> None:
    _matches_golden(lab_reviews[str(columns)], f"lab-review-{columns}.txt")


@pytest.mark.parametrize("columns", [80, 160])
def test_no_line_is_wider_than_the_screen_and_no_name_is_broken(
    lab_reviews: dict[str, str], columns: int
) -> None:
    text = lab_reviews[str(columns)]
    assert all(len(line) <= columns for line in text.splitlines()), max(text.splitlines(), key=len)
    report = json.loads(lab_reviews["json"])
    table_lines = [line for line in text.splitlines() if line.startswith("│")]
    for tool in report["tools"]:
        # Each name whole in the first column of the tools table (a name is never folded).
        assert any(line.split("│")[1].strip() == tool["name"] for line in table_lines), tool["name"]
    for header in {rule["header"] for tool in report["tools"] for rule in tool["headers"]["rules"]}:
        assert any(header in line for line in table_lines), header


def test_each_header_once_with_what_decides_it_and_the_words_explained(lab_reviews: dict[str, str]) -> None:
    text = lab_reviews["160"]
    policy = text[text.index("header policy") : text.index("completion")]
    assert policy.count("Mcp-Param-Priority") == 1
    assert policy.count('"Zürich west" → =?base64?WsO8cmljaCB3ZXN0?=') == 1  # samples once, not per header
    assert "never sent (the tool is rejected)" in policy  # fetch_report's header
    assert "None" not in text and "False" not in text and "True" not in text
    assert "5 values of 5" in text
    legend = (
        "legend   arguments: * marks a required one\n         found: listed = in tools/list; search = behind"
    )
    assert legend in text
    summary = next(line for line in text.splitlines() if line.startswith("summary"))
    assert "1 project-rule finding (rejections with --strict)" in summary and "; 0 findings" not in summary


def test_the_servers_line_breaks_are_line_breaks_and_still_sanitized() -> None:
    tool = ToolReview(
        name="echo",
        found="listed",
        descriptor=None,
        output_kind="none",
        admission=AdmissionVerdict(decision="admitted"),
        headers=HeaderPolicy(applicable=True),
    )
    report = ReviewReport(
        target=Target(kind="http", address="http://127.0.0.1:1/mcp"),
        profile="default",
        header_gates="applicable",
        tools=[tool],
        call=CallReport(
            tool="echo", outcome="validated", text="first line\nsecond \x1b[31mred\x1b[0m\r\nthird\u202e"
        ),
        summary=ReviewSummary(admitted=["echo"], rejected=[], disclosure_failures=[], findings=0),
    )
    out = io.StringIO()
    render_review(report, Console(file=out, width=100, no_color=True, highlight=False))
    lines = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if "text: first line" in line)
    assert lines[start + 1].strip() == "second \\x1b[31mred\\x1b[0m"
    assert lines[start + 2].strip() == "third\\u202e"
    assert "\x1b" not in out.getvalue() and "\\x0a" not in out.getvalue()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("terminal", "environ", "coloured"),
    [
        (True, {}, True),
        (True, {"NO_COLOR": "1"}, False),
        (False, {}, False),
        (False, {"FORCE_COLOR": "1"}, True),
        (False, {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        (True, {"NO_COLOR": ""}, True),  # empty means unset (no-color.org)
    ],
)
def test_no_color_and_force_color_are_honoured(
    terminal: bool, environ: dict[str, str], coloured: bool
) -> None:
    stream = _Terminal() if terminal else io.StringIO()
    output_console(stream, {**environ, "TERM": "xterm-256color"}).print("[red]rejected[/red]")
    assert ("\x1b[" in stream.getvalue()) is coloured, repr(stream.getvalue())


def test_columns_sets_the_width_of_piped_output() -> None:
    assert output_console(io.StringIO(), {"COLUMNS": "80"}).width == 80
    assert output_console(io.StringIO(), {}).width == 160
    assert output_console(io.StringIO(), {"COLUMNS": "junk"}).width == 160
    assert output_console(io.StringIO(), {"COLUMNS": "5"}).width == 40


def _hostile_report() -> ReviewReport:
    """A server that sends what breaks terminals and layouts: a 128-character name, escapes and bidi
    controls in names and titles, an unbroken 300-character word in a reason, text with its own
    line breaks and control characters."""
    long_name = "a" * 60 + "_" + "b" * 67
    rows = [
        ToolReview(
            name=long_name,
            found="listed",
            descriptor={
                "name": long_name,
                "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
            },
            output_kind="none",
            admission=AdmissionVerdict(decision="admitted"),
            headers=HeaderPolicy(applicable=True),
        ),
        ToolReview(
            name="evil\x1b[2J\u202ename",
            found="listed",
            descriptor={
                "name": "x",
                "title": "read_file (safe) \x1b]0;pwned\x07",
                "inputSchema": {"type": "object"},
            },
            output_kind="object",
            admission=AdmissionVerdict(decision="rejected", category="malformed", reason="x" * 300),
            headers=HeaderPolicy(applicable=True),
        ),
    ]
    return ReviewReport(
        target=Target(kind="http", address="http://127.0.0.1:1/mcp"),
        profile="default",
        header_gates="applicable",
        tools=rows,
        call=CallReport(
            tool=long_name, outcome="tool_error", text="line one\r\nline \x1b[31mtwo\x1b[0m\n\u202eline three"
        ),
        summary=ReviewSummary(
            admitted=[long_name], rejected=["evil\x1b[2J\u202ename"], disclosure_failures=[], findings=1
        ),
    )


@pytest.mark.parametrize("columns", [80, 160])
def test_a_hostile_servers_review_matches_its_golden_output(columns: int) -> None:
    out = io.StringIO()
    render_review(_hostile_report(), Console(file=out, width=columns, no_color=True, highlight=False))
    text = "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"
    assert all(len(line) <= columns for line in text.splitlines())
    assert not any(c in text for c in "\x1b\x07\u202e\r")  # every control shown escaped, never sent
    _matches_golden(text, f"hostile-review-{columns}.txt")


@pytest.mark.parametrize("columns", [80, 160])
def test_a_real_npm_servers_review_matches_its_golden_output(
    npm_peers: Toolchain, columns: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pinned ``@modelcontextprotocol/server-memory`` reviewed over stdio as a user runs it
    (``agent-connector review --env … --call … -- node …/dist/index.js``), one search call included.

    What would vary per run is kept out of the output rather than replaced afterwards (a replaced
    path would still have moved the line breaks of the header): the server runs from the peers'
    directory by a relative path, with ``node`` found on ``PATH``, and its memory file (a temporary
    path) travels in ``--env``, whose values the report never prints. The server's name and version
    are pinned by ``interop/package-lock.json``."""
    memory_file = tmp_path / "memory.jsonl"
    monkeypatch.chdir(npm_peers.packages)
    monkeypatch.setenv("PATH", f"{npm_peers.node.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.delenv("FORCE_COLOR", raising=False)  # plain text, whatever the runner's terminal asks
    argv = [
        "review",
        "--env",
        f"MEMORY_FILE_PATH={memory_file}",
        "--call",
        "search_nodes",
        "--arguments",
        '{"query": "Zürich"}',
        "--",
        "node",
        str(npm_peers.memory.relative_to(npm_peers.packages)),
    ]
    out = io.StringIO()
    assert main(argv, out) == 0, out.getvalue()
    text = out.getvalue()
    for varying in (str(tmp_path), str(npm_peers.packages), str(npm_peers.node)):
        assert varying not in text
    assert all(len(line) <= columns for line in text.splitlines()), max(text.splitlines(), key=len)
    _matches_golden(text, f"npm-server-memory-review-{columns}.txt")


_LABELS = re.compile(
    r"^(review|server|policy|pages|search|tools|rejected|header policy|completion|call|finding|lock|skills"
    r"|summary|legend|descriptor) "
)


def _wrapping_report() -> ReviewReport:
    """Long values behind every label that wraps: a finding, skills, the summary, header samples."""
    rule = HeaderRule(
        argument="/properties/region",
        header="Mcp-Param-Region",
        type="string",
        samples=[
            HeaderSample(value=word, wire=word, encoding="plain")
            for word in ("eu-central", "eu-west", "us-east", "ap-south", "sa-east", "af-south")
        ],
    )
    tool = ToolReview(
        name="route",
        found="listed",
        descriptor=None,
        output_kind="none",
        admission=AdmissionVerdict(decision="admitted"),
        headers=HeaderPolicy(applicable=True, rules=[rule]),
        findings=[
            FindingReport(
                rule="text-serialization",
                category="text_serialization",
                message="the text content is not the JSON serialization of structuredContent " * 3,
                path="/content/0",
            )
        ],
    )
    return ReviewReport(
        target=Target(kind="http", address="http://127.0.0.1:1/mcp"),
        profile="default",
        header_gates="applicable",
        tools=[tool],
        skills=[
            SkillEntry(
                name="reviewer",
                description="reviews a server's tools and says which a host would admit and why " * 2,
                uri="skill://reviewer/SKILL.md",
                files=3,
            )
        ],
        summary=ReviewSummary(
            admitted=["route"], rejected=[], disclosure_failures=[], findings=0, project_findings=1
        ),
    )


@pytest.mark.parametrize("columns", [40, 60, 80, 100, 120, 160])
def test_a_labelled_lines_continuation_stays_under_its_value_column(columns: int) -> None:
    out = io.StringIO()
    render_review(_wrapping_report(), Console(file=out, width=columns, no_color=True, highlight=False))
    lines = out.getvalue().splitlines()
    outside_tables = [line for line in lines if line and line[0] not in "┏┃┡│└"]
    for label in ("finding", "skills", "summary"):
        start = next(i for i, line in enumerate(outside_tables) if line.startswith(label + " "))
        value_column = len(outside_tables[start]) - len(outside_tables[start][len(label) :].lstrip())
        assert value_column == 9, outside_tables[start]
    for line in outside_tables:
        # Every line is a label's first line or indented under the value column: nothing restarts at 0.
        assert _LABELS.match(line) or line.startswith(" " * 9), (columns, line, out.getvalue())
    samples = [line for line in outside_tables if "samples:" in line]
    assert samples and all(line.startswith(" " * 9 + "string samples:") for line in samples[:1])
    assert all(len(line) <= columns for line in lines)
