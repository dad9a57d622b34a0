"""No server string can put a control character on the terminal: the renderers and one-line errors.

Property tests over the one sanitizer and over every renderer that prints server-chosen strings
(``render_review`` with every field of the report hostile, ``--json``, the one-line error of ``main``).
"""

from __future__ import annotations

import io
import json
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from agent_connector_sdk.cli.render import render_review
from agent_connector_sdk.review.report import (
    AdmissionVerdict,
    CallReport,
    CompletionProbe,
    DisclosureCheck,
    FindingReport,
    HeaderPolicy,
    HeaderRule,
    HeaderSample,
    ReviewReport,
    ReviewSummary,
    SearchReport,
    ServerIdentity,
    Target,
    ToolReview,
)
from agent_connector_sdk.sanitize import UNSAFE_CHARACTERS, sanitize_json, sanitize_text

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029"
ATTACKS = ("\x1b[31m", "\x1b]0;pwned\x07", "\x9b2J", "\r\nX-Evil: 1", "\u202eevil", "\x00", "\x7f", "\ud800")
hostile = st.one_of(
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40),
    st.lists(st.sampled_from(ATTACKS + tuple(BIDI) + ("ok", " ", "\\x1b")), max_size=8).map("".join),
)


def _forbidden(text: str) -> list[str]:
    """Characters a terminal could act on: controls (except the renderer's own newlines), bidi
    controls, separators, surrogates."""
    bad = []
    for character in text:
        if character == "\n":
            continue
        if unicodedata.category(character) in ("Cc", "Cs", "Zl", "Zp") or character in BIDI:
            bad.append(character)
    return bad


@given(hostile, st.integers(min_value=1, max_value=200))
def test_sanitize_text_never_returns_an_unsafe_character_and_caps_the_length(text: str, limit: int) -> None:
    out = sanitize_text(text, limit)
    assert UNSAFE_CHARACTERS.search(out) is None
    assert not _forbidden(out) and "\n" not in out
    body, _, marker = out.partition("…[+")
    assert len(body) <= limit
    if marker:  # the cut is visible and honest about how much was left out
        assert marker.endswith(" chars]") and int(marker[: -len(" chars]")]) > 0
    elif UNSAFE_CHARACTERS.search(text) is None:
        assert out == text  # safe text passes unchanged


def test_sanitize_text_shows_escapes() -> None:
    assert sanitize_text("a\x1b[2Jb\u202ec\r\n") == "a\\x1b[2Jb\\u202ec\\x0d\\x0a"
    assert sanitize_text("x" * 10, 4) == "xxxx…[+6 chars]"
    assert sanitize_text("\x1b\x1b", 5) == "\\x1b…[+1 chars]"  # an escape is never split


@given(
    st.recursive(
        hostile | st.integers(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile, inner, max_size=3),
        max_leaves=8,
    )
)
def test_sanitize_json_keeps_the_value_and_escapes_the_rest(value: object) -> None:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except UnicodeEncodeError:  # pragma: no cover - json.dumps accepts surrogates
        return
    out = sanitize_json(text)
    assert json.loads(out) == value
    assert not _forbidden(out)


def _report(s: str) -> ReviewReport:
    tool = ToolReview(
        name=s,
        found="listed",
        descriptor={
            "name": s,
            "inputSchema": {"type": "object", "properties": {s: {"type": s}}, "required": [s]},
        },
        output_kind="object",
        admission=AdmissionVerdict(decision="rejected", category=s, reason=s),
        headers=HeaderPolicy(
            applicable=True,
            rules=[
                HeaderRule(
                    argument=s,
                    header=s,
                    type="string",
                    samples=[
                        HeaderSample(value=s, wire=s, encoding="plain"),
                        HeaderSample(value=s, wire=None, encoding="refused", category=s),
                    ],
                )
            ],
        ),
        disclosure=DisclosureCheck(verified=False, step=s, category=s, reason=s, schema_sha256=s),
        findings=[FindingReport(rule=s, category=s, message=s, path=s)],
    )
    other = tool.model_copy(update={"headers": HeaderPolicy(applicable=True, category=s, reason=s)})
    return ReviewReport(
        target=Target(kind="http", address=s),
        server=ServerIdentity(name=s, version=s, protocol_version=s),
        profile="strict",
        header_gates="applicable",
        page_trace=[None, s, s],
        search=SearchReport(tool=s, patterns=[s], entries=1, category=s, reason=s),
        tools=[tool, other],
        completion=CompletionProbe(
            advertised=True, ref={"type": "ref/prompt", "name": s}, argument=s, category=s, reason=s
        ),
        call=CallReport(
            tool=s,
            outcome="failed",
            gate=s,
            category=s,
            reason=s,
            headers_sent=[s],
            content_types=[s],
            text=s,
            code=-32000,
            message=s,
            findings=[FindingReport(rule=s, category=s, message=s, path=s)],
        ),
        summary=ReviewSummary(admitted=[s], rejected=[s], disclosure_failures=[s], findings=3),
    )


@settings(max_examples=60, deadline=None)
@given(hostile)
def test_render_review_prints_no_control_character(s: str) -> None:
    for descriptors in (False, True):
        stream = io.StringIO()
        render_review(
            _report(s),
            Console(file=stream, width=160, no_color=True, highlight=False),
            descriptors=descriptors,
        )
        printed = stream.getvalue()
        assert not _forbidden(printed), [hex(ord(c)) for c in _forbidden(printed)]
        printed.encode("utf-8")  # no lone surrogate reaches the writer


@settings(max_examples=60, deadline=None)
@given(hostile)
def test_json_report_escapes_bidi_and_c1(s: str) -> None:
    report = _report(s)
    try:
        text = sanitize_json(report.model_dump_json(indent=2))
    except ValueError:  # pydantic refuses lone surrogates on its own
        return
    assert not _forbidden(text)
    assert json.loads(text)["server"]["name"] == s


def test_rendering_shows_what_the_server_sent_titles_and_hints_and_no_emoji() -> None:
    def tool(name: str, **descriptor: object) -> ToolReview:
        return ToolReview(
            name=name,
            found="listed",
            descriptor={"name": name, "inputSchema": {"type": "object"}, **descriptor},
            output_kind="none",
            admission=AdmissionVerdict(decision="admitted"),
            headers=HeaderPolicy(applicable=True),
        )

    report = ReviewReport(
        target=Target(kind="http", address="http://127.0.0.1:9/mcp"),
        profile="default",
        header_gates="applicable",
        tools=[
            tool("read_file", title="read_file (safe, read-only) :white_check_mark:"),
            tool("lookup", annotations={"readOnlyHint": True, "title": "Look up"}),
            tool("note", annotations={"destructiveHint": False}),
            tool("r\u0435ad_file", title="r\u0435ad_file"),
        ],
        summary=ReviewSummary(admitted=[], rejected=[], disclosure_failures=[], findings=0),
    )
    stream = io.StringIO()
    # A caller's own console with rich's defaults (emoji replacement on): still none.
    render_review(report, Console(file=stream, width=200, no_color=True))
    printed = stream.getvalue()
    assert ":white_check_mark:" in printed and "\u2705" not in printed
    # A tool's row: the line with its name and the continuation lines below it (cells wrap; the hints
    # sit under the admission verdict).
    rows: dict[str, str] = {}
    name = ""
    for line in printed.splitlines():
        if not line.startswith("│ "):
            continue
        first = line.split("│")[1].strip()
        if first and not first.startswith("title:"):
            name = first.split()[0]
        rows[name] = rows.get(name, "") + line + "\n"
    assert "destructive" in rows["read_file"] and "read-only" in rows["lookup"] and "writes" in rows["note"]
    assert "title: read_file (safe, read-only)" in printed and "title: Look up" in printed
    assert "r\\u0435ad_file" in printed and "r\u0435ad_file" not in printed  # shown by code point
