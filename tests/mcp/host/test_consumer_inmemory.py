"""Consumer steps 1-5 against a real provider over an in-memory FastMCP client."""

from __future__ import annotations

# Write confirmation (on by default) is opted out in this module: these tests exercise other gates;
# tests/mcp/host/test_write_confirmation.py covers confirmation itself.
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from fastmcp import Client, FastMCP
from fastmcp.resources.base import ResourceContent, ResourceResult
from fastmcp.server.middleware import Middleware

from agent_connector_sdk.core.contracts.errors import ArgumentError, ContractViolation
from agent_connector_sdk.mcp.host import HostOptions
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    CallerScope,
    DisclosedTool,
    DisclosureMismatch,
    DisclosureReadFailed,
    DiscoveryFailed,
    SchemaDisclosureConsumer,
    StaleSelection,
)
from agent_connector_sdk.mcp.schema_disclosure_provider import SchemaDisclosureRegistry, describe_schema_tools
from tests.support.disclosure_servers import (
    OUTPUT_SCHEMA,
    StaticTool,
    big_input_schema,
    build_server,
    disclose,
    static_tool,
)

SCOPE = CallerScope(principal="alice", server="test")


def events_tool(note: str = "", result: dict[str, Any] | None = None) -> StaticTool:
    tool = static_tool("list_events", big_input_schema(300, note=note))
    tool.result = result if result is not None else {"ok": True}
    return tool


async def test_discover_select_disclose_and_call() -> None:
    server, _, registry = build_server([events_tool(), static_tool("other", {"type": "object"})])
    async with Client(server) as client:
        consumer = SchemaDisclosureConsumer(
            client, scope=SCOPE, max_in_flight=4, options=HostOptions(require_confirmation=False)
        )
        selection = await consumer.select("list_events", "list_events")
        disclosed = await consumer.disclose(selection)
        assert disclosed.input_schema == big_input_schema(300)
        assert disclosed.output_schema == OUTPUT_SCHEMA
        assert disclosed.manifest == registry.get("list_events").manifest  # type: ignore[union-attr]
        result = await consumer.call(disclosed, {"field_000": "x"})
    assert result.structured_content == {"ok": True}
    assert disclosed.bytes_read > disclosed.manifest.schema_bytes


@dataclass
class Disclosed:
    server: FastMCP[Any]
    registry: SchemaDisclosureRegistry
    consumer: SchemaDisclosureConsumer
    tool: DisclosedTool


@asynccontextmanager
async def disclosed_events(tool: StaticTool) -> AsyncIterator[Disclosed]:
    """An in-memory session on a server serving only ``tool``, with ``list_events`` already disclosed."""
    server, _, registry = build_server([tool])
    async with Client(server) as client:
        consumer = SchemaDisclosureConsumer(
            client, scope=SCOPE, options=HostOptions(require_confirmation=False)
        )
        disclosed = await consumer.disclose(await consumer.select("list_events", "list_events"))
        yield Disclosed(server, registry, consumer, disclosed)


def swap_events_tool(server: FastMCP[Any], note: str) -> StaticTool:
    """Replace the server's ``list_events`` with one whose input schema differs (``note``)."""
    server.local_provider.remove_tool("list_events")
    replacement = events_tool(note=note)
    server.add_tool(replacement)
    return replacement


async def test_arguments_are_validated_before_anything_is_sent() -> None:
    async with disclosed_events(events_tool()) as lab:
        with pytest.raises(ArgumentError) as refused:
            await lab.consumer.call(lab.tool, {"field_001": "missing the required field_000"})
    assert refused.value.category == "invalid_arguments"
    assert "missing the required" not in str(refused.value)  # never the value


async def test_a_result_that_breaks_the_reconstructed_output_schema_is_rejected() -> None:
    async with disclosed_events(events_tool(result={"ok": "yes"})) as lab:
        with pytest.raises(ContractViolation) as rejected:
            await lab.consumer.call(lab.tool, {"field_000": "x"})
    assert rejected.value.category == "output_schema_violation"
    assert rejected.value.gate == "consume"
    assert rejected.value.path == "/structuredContent/ok"


async def test_replaced_schema_refuses_the_stale_call_and_rediscovery_works() -> None:
    async with disclosed_events(events_tool()) as lab:
        consumer, disclosed = lab.consumer, lab.tool
        lab.registry.replace("list_events", disclose(swap_events_tool(lab.server, note="v2")))
        with pytest.raises(StaleSelection) as stale:
            await consumer.call(disclosed, {"field_000": "x"})
        assert stale.value.category == "stale"
        # Every older selection is now refused without a round trip, until the caller re-discovers.
        with pytest.raises(StaleSelection) as again:
            await consumer.call(disclosed, {"field_000": "x"})
        assert again.value.category == "catalog_changed"
        fresh = await consumer.disclose(await consumer.select("list_events", "list_events"))
        assert fresh.manifest.schema_sha256 != disclosed.manifest.schema_sha256
        assert fresh.input_schema == big_input_schema(300, note="v2")
        result = await consumer.call(fresh, {"field_000": "x"})
    assert result.structured_content == {"ok": True}


async def test_a_discovery_that_sees_the_catalog_move_invalidates_earlier_selections() -> None:
    async with disclosed_events(events_tool()) as lab:
        consumer, disclosed = lab.consumer, lab.tool
        swap_events_tool(lab.server, note="v2")
        generation = consumer.generation
        await consumer.discover("list_events")
        assert consumer.generation == generation + 1
        with pytest.raises(StaleSelection) as stale:
            await consumer.call(disclosed, {"field_000": "x"})
    assert stale.value.category == "catalog_changed"


async def test_a_selection_made_under_another_scope_is_refused() -> None:
    server, _, _ = build_server([events_tool()])
    async with Client(server) as client:
        alice = SchemaDisclosureConsumer(client, scope=SCOPE, options=HostOptions(require_confirmation=False))
        bob = SchemaDisclosureConsumer(
            client,
            scope=CallerScope(principal="bob", server="test"),
            options=HostOptions(require_confirmation=False),
        )
        selection = await alice.select("list_events", "list_events")
        disclosed = await alice.disclose(selection)
        with pytest.raises(StaleSelection) as refused_disclose:
            await bob.disclose(selection)
        with pytest.raises(StaleSelection) as refused_call:
            await bob.call(disclosed, {"field_000": "x"})
    assert refused_disclose.value.category == refused_call.value.category == "scope_mismatch"


async def test_disabled_tool_cannot_be_disclosed_or_called() -> None:
    server, _, _ = build_server([events_tool()])
    async with Client(server) as client:
        consumer = SchemaDisclosureConsumer(
            client, scope=SCOPE, options=HostOptions(require_confirmation=False)
        )
        selection = await consumer.select("list_events", "list_events")
        disclosed = await consumer.disclose(selection)
        server.disable(names={"list_events"}, components={"tool"})
        with pytest.raises(DisclosureReadFailed) as refused:
            await consumer.disclose(selection)
        assert refused.value.category == "not_found"
        with pytest.raises(StaleSelection):
            await consumer.call(disclosed, {"field_000": "x"})
        with pytest.raises(DiscoveryFailed) as gone:
            await consumer.select("list_events", "list_events")
    assert gone.value.category == "no_match"


async def test_byte_and_fragment_bounds_refuse_before_reading_fragments() -> None:
    server, _, registry = build_server([events_tool()])
    manifest = registry.get("list_events").manifest  # type: ignore[union-attr]
    async with Client(server) as client:
        small = SchemaDisclosureConsumer(
            client,
            scope=SCOPE,
            max_total_bytes=manifest.schema_bytes // 2,
            options=HostOptions(require_confirmation=False),
        )
        with pytest.raises(DisclosureReadFailed) as too_large:
            await small.disclose(await small.select("list_events", "list_events"))
        few = SchemaDisclosureConsumer(
            client,
            scope=SCOPE,
            max_fragments=manifest.fragment_count - 1,
            options=HostOptions(require_confirmation=False),
        )
        with pytest.raises(DisclosureReadFailed) as too_many:
            await few.disclose(await few.select("list_events", "list_events"))
    assert too_large.value.category == "too_large"
    assert too_many.value.category == "too_many_fragments"


class ReadConcurrency(Middleware):
    """Records the highest number of resources/read requests in flight at once."""

    def __init__(self) -> None:
        self.current = 0
        self.highest = 0

    async def on_read_resource(self, context: Any, call_next: Any) -> Any:
        self.current += 1
        self.highest = max(self.highest, self.current)
        try:
            await anyio.sleep(0.005)  # hold the slot so concurrent reads overlap
            return await call_next(context)
        finally:
            self.current -= 1


async def test_in_flight_reads_are_bounded() -> None:
    server, _, registry = build_server([events_tool()])
    assert registry.get("list_events").manifest.fragment_count >= 6  # type: ignore[union-attr]
    gauge = ReadConcurrency()
    server.add_middleware(gauge)
    async with Client(server) as client:
        consumer = SchemaDisclosureConsumer(
            client, scope=SCOPE, max_in_flight=3, options=HostOptions(require_confirmation=False)
        )
        await consumer.disclose(await consumer.select("list_events", "list_events"))
    assert 1 < gauge.highest <= 3


async def test_a_manifest_that_disagrees_with_the_navigation_is_refused() -> None:
    def lying_serializer(tools: Any) -> list[dict[str, Any]]:
        entries = describe_schema_tools(tools)
        for entry in entries:
            entry["input_schema_sha256"] = "0" * 64  # claims another input schema than it serves
        return entries

    server, search, _ = build_server([events_tool()])
    search._search_result_serializer = lying_serializer
    async with Client(server) as client:
        consumer = SchemaDisclosureConsumer(
            client, scope=SCOPE, options=HostOptions(require_confirmation=False)
        )
        with pytest.raises(DisclosureMismatch) as mismatch:
            await consumer.disclose(await consumer.select("list_events", "list_events"))
    assert mismatch.value.category == "navigation_mismatch"


async def test_malformed_navigation_is_refused() -> None:
    def schema_pasting_serializer(tools: Any) -> list[dict[str, Any]]:
        return [{**entry, "inputSchema": {}} for entry in describe_schema_tools(tools)]

    server, search, _ = build_server([events_tool()])
    search._search_result_serializer = schema_pasting_serializer
    async with Client(server) as client:
        consumer = SchemaDisclosureConsumer(
            client, scope=SCOPE, options=HostOptions(require_confirmation=False)
        )
        with pytest.raises(DiscoveryFailed) as refused:
            await consumer.discover("list_events")
    assert refused.value.category == "malformed_navigation"


class LoneSurrogateFragment(Middleware):
    """A broken peer: fragment 0's body holds a lone surrogate (what a JSON ``\\ud800`` escape decodes to)."""

    async def on_read_resource(self, context: Any, call_next: Any) -> Any:
        result = await call_next(context)
        if str(context.message.uri).endswith("/fragments/0"):
            return ResourceResult(
                contents=[ResourceContent('{"broken": "\ud800"}', mime_type="application/json")]
            )
        return result


async def test_a_body_that_is_not_unicode_text_is_a_typed_refusal() -> None:
    # Before: the byte budget's UTF-8 encode raised UnicodeEncodeError inside the read task group,
    # which escaped as a bare exception group.
    server, _, _ = build_server([events_tool()])
    server.add_middleware(LoneSurrogateFragment())
    async with Client(server) as client:
        consumer = SchemaDisclosureConsumer(
            client, scope=SCOPE, options=HostOptions(require_confirmation=False)
        )
        with pytest.raises(DisclosureReadFailed) as refused:
            await consumer.disclose(await consumer.select("list_events", "list_events"))
    assert refused.value.category == "malformed_body"


@pytest.mark.parametrize(
    "arguments",
    [
        {"field_000": "x", "extra": float("nan")},  # the SDK would send null
        {"field_000": "x", "extra": ("secret", "tuple")},
        {"field_000": "x", "extra": {"secret-set"}},
        [("field_000", "x")],  # was silently turned into an object by dict()
        "field_000",  # was a bare ValueError from dict()
    ],
)
async def test_arguments_that_are_not_json_data_are_refused_before_sending(arguments: Any) -> None:
    async with disclosed_events(events_tool()) as lab:
        with pytest.raises(ArgumentError) as refused:
            await lab.consumer.call(lab.tool, arguments)
    assert refused.value.category == "invalid_arguments"
    assert "secret" not in str(refused.value)


async def test_calls_enforce_the_verified_schemas_not_the_callers_copy() -> None:
    async with disclosed_events(events_tool(result={"ok": "yes"})) as lab:
        # The caller-held schemas are plain dicts; loosening them must not loosen what is enforced.
        lab.tool.input_schema["required"] = []
        lab.tool.output_schema["properties"]["ok"] = {}
        with pytest.raises(ArgumentError) as refused:
            await lab.consumer.call(lab.tool, {"field_001": "no field_000"})
        with pytest.raises(ContractViolation) as rejected:
            await lab.consumer.call(lab.tool, {"field_000": "x"})
    assert refused.value.category == "invalid_arguments"
    assert rejected.value.category == "output_schema_violation"


async def test_a_tool_this_consumer_did_not_verify_or_has_forgotten_is_refused() -> None:
    server, _, _ = build_server([events_tool(), static_tool("other", {"type": "object"})])
    async with Client(server) as client:
        first = SchemaDisclosureConsumer(
            client, scope=SCOPE, options=HostOptions(max_disclosed=1, require_confirmation=False)
        )
        events = await first.disclose(await first.select("list_events", "list_events"))
        second = SchemaDisclosureConsumer(
            client, scope=SCOPE, options=HostOptions(require_confirmation=False)
        )  # same scope, but never verified it
        with pytest.raises(StaleSelection) as unverified:
            await second.call(events, {"field_000": "x"})
        await first.disclose(await first.select("other", "other"))  # evicts list_events (bound 1)
        with pytest.raises(StaleSelection) as forgotten:
            await first.call(events, {"field_000": "x"})
        again = await first.disclose(await first.select("list_events", "list_events"))
        assert (await first.call(again, {"field_000": "x"})).structured_content == {"ok": True}
    assert unverified.value.category == forgotten.value.category == "not_disclosed"
