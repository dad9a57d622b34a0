"""reconstruct_schema and the wire models: every refusal with its category."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from agent_connector_sdk.core.schema_disclosure import (
    SchemaDisclosure,
    SchemaDisclosureError,
    SchemaFragment,
    SchemaManifest,
    parse_fragment,
    parse_manifest,
    reconstruct_schema,
)
from tests.support.disclosures import make_disclosure


def _edit(fragment: SchemaFragment, **changes: Any) -> SchemaFragment:
    """A wire-valid fragment with some fields replaced (parsed, so only the digests can disagree)."""
    return parse_fragment({**fragment.model_dump(), **changes})


def _refused(manifest: SchemaManifest, fragments: list[SchemaFragment]) -> str:
    with pytest.raises(SchemaDisclosureError) as caught:
        reconstruct_schema(manifest, fragments)
    return caught.value.category


def test_round_trip(disclosure: SchemaDisclosure) -> None:
    document = reconstruct_schema(disclosure.manifest, disclosure.fragments)
    assert document["inputSchema"]["properties"]["owner"]["description"] == "ü" * 3000
    assert document["outputSchema"]["items"]["description"] == "é" * 2000


def test_round_trip_through_wire_json(disclosure: SchemaDisclosure) -> None:
    manifest = parse_manifest(disclosure.manifest.model_dump_json())
    fragments = [parse_fragment(f.model_dump_json().encode("utf-8")) for f in disclosure.fragments]
    assert reconstruct_schema(manifest, fragments) == reconstruct_schema(
        disclosure.manifest, disclosure.fragments
    )


def test_fragment_from_another_operation_is_mixed_operation(disclosure: SchemaDisclosure) -> None:
    other = make_disclosure(operation="repos/list", alias="repos_list")
    fragments = list(disclosure.fragments)
    fragments[1] = other.fragments[1] if len(other.fragments) > 1 else other.fragments[0]
    assert _refused(disclosure.manifest, fragments) == "mixed_operation"


def test_fragment_from_another_alias_is_mixed_operation(disclosure: SchemaDisclosure) -> None:
    renamed = make_disclosure(
        alias="repos_get_v2", output_schema={"type": "array", "items": {"type": "string"}}
    )
    assert (
        _refused(disclosure.manifest, [renamed.fragments[0], *disclosure.fragments[1:]]) == "mixed_operation"
    )


def test_fragment_of_a_newer_schema_is_stale(disclosure: SchemaDisclosure) -> None:
    newer = make_disclosure(
        output_schema={"type": "array", "items": {"type": "string", "description": "é" * 2001}}
    )
    assert newer.manifest.schema_sha256 != disclosure.manifest.schema_sha256
    assert _refused(disclosure.manifest, [newer.fragments[0], *disclosure.fragments[1:]]) == "stale"
    # And the whole newer disclosure against the old selection: stale, never silently accepted.
    assert _refused(disclosure.manifest, list(newer.fragments)) == "stale"


def test_fragment_of_another_source_is_stale(disclosure: SchemaDisclosure) -> None:
    resourced = make_disclosure(
        source=b"other source",
        output_schema={"type": "array", "items": {"type": "string", "description": "é" * 2000}},
    )
    assert resourced.manifest.schema_sha256 == disclosure.manifest.schema_sha256
    assert _refused(disclosure.manifest, list(resourced.fragments)) == "stale"


def test_missing_fragment_is_incomplete(disclosure: SchemaDisclosure) -> None:
    assert _refused(disclosure.manifest, list(disclosure.fragments[:-1])) == "incomplete"
    assert _refused(disclosure.manifest, []) == "incomplete"


def test_duplicate_fragment_is_incomplete(disclosure: SchemaDisclosure) -> None:
    fragments = list(disclosure.fragments)
    fragments[-1] = fragments[0]
    assert _refused(disclosure.manifest, fragments) == "incomplete"
    assert _refused(disclosure.manifest, [*disclosure.fragments, disclosure.fragments[0]]) == "incomplete"


def test_swapped_fragments_are_reordered(disclosure: SchemaDisclosure) -> None:
    fragments = list(disclosure.fragments)
    fragments[0], fragments[1] = fragments[1], fragments[0]
    assert _refused(disclosure.manifest, fragments) == "reordered"


def test_flipped_text_is_corrupt(disclosure: SchemaDisclosure) -> None:
    first = disclosure.fragments[0]
    flipped = _edit(first, text=first.text[:-1] + ("x" if first.text[-1] != "x" else "y"))
    assert _refused(disclosure.manifest, [flipped, *disclosure.fragments[1:]]) == "corrupt"


def test_text_and_digest_swapped_consistently_is_still_corrupt(disclosure: SchemaDisclosure) -> None:
    # A forger who recomputes the fragment digest still cannot match the manifest's document digest.
    first = disclosure.fragments[0]
    text = first.text[:-1] + ("x" if first.text[-1] != "x" else "y")
    forged = _edit(first, text=text, fragment_sha256=hashlib.sha256(text.encode()).hexdigest())
    assert _refused(disclosure.manifest, [forged, *disclosure.fragments[1:]]) == "corrupt"


def test_manifest_from_another_disclosure_cannot_vouch_for_fragments(disclosure: SchemaDisclosure) -> None:
    other = make_disclosure(output_schema={"type": "null"})
    assert _refused(other.manifest, list(disclosure.fragments)) == "stale"


def test_selected_manifest_must_be_a_manifest(disclosure: SchemaDisclosure) -> None:
    with pytest.raises(SchemaDisclosureError) as caught:
        reconstruct_schema(disclosure.fragments[0], disclosure.fragments)  # type: ignore[arg-type]
    assert caught.value.category == "inconsistent_identity"


def test_constructed_inconsistent_manifest_is_refused(disclosure: SchemaDisclosure) -> None:
    bad = SchemaManifest.model_construct(**{**disclosure.manifest.model_dump(), "alias": "other"})
    assert _refused(bad, list(disclosure.fragments)) == "inconsistent_identity"


@pytest.mark.parametrize(
    "changes",
    [
        {"manifest_uri": "schema-disclosure://tools/other/x/manifest"},
        {"alias": "other_tool"},  # URIs no longer derive from the alias
        {"schema_sha256": "0" * 64},
        {"fragment_uri_template": "schema-disclosure://tools/repos_get/abc/fragments/{index}"},
        {"fragment_count": 1000},
        {"schema_bytes": 1},
    ],
)
def test_manifest_internally_inconsistent(disclosure: SchemaDisclosure, changes: dict[str, Any]) -> None:
    with pytest.raises(SchemaDisclosureError) as caught:
        parse_manifest({**disclosure.manifest.model_dump(), **changes})
    assert caught.value.category == "inconsistent_identity"


@pytest.mark.parametrize(
    "changes",
    [
        {"version": 2},
        {"version": True},
        {"version": 1.0},
        {"version": "1"},
        {"fragment_count": "3"},
        {"schema_bytes": 1.5},
        {"schema_sha256": "A" * 64},
        {"operation": ""},
        {"alias": "Repos_Get\n"},
        {"unknown": 1},
    ],
)
def test_manifest_is_strict(disclosure: SchemaDisclosure, changes: dict[str, Any]) -> None:
    with pytest.raises(SchemaDisclosureError) as caught:
        parse_manifest({**disclosure.manifest.model_dump(), **changes})
    assert caught.value.category == "inconsistent_identity"


def test_wire_json_strictness(disclosure: SchemaDisclosure) -> None:
    good = disclosure.manifest.model_dump_json()
    for before, after in (('"version":1', '"version":true'), ('"version":1', '"version":1.0')):
        with pytest.raises(SchemaDisclosureError):
            parse_manifest(good.replace(before, after))
    with pytest.raises(SchemaDisclosureError) as caught:
        parse_manifest(good[:-5])
    assert caught.value.category == "corrupt"


def test_fragment_model_bounds(disclosure: SchemaDisclosure) -> None:
    fragment = disclosure.fragments[0]
    with pytest.raises(SchemaDisclosureError) as caught:
        parse_fragment({**fragment.model_dump(), "text": "é" * 2049})  # 4,098 bytes in 2,049 characters
    assert caught.value.category == "too_large"
    with pytest.raises(SchemaDisclosureError) as caught:
        parse_fragment({**fragment.model_dump(), "index": fragment.fragment_count})
    assert caught.value.category == "inconsistent_identity"


def test_refusal_messages_do_not_quote_values(disclosure: SchemaDisclosure) -> None:
    secret = "sk-live-DO-NOT-LOG"
    with pytest.raises(SchemaDisclosureError) as caught:
        parse_manifest({**disclosure.manifest.model_dump(), "alias": secret + " "})
    assert secret not in str(caught.value)


def test_disclosure_model_refuses_mismatched_parts(disclosure: SchemaDisclosure) -> None:
    with pytest.raises(ValueError, match="incomplete"):
        SchemaDisclosure(manifest=disclosure.manifest, fragments=disclosure.fragments[:-1])
    with pytest.raises(ValueError, match="reordered"):
        SchemaDisclosure(manifest=disclosure.manifest, fragments=disclosure.fragments[::-1])


def _forge(
    document: bytes, input_schema: Any, output_schema: Any
) -> tuple[SchemaManifest, list[SchemaFragment]]:
    """A self-consistent manifest + fragments for arbitrary document bytes (what an attacker could serve)."""
    from agent_connector_sdk.core.schema_disclosure import canonical_json_bytes
    from agent_connector_sdk.core.schema_disclosure.encoding import split_utf8

    digest = hashlib.sha256(document).hexdigest()
    pieces = split_utf8(document)
    identity = {
        "version": 1,
        "operation": "op",
        "alias": "tool",
        "source_sha256": "0" * 64,
        "schema_sha256": digest,
        "schema_bytes": len(document),
        "input_schema_sha256": hashlib.sha256(canonical_json_bytes(input_schema)).hexdigest(),
        "output_schema_sha256": hashlib.sha256(canonical_json_bytes(output_schema)).hexdigest(),
        "fragment_count": len(pieces),
        "manifest_uri": f"schema-disclosure://tools/tool/{digest}/manifest",
        "fragment_uri_template": f"schema-disclosure://tools/tool/{digest}/fragments/{{index}}",
    }
    manifest = parse_manifest(identity)
    fragments = [
        parse_fragment(
            {**identity, "index": i, "fragment_sha256": hashlib.sha256(p).hexdigest(), "text": p.decode()}
        )
        for i, p in enumerate(pieces)
    ]
    return manifest, fragments


@pytest.mark.parametrize(
    "document",
    [
        b'{"inputSchema": {"type":"object"},"outputSchema":null}',  # a space: not canonical
        b'{"outputSchema":null,"inputSchema":{"type":"object"}}',  # unsorted keys
        b'{"inputSchema":{"type":"object"},"outputSchema":NaN}',  # non-JSON constant
        b'{"inputSchema":[],"outputSchema":null}',  # input schema not an object
        b'{"inputSchema":{"type":"object"},"outputSchema":null,"x":1}',  # extra member
        b'{"inputSchema":{"type":"object"}',  # not JSON
        b'{"inputSchema":{"type":"object","x":' + b"[" * 200_000 + b"]" * 200_000 + b'},"outputSchema":null}',
        b'{"inputSchema":{"type":"object","x":"\\ud800"},"outputSchema":null}',  # escaped lone surrogate
        b'{"inputSchema":{"type":"\\u00e9"},"outputSchema":null}',  # escaped non-ASCII: not canonical
    ],
)
def test_self_consistent_but_non_canonical_documents_are_corrupt(document: bytes) -> None:
    manifest, fragments = _forge(document, {"type": "object"}, None)
    assert _refused(manifest, fragments) == "corrupt"


def test_forged_document_with_wrong_schema_digest_is_corrupt() -> None:
    document = b'{"inputSchema":{"type":"object"},"outputSchema":null}'
    manifest, fragments = _forge(document, {"type": "string"}, None)
    assert _refused(manifest, fragments) == "corrupt"
    manifest, fragments = _forge(document, {"type": "object"}, {"type": "array"})
    assert _refused(manifest, fragments) == "corrupt"
    manifest, fragments = _forge(document, {"type": "object"}, None)
    assert reconstruct_schema(manifest, fragments) == {
        "inputSchema": {"type": "object"},
        "outputSchema": None,
    }
