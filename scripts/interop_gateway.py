"""The gateway cell of the interop matrix: the reference servers nobody here wrote, as gateway children.

``server-filesystem`` and ``server-memory`` (npm) and ``mcp-server-time`` (PyPI) run over stdio as
children of one ``Gateway`` (this process, on 127.0.0.1). Our disclosure-aware host drives the gateway
over Streamable HTTP (2026-07-28): it finds each tool with the gateway's ``search_tools``, reads and
verifies its disclosure, admits it, and calls it (``SchemaDisclosureConsumer``), so every result is
checked twice — by the gateway against the child's admitted descriptor, and by the caller against the
disclosed one. Checks: every child up and every tool admitted; a read relayed exactly as the child
produced it (its one text block, its ``structuredContent``: no JSON copy added); a tool error relayed
as the child's ``isError`` result without invented ``structuredContent``; writes and a read of them;
a valid and an invalid time zone.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from agent_connector_sdk.mcp.host.disclosure_consumer import SchemaDisclosureConsumer
    from scripts.interop import Run, Toolchain

CLIENT: Final = "agent-connector-sdk SchemaDisclosureConsumer"
WRITES: Final = frozenset({"mem_create_entities"})


async def _call(consumer: SchemaDisclosureConsumer, name: str, arguments: dict[str, Any]) -> Any:
    """Search for ``name`` at the gateway, disclose, verify and admit it, then call it."""
    selection = await consumer.select(f"^{name}$|^{name} ", name)
    tool = await consumer.disclose(selection)
    return await consumer.call(tool, arguments)


async def _exercise(run: Run, url: str, gateway: Any, root: Path) -> None:
    import fastmcp
    from fastmcp.client.transports.http import StreamableHttpTransport

    from agent_connector_sdk.mcp.host import HostOptions, HostSession
    from agent_connector_sdk.mcp.host.disclosure_consumer import CallerScope, SchemaDisclosureConsumer

    health = {child.name: child for child in gateway.health()}
    rejected = {
        name: [(r.tool, r.category) for r in child.catalog.rejected]
        for name, child in gateway.children.items()
        if child.catalog is not None and child.catalog.rejected
    }
    run.check(
        "children admitted",
        all(h.state == "up" for h in health.values()) and not rejected,
        ", ".join(f"{name} {h.state} ({h.tools} tools)" for name, h in health.items())
        + "".join(f"; {name} rejected {items}" for name, items in rejected.items()),
    )
    client: fastmcp.Client[Any] = fastmcp.Client(StreamableHttpTransport(url), timeout=30)
    options = HostOptions(confirm_write=lambda summary: summary.tool in WRITES)
    session = HostSession(client, options)  # before connecting: the Mcp-Param-* hook
    await session.connect()
    try:
        run.revision = str(session.protocol_version or "?")
        consumer = SchemaDisclosureConsumer(session, scope=CallerScope("interop", "gateway"))
        read = await _call(consumer, "fs_read_text_file", {"path": str(root / "notes.txt")})
        run.check(
            "read relayed unchanged",
            not read.is_error
            and read.structured_content == {"content": "hello interop\n"}
            and read.content == [{"type": "text", "text": "hello interop\n"}],
            "the child's one text block and structuredContent, nothing added",
        )
        missing = await _call(consumer, "fs_read_text_file", {"path": str(root / "missing.txt")})
        run.check(
            "tool error relayed, no value invented",
            missing.is_error and not missing.has_structured_content and "ENOENT" in (missing.text or ""),
            "isError with the child's text, no structuredContent",
        )
        entity = {"name": "gateway", "entityType": "check", "observations": ["relayed"]}
        created = await _call(consumer, "mem_create_entities", {"entities": [entity]})
        graph = await _call(consumer, "mem_read_graph", {})
        structured_graph = graph.structured_content
        entities = structured_graph.get("entities") if isinstance(structured_graph, dict) else None
        run.check(
            "write, then read it",
            not created.is_error and not graph.is_error and entities == [entity],
            "confirmed write through the gateway; read_graph sees it",
        )
        now = await _call(consumer, "time_get_current_time", {"timezone": "Europe/Zurich"})
        invalid = await _call(consumer, "time_get_current_time", {"timezone": "Mars/Olympus"})
        structured = now.structured_content if isinstance(now.structured_content, dict) else {}
        run.check(
            "valid and invalid time zone",
            structured.get("timezone") == "Europe/Zurich"
            and invalid.is_error
            and "Invalid timezone" in (invalid.text or ""),
            "a validated result; the child's tool error with its own text",
        )
    finally:
        await session.close()


def run_gateway_cell(toolchain: Toolchain, scratch: Path) -> Run:
    """The reference servers behind one gateway (see the module docstring)."""
    from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
    from scripts.interop import ROOT, SERVER_FILESYSTEM, SERVER_MEMORY, TIME_SERVER, Run, _guarded
    from scripts.interop_search import serve_in_thread

    versions = (
        f"server-filesystem {toolchain.version(SERVER_FILESYSTEM)}, server-memory "
        f"{toolchain.version(SERVER_MEMORY)}, mcp-server-time {toolchain.version(TIME_SERVER)}"
    )
    run = Run(CLIENT, f"agent-connector gateway ({versions} as stdio children)", "Streamable HTTP")
    root = scratch / "gateway-root"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    (root / "notes.txt").write_text("hello interop\n", encoding="utf-8")
    memory_file = scratch / "gateway-memory.jsonl"
    memory_file.unlink(missing_ok=True)
    node = str(toolchain.node)
    children = (
        ChildSpec("fs", command=(node, str(toolchain.filesystem), str(root)), cwd=str(ROOT)),
        ChildSpec(
            "mem",
            command=(node, str(toolchain.memory)),
            env_env={"MEMORY_FILE_PATH": "INTEROP_MEMORY_FILE"},
            cwd=str(ROOT),
        ),
        ChildSpec("time", command=(str(toolchain.time_server), "--local-timezone", "UTC"), cwd=str(ROOT)),
    )
    gateway = Gateway(
        GatewayConfig(children=children, connect_timeout=60, call_timeout=30),
        environ={"INTEROP_MEMORY_FILE": str(memory_file)},
    )

    def body() -> None:
        with serve_in_thread(gateway.http_app()) as url:
            asyncio.run(_exercise(run, url, gateway, root))

    _guarded(run, body)
    return run
