"""The pure read policy and navigation builder: each refusal's category, and the bounds."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.disclosure_navigation import (
    MAX_DESCRIPTION_CHARS,
    MAX_SUMMARY_ARGUMENTS,
    DisclosureReadRefused,
    SchemaNavigation,
    VerifiedSchemaSnapshots,
    VisibleToolSchemas,
    authorize_disclosure_read,
    build_navigation_entry,
    parse_disclosure_uri,
)
from agent_connector_sdk.core.schema_disclosure import (
    SchemaDisclosure,
    build_schema_disclosure,
    parse_fragment,
    parse_manifest,
)
from tests.support.disclosure_servers import OUTPUT_SCHEMA, big_input_schema
from tests.support.disclosure_uris import guessed_uris

INPUT = big_input_schema(200)


@pytest.fixture(scope="module")
def disclosure() -> SchemaDisclosure:
    return build_schema_disclosure(
        operation="op", alias="list_events", source=b"s", input_schema=INPUT, output_schema=OUTPUT_SCHEMA
    )


def visible(name: str = "list_events", input_schema: Any = INPUT, output_schema: Any = OUTPUT_SCHEMA) -> Any:
    return VisibleToolSchemas(name, input_schema, output_schema)


def refusal(uri: str, disclosures: dict[str, SchemaDisclosure], tool: Any) -> str:
    with pytest.raises(DisclosureReadRefused) as refused:
        authorize_disclosure_read(uri, disclosures=disclosures, visible_tool=tool)
    return refused.value.category


def test_canonical_reads_serve_the_manifest_and_each_fragment(disclosure: SchemaDisclosure) -> None:
    table = {"list_events": disclosure}
    manifest = disclosure.manifest
    body = authorize_disclosure_read(manifest.manifest_uri, disclosures=table, visible_tool=visible())
    assert parse_manifest(body) == manifest
    for fragment in disclosure.fragments:
        uri = manifest.fragment_uri_template.replace("{index}", str(fragment.index))
        assert (
            parse_fragment(authorize_disclosure_read(uri, disclosures=table, visible_tool=visible()))
            == fragment
        )


def test_each_failure_class_has_its_category(disclosure: SchemaDisclosure) -> None:
    table = {"list_events": disclosure}
    manifest = disclosure.manifest
    uri = manifest.manifest_uri
    assert refusal("https://x/y", table, visible()) == "malformed_uri"
    assert refusal(uri, table, None) == "not_visible"
    assert refusal(uri, table, visible(name="List_events")) == "not_visible"
    assert refusal(uri, {}, visible()) == "unknown_alias"
    other = build_schema_disclosure(operation="op", alias="other", source=b"s", input_schema=INPUT)
    assert refusal(uri, {"list_events": other}, visible()) == "alias_mismatch"
    assert refusal(uri.replace(manifest.schema_sha256, "ab" * 32), table, visible()) == "stale"
    assert refusal(uri, table, visible(input_schema=big_input_schema(201))) == "stale"
    assert refusal(uri, table, visible(output_schema=None)) == "stale"
    assert refusal(uri, table, visible(input_schema={"bad": {1, 2}})) == "stale"
    base = manifest.fragment_uri_template.replace("{index}", "")
    for index in ("01", "-1", "+1", "1.0", "\u0661", "\uff11", str(manifest.fragment_count), " 1"):
        assert refusal(base + index, table, visible()) == "malformed_index", index


def test_every_guessed_uri_is_refused_by_the_policy(disclosure: SchemaDisclosure) -> None:
    table = {"list_events": disclosure, "other": disclosure}
    for name, uri in guessed_uris(disclosure, "other").items():
        try:
            authorize_disclosure_read(uri, disclosures=table, visible_tool=visible())
        except DisclosureReadRefused:
            continue
        pytest.fail(f"guessed URI served: {name}")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_only_canonical_uris_parse(text: str) -> None:
    address = parse_disclosure_uri(text)
    if address is not None:
        rebuilt = f"schema-disclosure://tools/{address.alias}/{address.schema_sha256}/" + (
            "manifest" if address.index is None else f"fragments/{address.index}"
        )
        assert rebuilt == text


@settings(max_examples=60, deadline=None)
@given(
    st.text(max_size=3000),
    st.dictionaries(st.text(min_size=1, max_size=300), st.just({"type": "string"}), max_size=80),
)
def test_navigation_stays_bounded_and_valid(description: str, properties: dict[str, Any]) -> None:
    entry = build_navigation_entry(
        name="t",
        title="T" * 500,
        description=description,
        input_schema={"type": "object", "properties": properties, "required": sorted(properties)[:3]},
        output_schema=None,
    )
    parsed = SchemaNavigation.model_validate(entry)
    assert parsed.description_cut is (len(description) > MAX_DESCRIPTION_CHARS)
    assert parsed.description == description[:MAX_DESCRIPTION_CHARS]
    assert len(parsed.arguments) == min(len(properties), MAX_SUMMARY_ARGUMENTS)
    assert parsed.arguments_omitted == max(0, len(properties) - MAX_SUMMARY_ARGUMENTS)
    assert len(json.dumps(entry, ensure_ascii=False)) < 20_000


def test_undisclosable_tools_get_an_entry_without_identity() -> None:
    entry = build_navigation_entry(
        name="t", title=None, description=None, input_schema={"x": float("nan")}, output_schema=None
    )
    parsed = SchemaNavigation.model_validate(entry)
    assert (parsed.manifest_uri, parsed.schema_sha256, parsed.fragment_count) == (None, None, None)


def _schema_pair() -> tuple[dict[str, Any], dict[str, Any]]:
    return (
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]},
        {"type": "array", "items": {"type": "string"}},
    )


def _read_with(snapshots: VerifiedSchemaSnapshots, d: SchemaDisclosure, tool: Any) -> str:
    try:
        authorize_disclosure_read(
            d.manifest.manifest_uri, disclosures={"t": d}, visible_tool=tool, snapshots=snapshots
        )
    except DisclosureReadRefused as refused:
        return refused.category
    return "served"


def test_snapshots_never_let_an_edited_schema_through() -> None:
    input_schema, output_schema = _schema_pair()
    d = build_schema_disclosure(
        operation="op", alias="t", source=b"s", input_schema=input_schema, output_schema=output_schema
    )
    snapshots = VerifiedSchemaSnapshots()
    tool = VisibleToolSchemas("t", input_schema, output_schema)
    assert _read_with(snapshots, d, tool) == "served"
    assert _read_with(snapshots, d, tool) == "served"  # the fast path: same objects, same verdict
    # In-place edits after a verified read: each is caught (the fingerprint moved, full re-hash refuses).
    input_schema["properties"]["n"]["minimum"] = True  # True == 1 in Python, but not in JSON
    assert _read_with(snapshots, d, tool) == "stale"
    input_schema["properties"]["n"]["minimum"] = 1.0  # 1.0 == 1 in Python; "1.0" != "1" canonically
    assert _read_with(snapshots, d, tool) == "stale"
    input_schema["properties"]["n"]["minimum"] = 1
    assert _read_with(snapshots, d, tool) == "served"
    output_schema["items"]["type"] = "integer"
    assert _read_with(snapshots, d, tool) == "stale"
    output_schema["items"]["type"] = "string"
    # A replaced tool whose schemas are equal but differently ordered still serves (full re-hash path).
    reordered = VisibleToolSchemas("t", dict(reversed(list(input_schema.items()))), output_schema)
    assert _read_with(snapshots, d, reordered) == "served"


def test_snapshot_of_one_alias_never_vouches_for_another() -> None:
    input_schema, output_schema = _schema_pair()
    d = build_schema_disclosure(
        operation="op", alias="t", source=b"s", input_schema=input_schema, output_schema=output_schema
    )
    snapshots = VerifiedSchemaSnapshots()
    assert _read_with(snapshots, d, VisibleToolSchemas("t", input_schema, output_schema)) == "served"
    other_input = {"type": "object"}
    other = build_schema_disclosure(operation="op", alias="t", source=b"s", input_schema=other_input)
    # Same alias, another disclosure (schema digest): the remembered fingerprint does not apply.
    assert _read_with(snapshots, other, VisibleToolSchemas("t", input_schema, output_schema)) == "stale"
