"""Provider logic over an in-memory FastMCP client: navigation, reads, refusals, staleness, registration."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.server.transforms.search import RegexSearchTransform
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.core.disclosure_navigation import (
    MAX_DESCRIPTION_CHARS,
    MAX_SUMMARY_ARGUMENTS,
    SchemaNavigation,
)
from agent_connector_sdk.core.schema_disclosure import (
    reconstruct_schema,
)
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    SchemaResourceRegistrationError,
    describe_schema_tools,
    register_schema_resources,
)
from tests.support.disclosure_reads import error_of, expected_refusal, read_all, read_text, search
from tests.support.disclosure_servers import (
    OUTPUT_SCHEMA,
    big_input_schema,
    build_server,
    disclose,
    searchable_server,
    static_tool,
)
from tests.support.disclosure_uris import BASE_REFERENCE_URI, guessed_uris


@pytest.fixture
def tools() -> list[Any]:
    return [
        static_tool("list_events", big_input_schema(300)),
        static_tool(
            "Other.tool-2", {"type": "object", "properties": {"q": {"type": "string"}}}, output_schema=None
        ),
    ]


async def test_navigation_entry_points_at_current_schemas_without_containing_them(tools: list[Any]) -> None:
    server, _, registry = build_server(tools)
    disclosure = registry.get("list_events")
    assert disclosure is not None
    async with Client(server) as client:
        entries = await search(client, "list_events")
    assert len(entries) == 1
    entry = SchemaNavigation.model_validate(entries[0])
    manifest = disclosure.manifest
    assert entry.kind == "schema-navigation"
    assert entry.name == "list_events"
    assert entry.description == "A static test tool."
    assert (entry.input_schema_sha256, entry.output_schema_sha256, entry.schema_sha256) == (
        manifest.input_schema_sha256,
        manifest.output_schema_sha256,
        manifest.schema_sha256,
    )
    assert entry.fragment_count == manifest.fragment_count > 1
    assert entry.manifest_uri == manifest.manifest_uri
    assert entry.arguments[0].model_dump() == {"name": "field_000", "type": "string", "required": True}
    assert len(entry.arguments) == MAX_SUMMARY_ARGUMENTS
    assert entry.arguments_omitted == 300 - MAX_SUMMARY_ARGUMENTS
    text = json.dumps(entries)
    assert "properties" not in text and "inputSchema" not in text and "ünïcødé" not in text


async def test_navigation_is_bounded_however_large_the_tool() -> None:
    huge = static_tool("huge", big_input_schema(5000), description="d" * 50_000)
    server, _, _ = build_server([huge])
    async with Client(server) as client:
        entries = await search(client, "huge")
    entry = SchemaNavigation.model_validate(entries[0])
    assert entry.description == "d" * MAX_DESCRIPTION_CHARS
    assert entry.description_cut is True
    assert len(entry.arguments) == MAX_SUMMARY_ARGUMENTS
    assert len(json.dumps(entries[0]).encode()) < 6_000
    assert entry.fragment_count is not None and entry.fragment_count > 50


def test_describe_schema_tools_summarizes_without_schema_and_marks_short_descriptions_uncut() -> None:
    tool = static_tool(
        "t",
        {
            "type": "object",
            "properties": {
                "a": {"type": "array", "items": {"type": "integer"}},
                "b": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "c": {"enum": [1, 2]},
            },
            "required": ["c"],
        },
    )
    (entry,) = describe_schema_tools([tool])
    assert entry["description_cut"] is False
    assert entry["arguments"] == [
        {"name": "c", "type": "enum", "required": True},
        {"name": "a", "type": "integer[]", "required": False},
        {"name": "b", "type": "string|null", "required": False},
    ]
    assert entry["manifest_uri"] == disclose(tool).manifest.manifest_uri


async def test_manifest_and_fragments_reconstruct_the_wire_schemas(tools: list[Any]) -> None:
    server, _, registry = build_server(tools)
    disclosure = registry.get("list_events")
    assert disclosure is not None
    async with Client(server) as client:
        (entry,) = await search(client, "list_events")
        manifest, fragments = await read_all(client, entry["manifest_uri"])
    assert manifest == disclosure.manifest
    assert fragments == list(disclosure.fragments)
    assert reconstruct_schema(manifest, fragments) == {
        "inputSchema": big_input_schema(300),
        "outputSchema": OUTPUT_SCHEMA,
    }


async def test_every_guessed_uri_is_refused_exactly_like_an_unknown_resource(tools: list[Any]) -> None:
    server, _, registry = build_server(tools)
    disclosure = registry.get("list_events")
    assert disclosure is not None
    async with Client(server) as client:
        # FastMCP's own answer for a URI that no resource or template matches is the reference.
        with pytest.raises(MCPError) as reference:
            await client.session.read_resource(BASE_REFERENCE_URI)
        assert error_of(reference) == expected_refusal(BASE_REFERENCE_URI)
        # The canonical URIs read, so the refusals below are about the variant, not the tool.
        await read_all(client, disclosure.manifest.manifest_uri)
        for name, uri in guessed_uris(disclosure, "Other.tool-2").items():
            with pytest.raises(MCPError) as refused:
                await client.session.read_resource(uri)
            assert error_of(refused) == expected_refusal(uri), name


async def test_disabled_tool_is_refused_and_no_longer_found(tools: list[Any]) -> None:
    server, _, registry = build_server(tools)
    disclosure = registry.get("list_events")
    assert disclosure is not None
    async with Client(server) as client:
        await read_text(client, disclosure.manifest.manifest_uri)
        server.disable(names={"list_events"}, components={"tool"})
        assert await search(client, "list_events") == []
        for uri in (
            disclosure.manifest.manifest_uri,
            disclosure.manifest.fragment_uri_template.format(index=0),
        ):
            with pytest.raises(MCPError) as refused:
                await client.session.read_resource(uri)
            assert error_of(refused) == expected_refusal(uri)


async def test_replaced_schema_refuses_the_old_identity_and_rediscovery_serves_the_new(
    tools: list[Any],
) -> None:
    server, _, registry = build_server(tools)
    old = registry.get("list_events")
    assert old is not None
    async with Client(server) as client:
        (handed_out,) = await search(client, "list_events")
        assert handed_out["schema_sha256"] == old.manifest.schema_sha256
        # Replace the tool's schema after the navigation entry was handed out.
        server.local_provider.remove_tool("list_events")
        replacement = static_tool("list_events", big_input_schema(310, note="v2"))
        server.add_tool(replacement)
        # The copied manifest/fragment URIs no longer read: the tool's current schema moved.
        for uri in (handed_out["manifest_uri"], old.manifest.fragment_uri_template.format(index=1)):
            with pytest.raises(MCPError) as refused:
                await client.session.read_resource(uri)
            assert error_of(refused) == expected_refusal(uri)
        # Re-discovery points at the new identity, but the registered disclosure vouches only for the
        # schemas it was built from: the new identity is refused too (never disclosed under the
        # registered operation and source_sha256, a source the new schema did not come from)...
        (fresh,) = await search(client, "list_events")
        assert fresh["schema_sha256"] != handed_out["schema_sha256"]
        with pytest.raises(MCPError) as unvouched:
            await client.session.read_resource(fresh["manifest_uri"])
        assert error_of(unvouched) == expected_refusal(fresh["manifest_uri"])
        # ...until the new schema's own disclosure is published; then it reads, with its source.
        published = disclose(replacement)
        registry.replace("list_events", published)
        manifest, fragments = await read_all(client, fresh["manifest_uri"])
        assert manifest == published.manifest
        assert reconstruct_schema(manifest, fragments)["inputSchema"] == big_input_schema(310, note="v2")
        # ...and the old identity stays refused.
        with pytest.raises(MCPError):
            await client.session.read_resource(handed_out["manifest_uri"])


async def test_refusals_log_the_category_only(tools: list[Any], caplog: pytest.LogCaptureFixture) -> None:
    server, _, registry = build_server(tools)
    disclosure = registry.get("list_events")
    assert disclosure is not None
    stale = disclosure.manifest.manifest_uri.replace(disclosure.manifest.schema_sha256, "ab" * 32)
    caplog.set_level(logging.DEBUG, logger="agent_connector_sdk")
    async with Client(server) as client:
        with pytest.raises(MCPError):
            await client.session.read_resource(stale)
    ours = [r for r in caplog.records if r.name.startswith("agent_connector_sdk")]
    assert [r.getMessage() for r in ours] == ["schema disclosure read refused: stale"]
    assert all(r.levelno < logging.WARNING for r in caplog.records if r.name.startswith("fastmcp"))


def test_registration_refuses_a_disclosure_keyed_under_another_alias(tools: list[Any]) -> None:
    server, search = searchable_server(tools)
    with pytest.raises(SchemaResourceRegistrationError) as refused:
        register_schema_resources(server, search, {"Other.tool-2": disclose(tools[0])})
    assert refused.value.category == "alias_mismatch"


def test_registration_refuses_a_tool_the_server_does_not_have(tools: list[Any]) -> None:
    server, search = searchable_server(tools[:1])
    with pytest.raises(SchemaResourceRegistrationError) as refused:
        register_schema_resources(server, search, {"Other.tool-2": disclose(tools[1])})
    assert refused.value.category == "unknown_tool"


async def test_registration_inside_an_event_loop_also_checks_the_inventory(tools: list[Any]) -> None:
    server, search = searchable_server(tools[:1])
    with pytest.raises(SchemaResourceRegistrationError) as refused:
        register_schema_resources(server, search, {"Other.tool-2": disclose(tools[1])})
    assert refused.value.category == "unknown_tool"
    register_schema_resources(server, search, {"list_events": disclose(tools[0])})


def test_registration_refuses_a_catalog_not_attached_to_this_server(tools: list[Any]) -> None:
    server: FastMCP[Any] = FastMCP("s")
    elsewhere: FastMCP[Any] = FastMCP("elsewhere")
    for tool in tools:
        server.add_tool(tool)
    detached = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    foreign = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    elsewhere.add_transform(foreign)
    server.add_transform(RegexSearchTransform(search_result_serializer=describe_schema_tools))
    for catalog in (detached, foreign, object()):
        with pytest.raises(SchemaResourceRegistrationError) as refused:
            register_schema_resources(server, catalog, {})  # type: ignore[arg-type]
        assert refused.value.category == "foreign_catalog"


def test_registration_refuses_values_that_are_not_disclosures(tools: list[Any]) -> None:
    server, search, _ = build_server(tools)
    with pytest.raises(SchemaResourceRegistrationError) as refused:
        register_schema_resources(server, search, {"list_events": {"manifest": {}}})  # type: ignore[dict-item]
    assert refused.value.category == "invalid_disclosure"


async def test_resource_templates_are_listed_as_json() -> None:
    server, _, _ = build_server([static_tool("t", {"type": "object"})])
    async with Client(server) as client:
        templates = await client.list_resource_templates()
    assert sorted((t.uri_template, t.mime_type) for t in templates) == [
        ("schema-disclosure://tools/{alias}/{schema_sha256}/fragments/{index}", "application/json"),
        ("schema-disclosure://tools/{alias}/{schema_sha256}/manifest", "application/json"),
    ]
