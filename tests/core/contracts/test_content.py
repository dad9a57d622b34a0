"""Consume gate: every content block type, and each way a block can break its shape."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.contracts import validate_content_block
from agent_connector_sdk.core.contracts._content import is_canonical_base64
from agent_connector_sdk.core.contracts.errors import ContractViolation

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n fake").decode()
WAV = base64.b64encode(b"RIFF....WAVE").decode()
ANNOTATIONS = {"audience": ["user", "assistant"], "priority": 0.5, "lastModified": "2025-01-12T15:00:58Z"}

VALID: dict[str, dict[str, Any]] = {
    "text": {"type": "text", "text": "hello", "annotations": ANNOTATIONS, "_meta": {"k": 1}},
    "image": {"type": "image", "data": PNG, "mimeType": "image/png", "annotations": ANNOTATIONS},
    "audio": {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
    "resource_link": {
        "type": "resource_link",
        "uri": "file:///project/README.md",
        "name": "README.md",
        "title": "Read me",
        "description": "The project readme",
        "mimeType": "text/markdown; charset=utf-8",
        "size": 1024,
        "annotations": {"audience": ["assistant"]},
    },
    "resource_text": {
        "type": "resource",
        "resource": {"uri": "res://doc/1", "text": "body", "mimeType": "text/plain", "_meta": {}},
    },
    "resource_blob": {"type": "resource", "resource": {"uri": "res://doc/2", "blob": PNG}},
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_all_five_block_types_are_accepted(name: str) -> None:
    validate_content_block(VALID[name])


def test_minimal_blocks_and_edge_values_are_accepted() -> None:
    validate_content_block({"type": "text", "text": ""})
    validate_content_block({"type": "image", "data": "", "mimeType": "IMAGE/PNG"})  # empty is canonical
    validate_content_block({"type": "resource_link", "uri": "https://example.com/x", "name": "x", "size": 0})
    for priority in (0, 1, 0.0, 1.0):
        validate_content_block({"type": "text", "text": "t", "annotations": {"priority": priority}})
    validate_content_block({"type": "text", "text": "t", "annotations": {"audience": []}})
    validate_content_block({"type": "text", "text": "t", "annotations": {"lastModified": "2025-01-12"}})
    validate_content_block({"type": "text", "text": "t", "x-future-member": [1]})  # unknown members tolerated


def _with(name: str, path: tuple[str, ...], value: Any) -> dict[str, Any]:
    block = copy.deepcopy(VALID[name])
    target = block
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value
    return block


def _without(name: str, *path: str) -> dict[str, Any]:
    block = copy.deepcopy(VALID[name])
    target = block
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return block


A = ("annotations",)

INVALID: list[tuple[str, Any, str]] = [
    # (case id, block, expected path); category is invalid_content_block (unknown types: see below)
    ("not an object", ["text"], ""),
    ("type missing", {"text": "x"}, "/type"),
    ("type not a string", {"type": 1}, "/type"),
    ("text missing", {"type": "text"}, "/text"),
    ("text not a string", {"type": "text", "text": 5}, "/text"),
    ("image data missing", _without("image", "data"), "/data"),
    ("image data not base64", _with("image", ("data",), "not base64!"), "/data"),
    ("image data unpadded", _with("image", ("data",), "QQ"), "/data"),
    ("image data with newline", _with("image", ("data",), "QUJD\nREVG"), "/data"),
    ("image data urlsafe", _with("image", ("data",), "-_-_"), "/data"),
    ("image data pad bits", _with("image", ("data",), "QR=="), "/data"),
    ("image data non-ascii", _with("image", ("data",), "QUJ\u0661"), "/data"),
    ("image mime missing", _without("image", "mimeType"), "/mimeType"),
    ("image mime audio", _with("image", ("mimeType",), "audio/png"), "/mimeType"),
    ("image mime bare", _with("image", ("mimeType",), "png"), "/mimeType"),
    ("image mime not str", _with("image", ("mimeType",), 7), "/mimeType"),
    ("audio mime image", _with("audio", ("mimeType",), "image/wav"), "/mimeType"),
    ("audio data bad", _with("audio", ("data",), "@@@@"), "/data"),
    ("link uri missing", _without("resource_link", "uri"), "/uri"),
    ("link uri relative", _with("resource_link", ("uri",), "README.md"), "/uri"),
    ("link uri space", _with("resource_link", ("uri",), "file:///a b"), "/uri"),
    ("link name missing", _without("resource_link", "name"), "/name"),
    ("link title not str", _with("resource_link", ("title",), 3), "/title"),
    ("link description", _with("resource_link", ("description",), None), "/description"),
    ("link mime bad", _with("resource_link", ("mimeType",), "text"), "/mimeType"),
    ("link size negative", _with("resource_link", ("size",), -1), "/size"),
    ("link size float", _with("resource_link", ("size",), 1.5), "/size"),
    ("link size bool", _with("resource_link", ("size",), True), "/size"),
    ("link size str", _with("resource_link", ("size",), "10"), "/size"),
    ("resource missing", {"type": "resource"}, "/resource"),
    ("resource not object", {"type": "resource", "resource": "x"}, "/resource"),
    ("resource no uri", {"type": "resource", "resource": {"text": "t"}}, "/resource/uri"),
    ("resource text and blob", _with("resource_text", ("resource", "blob"), PNG), "/resource"),
    ("resource neither", _without("resource_text", "resource", "text"), "/resource"),
    ("resource text not str", _with("resource_text", ("resource", "text"), 1), "/resource/text"),
    ("resource blob bad", _with("resource_blob", ("resource", "blob"), "x"), "/resource/blob"),
    ("resource mime bad", _with("resource_blob", ("resource", "mimeType"), ""), "/resource/mimeType"),
    ("resource meta list", _with("resource_blob", ("resource", "_meta"), []), "/resource/_meta"),
    ("annotations list", _with("text", ("annotations",), []), "/annotations"),
    ("audience str", _with("text", (*A, "audience"), "user"), "/annotations/audience"),
    ("audience system", _with("text", (*A, "audience"), ["user", "system"]), "/annotations/audience/1"),
    ("priority high", _with("text", (*A, "priority"), 1.5), "/annotations/priority"),
    ("priority negative", _with("text", (*A, "priority"), -0.1), "/annotations/priority"),
    ("priority bool", _with("text", (*A, "priority"), True), "/annotations/priority"),
    ("priority str", _with("text", (*A, "priority"), "0.5"), "/annotations/priority"),
    ("priority nan", _with("text", (*A, "priority"), float("nan")), "/annotations/priority"),
    ("priority huge int", _with("text", (*A, "priority"), 10**400), "/annotations/priority"),
    ("priority inf", _with("text", (*A, "priority"), float("inf")), "/annotations/priority"),
    ("modified words", _with("text", (*A, "lastModified"), "yesterday"), "/annotations/lastModified"),
    ("modified number", _with("text", (*A, "lastModified"), 1736694058), "/annotations/lastModified"),
    ("meta list", _with("text", ("_meta",), ["x"]), "/_meta"),
]  # fmt: skip


@pytest.mark.parametrize(("block", "path"), [case[1:] for case in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_block_is_refused_with_path(block: Any, path: str) -> None:
    with pytest.raises(ContractViolation) as info:
        validate_content_block(block)
    assert (info.value.path, info.value.category, info.value.gate) == (
        path,
        "invalid_content_block",
        "consume",
    )


@pytest.mark.parametrize("kind", ["video", "Text", "resource-link", ""])
def test_unknown_block_type_is_refused(kind: str) -> None:
    with pytest.raises(ContractViolation) as info:
        validate_content_block({"type": kind, "data": PNG, "text": "t"})
    assert (info.value.path, info.value.category) == ("/type", "unknown_content_type")


def test_path_prefix_is_the_block_position() -> None:
    block = _with("text", ("annotations", "priority"), 2)
    with pytest.raises(ContractViolation) as info:
        validate_content_block(block, path="/content/2")
    assert info.value.path == "/content/2/annotations/priority"


def test_messages_do_not_echo_values() -> None:
    secret = "SECRET-7c1d"
    for block in (
        {"type": secret},
        {"type": "image", "data": secret + "!", "mimeType": "image/png"},
        {"type": "resource_link", "uri": secret + " x", "name": "n"},
        {"type": "text", "text": "t", "annotations": {"lastModified": secret}},
    ):
        with pytest.raises(ContractViolation) as info:
            validate_content_block(block)
        assert secret not in str(info.value)


@settings(max_examples=80, deadline=None)
@given(payload=st.binary(max_size=64))
def test_encoder_output_is_always_canonical_and_variants_are_not(payload: bytes) -> None:
    encoded = base64.b64encode(payload).decode()
    assert is_canonical_base64(encoded)
    validate_content_block({"type": "audio", "data": encoded, "mimeType": "audio/ogg"})
    assert not is_canonical_base64(encoded + "=")
    assert not is_canonical_base64(" " + encoded)
    if encoded.endswith("="):
        assert not is_canonical_base64(encoded.rstrip("="))


@settings(max_examples=80, deadline=None)
@given(
    text=st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", max_size=12)
)
def test_canonical_base64_means_exactly_one_spelling(text: str) -> None:
    try:
        decoded = base64.b64decode(text, validate=True)
    except ValueError:
        assert not is_canonical_base64(text)
        return
    assert is_canonical_base64(text) == (base64.b64encode(decoded).decode() == text)
