"""The server's own words reach the reader of a review: tool-error text, JSON-RPC code and message."""

from __future__ import annotations

from tests.support.cli import run_cli_in_process


def test_a_tool_error_shows_the_servers_text_in_json_and_a_json_rpc_error_its_code_and_message() -> None:
    tool_error = run_cli_in_process(
        "review", "--demo", "--json", "--call", "flaky_search", "--arguments", '{"query": "boats"}'
    )
    withheld = run_cli_in_process("review", "--demo", "--call", "inventory_snapshot")
    assert tool_error.code == 0, tool_error.err
    call = tool_error.json()["call"]
    assert call["outcome"] == "tool_error"
    assert "search backend unavailable" in call["text"]
    # The gated lab withholds a result that breaks its own schema: -32603 with the server's message,
    # one label (the family's category) whatever path the call took.
    assert withheld.code == 0, withheld.err
    lines = [line.strip() for line in withheld.out.splitlines()]
    (verdict,) = [line for line in lines if line.startswith("call ")]
    assert "failed" in verdict and "json_rpc_error" in verdict
    (words,) = [line for line in lines if line.startswith("JSON-RPC error -32603:")]
    assert len(words) > len("JSON-RPC error -32603: ")


def test_an_absent_structured_content_is_shown_as_absent_not_as_null() -> None:
    import io

    from rich.console import Console

    from agent_connector_sdk.cli.render import render_review
    from agent_connector_sdk.review.report import CallReport, ReviewReport, ReviewSummary, Target

    def rendered(present: bool | None) -> str:
        call = CallReport(
            tool="read_text_file",
            outcome="tool_error",
            gate="consume",
            structured_content=None,
            structured_content_present=present,
            is_error=True,
            text="ENOENT: no such file",
        )
        report = ReviewReport(
            target=Target(kind="stdio", address="server"),
            profile="default",
            header_gates="not_applicable",
            tools=[],
            call=call,
            summary=ReviewSummary(admitted=[], rejected=[], disclosure_failures=[], findings=0),
        )
        out = io.StringIO()
        render_review(report, Console(file=out, width=200, color_system=None))
        return out.getvalue()

    absent, null = rendered(False), rendered(True)
    assert "structuredContent: (absent)" in absent and "text: ENOENT: no such file" in absent
    assert "structuredContent: null" in null
