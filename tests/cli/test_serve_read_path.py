"""The stacks ``agent-connector serve`` ships resolve disclosure reads by name (never the exact path).

A read that falls back to listing the caller's whole catalog costs O(catalog) — ~0.1-1.4 s at GitHub
size — so the lab, ``--openapi`` and ``--state`` stacks are pinned here: a new gate, transform or
middleware the registry cannot vouch for fails this test instead of silently slowing every read.
"""

from __future__ import annotations

import logging

import pytest
from fastmcp import FastMCP
from fastmcp.server.middleware import Middleware

from agent_connector_sdk.connectors import load_github_extract
from agent_connector_sdk.demo.lab_service import lab_service_app
from agent_connector_sdk.serving.openapi_app import (
    build_openapi_app,
    disclosure_read_path,
    log_disclosure_read_path,
)


class RewritesLists(Middleware):
    async def on_list_tools(self, context, call_next):  # type: ignore[no-untyped-def]
        return await call_next(context)


@pytest.mark.parametrize("state", [None, "memory://"])
def test_openapi_stack_resolves_reads_by_name(state: str | None) -> None:
    app, tools = build_openapi_app(load_github_extract(), upstream="http://127.0.0.1:9", state=state)
    assert tools > 0
    assert disclosure_read_path(app) is None


@pytest.mark.parametrize("state", [None, "memory://"])
def test_lab_stack_resolves_reads_by_name(state: str | None) -> None:
    assert disclosure_read_path(lab_service_app(state=state)) is None


def test_start_up_line_says_how_reads_resolve_and_why_not(caplog: pytest.LogCaptureFixture) -> None:
    app, _ = build_openapi_app(load_github_extract(), upstream="http://127.0.0.1:9")
    caplog.set_level(logging.DEBUG, logger="agent_connector_sdk.cli.serve")
    log_disclosure_read_path(app)
    # All is well: nothing to act on, so a debug line (a default `serve` does not print it).
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.DEBUG, "disclosure reads resolve by name (cost independent of the catalog's size)")
    ]
    server: FastMCP = app.state.fastmcp_server
    server.add_middleware(RewritesLists())  # an undeclared middleware that touches tools/list
    caplog.clear()
    log_disclosure_read_path(app)
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        "disclosure reads list the whole catalog per read: "
        "middleware RewritesLists touches tools/list, not declared per-tool"
    )
    assert disclosure_read_path(object()) == "no disclosure registry"
