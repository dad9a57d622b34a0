"""Names resolve or the tools stay closed, under a search-first child: an ``[auth.require]`` key naming a
tool the child hides (does not list) is looked up by one anchored exact search when the child comes up.
A typo holds every tool of that child back (not found by search, not callable by either route) and is a
``/healthz`` finding; the right key guards the hidden tool whenever a search or a call publishes it on
demand — never a moment under the base scope — and a call bound to a stale contract is refused (-32015)
on both routes for a tool resolved on demand.

In process: a real FastMCP search-first child and the gateway, each over Streamable HTTP on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agent_connector_sdk.cli.app import main
from agent_connector_sdk.gateway import CONTRACT_BINDING_META_KEY, ChildSpec, Gateway, GatewayConfig
from tests.support.gateway import parse_message, rpc, wait_for
from tests.support.gateway_auth import AUDIENCE, ISSUER, auth_settings, found, healthz, signing_key, token
from tests.support.http_server import serve_asgi
from tests.support.raw_http import raw_post
from tests.support.search_first_child import build


def _call(url: str, headers: list[tuple[str, str]], name: str, *, proxy: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {"id": "n1"}}
    if proxy:
        params = {"name": "call_tool", "arguments": params}
    return rpc(url, "tools/call", params, headers=headers)[1]


def _refused(message: dict[str, Any]) -> bool:
    return "error" in message or message["result"].get("isError") is True


@contextmanager
def _gateway_over_notes(require: dict[str, tuple[str, ...]]) -> Iterator[tuple[str, Gateway]]:
    auth = auth_settings(require)
    child = build("notes", 0).http_app(stateless_http=True)
    with serve_asgi(child) as notes_url:
        config = GatewayConfig(children=(ChildSpec("notes", url=notes_url),), auth=auth, connect_timeout=10)
        gateway = Gateway(config)
        with serve_asgi(gateway.http_app()) as url:
            wait_for(
                lambda: gateway.children["notes"].requirements_checked, what="the required names looked up"
            )
            yield url, gateway


def test_a_require_typo_under_a_search_first_child_holds_its_tools_back() -> None:
    with _gateway_over_notes({"notes_delete_nte": ("notes:write",)}) as (url, gateway):
        assert gateway.children["notes"].state == "up"
        assert gateway.held == {"notes": ("notes_delete_nte",)}
        for headers in (token(), token("notes:write")):
            # The child's search answers, but nothing of it is published: not found, not callable.
            assert found(url, headers, "note") == [] and found(url, headers, "delete_note") == []
            for name in ("notes_delete_note", "notes_read_note"):
                assert _refused(_call(url, headers, name)) and _refused(_call(url, headers, name, proxy=True))
        assert gateway.tool("notes_delete_note") is None and gateway.tool("notes_read_note") is None
        health = healthz(url)
        assert health["status"] == "degraded"
        assert health["unmatched_requirements"] == 1 and health["held_back"] == ["notes"]
        assert gateway.unmatched == ("notes_delete_nte",) and gateway.pending_requirements() == ()


def test_the_right_key_guards_the_hidden_tool_found_by_search_and_by_call() -> None:
    anyone, writer = token(), token("notes:write")
    with _gateway_over_notes({"notes_delete_note": ("notes:write",)}) as (url, gateway):
        assert gateway.held == {} and gateway.unmatched == ()
        assert "notes_delete_note" in gateway.children["notes"].confirmed
        # Found by a call first (read_note was never searched for): resolved through the child, unguarded.
        assert _call(url, anyone, "notes_read_note")["result"]["structuredContent"] == {"ok": True}
        # The guarded tool, whichever way it is published, is never shown or run under the base scope.
        for _ in range(2):
            assert "notes_delete_note" not in found(url, anyone, "delete_note")
            assert found(url, writer, "delete_note")[0] == "notes_delete_note"
            published = gateway.tool("notes_delete_note")
            assert published is not None and published.auth is not None
            for proxy in (False, True):
                assert _refused(_call(url, anyone, "notes_delete_note", proxy=proxy))
                allowed = _call(url, writer, "notes_delete_note", proxy=proxy)
                assert allowed["result"]["structuredContent"] == {"ok": True}, allowed
            # Withdrawn (as the LRU of published hidden tools does): published again on demand, by call.
            gateway.children["notes"]._federated.clear()
            gateway.children["notes"]._republish()
            assert gateway.tool("notes_delete_note") is None and gateway.held == {}
            assert _refused(_call(url, anyone, "notes_delete_note"))  # resolved by this call, still guarded
            assert gateway.tool("notes_delete_note") is not None
        assert healthz(url)["status"] == "ok"

        # The contract binding holds for a tool resolved on demand, on both call routes.
        entry_contract = gateway.tool("notes_delete_note")
        assert entry_contract is not None and entry_contract.contract_sha256
        for params in (
            {"name": "notes_delete_note", "arguments": {"id": "n1"}},
            {"name": "call_tool", "arguments": {"name": "notes_delete_note", "arguments": {"id": "n1"}}},
        ):
            stale = raw_post(
                url, "tools/call", params, headers=writer, meta={CONTRACT_BINDING_META_KEY: "0" * 64}
            )
            message = parse_message(stale)
            assert message["error"]["code"] == -32015, message
            bound = {CONTRACT_BINDING_META_KEY: entry_contract.contract_sha256}
            fresh = parse_message(raw_post(url, "tools/call", params, headers=writer, meta=bound))
            assert fresh["result"]["structuredContent"] == {"ok": True}, fresh


def test_check_refuses_a_require_typo_under_a_search_first_child(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "issuer.pem").write_text(signing_key().public_key, encoding="ascii")
    with serve_asgi(build("notes", 0).http_app(stateless_http=True)) as notes_url:
        for require, refused in (("notes_delete_nte", True), ("notes_delete_note", False)):
            (tmp_path / "gateway.toml").write_text(
                f"""
[auth]
issuer = "{ISSUER}"
audience = "{AUDIENCE}"
public_key_file = "issuer.pem"
[auth.require]
{require} = ["notes:write"]
[children.notes]
url = "{notes_url}"
""",
                encoding="utf-8",
            )
            code = main(["gateway", "--config", str(tmp_path / "gateway.toml"), "--check"])
            err = capsys.readouterr().err
            if refused:
                assert code == 2, err
                assert "[auth.require] notes_delete_nte names no child and no tool its child lists" in err
            else:
                assert code == 0, err
