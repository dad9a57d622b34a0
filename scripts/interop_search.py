"""The search-flow cells of the interop matrix: every client people run finds and calls tools behind search.

Our servers put their catalogs behind FastMCP's ``RegexSearchTransform``: a client lists ``search_tools``
and ``call_tool``, searches, then calls a found tool *through* ``call_tool``. That flow needs nothing
from a client beyond the spec (a client sends the ``Mcp-Param-*`` headers of the tool it names, and
``call_tool`` annotates nothing), so every plain client must be able to run it. Three servers, each in
this process on 127.0.0.1 behind a :class:`RequestLog`:

* **lab** — the contract lab as ``agent-connector serve`` runs it (demo bearer token of the analyst);
  the routing call is ``search_evidence`` with its ``x-mcp-header`` argument ``region``, the write is
  ``route_shipment`` (no ``readOnlyHint``: it may write; its arguments are all routing arguments);
* **openapi** — ``agent-connector serve --openapi`` on the committed GitHub extract, its upstream a
  loopback stand-in for api.github.com. GitHub's description annotates no argument with
  ``x-mcp-header``, so its "routing" call is the largest read (path arguments only) and the write is
  ``issues_lock`` (PUT);
* **gateway** — the gateway with the lab as its one child: the same two lab tools, namespaced (the
  gateway federates the lab's hidden tools one by one, each admitted from its verified disclosure).

Clients: the ``mcp`` SDK's ``ClientSession`` (2026-07-28 through ``server/discover``), ``fastmcp.Client``,
the Inspector CLI (one process per command), ``mcp-remote`` (a stdio→HTTP bridge, driven by a
``fastmcp.Client`` over stdio, in its default ``legacy`` mode and with ``--protocol auto``) and
pydantic-ai's ``MCPToolset`` (pinned in ``interop/python-peers.txt``, driven without a model through
``direct_call_tool``). Each cell: search, the routing call, the write; each check records the requests
that reached our server for that call (JSON-RPC methods and the ``Mcp-Param-*`` header *names* sent,
never values). On the documented flow a call is one ``tools/call``: a call that re-lists tools fails
its check. The fastmcp cell also measures the undocumented flow, calling a hidden tool by its own
name, to show what it costs and what the server answers.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from scripts.interop import Run, Toolchain

SEARCH_TOOL: Final = "search_tools"
PROXY_TOOL: Final = "call_tool"
STARTUP_TIMEOUT_S: Final = 30.0
CALL_TIMEOUT_S: Final = 60.0
LAB_SERVER: Final = "agent-connector serve (contract lab)"
OPENAPI_SERVER: Final = "agent-connector serve --openapi (GitHub extract)"
GATEWAY_SERVER: Final = "agent-connector gateway (lab as child)"
SEARCH_CHECKS: Final = ("search", "call with a routing argument", "call a tool that may write")


# --------------------------------------------------------------------------- the request log


@dataclass(frozen=True)
class Seen:
    """One JSON-RPC message that reached the server: its method, the tool a ``tools/call`` names, and
    the names of the ``Mcp-Param-*`` headers of its POST (never their values)."""

    method: str
    tool: str | None
    param_headers: tuple[str, ...]


class RequestLog:
    """ASGI middleware recording every JSON-RPC message POSTed to the app it wraps (bodies pass
    unchanged; the log keeps methods, tool names and header names only)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._seen: list[Seen] = []
        self._lock = threading.Lock()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        names = tuple(
            sorted(
                name.decode("latin-1").lower()
                for name, _ in scope.get("headers", [])
                if name.lower().startswith(b"mcp-param-")
            )
        )
        chunks: list[bytes] = []

        async def recording_receive() -> Any:
            message = await receive()
            if message.get("type") == "http.request":
                chunks.append(bytes(message.get("body", b"")))
                if not message.get("more_body", False):
                    self._record(b"".join(chunks), names)
            return message

        await self.app(scope, recording_receive, send)

    def _record(self, body: bytes, names: tuple[str, ...]) -> None:
        try:
            decoded = json.loads(body)
        except ValueError:
            return
        for message in decoded if isinstance(decoded, list) else [decoded]:
            method = message.get("method") if isinstance(message, dict) else None
            if not isinstance(method, str):
                continue
            params = message.get("params")
            tool = params.get("name") if method == "tools/call" and isinstance(params, dict) else None
            with self._lock:
                self._seen.append(Seen(method, tool if isinstance(tool, str) else None, names))

    def mark(self) -> int:
        with self._lock:
            return len(self._seen)

    def since(self, mark: int) -> list[Seen]:
        with self._lock:
            return list(self._seen[mark:])


def _for_the_call(requests: Sequence[Seen]) -> list[Seen]:
    """What a call caused, without ``ping``: a liveness check runs on its own clock (a client's keep-alive,
    the gateway's watcher pinging a quiet child), so whether one falls inside a call's window is timing,
    not what the call needs."""
    return [seen for seen in requests if seen.method != "ping"]


def describe(requests: Sequence[Seen]) -> str:
    """``"1 request: tools/call call_tool (no Mcp-Param headers)"``: what reached the server for a call
    (pings aside: :func:`_for_the_call`)."""
    requests = _for_the_call(requests)
    parts = []
    for seen in requests:
        text = seen.method + (f" {seen.tool}" if seen.tool else "")
        if seen.method == "tools/call":
            sent = ", ".join(name.title() for name in seen.param_headers)
            text += f" ({sent})" if sent else " (no Mcp-Param headers)"
        parts.append(text)
    noun = "request" if len(requests) == 1 else "requests"
    return f"{len(requests)} {noun}: {'; '.join(parts) or 'none'}"


def per_call_summary(requests: Sequence[Seen], *, process_per_call: bool = False) -> str:
    """``"1 (tools/call)"``, ``"8 (server/discover, tools/list ×6, tools/call), a process per call"``
    (pings aside: :func:`_for_the_call`)."""
    requests = _for_the_call(requests)
    counts: dict[str, int] = {}
    for seen in requests:
        counts[seen.method] = counts.get(seen.method, 0) + 1
    methods = ", ".join(method + (f" ×{count}" if count > 1 else "") for method, count in counts.items())
    return f"{len(requests)} ({methods})" + (", a new process per call" if process_per_call else "")


def relisted(requests: Sequence[Seen]) -> bool:
    return any(seen.method == "tools/list" for seen in requests)


# --------------------------------------------------------------------------- servers


@contextmanager
def serve_in_thread(app: Any, path: str = "/mcp") -> Iterator[str]:
    """``app`` under uvicorn on a free 127.0.0.1 port, in a thread of this process; yields its URL."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="interop-search-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("a search-flow server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@dataclass(frozen=True)
class Target:
    """One search-first server and what the cells do with it."""

    server: str
    url: str
    headers: dict[str, str]
    pattern: str
    routing: tuple[str, dict[str, Any]]
    write: tuple[str, dict[str, Any]]
    log: RequestLog
    unrouted: tuple[str, dict[str, Any]]
    """A hidden tool without routing arguments: what calling it by its own name costs."""
    child_log: RequestLog | None = None
    """The gateway's child (the lab): what one gateway call costs behind it."""


_TIMELINE_EVENT: Final = {
    "id": 1,
    "node_id": "LOE_1",
    "url": "http://127.0.0.1/events/1",
    "actor": None,
    "event": "locked",
    "commit_id": None,
    "commit_url": None,
    "created_at": "2026-01-01T00:00:00Z",
    "performed_via_github_app": None,
    "lock_reason": "resolved",
}


def _fake_github() -> Any:
    """Loopback stand-in for api.github.com: a timeline of one event for GETs, 204 for the lock PUT."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    async def read(request: Request) -> Response:
        return JSONResponse([_TIMELINE_EVENT])

    async def write(request: Request) -> Response:
        return Response(status_code=204)

    return Starlette(
        routes=[
            Route("/{path:path}", read, methods=["GET"]),
            Route("/{path:path}", write, methods=["PUT"]),
        ]
    )


@contextmanager
def search_targets() -> Iterator[list[Target]]:
    """The three servers, up on loopback for the duration of the block."""
    from agent_connector_sdk.connectors import load_github_extract
    from agent_connector_sdk.demo.lab_service import ANALYST_TOKEN, lab_service_app
    from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
    from agent_connector_sdk.serving.openapi_app import build_openapi_app

    bearer = {"Authorization": f"Bearer {ANALYST_TOKEN}"}
    evidence = {"query": "audit", "region": "eu-west"}
    shipment = {"region": "eu-west", "priority": 2, "express": True}
    lab_log = RequestLog(lab_service_app())
    with serve_in_thread(lab_log) as lab_url, serve_in_thread(_fake_github(), path="") as github_url:
        openapi_app, _ = build_openapi_app(load_github_extract(), upstream=github_url)
        openapi_log = RequestLog(openapi_app)
        # No periodic refresh during the run: the lab's log then holds exactly what each call cost.
        config = GatewayConfig(
            children=(ChildSpec("lab", url=lab_url, headers_env={"Authorization": "LAB_AUTHORIZATION"}),),
            refresh=86_400,
        )
        gateway = Gateway(config, environ={"LAB_AUTHORIZATION": bearer["Authorization"]})
        gateway_log = RequestLog(gateway.http_app())
        with serve_in_thread(openapi_log) as openapi_url, serve_in_thread(gateway_log) as gateway_url:
            repository = {"owner": "octo-org", "repo": "hello-world", "issue_number": 1}
            yield [
                Target(
                    LAB_SERVER,
                    lab_url,
                    bearer,
                    "evidence",
                    ("search_evidence", evidence),
                    ("route_shipment", shipment),
                    lab_log,
                    ("content_gallery", {}),
                ),
                Target(
                    OPENAPI_SERVER,
                    openapi_url,
                    {},
                    "timeline",
                    ("issues_list_events_for_timeline", repository),
                    ("issues_lock", {**repository, "lock_reason": "resolved"}),
                    openapi_log,
                    ("issues_list_events_for_timeline", repository),
                ),
                # The gateway federates the lab's hidden tools one by one (never its search proxy).
                Target(
                    GATEWAY_SERVER,
                    gateway_url,
                    {},
                    "evidence",
                    ("lab_search_evidence", evidence),
                    ("lab_route_shipment", shipment),
                    gateway_log,
                    ("lab_content_gallery", {}),
                    child_log=lab_log,
                ),
            ]


# --------------------------------------------------------------------------- one call, any client


@dataclass(frozen=True)
class Outcome:
    """A call's answer as every client reports it: a result (``is_error``, its JSON payload) or a
    JSON-RPC error (``code``, ``message``)."""

    is_error: bool = False
    payload: Any = None
    code: int | None = None
    message: str = ""
    refused_fields: tuple[str, ...] = ()
    """The result fields the *client's own* model refused (a result it could not read), if any."""

    @property
    def ok(self) -> bool:
        return self.code is None and not self.is_error and not self.refused_fields

    def summary(self) -> str:
        if self.refused_fields:
            return f"the client refused the result ({', '.join(self.refused_fields)})"
        if self.code is not None:
            return f"refused ({self.code})"
        return "tool error" if self.is_error else "ok"


Caller = Callable[[str, dict[str, Any]], Awaitable[Outcome]]


def _payload_of(structured: Any, texts: Sequence[str]) -> Any:
    if structured is not None:
        return structured
    for text in texts:
        try:
            return json.loads(text)
        except ValueError:
            continue
    return list(texts)


def _entry_names(payload: Any) -> list[str]:
    """Tool names of a search answer: ``{"result": [entries]}`` or the bare list (of dicts or text)."""
    entries = payload.get("result", payload) if isinstance(payload, dict) else payload
    if not isinstance(entries, list):
        return []
    names = []
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            names.append(entry["name"])
        elif isinstance(entry, str):
            names.extend(_entry_names(_payload_of(None, [entry])))
    return names


async def exercise(
    run: Run, target: Target, call: Caller, *, process_per_call: bool = False, era_bridge: bool = False
) -> None:
    """Search, the routing call and the write through ``call_tool``; one check each (see the module).

    ``process_per_call``: the client starts a new process per command (the Inspector CLI), so its
    connection set-up and listing come with every call; they are recorded, not held against it.
    ``era_bridge``: a bridge hands 2026-07-28 results unchanged to a 2025-11-25 client; a result that
    client's model refuses for a 2026-07-28-only shape is the bridge's gap, recorded as such.
    """
    mark, child_mark = target.log.mark(), _child_mark(target)
    found = await call(SEARCH_TOOL, {"pattern": target.pattern})
    requests = target.log.since(mark)
    names = _entry_names(found.payload)
    wanted = target.routing[0]
    run.check(
        "search",
        found.ok and wanted in names,
        f"{SEARCH_TOOL} {{pattern: {target.pattern!r}}} → {len(names)} entries, {wanted} "
        f"{'found' if wanted in names else 'MISSING'}; {describe(requests)}{_behind(target, child_mark)}",
    )
    for label, (tool, arguments) in zip(SEARCH_CHECKS[1:], (target.routing, target.write), strict=True):
        mark, child_mark = target.log.mark(), _child_mark(target)
        outcome = await call(PROXY_TOOL, {"name": tool, "arguments": arguments})
        requests = target.log.since(mark)
        calls = [seen for seen in requests if seen.method == "tools/call"]
        run.per_call = run.per_call or per_call_summary(requests, process_per_call=process_per_call)
        if outcome.refused_fields:
            run.check(
                label,
                era_bridge and outcome.refused_fields == ("structuredContent",) and len(calls) == 1,
                f"gap of the bridge: {PROXY_TOOL} → {tool} ran on our server ({describe(requests)}); "
                "the bridge passed its 2026-07-28 result on unchanged and the 2025-11-25 client refused "
                f"its {', '.join(outcome.refused_fields)} (an array: valid in 2026-07-28 only)",
                gap=True,
            )
            continue
        run.check(
            label,
            outcome.ok and len(calls) == 1 and (process_per_call or not relisted(requests)),
            f"{PROXY_TOOL} → {tool}: {outcome.summary()}"
            + (f" — {_sanitized(outcome.message)}" if outcome.code is not None else "")
            + f"; {describe(requests)}{_behind(target, child_mark)}",
        )


def _child_mark(target: Target) -> int:
    return target.child_log.mark() if target.child_log is not None else 0


def _behind(target: Target, mark: int) -> str:
    if target.child_log is None:
        return ""
    return f"; behind the gateway, the lab saw {describe(target.child_log.since(mark))}"


async def check_direct_call(run: Run, target: Target, call: Caller, *, modern: bool, label: str) -> None:
    """A tool with ``x-mcp-header`` arguments called by its own name by a client that cannot know them.

    The spec's rule holds for direct calls on 2026-07-28: refused with -32020, and the refusal says how
    to proceed. A 2025-11-25 call has no header obligation; GitHub's tools declare no annotations.
    """
    tool, arguments = target.routing
    mark = target.log.mark()
    outcome = await call(tool, arguments)
    requests = target.log.since(mark)
    lists = sum(seen.method == "tools/list" for seen in requests)
    if modern and target.server != OPENAPI_SERVER:
        expected = outcome.code == -32020 and PROXY_TOOL in outcome.message and "send it" in outcome.message
    else:
        expected = outcome.ok
    said = f" — {_sanitized(outcome.message)}" if outcome.code is not None else ""
    run.check(
        label,
        expected,
        f"{tool}: {outcome.summary()}{said}; {describe(requests)} ({lists} re-listings for one call)",
    )


# --------------------------------------------------------------------------- clients


def _mcp_outcome(result: Any) -> Outcome:
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    return Outcome(is_error=bool(result.is_error), payload=_payload_of(result.structured_content, texts))


def _error_outcome(error: Any) -> Outcome:
    return Outcome(code=int(error.error.code), message=str(error.error.message))


def _sanitized(text: str) -> str:
    from agent_connector_sdk.sanitize import sanitize_text

    return sanitize_text(text, 240)


async def drive_client_session(run: Run, target: Target) -> None:
    """The ``mcp`` SDK's ``ClientSession`` at 2026-07-28 (``server/discover``), list, then the flow."""
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers=target.headers, timeout=CALL_TIMEOUT_S) as http,
        streamable_http_client(target.url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.discover()
        run.revision = str(session.protocol_version or "?")
        await _list_every_page(session)
        await exercise(run, target, _session_caller(session))


async def _list_every_page(session: Any) -> None:
    """Follow ``nextCursor`` to the end (the lab pages its listing with the ``""`` cursor)."""
    import mcp_types

    cursor: str | None = None
    for _ in range(100):
        params = None if cursor is None else mcp_types.PaginatedRequestParams(cursor=cursor)
        cursor = (await session.list_tools(params=params)).next_cursor
        if cursor is None:
            return
    raise RuntimeError("the listing did not end within 100 pages")


def _session_caller(session: Any) -> Caller:
    from mcp.shared.exceptions import MCPError
    from pydantic import ValidationError

    async def call(name: str, arguments: dict[str, Any]) -> Outcome:
        try:
            return _mcp_outcome(await session.call_tool(name, arguments))
        except MCPError as error:
            return _error_outcome(error)
        except ValidationError as refused:  # the client's own result model (see exercise's era_bridge)
            return Outcome(refused_fields=_refused_fields(refused, skip=0))

    return call


def _refused_fields(refused: Any, *, skip: int) -> tuple[str, ...]:
    """The dotted field paths a pydantic ``ValidationError`` names (the first ``skip`` steps dropped)."""
    return tuple(sorted({".".join(str(step) for step in error["loc"][skip:]) for error in refused.errors()}))


@asynccontextmanager
async def _fastmcp_caller(client: Any) -> AsyncIterator[Caller]:
    from mcp.shared.exceptions import MCPError

    async with client:
        await client.list_tools()

        async def call(name: str, arguments: dict[str, Any]) -> Outcome:
            # The high-level call people write (it parses structured output against the tool's output
            # schema, which it looks up in a listing when the tool was never listed).
            try:
                return _mcp_outcome(await client.call_tool(name, arguments, raise_on_error=False))
            except MCPError as error:
                return _error_outcome(error)

        yield call


async def drive_fastmcp(run: Run, target: Target) -> None:
    """``fastmcp.Client`` over Streamable HTTP; then the undocumented flow (a hidden tool by name)."""
    import fastmcp
    from fastmcp.client.transports import StreamableHttpTransport

    client: fastmcp.Client[Any] = fastmcp.Client(
        StreamableHttpTransport(target.url, headers=target.headers), timeout=CALL_TIMEOUT_S
    )
    async with _fastmcp_caller(client) as call:
        run.revision = str(client.protocol_version or "?")
        await exercise(run, target, call)
        label = "hidden tool called by its own name (not the documented flow)"
        await check_direct_call(run, target, call, modern=True, label=label)
        # What that flow costs where it runs: the client re-lists to find the output schema.
        tool, arguments = target.unrouted
        mark = target.log.mark()
        outcome = await call(tool, arguments)
        requests = target.log.since(mark)
        lists = sum(seen.method == "tools/list" for seen in requests)
        run.check(
            "hidden tool without routing arguments called by its own name (its cost)",
            outcome.ok and len(requests) == 1 + lists,
            f"{tool}: {outcome.summary()}; {describe(requests)} ({lists} re-listings for one call, "
            f"against 1 request through {PROXY_TOOL})",
        )


def _node_env(toolchain: Toolchain, home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{toolchain.node.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "MCP_REMOTE_CONFIG_DIR": str(home / ".mcp-auth"),
    }


async def drive_mcp_remote(run: Run, target: Target, toolchain: Toolchain, protocol: str) -> None:
    """``mcp-remote`` (stdio → Streamable HTTP bridge) under a 2025-11-25 stdio client, as desktop hosts
    run it: the ``mcp`` SDK's ``ClientSession`` over stdio with the ``initialize`` handshake."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from pydantic import ValidationError

    from scripts.interop import CACHE, MCP_REMOTE, _bin

    home = CACHE / "mcp-remote-home"
    home.mkdir(parents=True, exist_ok=True)
    args = [str(_bin(toolchain.packages, MCP_REMOTE, "mcp-remote")), target.url, "--transport", "http-only"]
    args += ["--silent", "--protocol", protocol]
    for name, value in target.headers.items():
        args += ["--header", f"{name}:{value}"]
    bridge = StdioServerParameters(
        command=str(toolchain.node), args=args, env=_node_env(toolchain, home), cwd=str(toolchain.packages)
    )
    mark = target.log.mark()
    async with stdio_client(bridge) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        handshake = target.log.since(mark)
        modern = any(seen.method == "server/discover" for seen in handshake)
        upstream = "2026-07-28" if modern else "2025-11-25"
        run.revision = f"{session.protocol_version or '?'} (stdio), {upstream} (HTTP)"
        try:
            await _list_every_page(session)
        except ValidationError as refused:
            # The bridge hands a 2026-07-28 listing to a 2025-11-25 client unchanged; that client's
            # listing model requires `type: object` output schemas (2026-07-28 allows any). It re-lists
            # to validate every result, so nothing can be called: the bridge's gap, recorded as such.
            fields = _refused_fields(refused, skip=2)
            run.check(
                "tools/list through the bridge",
                modern and fields == ("outputSchema.type",),
                f"gap of the bridge: the 2025-11-25 client refuses the listing mcp-remote passes on "
                f"unchanged ({', '.join(fields)}: an array output schema, valid in 2026-07-28 only); "
                "the client re-lists to validate every result, so the flow cannot start",
                gap=True,
            )
            return
        call = _session_caller(session)
        await exercise(run, target, call, era_bridge=modern)
        await check_direct_call(
            run, target, call, modern=modern, label="annotated tool called by its own name through the bridge"
        )


class _AgentDriver:
    """``interop/pydantic_ai_client.py`` in the peers' environment, one JSON line per call."""

    def __init__(self, toolchain: Toolchain, target: Target) -> None:
        from scripts.interop import PINS

        self._process = subprocess.Popen(
            [str(toolchain.python_peers / "bin" / "python"), str(PINS / "pydantic_ai_client.py"), target.url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "INTEROP_HEADERS": json.dumps(target.headers)},
        )

    def read(self) -> dict[str, Any]:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the pydantic-ai driver exited (status {self._process.poll()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ask(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")
        self._process.stdin.flush()
        return self.read()

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


async def drive_pydantic_ai(run: Run, target: Target, toolchain: Toolchain) -> None:
    driver = await asyncio.to_thread(_AgentDriver, toolchain, target)
    try:
        ready = await asyncio.wait_for(asyncio.to_thread(driver.read), STARTUP_TIMEOUT_S)
        if "ready" not in ready:
            raise RuntimeError("the pydantic-ai driver did not connect")
        run.revision = "2026-07-28"  # fastmcp-slim 4.2 underneath, as the fastmcp cell

        async def call(name: str, arguments: dict[str, Any]) -> Outcome:
            answer = await asyncio.wait_for(asyncio.to_thread(driver.ask, name, arguments), CALL_TIMEOUT_S)
            if "error" in answer:
                return Outcome(code=int(answer["error"]["code"]), message=str(answer["error"]["message"]))
            if "tool_error" in answer:
                return Outcome(is_error=True, message=str(answer["tool_error"]))
            result = answer.get("result")
            return Outcome(payload=_payload_of(None, [result]) if isinstance(result, str) else result)

        await exercise(run, target, call)
    finally:
        await asyncio.to_thread(driver.close)


async def drive_inspector(run: Run, target: Target, toolchain: Toolchain) -> None:
    """The Inspector CLI, one process per command (each connects, then calls)."""
    from scripts.interop import _InspectorCli

    cli = _InspectorCli(toolchain, target.url)
    run.revision = "2026-07-28"  # --protocol-era modern
    headers = [f"{name}: {value}" for name, value in target.headers.items()]

    async def call(name: str, arguments: dict[str, Any]) -> Outcome:
        command = ["--method", "tools/call", "--tool-name", name, "--tool-args-json", json.dumps(arguments)]
        if headers:
            command += ["--header", *headers]
        answer = await asyncio.to_thread(cli, *command)
        if "error" in answer and isinstance(answer["error"], dict):
            # The CLI's error envelope carries the server's message; its "code" is not the JSON-RPC one.
            error, code = answer["error"], answer["error"].get("code")
            return Outcome(code=code if isinstance(code, int) else -1, message=str(error.get("message", "")))
        result = answer.get("result", {})
        texts = [block.get("text", "") for block in result.get("content", []) if block.get("type") == "text"]
        return Outcome(
            is_error=bool(result.get("isError")), payload=_payload_of(result.get("structuredContent"), texts)
        )

    await exercise(run, target, call, process_per_call=True)


# --------------------------------------------------------------------------- the cells


CLIENT_SESSION: Final = "mcp ClientSession"
FASTMCP_CLIENT: Final = "fastmcp.Client"
INSPECTOR_CLI: Final = "MCP Inspector CLI"
MCP_REMOTE_CLIENT: Final = "mcp-remote"
PYDANTIC_AI: Final = "pydantic-ai MCPToolset"


def _client_labels(toolchain: Toolchain) -> dict[str, str]:
    from importlib.metadata import version

    from scripts.interop import INSPECTOR, MCP_REMOTE

    remote = f"{MCP_REMOTE_CLIENT} {toolchain.version(MCP_REMOTE)}"
    return {
        "session": f"{CLIENT_SESSION} (mcp {version('mcp')})",
        "fastmcp": f"{FASTMCP_CLIENT} {version('fastmcp')}",
        "inspector": f"{INSPECTOR_CLI} {toolchain.version(INSPECTOR)}",
        "remote-legacy": f"{remote} (default: --protocol legacy) under a 2025-11-25 stdio client",
        "remote-auto": f"{remote} --protocol auto under a 2025-11-25 stdio client",
        "pydantic-ai": f"{PYDANTIC_AI} (pydantic-ai-slim {toolchain.version('pydantic-ai-slim')})",
    }


Drive = Callable[["Run", Target], Coroutine[Any, Any, None]]


def _cell(drive: Drive, run: Run, target: Target) -> Callable[[], None]:
    def body() -> None:
        asyncio.run(drive(run, target))

    return body


def iter_search_flow(toolchain: Toolchain) -> Iterator[Run]:
    """Every client × every search-first server (see the module docstring), one cell at a time; the
    three servers start before the first cell and stop when the generator is exhausted or closed."""
    from scripts.interop import Run, _guarded

    labels = _client_labels(toolchain)
    drivers: dict[str, Drive] = {
        "session": drive_client_session,
        "fastmcp": drive_fastmcp,
        "inspector": lambda run, target: drive_inspector(run, target, toolchain),
        "remote-legacy": lambda run, target: drive_mcp_remote(run, target, toolchain, "legacy"),
        "remote-auto": lambda run, target: drive_mcp_remote(run, target, toolchain, "auto"),
        "pydantic-ai": lambda run, target: drive_pydantic_ai(run, target, toolchain),
    }
    with search_targets() as targets:
        for target in targets:
            for key, drive in drivers.items():
                transport = "stdio → Streamable HTTP" if key.startswith("remote") else "Streamable HTTP"
                run = Run(labels[key], target.server, transport, search_flow=True)
                _guarded(run, _cell(drive, run, target))
                yield run
