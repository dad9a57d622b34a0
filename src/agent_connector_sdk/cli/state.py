"""``agent-connector state``: switch a tool off or on for every replica sharing a state store.

A namespace is initialised once per store (``init``, with the tools to keep off) and again after the
store lost its data: until then replicas refuse its tools, so an empty store never switches withdrawn
tools back on.

    agent-connector state init repos_delete --state redis://127.0.0.1:6379/0 --namespace github
    agent-connector state disable repos_delete --state ... --namespace github
    agent-connector state enable repos_delete --state ... --namespace github
    agent-connector state status --state ... --namespace github

``--state`` defaults to ``AGENT_CONNECTOR_STATE``. For replicas without ``auth`` (where the
``admin_set_tool_enabled`` MCP tool does not exist) this is the way to use the shared switch; it writes
to the store directly, so it cannot check that the name is one of the server's tools (the MCP admin
tool does). Exit codes: 0 done, 2 bad input or the store unreachable — one line on stderr that names
the store by scheme, host and port only (never a password).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated

from cyclopts import App, Parameter

from agent_connector_sdk import __version__
from agent_connector_sdk.cli._options import Namespace
from agent_connector_sdk.cli._output import current_output
from agent_connector_sdk.cli.errors import CliError

# The state backends load when a command runs, not for `state --help` (see cli/app.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_connector_sdk.state import StateBackend

__all__ = ["app"]

app = App(
    name="state",
    help=(
        "Switch a tool off or on for every replica sharing a state store (see docs/deploy.md).\n\n"
        "Writes to the store directly: it cannot check that the name is one of the server's tools."
    ),
    help_format="markdown",
    version=__version__,  # else cyclopts answers `state disable --version` with its own version
)

StateUrl = Annotated[
    str | None,
    Parameter(help="the shared state store: redis://HOST:PORT/DB (default: $AGENT_CONNECTOR_STATE)"),
]
Tool = Annotated[str, Parameter(help="the tool's name as the replicas serve it")]


@app.command
def disable(tool: Tool, /, *, state: StateUrl = None, namespace: Namespace = "default") -> int:
    """Switch TOOL off on every replica (an unknown tool everywhere from their next request)."""
    return _switch(tool, enabled=False, state=state, namespace=namespace)


@app.command
def enable(tool: Tool, /, *, state: StateUrl = None, namespace: Namespace = "default") -> int:
    """Switch TOOL back on on every replica."""
    return _switch(tool, enabled=True, state=state, namespace=namespace)


@app.command
def init(
    *keep_off: Annotated[str, Parameter(help="tools to keep switched off (none: every tool on)")],
    state: StateUrl = None,
    namespace: Namespace = "default",
    replace: Annotated[
        bool, Parameter(help="re-initialise a namespace that is already initialised", negative=())
    ] = False,
) -> int:
    """Initialise the namespace in the store with exactly KEEP-OFF switched off (once per store, and
    again after the store lost its data: until then replicas refuse the namespace's tools)."""

    async def initialise(backend: StateBackend) -> str:
        generation = await backend.catalog.initialize(namespace, frozenset(keep_off), replace=replace)
        return (
            f"{namespace} initialised; switched off: {', '.join(sorted(set(keep_off))) or '(none)'}; "
            f"generation {generation}"
        )

    return _run(state, initialise)


@app.command
def status(*, state: StateUrl = None, namespace: Namespace = "default") -> int:
    """Print the namespace's catalog generation and the tools switched off."""

    async def read(backend: StateBackend) -> str:
        generation, names = await backend.catalog.disabled_tools(namespace)
        return f"generation {generation}; switched off: {', '.join(sorted(names)) or '(none)'}"

    return _run(state, read)


def _switch(tool: str, *, enabled: bool, state: str | None, namespace: str) -> int:
    async def write(backend: StateBackend) -> str:
        from agent_connector_sdk.state import set_tool_enabled

        generation = await set_tool_enabled(backend.catalog, namespace, tool, enabled)
        return f"{tool} {'enabled' if enabled else 'disabled'}; generation {generation}"

    return _run(state, write)


def _run(state: str | None, action: Callable[[StateBackend], Awaitable[str]]) -> int:
    from agent_connector_sdk.state import StateBackendError, describe_state_url, state_url_from_env

    url = state if state is not None else state_url_from_env()
    try:
        line = asyncio.run(_with_backend(url, action))
    except _NoSharedStore:
        raise CliError(NO_SHARED_STORE) from None
    except StateBackendError as error:
        raise CliError(f"state ({describe_state_url(url)}): {error.category}: {error.message}") from None
    print(line, file=current_output())
    return 0


NO_SHARED_STORE = (
    "there is no shared store to read or switch: give one with --state redis://HOST:PORT/0 "
    "(or AGENT_CONNECTOR_STATE), the store your replicas share"
)
"""What ``state`` says without a shared store (none given, or ``memory://``)."""


class _NoSharedStore(Exception):
    """An embedded store lives and dies with this process: switching a tool there changes nothing."""


async def _with_backend(url: str | None, action: Callable[[StateBackend], Awaitable[str]]) -> str:
    from agent_connector_sdk.state import open_state_backend

    backend = open_state_backend(url)
    try:
        if backend.kind == "memory":
            raise _NoSharedStore
        return await action(backend)
    finally:
        await backend.aclose()
