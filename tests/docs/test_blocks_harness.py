"""The doc-block runner itself: markers, fences, output comparison — each check can fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.blocks import console_steps, extract, matches, normalise, strip_comment, with_ports


def _page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_markers_attach_to_the_block_below_and_lines_are_reported(tmp_path: Path) -> None:
    page = _page(
        tmp_path, "intro\n\n<!-- with-lab -->\n```sh\necho hi\n```\n\n<!-- output -->\n```text\nhi\n```\n"
    )
    try:
        first, second = extract(page)
    finally:
        page.unlink()
    assert (first.line, first.language, first.markers, first.text) == (4, "sh", {"with-lab": ""}, "echo hi\n")
    assert second.markers == {"output": ""} and second.index == 1


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("<!-- not-runn: typo -->\n```sh\nx\n```\n", "unknown doc marker 'not-runn'"),
        ("```sh\nx\n", "unclosed"),
    ],
)
def test_a_typo_in_a_marker_or_an_open_fence_is_an_error(tmp_path: Path, text: str, complaint: str) -> None:
    page = _page(tmp_path, text)
    try:
        with pytest.raises(ValueError, match=complaint):
            extract(page)
    finally:
        page.unlink()


def test_output_comparison_normalises_and_supports_ellipsis() -> None:
    assert (
        matches(
            "at http://127.0.0.1:8000/mcp\n…\ndone in 12 ms\n",
            "at http://127.0.0.1:4242/mcp\na\nb\ndone in 7.5 ms",
        )
        is None
    )
    assert matches("sha256 4492c4a1b193904e…\n", "sha256 0123456789abcdef…") is None
    assert matches("['e…\n", "['evidence://a', 'evidence://b']") is None  # a cut line matches its prefix
    problem = matches("admitted: a, b\n", "admitted: a")
    assert problem is not None and "-admitted: a, b" in problem and "+admitted: a" in problem
    assert matches("one\n", "one\ntwo") is not None  # extra output is a difference too
    assert normalise("  \nx   \n\n") == ["x"]


def test_console_steps_and_ports() -> None:
    assert console_steps("$ a --x  # why\nout\n$ b\n") == [("a --x  # why", "out"), ("b", "")]
    assert strip_comment("agent-connector review URL   # a comment") == "agent-connector review URL"
    assert strip_comment("echo '# not a comment'") == "echo '# not a comment'"
    ports = {"8000": 4321, "8001": 4322}
    assert with_ports("http://127.0.0.1:8000/mcp --port 8001 port=8001 18000 80001 8002", ports) == (
        "http://127.0.0.1:4321/mcp --port 4322 port=4322 18000 80001 8002"
    )
    with pytest.raises(ValueError):
        console_steps("stray output\n$ a\n")
