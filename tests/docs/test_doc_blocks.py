"""Every fenced block of README.md and docs/*.md runs as pasted (see :mod:`tests.docs.blocks` for the
markers). A failure names the file, the line of the block's fence and the block's number."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.docs.blocks import (
    DOC_PORTS,
    LAB_PORT,
    ROOT,
    RUNNABLE,
    SERVING_LINE,
    Block,
    background,
    bound_ports,
    console_steps,
    extract,
    free_port,
    free_ports,
    matches,
    run_console_step,
    run_program,
    strip_comment,
    with_ports,
    workdir,
)

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROGRAM_TIMEOUT = 240.0


def _collect() -> tuple[list[Block], list[str]]:
    blocks: list[Block] = []
    problems: list[str] = []
    for path in DOCUMENTS:
        try:
            blocks.extend(extract(path))
        except ValueError as error:
            problems.append(str(error))
    return blocks, problems


BLOCKS, PROBLEMS = _collect()


def test_every_document_parses_and_every_marker_is_known() -> None:
    assert not PROBLEMS, "\n".join(PROBLEMS)
    assert any(block.path.name == "README.md" for block in BLOCKS)


def test_every_block_is_run_or_deliberately_marked() -> None:
    unmarked = [
        block.describe()
        for block in BLOCKS
        if block.language not in RUNNABLE and not {"not-run", "output"} & set(block.markers)
    ]
    assert not unmarked, (
        "blocks that are neither runnable nor marked <!-- not-run: reason -->:\n" + "\n".join(unmarked)
    )
    reasonless = [b.describe() for b in BLOCKS if "not-run" in b.markers and not b.markers["not-run"]]
    assert not reasonless, "a not-run marker needs a reason:\n" + "\n".join(reasonless)
    run = [b for b in BLOCKS if "not-run" not in b.markers and "output" not in b.markers]
    skipped = [b for b in BLOCKS if "not-run" in b.markers]
    # The count is the point: most of what the docs show is executed, and what is not says why.
    print(f"{len(run)} blocks run, {len(skipped)} not run (each with a reason), of {len(BLOCKS)}")
    assert len(skipped) * 3 < len(BLOCKS), [b.describe() for b in skipped]


def _serve_block(block: Block) -> Block:
    earlier = [b for b in BLOCKS if b.path == block.path and b.index < block.index and "serve" in b.markers]
    if not earlier:
        raise AssertionError(f"{block.describe()}: marked with-server, but no serve block above it")
    return earlier[-1]


def _output_block(block: Block) -> Block | None:
    following = [b for b in BLOCKS if b.path == block.path and b.index == block.index + 1]
    return following[0] if following and "output" in following[0].markers else None


RUNNABLE_BLOCKS = [
    block
    for block in BLOCKS
    if block.language in RUNNABLE and not {"not-run", "serve", "output"} & set(block.markers)
]


@pytest.fixture(scope="module")
def lab_port() -> Iterator[int]:
    """The contract lab as ``agent-connector serve`` starts it, shared by the module's ``with-lab``
    blocks (started when the first one asks for it; it keeps no state between requests)."""
    port = free_port()
    with (
        workdir() as cwd,
        background(
            [str(Path(sys.executable).parent / "agent-connector"), "serve", "--port", str(port)],
            port,
            cwd,
            "the lab for the with-lab blocks",
            ready=SERVING_LINE,  # its "serving … at URL" line: printed once it listens
        ),
    ):
        yield port


@pytest.mark.parametrize("block", RUNNABLE_BLOCKS, ids=[block.where for block in RUNNABLE_BLOCKS])
def test_block_runs_as_documented(block: Block, request: pytest.FixtureRequest) -> None:
    # A with-lab block reaches the shared lab on the lab's port; every other documented port becomes a
    # free port of the block's own (the same one in its serve block).
    ports = free_ports()
    if "with-lab" in block.markers:
        ports[LAB_PORT] = request.getfixturevalue("lab_port")
    text = with_ports(block.text, ports)
    with ExitStack() as stack:
        cwd = stack.enter_context(workdir())
        if "with-server" in block.markers:
            server = _serve_block(block)
            (bound,) = bound_ports(server)
            stack.enter_context(
                background(
                    [sys.executable, "-c", with_ports(server.text, ports)],
                    ports[bound],
                    cwd,
                    f"the server of {server.describe()} for {block.describe()}",
                )
            )
        if block.language == "console":
            _run_console(block, text, cwd)
            return
        outcome = run_program(block, text, cwd, PROGRAM_TIMEOUT)
        assert outcome.code == 0, f"{block.describe()}: exit {outcome.code}\n{outcome.output[-4000:]}"
        claimed = _output_block(block)
        if claimed is not None:
            problem = matches(claimed.text, outcome.output)
            assert problem is None, (
                f"{claimed.describe()}: output differs from what {block.where} printed\n{problem}"
            )


def _run_console(block: Block, text: str, cwd: Path) -> None:
    steps = console_steps(text)
    assert steps, f"{block.describe()}: a console block without any '$ ' command"
    for command, claimed in steps:
        outcome = run_console_step(block, strip_comment(command), cwd, PROGRAM_TIMEOUT)
        if not claimed.strip():
            assert outcome.code == 0, f"{block.describe()}: `{command}` exit {outcome.code}\n{outcome.output}"
            continue
        problem = matches(claimed, outcome.output)
        assert problem is None, f"{block.describe()}: `{command}` printed something else\n{problem}"


def test_the_docs_use_ports_the_runner_replaces() -> None:
    # Any other fixed port a server could be started on would collide between parallel runs and would not
    # be replaced. (Ports outside 8000–8999 in the docs are addresses that must fail: 9001 for a down
    # child, 99999 for a refused --port.)
    fixed = re.compile(r"(?:127\.0\.0\.1:|localhost:|--port |port=)(8\d{3})\b")
    stray = [
        f"{block.describe()}: {port}"
        for block in RUNNABLE_BLOCKS + [b for b in BLOCKS if "serve" in b.markers]
        for port in fixed.findall(block.text)
        if port not in DOC_PORTS
    ]
    assert not stray, f"use one of the ports {DOC_PORTS[0]}–{DOC_PORTS[-1]} in runnable blocks: {stray}"


def test_each_quick_start_serves_on_a_port_of_its_own() -> None:
    """A reader who follows the README and the docs one after another, leaving each server running,
    never finds a port taken: no two blocks start a server on the same port, and none on the lab's
    (the lab quick start serves it; ``--port 0`` picks a free port and prints it)."""
    starters: dict[str, list[str]] = {}
    for block in BLOCKS:
        if "not-run" not in block.markers:
            for port in bound_ports(block):
                starters.setdefault(port, []).append(block.describe())
    assert LAB_PORT not in starters, starters[LAB_PORT]
    shared = {port: blocks for port, blocks in starters.items() if len(blocks) > 1}
    assert not shared, shared
    assert len(starters) >= 5  # the README's server author and OpenAPI quick starts, server.md, …
