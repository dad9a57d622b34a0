"""Operator command: switch a tool off or on for every replica sharing a state store.

    python -m agent_connector_sdk.state.admin --state redis://127.0.0.1:6379/0 --namespace github \\
        disable repos_delete
    python -m agent_connector_sdk.state.admin --state ... --namespace github enable repos_delete
    python -m agent_connector_sdk.state.admin --state ... --namespace github status

``--state`` defaults to ``AGENT_CONNECTOR_STATE``. For replicas without ``auth`` (where the
``admin_set_tool_enabled`` MCP tool does not exist) this is the way to use the shared switch; it writes
to the store directly, so it cannot check that the name is one of the server's tools (the MCP admin
tool does). Exit codes: 0 done, 2 bad input or the store unreachable; errors are one line.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import TextIO

from agent_connector_sdk.state.base import StateBackendError
from agent_connector_sdk.state.catalog_switch import set_tool_enabled
from agent_connector_sdk.state.config import describe_state_url, open_state_backend, state_url_from_env

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agent_connector_sdk.state.admin",
        description="switch a tool off or on for every replica sharing a state store",
    )
    parser.add_argument("--state", default=None, help="state URL (default: $AGENT_CONNECTOR_STATE)")
    parser.add_argument("--namespace", default="default", help="the catalog namespace replicas share")
    actions = parser.add_subparsers(dest="action", required=True)
    for action in ("disable", "enable"):
        sub = actions.add_parser(action, help=f"{action} a tool on every replica")
        sub.add_argument("tool")
    actions.add_parser("status", help="print the generation and the switched-off tools")
    return parser


async def _run(args: argparse.Namespace, out: TextIO) -> None:
    backend = open_state_backend(args.state if args.state is not None else state_url_from_env())
    if backend.kind == "memory":
        raise StateBackendError(
            "invalid_state_url", "no shared state given (--state or AGENT_CONNECTOR_STATE)"
        )
    try:
        if args.action == "status":
            generation, names = await backend.catalog.disabled_tools(args.namespace)
            print(f"generation {generation}; switched off: {', '.join(sorted(names)) or '(none)'}", file=out)
        else:
            enabled = args.action == "enable"
            generation = await set_tool_enabled(backend.catalog, args.namespace, args.tool, enabled)
            print(f"{args.tool} {'enabled' if enabled else 'disabled'}; generation {generation}", file=out)
    finally:
        await backend.aclose()


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        asyncio.run(_run(args, out if out is not None else sys.stdout))
    except StateBackendError as error:
        where = describe_state_url(args.state if args.state is not None else state_url_from_env())
        print(f"agent-connector state ({where}): {error.category}: {error.message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
