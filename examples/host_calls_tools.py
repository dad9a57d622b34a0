"""A host script: connect to a server, see what a host would admit, and call tools safely — runnable:

    python examples/gated_server.py --port 0              # in one terminal: prints its URL
    python examples/host_calls_tools.py URL               # in another, with that URL

``ContractClient`` (over the caller's own ``fastmcp.Client``) lists the server's tools and admits
each one it can enforce; then it calls the gated server's ``quote`` with validated arguments (the
``region`` argument also travels as the ``Mcp-Param-Region`` header), refuses invalid arguments before
anything is sent, refuses the write ``book`` until someone confirms it, and books once this script's
confirmation callback says yes. What it prints is sanitized (a server chooses its tools' names and
its own words); the audit trail holds names and categories, never argument values.

Against another server, pass ``--token`` for a bearer token; the listing is printed for any server,
the calls are the gated server's. Exit status: 0 when every step went as described, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import fastmcp

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.core.contracts import ContractError
from agent_connector_sdk.mcp.host import (
    CallSummary,
    ConfirmationRefused,
    ContractClient,
    HostOptions,
    ProtocolError,
)
from agent_connector_sdk.sanitize import sanitize_text


def confirm_booking(summary: CallSummary) -> bool:
    """The caller's confirmation: a real host asks its user; this one approves ``book`` alone. The
    summary carries the tool's name, hints and argument names, never the values."""
    answer = summary.tool == "book"
    print(f"confirm {summary.tool}({', '.join(summary.arguments)})? {'yes' if answer else 'no'}")
    return answer


async def run(url: str, token: str | None) -> int:
    audit = BoundedAuditSink(maxlen=100)
    client = fastmcp.Client(url, auth=token)
    async with ContractClient(client, HostOptions(audit=audit)) as host:
        await host.discover_tools()
        report = host.report
        print(f"connected: protocol {report.protocol_version}, Mcp-Param-* headers {report.header_gates}")
        for name in host.admitted:
            print(f"admitted: {sanitize_text(name, 80)}")
        for rejection in host.rejections:
            print(f"rejected: {sanitize_text(rejection['tool'], 80)} ({rejection['category']})")
        if not {"quote", "book"} <= set(host.admitted):
            print("not the gated example server (no quote and book to call): done after the listing")
            return 0

        quoted = await host.call("quote", {"region": "Zürich west", "weight_kg": 2})
        print(f"quote -> {sanitize_text(quoted.structured_content, 200)}")
        try:
            await host.call("quote", {"region": "Zürich west", "weight_kg": -1})
            return 1  # not reached: the host refuses invalid arguments
        except ContractError as refusal:
            print(f"quote with weight_kg -1 -> refused before sending ({refusal.gate}, {refusal.category})")
        try:
            await host.call("book", {"region": "Zürich west", "weight_kg": 2})
            return 1  # not reached: a write is confirmed first
        except ConfirmationRefused as refusal:
            print(f"book without confirmation -> refused ({refusal.category})")

    confirming = HostOptions(audit=audit, confirm_write=confirm_booking)
    async with ContractClient(fastmcp.Client(url, auth=token), confirming) as host:
        await host.discover_tools()
        booked = await host.call("book", {"region": "Zürich west", "weight_kg": 2})
        print(f"book -> {sanitize_text(booked.structured_content, 200)}")
    calls = [event for event in audit.events() if event.get("event") == "call"]
    print("audit: " + "; ".join(f"{event['tool']} {event['outcome']}" for event in calls))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Admit a server's tools and call them through every gate.")
    parser.add_argument("url", help="the server's Streamable HTTP endpoint, e.g. http://127.0.0.1:8011/mcp")
    parser.add_argument("--token", help="a bearer token for the server (sent as Authorization: Bearer …)")
    arguments = parser.parse_args(argv)
    if not arguments.url.startswith(("http://", "https://")):
        parser.error(
            f"{sanitize_text(arguments.url, 200)} is not an http(s) URL, e.g. http://127.0.0.1:8011/mcp"
        )
    try:
        return asyncio.run(run(arguments.url, arguments.token))
    except ProtocolError as error:  # unreachable, refused the token, not MCP: one line, no traceback
        print(f"host_calls_tools: {sanitize_text(arguments.url, 200)}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
