"""Byte-exact boundaries: fragment cuts, code points across a cut, the 16 MiB document limit."""

from __future__ import annotations

import pytest

from agent_connector_sdk.core.schema_disclosure import (
    MAX_DOCUMENT_BYTES,
    SchemaDisclosureError,
    build_schema_disclosure,
    reconstruct_schema,
)

# The document for {"type": "object", "d": <padding>} with no output schema:
_FRAME = '{"inputSchema":{"d":"","type":"object"},"outputSchema":null}'


def _build(padding: str):  # type: ignore[no-untyped-def]
    return build_schema_disclosure(
        operation="op", alias="tool", source=b"s", input_schema={"type": "object", "d": padding}
    )


def test_frame_length_is_what_these_tests_assume() -> None:
    d = _build("")
    assert "".join(f.text for f in d.fragments) == _FRAME


@pytest.mark.parametrize("fragments", [1, 2, 5])
def test_document_exactly_at_a_multiple_of_4096(fragments: int) -> None:
    d = _build("x" * (4096 * fragments - len(_FRAME)))
    assert d.manifest.schema_bytes == 4096 * fragments
    assert d.manifest.fragment_count == fragments
    assert [len(f.text.encode()) for f in d.fragments] == [4096] * fragments
    assert reconstruct_schema(d.manifest, d.fragments)["inputSchema"]["d"] == "x" * (
        4096 * fragments - len(_FRAME)
    )


def test_one_byte_past_a_multiple_opens_a_new_fragment() -> None:
    d = _build("x" * (4096 - len(_FRAME) + 1))
    assert [len(f.text.encode()) for f in d.fragments] == [4096, 1]


@pytest.mark.parametrize("offset", [1, 2, 3])
def test_four_byte_character_straddling_a_cut_moves_whole(offset: int) -> None:
    # Put U+1F600 (4 bytes) so that it starts `offset` bytes before the 4,096-byte cut.
    lead = len('{"inputSchema":{"d":"')
    padding = "x" * (4096 - offset - lead) + "😀" + "y" * 100
    d = _build(padding)
    sizes = [len(f.text.encode()) for f in d.fragments]
    assert sizes[0] == 4096 - offset
    assert d.fragments[1].text.startswith("😀")
    for fragment in d.fragments:
        fragment.text.encode("utf-8").decode("utf-8")  # each decodes on its own
    assert reconstruct_schema(d.manifest, d.fragments)["inputSchema"]["d"] == padding


def test_four_byte_character_ending_exactly_at_the_cut_stays() -> None:
    lead = len('{"inputSchema":{"d":"')
    d = _build("x" * (4096 - 4 - lead) + "😀" + "tail")
    assert len(d.fragments[0].text.encode()) == 4096
    assert d.fragments[0].text.endswith("😀")


def test_document_exactly_at_16_mib_is_disclosed() -> None:
    d = _build("x" * (MAX_DOCUMENT_BYTES - len(_FRAME)))
    assert d.manifest.schema_bytes == MAX_DOCUMENT_BYTES
    assert d.manifest.fragment_count == MAX_DOCUMENT_BYTES // 4096
    assert len(reconstruct_schema(d.manifest, d.fragments)["inputSchema"]["d"]) == MAX_DOCUMENT_BYTES - len(
        _FRAME
    )


def test_document_one_byte_over_16_mib_is_too_large() -> None:
    with pytest.raises(SchemaDisclosureError) as caught:
        _build("x" * (MAX_DOCUMENT_BYTES - len(_FRAME) + 1))
    assert caught.value.category == "too_large"


def test_multibyte_document_over_16_mib_counts_bytes_not_characters() -> None:
    # 5.6 M characters but 16.8 MB of UTF-8: over the bound.
    with pytest.raises(SchemaDisclosureError) as caught:
        _build("€" * (MAX_DOCUMENT_BYTES // 3 + 1))
    assert caught.value.category == "too_large"
