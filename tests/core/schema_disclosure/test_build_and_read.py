"""Building, serving and the refusals of build_schema_disclosure / read_schema_fragment."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import Any

import pytest

from agent_connector_sdk.core.schema_disclosure import (
    SchemaDisclosure,
    SchemaDisclosureError,
    SourceDigest,
    build_schema_disclosure,
    canonical_json_bytes,
    compute_schema_digests,
    read_schema_fragment,
    reconstruct_schema,
)
from tests.support.disclosures import SOURCE, make_disclosure


def test_manifest_fields_are_derived_from_the_document(disclosure: SchemaDisclosure) -> None:
    manifest = disclosure.manifest
    document = "".join(f.text for f in disclosure.fragments).encode("utf-8")
    assert manifest.version == 1
    assert manifest.schema_bytes == len(document)
    assert manifest.schema_sha256 == hashlib.sha256(document).hexdigest()
    assert manifest.source_sha256 == hashlib.sha256(SOURCE).hexdigest()
    decoded = json.loads(document)
    assert (
        manifest.input_schema_sha256
        == hashlib.sha256(canonical_json_bytes(decoded["inputSchema"])).hexdigest()
    )
    assert (
        manifest.output_schema_sha256
        == hashlib.sha256(canonical_json_bytes(decoded["outputSchema"])).hexdigest()
    )
    assert manifest.manifest_uri == f"schema-disclosure://tools/repos_get/{manifest.schema_sha256}/manifest"
    assert manifest.fragment_uri_template == (
        f"schema-disclosure://tools/repos_get/{manifest.schema_sha256}/fragments/{{index}}"
    )


def test_document_is_canonical_json() -> None:
    d = make_disclosure(input_schema={"type": "object", "b": 1, "a": ["ü", 1.5, None, True]})
    text = "".join(f.text for f in d.fragments)
    assert text == '{"inputSchema":{"a":["ü",1.5,null,true],"b":1,"type":"object"},"outputSchema":null}'


def test_absent_output_schema_is_null_and_has_its_own_digest() -> None:
    d = make_disclosure(output_schema=None)
    assert d.manifest.output_schema_sha256 == hashlib.sha256(b"null").hexdigest()
    assert reconstruct_schema(d.manifest, d.fragments)["outputSchema"] is None


def test_fragments_are_full_and_bounded(disclosure: SchemaDisclosure) -> None:
    sizes = [len(f.text.encode("utf-8")) for f in disclosure.fragments]
    assert all(size <= 4096 for size in sizes)
    # Filled as full as possible: only a cut before a multi-byte character may leave room.
    assert all(size >= 4093 for size in sizes[:-1])
    for fragment in disclosure.fragments:
        assert len(fragment.model_dump_json().encode("utf-8")) <= 32 * 1024
        assert fragment.fragment_sha256 == hashlib.sha256(fragment.text.encode("utf-8")).hexdigest()


def test_source_digest_is_reusable_and_equals_hashing_bytes() -> None:
    digest = SourceDigest.of(SOURCE)
    by_bytes = make_disclosure(source=SOURCE)
    by_digest = build_schema_disclosure(
        operation="repos/get",
        alias="repos_get",
        source=digest,
        input_schema=by_bytes_input(),
    )
    assert by_digest.manifest == by_bytes.manifest


def by_bytes_input() -> dict[str, Any]:
    return {"type": "object", "properties": {"owner": {"type": "string", "description": "ü" * 3000}}}


@pytest.mark.parametrize("bad", ["", "ABC", "g" * 64, "a" * 63, 7])
def test_source_digest_refuses_non_digests(bad: Any) -> None:
    with pytest.raises(SchemaDisclosureError) as caught:
        SourceDigest(bad)
    assert caught.value.category == "invalid_schema"


def test_compute_schema_digests_matches_manifest(disclosure: SchemaDisclosure) -> None:
    document = reconstruct_schema(disclosure.manifest, disclosure.fragments)
    digests = compute_schema_digests(document["inputSchema"], document["outputSchema"])
    assert digests.schema_sha256 == disclosure.manifest.schema_sha256
    assert digests.input_schema_sha256 == disclosure.manifest.input_schema_sha256
    assert digests.output_schema_sha256 == disclosure.manifest.output_schema_sha256
    assert digests.schema_bytes == disclosure.manifest.schema_bytes


@pytest.mark.parametrize(
    ("input_schema", "output_schema"),
    [
        ([], None),
        ("object", None),
        (None, None),
        (OrderedDict(type="object"), None),  # a dict subclass could serialize differently: not plain JSON
        ({"type": "object", "enum": {1, 2}}, None),
        ({"type": "object", "default": b"bytes"}, None),
        ({"type": "object", "examples": (1, 2)}, None),
        ({"type": "object", 1: "int key"}, None),
        ({"type": "object", "x": float("nan")}, None),
        ({"type": "object", "x": float("inf")}, None),
        ({"type": "object", "x": float("-inf")}, None),
        ({"type": "object", "x": "\ud800"}, None),
        ({"type": "object", "\udfff": 1}, None),
        ({"type": "object"}, {"x": object()}),
        ({"type": "object"}, {"x": (1,)}),
        ({"type": "object"}, float("nan")),
    ],
)
def test_build_refuses_non_json(input_schema: Any, output_schema: Any) -> None:
    with pytest.raises(SchemaDisclosureError) as caught:
        build_schema_disclosure(
            operation="op",
            alias="tool",
            source=SOURCE,
            input_schema=input_schema,
            output_schema=output_schema,
        )
    assert caught.value.category == "invalid_schema"


def test_build_refuses_hostile_nesting_without_crashing() -> None:
    deep: dict[str, Any] = {"type": "object"}
    node = deep
    for _ in range(100_000):
        node["not"] = {}
        node = node["not"]
    with pytest.raises(SchemaDisclosureError) as caught:
        build_schema_disclosure(operation="op", alias="tool", source=SOURCE, input_schema=deep)
    assert caught.value.category == "invalid_schema"


@pytest.mark.parametrize("alias", ["", "a" * 129, "has space", "slash/name", "ünï", "a\n", "tab\t", None, 5])
def test_build_refuses_invalid_alias(alias: Any) -> None:
    with pytest.raises(SchemaDisclosureError) as caught:
        build_schema_disclosure(operation="op", alias=alias, source=SOURCE, input_schema={"type": "object"})
    assert caught.value.category == "invalid_schema"


@pytest.mark.parametrize("operation", ["", None, 3, "x" * 1025])
def test_build_refuses_invalid_operation(operation: Any) -> None:
    with pytest.raises(SchemaDisclosureError) as caught:
        build_schema_disclosure(
            operation=operation, alias="tool", source=SOURCE, input_schema={"type": "object"}
        )
    assert caught.value.category == "invalid_schema"


def test_build_refuses_non_bytes_source() -> None:
    with pytest.raises(SchemaDisclosureError) as caught:
        build_schema_disclosure(
            operation="op",
            alias="tool",
            source="text is not bytes",  # type: ignore[arg-type]
            input_schema={"type": "object"},
        )
    assert caught.value.category == "invalid_schema"


def test_max_length_alias_is_accepted() -> None:
    d = make_disclosure(alias="a" * 128)
    assert d.manifest.alias == "a" * 128


def test_read_serves_each_fragment_by_canonical_index(disclosure: SchemaDisclosure) -> None:
    for index, fragment in enumerate(disclosure.fragments):
        assert read_schema_fragment(disclosure, str(index)) is fragment


@pytest.mark.parametrize(
    "index",
    ["01", "00", "-1", "+1", " 1", "1 ", "1.0", "１", "١", "", "0x1", "1e0", "99999999999999999999", "٠"],
)
def test_read_refuses_malformed_indices(disclosure: SchemaDisclosure, index: str) -> None:
    with pytest.raises(SchemaDisclosureError) as caught:
        read_schema_fragment(disclosure, index)
    assert caught.value.category == "malformed_index"


def test_read_refuses_out_of_range_and_non_text(disclosure: SchemaDisclosure) -> None:
    count = disclosure.manifest.fragment_count
    for index in (str(count), str(count + 1), "4294967296"):
        with pytest.raises(SchemaDisclosureError) as caught:
            read_schema_fragment(disclosure, index)
        assert caught.value.category == "malformed_index"
    with pytest.raises(SchemaDisclosureError) as caught:
        read_schema_fragment(disclosure, 0)  # type: ignore[arg-type]
    assert caught.value.category == "malformed_index"


def test_errors_are_value_errors_with_categories() -> None:
    error = SchemaDisclosureError("stale", "x")
    assert isinstance(error, ValueError)
    assert error.category == "stale"
    with pytest.raises(AssertionError):
        SchemaDisclosureError("no_such_category", "x")  # type: ignore[arg-type]
