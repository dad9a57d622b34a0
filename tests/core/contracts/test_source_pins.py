"""Source pinning (pure): the pin file shape, per-server and per-alias pins, and the refusal."""

from __future__ import annotations

import json

import pytest

from agent_connector_sdk.core.contracts import PinFileError, SourceNotPinned, SourcePins

A = "a" * 64
B = "b" * 64
C = "c" * 64
SERVER = "http://127.0.0.1:8000/mcp"


def test_unpinned_server_accepts_any_source_unless_strict() -> None:
    SourcePins().require(server=SERVER, alias="t", source_sha256=A)
    with pytest.raises(SourceNotPinned) as caught:
        SourcePins(strict=True).require(server=SERVER, alias="t", source_sha256=A)
    assert caught.value.category == "server_not_pinned"
    assert caught.value.offered == A and caught.value.pinned == ()


def test_alias_pin_overrides_the_server_wildcard() -> None:
    pins = SourcePins({SERVER: {"*": [A], "special": [B]}})
    pins.require(server=SERVER, alias="anything", source_sha256=A)
    pins.require(server=SERVER, alias="special", source_sha256=B)
    with pytest.raises(SourceNotPinned) as caught:
        pins.require(server=SERVER, alias="special", source_sha256=A)
    error = caught.value
    assert error.category == "source_not_pinned" and error.gate == "discover"
    assert error.pinned == (B,) and error.offered == A
    assert A in str(error) and B in str(error)  # digests are not secrets: the message names both


def test_server_with_only_alias_pins_leaves_other_aliases_unpinned() -> None:
    pins = SourcePins({SERVER: {"special": [B]}})
    pins.require(server=SERVER, alias="other", source_sha256=C)
    assert pins.pinned_for(SERVER, "other") is None


def test_round_trip_through_the_pin_file() -> None:
    pins = SourcePins().with_source(SERVER, "*", B).with_source(SERVER, "*", A).with_source(SERVER, "t", C)
    text = pins.to_json()
    assert json.loads(text) == {"version": 1, "servers": {SERVER: {"*": [A, B], "t": [C]}}}
    again = SourcePins.from_json(text)
    assert again.to_json() == text
    again.require(server=SERVER, alias="t", source_sha256=C)


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        json.dumps({"version": 2, "servers": {}}),
        json.dumps({"version": 1, "servers": {SERVER: {"*": ["ABC"]}}}),
        json.dumps({"version": 1, "servers": {SERVER: {"bad alias!": [A]}}}),
        json.dumps({"version": 1, "servers": {SERVER: {"*": []}}}),
        json.dumps({"version": 1, "servers": {}, "extra": 1}),
    ],
)
def test_malformed_pin_files_are_refused_typed(text: str) -> None:
    with pytest.raises(PinFileError) as caught:
        SourcePins.from_json(text)
    assert caught.value.category == "malformed_pins"
