"""Origin-only aliases (lazy disclosures): an origin vouches only for the schemas its tool was derived
into, so a disclosure's ``source_sha256`` is always true (issue 21). In memory; the HTTP case with
``review --pins`` is ``tests/mcp/server/test_provenance_http.py``."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from fastmcp import Client
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.core.schema_disclosure import SchemaDisclosureError, SourceDigest
from agent_connector_sdk.core.schema_disclosure.cache import DisclosureOrigin, SchemaProvenance
from agent_connector_sdk.mcp.schema_disclosure_provider import register_schema_resources
from tests.support.disclosure_reads import error_of, expected_refusal, read_all, search
from tests.support.disclosure_servers import big_input_schema, searchable_server, static_tool

SOURCE = SourceDigest.of(b"the source document")


def origin(**kwargs: Any) -> DisclosureOrigin:
    return DisclosureOrigin("listEvents", SOURCE.sha256, **kwargs)


async def refused(client: Client[Any], uri: str) -> bool:
    with pytest.raises(MCPError) as refusal:
        await client.session.read_resource(uri)
    return error_of(refusal) == expected_refusal(uri)  # the uniform refusal, nothing more


@pytest.mark.parametrize("frozen", [False, True])
async def test_a_replaced_tool_is_refused_until_its_origin_is_registered_again(frozen: bool) -> None:
    server, search_transform = searchable_server([static_tool("list_events", big_input_schema(40))])
    registry = register_schema_resources(
        server, search_transform, {"list_events": origin()}, frozen_schemas=frozen
    )
    async with Client(server) as client:
        (entry,) = await search(client, "list_events")
        manifest, _ = await read_all(client, entry["manifest_uri"])
        assert manifest.source_sha256 == SOURCE.sha256
        server.local_provider.remove_tool("list_events")
        server.add_tool(static_tool("list_events", big_input_schema(41, note="hand-written")))
        (fresh,) = await search(client, "list_events")
        assert fresh["schema_sha256"] != entry["schema_sha256"]
        # The new schema did not come from the source the origin names: refused, not disclosed under it.
        assert await refused(client, fresh["manifest_uri"])
        assert await refused(client, entry["manifest_uri"])  # and the old identity is stale
        # Registering the origin again vouches for the tool as it is now.
        registry.replace("list_events", origin())
        again, _ = await read_all(client, fresh["manifest_uri"])
        assert again.source_sha256 == SOURCE.sha256 and again.schema_sha256 == fresh["schema_sha256"]


async def test_an_in_place_edit_is_refused_when_schemas_are_not_declared_frozen() -> None:
    tool = static_tool("list_events", big_input_schema(40))
    server, search_transform = searchable_server([tool])
    register_schema_resources(server, search_transform, {"list_events": origin()})
    async with Client(server) as client:
        (entry,) = await search(client, "list_events")
        await read_all(client, entry["manifest_uri"])
        tool.parameters["description"] = "edited in place"  # the same dict object, another content
        (fresh,) = await search(client, "list_events")
        assert fresh["schema_sha256"] != entry["schema_sha256"]
        assert await refused(client, fresh["manifest_uri"])
        tool.parameters.pop("description")  # back to what the origin vouched for: reads again
        manifest, _ = await read_all(client, entry["manifest_uri"])
        assert manifest.schema_sha256 == entry["schema_sha256"]


@pytest.mark.parametrize("frozen", [False, True])
async def test_an_origin_with_source_schemas_vouches_for_those_only(frozen: bool) -> None:
    derived = big_input_schema(40)
    tool = static_tool("list_events", derived)
    server, search_transform = searchable_server([tool])
    stranger = static_tool("other", big_input_schema(7))
    server.add_tool(stranger)
    register_schema_resources(
        server,
        search_transform,
        {
            # The schemas the generator derived: vouched for. Equal content in new objects too.
            "list_events": origin(source_schemas=(copy.deepcopy(derived), copy.deepcopy(tool.output_schema))),
            # An origin naming schemas the registered tool does not hold: never served.
            "other": DisclosureOrigin("other", SOURCE.sha256, source_schemas=(big_input_schema(8), None)),
        },
        frozen_schemas=frozen,
    )
    async with Client(server) as client:
        (entry,) = await search(client, "list_events")
        manifest, _ = await read_all(client, entry["manifest_uri"])
        assert manifest.source_sha256 == SOURCE.sha256
        (other,) = await search(client, "^other")
        assert await refused(client, other["manifest_uri"])


def test_provenance_compares_exact_content() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"n": {"const": 1}}}
    for frozen in (False, True):
        provenance = SchemaProvenance([(schema, None)], frozen=frozen)
        assert provenance.vouches_for(schema, None)
        assert provenance.vouches_for(copy.deepcopy(schema), None)
        # Equal under == but not the same JSON: 1 vs True vs 1.0.
        assert not provenance.vouches_for({"type": "object", "properties": {"n": {"const": True}}}, None)
        assert not provenance.vouches_for({"type": "object", "properties": {"n": {"const": 1.0}}}, None)
        assert not provenance.vouches_for(schema, {"type": "object"})
    # Not frozen: the content is keyed at registration, so an in-place edit is seen.
    provenance = SchemaProvenance([(schema, None)], frozen=False)
    schema["description"] = "edited"
    assert not provenance.vouches_for(schema, None)
    # A pair with no exact content key is never vouched for.
    odd = {"bad": object()}
    for frozen in (False, True):
        unkeyable = SchemaProvenance([(odd, None)], frozen=frozen)
        assert not unkeyable.vouches_for(dict(odd), None)


def test_origin_equality_ignores_the_vouched_objects_and_checks_their_shape() -> None:
    assert origin(source_schemas=({"type": "object"}, None)) == origin()
    assert hash(origin(source_schemas=({"type": "object"}, None))) == hash(origin())
    with pytest.raises(SchemaDisclosureError):
        DisclosureOrigin("op", SOURCE.sha256, source_schemas=({"type": "object"},))  # type: ignore[arg-type]
