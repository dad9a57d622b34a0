"""The interop matrix for real (``scripts/interop.py`` end to end): our host against the official
reference server, and the official TypeScript client against our gated server.

Needs Node 22 and the pinned npm and Python peers, installed by ``make interop-peers`` (``make test``
runs it before pytest; no test installs anything). When they are missing, these tests fail saying so:
nothing here is skipped.

The matrix's cells run in the script's order, each when a test first reads it (:class:`Cells`), so a
test's set-up pays for its own cell, not for the whole matrix; the servers the search flow shares start
once for the module.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_connector_sdk.core.contracts import AdmissionPolicy
from agent_connector_sdk.mcp.host import HostOptions
from scripts import interop, interop_search

EXPECTED_CHECKS = [
    "discover + admit",
    "call echo",
    "call get-sum",
    "call get-structured-content",
    "invalid arguments refused before sending",
]


@pytest.fixture(scope="module")
def toolchain() -> interop.Toolchain:
    try:
        return interop.installed_toolchain()
    except interop.PeersMissing as missing:
        pytest.fail(f"the interop peers are required: {missing}")


class Cells:
    """The matrix's runs, taken from :func:`scripts.interop.iter_matrix` only as far as a test needs.

    ``one`` answers the first cell a selector matches (running the cells before it that have not run);
    ``all`` runs the rest and checks that every selector asked so far matches exactly one cell, as
    ``(run,) = [r for r in runs if ...]`` over the whole matrix did."""

    def __init__(self, cells: Iterator[interop.Run]) -> None:
        self._cells = cells
        self._taken: list[interop.Run] = []
        self._selectors: list[tuple[str, Callable[[interop.Run], bool]]] = []

    def one(self, what: str, selector: Callable[[interop.Run], bool]) -> interop.Run:
        self._selectors.append((what, selector))
        for run in self._taken:
            if selector(run):
                return run
        for run in self._cells:
            self._taken.append(run)
            if selector(run):
                return run
        raise AssertionError(f"no cell of the matrix is {what}")

    def all(self) -> list[interop.Run]:
        self._taken.extend(self._cells)
        ambiguous = [what for what, selector in self._selectors if sum(map(selector, self._taken)) != 1]
        assert not ambiguous, f"selectors that do not name exactly one cell: {ambiguous}"
        return self._taken


@pytest.fixture(scope="module")
def cells(toolchain: interop.Toolchain) -> Iterator[Cells]:
    matrix = interop.iter_matrix(toolchain)
    try:
        yield Cells(matrix)
    finally:
        matrix.close()  # stops the search flow's servers when the module ends early


@pytest.mark.parametrize("transport", ["stdio", "Streamable HTTP"])
def test_host_runs_every_gate_against_server_everything(cells: Cells, transport: str) -> None:
    run = cells.one(
        f"server-everything over {transport}",
        lambda r: r.transport == transport and r.server.startswith("server-everything"),
    )
    assert [check.name for check in run.checks] == EXPECTED_CHECKS, run.checks
    assert run.ok, [check for check in run.checks if not check.ok]
    # server-everything is built on the TypeScript SDK 1.x, which negotiates the 2025-11-25 revision.
    assert run.revision == "2025-11-25"
    assert "13/13 admitted" in run.checks[0].detail
    assert "http://json-schema.org/draft-07/schema#" in run.checks[0].detail


OUR_SERVER_CHECKS = ["tools/list", "search", "disclosure reads", "call with Mcp-Param-* headers"]
NEGATIVE_CONTROLS = {
    # A direct call of the hidden tool without its headers: the spec's rule, refused.
    interop.TS_CLIENT: ["same call without headers refused"],
    # Through call_tool: no header required (call_tool annotates nothing), a sent lie still refused.
    "MCP Inspector CLI": [
        "same call without headers (none required through call_tool)",
        "same call with a header that lies refused",
    ],
}


@pytest.mark.parametrize("client", [interop.TS_CLIENT, "MCP Inspector CLI"])
def test_official_clients_drive_our_gated_server(cells: Cells, client: str) -> None:
    run = cells.one(client, lambda r: r.client.startswith(client) and not r.search_flow)
    expected = OUR_SERVER_CHECKS + NEGATIVE_CONTROLS[client]
    assert [check.name for check in run.checks] == expected, run.checks
    assert run.ok, [check for check in run.checks if not check.ok]
    assert run.revision == "2026-07-28"


SEARCH_SERVERS = [interop_search.LAB_SERVER, interop_search.OPENAPI_SERVER, interop_search.GATEWAY_SERVER]
SEARCH_CLIENTS = [
    interop_search.CLIENT_SESSION,
    interop_search.FASTMCP_CLIENT,
    interop_search.INSPECTOR_CLI,
    f"{interop_search.MCP_REMOTE_CLIENT} 0.15.1 (default",
    f"{interop_search.MCP_REMOTE_CLIENT} 0.15.1 --protocol auto",
    interop_search.PYDANTIC_AI,
]


# Servers outermost: the order the matrix runs its cells in, so each test's set-up runs one cell.
@pytest.mark.parametrize("client", SEARCH_CLIENTS)
@pytest.mark.parametrize("server", SEARCH_SERVERS)
def test_every_client_runs_the_search_flow(cells: Cells, client: str, server: str) -> None:
    """Search, then ``call_tool`` for a routing tool and a tool that may write: one ``tools/call`` per
    call and no ``Mcp-Param-*`` header (a plain client has none to send), except where a recorded gap of
    the bridge stops the flow before it starts."""
    run = cells.one(
        f"the search flow of {client} on {server}",
        lambda r: r.search_flow and r.server == server and r.client.startswith(client),
    )
    assert run.ok, [check for check in run.checks if not check.ok]
    if client.endswith("--protocol auto") and server == interop_search.LAB_SERVER:
        ((check),) = run.checks
        assert check.gap and check.name == "tools/list through the bridge", check
        assert "outputSchema.type" in check.detail
        return
    names = [check.name for check in run.checks]
    assert names[:3] == list(interop_search.SEARCH_CHECKS), names
    gaps = [check for check in run.checks if check.gap]
    if client.endswith("--protocol auto") and server == interop_search.GATEWAY_SERVER:
        # The call ran on our server; the bridge handed the 2025-11-25 client an array result it refuses.
        assert gaps == [run.checks[1]] and "refused its structuredContent" in gaps[0].detail, gaps
        assert "1 request: tools/call call_tool (no Mcp-Param headers)" in gaps[0].detail
        assert "the lab saw 1 request: tools/call route_shipment" in run.checks[2].detail
        return
    assert not gaps
    for check in run.checks[1:3]:
        assert "tools/call call_tool (no Mcp-Param headers)" in check.detail, check
        if client != interop_search.INSPECTOR_CLI:
            assert "; 1 request: tools/call call_tool" in check.detail, check
    if client == interop_search.INSPECTOR_CLI:
        assert run.per_call.endswith("a new process per call")
    else:
        assert run.per_call == "1 (tools/call)"
    if server == interop_search.GATEWAY_SERVER:
        # Our own host behind the gateway sends the child the headers the caller did not have to send.
        assert "the lab saw 1 request: tools/call search_evidence (Mcp-Param-Region)" in run.checks[1].detail


@pytest.mark.parametrize("server", SEARCH_SERVERS)
def test_a_hidden_tool_called_by_its_own_name(cells: Cells, server: str) -> None:
    """Not the documented flow: with a routing argument it is refused, saying how to proceed."""
    run = cells.one(
        f"the search flow of {interop_search.FASTMCP_CLIENT} on {server}",
        lambda r: r.search_flow and r.server == server and r.client.startswith(interop_search.FASTMCP_CLIENT),
    )
    direct, cost = run.checks[-2:]
    assert direct.name == "hidden tool called by its own name (not the documented flow)" and direct.ok
    if server == interop_search.OPENAPI_SERVER:
        assert ": ok;" in direct.detail and "(2 re-listings for one call)" in direct.detail
    else:
        assert "refused (-32020)" in direct.detail and "'call_tool'" in direct.detail
    # Where it runs, it costs re-listings; through call_tool the same call is one request.
    assert cost.ok and "re-listings for one call" in cost.detail and "(0 re-listings" not in cost.detail


REFERENCE_CELLS = {
    "server-filesystem": (
        "2025-11-25",
        ["discover + admit", "call read_text_file", "call list_directory", "read a missing file"],
    ),
    "server-memory": (
        "2025-11-25",
        [
            "discover + admit",
            "write create_entities",
            "write add_observations",
            "read_graph sees both writes",
        ],
    ),
    "mcp-server-time": ("2026-07-28", ["discover + admit", "valid timezone", "invalid timezone"]),
}


@pytest.mark.parametrize("server", sorted(REFERENCE_CELLS))
def test_reference_servers_pass_with_the_default_profile_and_show_the_findings(
    cells: Cells, server: str
) -> None:
    run = cells.one(server, lambda r: r.server.startswith(server))
    revision, names = REFERENCE_CELLS[server]
    assert [check.name for check in run.checks] == names, run.checks
    assert run.ok, [check for check in run.checks if not check.ok]
    assert run.revision == revision
    details = {check.name: check.detail for check in run.checks}
    assert "rejected" not in details["discover + admit"] and "admitted:" in details["discover + admit"]
    if server == "server-filesystem":
        # Valid results kept with the project-rule finding; the missing file's error text reaches us.
        assert "findings: text-serialization" in details["call read_text_file"]
        assert "ENOENT" in details["read a missing file"]
        assert "findings: error-structured-content" in details["read a missing file"]
    elif server == "server-memory":
        assert "findings: text-serialization" in details["write create_entities"]
    else:
        assert "Invalid timezone" in details["invalid timezone"]
        assert "findings: error-structured-content" in details["invalid timezone"]


def test_the_strict_profile_rejects_what_the_default_profile_reports(
    toolchain: interop.Toolchain, tmp_path: Path
) -> None:
    # The same reference results, held to the project rules: both become Consume-gate rejections, and
    # the refusal still carries the server's words.
    import fastmcp
    from fastmcp.client.transports import StdioTransport

    from agent_connector_sdk.core.contracts.errors import ContractViolation
    from agent_connector_sdk.mcp.host.contract_client import ContractClient

    async def strict_calls() -> tuple[ContractViolation, ContractViolation]:
        transport = StdioTransport(str(toolchain.time_server), ["--local-timezone", "UTC"])
        host = ContractClient(
            fastmcp.Client(transport), HostOptions(profile="strict", require_confirmation=False)
        )
        async with host:
            await host.discover_tools()
            with pytest.raises(ContractViolation) as invalid:
                await host.call("get_current_time", {"timezone": "Mars/Olympus"})
        root = tmp_path
        transport = StdioTransport(str(toolchain.node), [str(toolchain.filesystem), str(root)])
        host = ContractClient(
            fastmcp.Client(transport), HostOptions(profile="strict", require_confirmation=False)
        )
        async with host:
            await host.discover_tools()
            with pytest.raises(ContractViolation) as unserialized:
                await host.call("list_allowed_directories", {})
        return invalid.value, unserialized.value

    invalid, unserialized = asyncio.run(strict_calls())
    assert invalid.category == "missing_structured_content"
    assert invalid.server_text is not None and "Invalid timezone" in invalid.server_text
    assert unserialized.category == "missing_text_serialization"


def test_the_request_log_keeps_methods_and_header_names_never_values() -> None:
    seen: list[bytes] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            seen.append(message["body"])
            if not message.get("more_body", False):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    log = interop_search.RequestLog(app)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "call_tool", "arguments": {"s": "v"}},
        }
    ).encode()
    scope = {"type": "http", "method": "POST", "headers": [(b"Mcp-Param-Region", b"secret-value")]}
    messages = [
        {"type": "http.request", "body": body[:10], "more_body": True},
        {"type": "http.request", "body": body[10:]},
    ]

    async def receive() -> Any:
        return messages.pop(0)

    async def send(message: Any) -> None:
        return None

    asyncio.run(log(scope, receive, send))
    (entry,) = log.since(0)
    assert entry == interop_search.Seen("tools/call", "call_tool", ("mcp-param-region",))
    assert b"".join(seen) == body  # the app reads the body itself, unchanged
    assert interop_search.describe([entry]) == "1 request: tools/call call_tool (Mcp-Param-Region)"
    assert "secret" not in repr(log.since(0))


def test_docs_interop_md_is_what_the_matrix_produces(cells: Cells) -> None:
    rendered = interop.render_docs(cells.all())
    assert interop.DOCS.read_text() == rendered, "run `python -m scripts.interop --docs`"


def test_a_2020_12_only_policy_rejects_every_draft_07_tool(toolchain: interop.Toolchain) -> None:
    # The symptom that started it: a host that only knows 2020-12 cannot use this server at all.
    import fastmcp
    from fastmcp.client.transports import StdioTransport

    from agent_connector_sdk.mcp.host.contract_client import ContractClient

    async def discover() -> Any:
        transport = StdioTransport(command=str(toolchain.node), args=[str(toolchain.everything), "stdio"])
        policy = AdmissionPolicy(dialects=frozenset({"2020-12"}))
        host = ContractClient(fastmcp.Client(transport), options=HostOptions(policy=policy))
        async with host:
            return await host.discover_tools()

    report = asyncio.run(discover())
    assert report.admitted == {}
    assert len(report.rejected) == interop.EVERYTHING_TOOLS
    assert {rejection["category"] for rejection in report.rejected} == {"unsupported_dialect"}


def test_stdio_tap_forwards_bytes_and_logs_only_methods(tmp_path: Path) -> None:
    log = tmp_path / "tap.log"
    echo = [sys.executable, "-c", "import sys\nfor line in sys.stdin: sys.stdout.write(line)"]
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {"token": "s3cret"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 7, "result": {"value": "s3cret"}},
    ]
    sent = "".join(json.dumps(message) + "\n" for message in messages)
    command, args = interop.tapped_stdio_command(echo, log)
    done = subprocess.run(
        [command, *args], input=sent, capture_output=True, text=True, timeout=60, check=True, cwd=interop.ROOT
    )
    assert done.stdout == sent
    assert interop.tapped_methods(log) == ["tools/call", "notifications/initialized", "(response)"]
    assert "s3cret" not in log.read_text()


def _review(*target: str) -> dict[str, Any]:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_connector_sdk.cli",
            "review",
            "--json",
            "--strict",
            "--call",
            "get-sum",
            "--arguments",
            '{"a": 2, "b": 3}',
            *target,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=str(interop.ROOT),
    )
    assert completed.returncode == 0, completed.stderr
    report: dict[str, Any] = json.loads(completed.stdout)
    return report


def test_the_cli_reviewer_admits_every_server_everything_tool(toolchain: interop.Toolchain) -> None:
    # `agent-connector review`, as a person runs it, over stdio and over Streamable HTTP: all draft-07
    # tools admitted, one validated call; the header gates are not applicable over stdio.
    stdio = _review("--", str(toolchain.node), str(toolchain.everything), "stdio")
    with interop.everything_over_http(toolchain) as (url, _posts):
        http = _review(url)
    for report in (stdio, http):
        assert report["summary"]["findings"] == 0
        admitted = [tool["name"] for tool in report["tools"] if tool["admission"]["decision"] == "admitted"]
        assert len(admitted) == interop.EVERYTHING_TOOLS
        assert report["call"]["tool"] == "get-sum" and report["call"]["outcome"] == "validated"
    assert stdio["target"]["kind"] == "stdio" and http["target"]["kind"] == "http"


def test_missing_peers_fail_naming_each_and_the_command_that_installs_them(
    toolchain: interop.Toolchain, tmp_path: Path
) -> None:
    # No test installs peers: a checkout without them gets one message saying what and how, never a skip.
    with pytest.raises(interop.PeersMissing) as nothing:
        interop.installed_toolchain(tmp_path / "node", tmp_path / "npm", tmp_path / "python")
    assert str(nothing.value).count("(in ") == 3
    assert "Node 22." in str(nothing.value) and "`make interop-peers`" in str(nothing.value)
    # Only what is missing is named: here the npm peers, with Node and the Python peers in place.
    with pytest.raises(interop.PeersMissing) as npm_only:
        interop.installed_toolchain(packages=tmp_path / "npm")
    assert str(npm_only.value).startswith("not installed: the npm peers of interop/package-lock.json (in ")
    assert str(npm_only.value).count("(in ") == 1
