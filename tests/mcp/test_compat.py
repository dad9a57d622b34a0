"""The compatibility module: the installed FastMCP/mcp are the tested minors, every private accessor
still reaches what it names, and no other module touches those internals."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version as metadata_version
from pathlib import Path
from typing import Any, cast

import fastmcp
import httpx2
import pytest
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.server.transforms.search import RegexSearchTransform

from agent_connector_sdk.mcp import compat

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src" / "agent_connector_sdk"
PRIVATE_ACCESS = re.compile(
    r"\._mcp_server\b|\._on_list_|\._list_page_size\b|\b_srctx\b|\._call_tool_name\b|_make_verify_factory"
    r"|mcp\.shared\._httpx_utils|setattr\(server, \"get_tool\""
    r"|_dispatch_component_middleware|\b_bypass\b|_search_tool_name|_SchemaCacheLocalProvider"
    r"|mcp\.client\._input_required|_session_kwargs"
)
# Modules allowed to reach private internals without going through `compat`: none (kept as an empty set
# so the scan below stays explicit about it).
PENDING_HOST_SIDE: set[str] = set()


def test_the_installed_fastmcp_and_mcp_are_the_tested_minor_versions() -> None:
    untested = compat.untested_versions()
    assert untested == [], (
        "agent_connector_sdk.mcp.compat was not checked against "
        + ", ".join(untested)
        + ": re-check every accessor in compat.py, then update TESTED_VERSIONS and the pins"
    )


def test_the_pins_are_the_tested_minor_versions() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for distribution, (major, minor) in compat.TESTED_VERSIONS.items():
        (pin,) = [d for d in dependencies if re.match(rf"{distribution}\b(?!-)", d)]
        assert pin == f"{distribution}>={major}.{minor},<{major}.{minor + 1}", pin


def test_no_module_but_compat_touches_the_internals() -> None:
    offenders = []
    for path in SOURCE.rglob("*.py"):
        relative = path.relative_to(SOURCE).as_posix()
        if relative == "mcp/compat.py" or relative in PENDING_HOST_SIDE:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if PRIVATE_ACCESS.search(line):
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert offenders == []


def test_list_handlers_are_the_ones_fastmcp_registers() -> None:
    server: fastmcp.FastMCP[Any] = fastmcp.FastMCP("compat")
    low_level = compat.low_level_server(server)
    for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
        entry = low_level.get_request_handler(method)
        assert entry is not None and entry.handler == compat.fastmcp_list_handler(server, method), method


def test_list_page_size_reads_fastmcp_pagination() -> None:
    assert compat.list_page_size(fastmcp.FastMCP("a")) is None
    assert compat.list_page_size(fastmcp.FastMCP("b", list_page_size=7)) == 7


def test_search_proxy_name_is_read_from_the_transform() -> None:
    assert compat.search_proxy_tool_name(RegexSearchTransform()) == "call_tool"
    assert compat.search_proxy_tool_name(RegexSearchTransform(call_tool_name="run")) == "run"
    assert compat.search_proxy_tool_name(object()) is None


async def test_wire_request_sees_the_current_call_and_nothing_outside_one() -> None:
    server: fastmcp.FastMCP[Any] = fastmcp.FastMCP("wire")
    seen: list[Any] = []

    @server.tool
    def probe(x: int) -> int:
        current = compat.wire_request()
        assert current is not None
        _, method, params = current
        seen.append((method, dict(params)))
        return x

    assert compat.wire_request() is None
    async with fastmcp.Client(server) as client:
        await client.call_tool("probe", {"x": 3})
    assert seen[0][0] == "tools/call"
    assert seen[0][1]["name"] == "probe" and seen[0][1]["arguments"] == {"x": 3}


async def test_replacing_tool_resolution_is_what_call_tool_uses() -> None:
    server: fastmcp.FastMCP[Any] = fastmcp.FastMCP("resolve")

    @server.tool
    def echo(x: int) -> int:
        return x

    resolved: list[str] = []

    def make(original: compat.GetTool) -> compat.GetTool:
        async def get_tool(name: str, version: Any = None) -> Any:
            resolved.append(name)
            return await original(name, version)

        return get_tool

    assert compat.installed_tool_resolution(server) is None
    compat.replace_tool_resolution(server, make)
    assert compat.installed_tool_resolution(server) is not None
    async with fastmcp.Client(server) as client:
        await client.call_tool("echo", {"x": 1})
    assert "echo" in resolved


def test_the_sdk_header_check_hook_exists_and_is_switched_off() -> None:
    server: fastmcp.FastMCP[Any] = fastmcp.FastMCP("hook")
    low_level = compat.low_level_server(server)
    assert hasattr(low_level, "get_tool_input_schema")
    compat.disable_sdk_parameter_header_check(server)
    assert low_level.get_tool_input_schema("anything") is None


def test_host_side_accessors_reach_the_sdk() -> None:
    assert callable(compat.create_mcp_http_client)
    assert compat.McpHttpClientFactory is not None
    factory = compat.make_verify_factory(StreamableHttpTransport("http://127.0.0.1:9/mcp"))
    assert factory is None or callable(factory)


async def test_the_transport_client_factory_mirrors_the_transports_own_choice() -> None:
    """A transport's own factory is used as is; without one, the built client takes a caller's
    ``follow_redirects`` keyword (the SDK's default factory sets it itself and refuses the keyword)."""
    seen: list[dict[str, Any]] = []

    def own(**kwargs: Any) -> httpx2.AsyncClient:
        seen.append(kwargs)
        return httpx2.AsyncClient()

    custom = StreamableHttpTransport(
        "http://127.0.0.1:9/mcp", httpx_client_factory=cast(compat.McpHttpClientFactory, own)
    )
    assert compat.transport_client_factory(custom) is own
    plain = compat.transport_client_factory(StreamableHttpTransport("http://127.0.0.1:9/mcp"))
    reference = compat.create_mcp_http_client()
    client = plain(headers={"x-test": "1"}, follow_redirects=not reference.follow_redirects)
    try:
        assert isinstance(client, httpx2.AsyncClient) and client.headers["x-test"] == "1"
        assert client.follow_redirects is reference.follow_redirects  # the SDK's setting, not the keyword
    finally:
        await client.aclose()
        await reference.aclose()
    assert seen == []


@pytest.mark.parametrize("distribution", sorted(compat.TESTED_VERSIONS))
def test_an_untested_version_is_reported(monkeypatch: pytest.MonkeyPatch, distribution: str) -> None:
    real = metadata_version  # what compat.version is until the test replaces it
    monkeypatch.setattr(compat, "version", lambda name: "99.0.0" if name == distribution else real(name))
    assert compat.untested_versions() == [
        f"{distribution} 99.0.0 (tested: {'.'.join(map(str, compat.TESTED_VERSIONS[distribution]))})"
    ]


def test_the_disclosure_read_path_accessors_reach_their_targets() -> None:
    server: fastmcp.FastMCP[Any] = fastmcp.FastMCP("compat")
    search = RegexSearchTransform()
    server.add_transform(search)
    assert compat.SCALE_READ_PATH_SUPPORTED
    assert compat.synthetic_tool_names(search) == frozenset({"search_tools", "call_tool"})
    assert all(compat.is_name_consistent_provider(provider) for provider in server.providers)
    with compat.catalog_bypassed(search):
        assert search._bypass.get() is True  # the one private read outside compat.py: the test itself
    assert search._bypass.get() is False


def test_the_skills_provider_serves_no_tools_so_it_resolves_names_like_it_lists() -> None:
    from fastmcp.server.providers.base import Provider
    from fastmcp.skills.provider import SkillCatalogProvider

    from agent_connector_sdk.skills import skills_provider

    assert SkillCatalogProvider._list_tools is Provider._list_tools
    assert SkillCatalogProvider._get_tool is Provider._get_tool
    assert compat.is_name_consistent_provider(skills_provider())


async def test_synthetic_tools_are_built_once_per_transform_and_names() -> None:
    from fastmcp.server.transforms.search import BM25SearchTransform

    search = RegexSearchTransform()
    assert compat.memoize_synthetic_tools(search)
    assert compat.memoize_synthetic_tools(search)  # idempotent
    server: fastmcp.FastMCP[Any] = fastmcp.FastMCP("compat")
    server.add_transform(search)
    first = [tool for tool in await server.list_tools()]
    again = [tool for tool in await server.list_tools()]
    assert [t.name for t in first] == ["search_tools", "call_tool"]
    assert all(a is b for a, b in zip(first, again, strict=True))
    assert await server.get_tool("search_tools") is first[0]
    search._search_tool_name = "find_tools"  # the private read outside compat.py: the test itself
    renamed = await server.list_tools()
    assert [t.name for t in renamed] == ["find_tools", "call_tool"]
    assert renamed[1] is not first[1]  # rebuilt for the new names
    assert compat.memoize_synthetic_tools(BM25SearchTransform())

    class OwnSearchTool(RegexSearchTransform):
        def _make_search_tool(self) -> Any:
            return super()._make_search_tool()

    assert not compat.memoize_synthetic_tools(OwnSearchTool())  # a factory of its own: left alone
