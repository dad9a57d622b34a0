"""What keeps reads on the exact path: anything not known to resolve by name like the catalog lists."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastmcp import Client
from fastmcp.server.transforms import Transform
from fastmcp.server.transforms.namespace import Namespace
from fastmcp.tools.base import Tool

from tests.support.disclosure_servers import big_input_schema, build_server, static_tool


class HidesOneToolInListsOnly(Transform):
    async def list_tools(self, tools: Sequence[Tool]) -> Sequence[Tool]:
        return [t for t in tools if t.name != "hidden_by_transform"]


async def read_ok(client: Client[Any], uri: str) -> bool:
    try:
        await client.read_resource(uri)
        return True
    except Exception:
        return False


async def test_defaults_take_the_name_resolved_path() -> None:
    _, _, registry = build_server([static_tool("t", {"type": "object"})])
    assert registry.fast_path_blocker() is None


async def test_an_unknown_transform_keeps_the_exact_path_and_its_verdict() -> None:
    hidden_tool = static_tool("hidden_by_transform", big_input_schema(5))
    server, _, registry = build_server([hidden_tool, static_tool("shown", big_input_schema(6))])
    server.add_transform(HidesOneToolInListsOnly())
    assert registry.fast_path_blocker() == "server transform HidesOneToolInListsOnly is not enable/disable"
    hidden, shown = registry.get("hidden_by_transform"), registry.get("shown")
    assert hidden is not None and shown is not None
    async with Client(server) as client:
        assert not await read_ok(client, hidden.manifest.manifest_uri)  # get_tool alone would serve it
        assert await read_ok(client, shown.manifest.manifest_uri)


async def test_provider_transforms_and_mounted_servers_keep_the_exact_path() -> None:
    server, _, registry = build_server([static_tool("t", {"type": "object"})])
    server.local_provider.add_transform(Namespace("ns"))
    assert registry.fast_path_blocker() is not None
    other, _, other_registry = build_server([static_tool("t", {"type": "object"})])
    child = build_server([static_tool("u", {"type": "object"})])[0]
    other.mount(child, namespace="child")
    assert other_registry.fast_path_blocker() is not None
