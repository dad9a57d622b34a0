"""Write confirmation in the host core (issue: host duties): a tool that may write runs only when the
host's callback says yes; without a callback such a call is refused, before anything is sent."""

from __future__ import annotations

from typing import Any

import fastmcp
import pytest
from fastmcp import FastMCP
from mcp_types import ToolAnnotations

from agent_connector_sdk.mcp.host import CallSummary, ConfirmationRefused, HostOptions
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    SchemaDisclosureConsumer,
)
from tests.support.audit import recorded
from tests.support.host_servers import CallCounter, lab_behind_search


def _server() -> tuple[FastMCP[Any], CallCounter]:
    server: FastMCP[Any] = FastMCP("writes")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def read_balance(account: str) -> dict[str, int]:
        return {"balance": 42}

    @server.tool
    def transfer(account: str, amount: int) -> dict[str, str]:  # no annotations: may write
        return {"status": "done"}

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=True))
    def purge(account: str) -> dict[str, str]:  # contradictory hints: the destructive one wins
        return {"status": "purged"}

    counter = CallCounter()
    server.add_middleware(counter)
    return server, counter


async def test_by_default_without_a_callback_a_writing_tool_is_refused_before_sending() -> None:
    server, counter = _server()
    async with ContractClient(fastmcp.Client(server)) as host:  # the default: confirmation required
        await host.discover_tools()
        assert (await host.call("read_balance", {"account": "a"})).structured_content == {"balance": 42}
        for name in ("transfer", "purge"):
            with pytest.raises(ConfirmationRefused) as refused:
                await host.call(
                    name, {"account": "secret-acct", "amount": 5} if name == "transfer" else {"account": "x"}
                )
            assert refused.value.category == "confirmation_required" and refused.value.gate == "invoke"
            assert "secret" not in str(refused.value)
    assert counter.calls == ["read_balance"]
    assert recorded(host.audit)[-1] == {"event": "call", "tool": "purge", "outcome": "confirmation_required"}


async def test_an_explicit_opt_out_calls_without_asking() -> None:
    server, counter = _server()
    async with ContractClient(
        fastmcp.Client(server), options=HostOptions(require_confirmation=False)
    ) as host:
        await host.discover_tools()
        assert (await host.call("transfer", {"account": "a", "amount": 1})).structured_content == {
            "status": "done"
        }
    assert counter.calls == ["transfer"]


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_the_callback_sees_a_value_free_summary_and_decides(asynchronous: bool) -> None:
    server, counter = _server()
    seen: list[CallSummary] = []

    def decide(summary: CallSummary) -> bool:
        seen.append(summary)
        return summary.tool == "transfer"

    async def decide_later(summary: CallSummary) -> bool:
        return decide(summary)

    confirm = decide_later if asynchronous else decide
    async with ContractClient(fastmcp.Client(server), options=HostOptions(confirm_write=confirm)) as host:
        await host.discover_tools()
        await host.call("read_balance", {"account": "a"})  # read-only: never asked
        assert (await host.call("transfer", {"account": "secret-acct", "amount": 5})).structured_content
        with pytest.raises(ConfirmationRefused) as declined:
            await host.call("purge", {"account": "secret-acct"})
    assert declined.value.category == "not_confirmed"
    assert [s.tool for s in seen] == ["transfer", "purge"]
    assert seen[0].arguments == ("account", "amount") and seen[0].annotations == {}
    assert seen[1].annotations["destructiveHint"] is True
    assert "secret" not in repr(seen)
    assert counter.calls == ["read_balance", "transfer"]


async def test_a_failing_callback_is_a_refusal_not_a_go_ahead() -> None:
    server, counter = _server()

    def broken(summary: CallSummary) -> bool:
        raise RuntimeError("confirmation UI crashed")

    async with ContractClient(fastmcp.Client(server), options=HostOptions(confirm_write=broken)) as host:
        await host.discover_tools()
        with pytest.raises(ConfirmationRefused) as refused:
            await host.call("transfer", {"account": "a", "amount": 1})
    assert refused.value.category == "not_confirmed"
    assert counter.calls == []


async def test_the_consumer_confirms_through_the_same_core() -> None:
    server = await lab_behind_search()
    async with fastmcp.Client(server) as client:
        consumer = SchemaDisclosureConsumer(client, scope=CallerScope("alice", "lab"))
        tool = await consumer.disclose(await consumer.select("route_shipment", "route_shipment"))
        with pytest.raises(ConfirmationRefused) as refused:
            await consumer.call(tool, {"region": "eu-west"})
        confirming = SchemaDisclosureConsumer(
            client, scope=CallerScope("alice", "lab"), options=HostOptions(confirm_write=lambda summary: True)
        )
        tool = await confirming.disclose(await confirming.select("route_shipment", "route_shipment"))
        result = await confirming.call(tool, {"region": "eu-west"})
    assert refused.value.category == "confirmation_required"
    assert result.structured_content["region"] == "eu-west"
