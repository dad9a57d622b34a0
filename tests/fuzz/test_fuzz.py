"""Fuzzing (hypothesis) of everything that reads attacker-chosen input, with modest example counts.

Allowed outcomes everywhere: the right value or a *typed* refusal (a stable ``category``), the right HTTP
status — never an untyped exception, a 500, a hang, a traceback in the logs or a value echoed into them.
No ``deadline``: the machines are shared and noisy; "no hang" means every example finishes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import fastmcp
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.contracts import (
    AdmissionPolicy,
    admit_tools,
    decode_header_value,
    encode_header_value,
    validate_instance,
    validate_parameter_headers,
)
from agent_connector_sdk.core.contracts.errors import HeaderMismatch, HeaderValueError
from agent_connector_sdk.core.schema_disclosure import (
    SchemaDisclosureError,
    build_schema_disclosure,
    parse_fragment_index,
    reconstruct_schema,
)
from agent_connector_sdk.demo.contract_lab import contract_lab_app
from tests.support.http_server import serve_asgi
from tests.support.raw_http import PROTOCOL_VERSION, capture_logs, raw_post
from tests.support.schema_server import recording_schema_server

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HEADER_TEXT = st.binary(max_size=64).map(lambda raw: raw.decode("latin-1"))  # what an ASGI server hands us
TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)

ROUTE_TOOL = {
    "name": "route",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "express": {"type": "boolean", "x-mcp-header": "Express"},
        },
    },
}


# ---------------------------------------------------------------------------------- header codec
@FUZZ
@given(HEADER_TEXT)
def test_decoding_any_header_bytes_is_text_or_a_typed_refusal(text: str) -> None:
    try:
        decoded = decode_header_value(text)
    except HeaderValueError as refusal:
        assert refusal.category == "malformed"
    else:
        assert isinstance(decoded, str)


@FUZZ
@given(TEXT)
def test_every_text_round_trips_through_the_codec(text: str) -> None:
    encoded = encode_header_value(text)
    assert encoded.isascii() and encoded.isprintable()
    assert decode_header_value(encoded) == text


@FUZZ
@given(st.binary(max_size=48))
def test_any_base64_payload_bytes_decode_or_are_refused(payload: bytes) -> None:
    wrapped = "=?base64?" + payload.decode("latin-1") + "?="
    try:
        decode_header_value(wrapped)
    except HeaderValueError as refusal:
        assert refusal.category == "malformed"


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                ["Mcp-Param-Region", "mcp-param-priority", "MCP-PARAM-EXPRESS", "Mcp-Param-Other"]
            ),
            HEADER_TEXT,
        ),
        max_size=4,
    ),
    st.fixed_dictionaries(
        {}, optional={"region": TEXT, "priority": st.integers(), "express": st.booleans() | st.none()}
    ),
)
def test_parameter_headers_on_any_bytes_are_accepted_or_a_typed_mismatch(
    headers: list[tuple[str, str]], arguments: dict[str, Any]
) -> None:
    audit: list[dict[str, Any]] = []
    try:
        validate_parameter_headers(ROUTE_TOOL, arguments, headers, audit=audit.append)
    except HeaderMismatch as refusal:
        assert refusal.category in {"missing", "duplicated", "unexpected", "malformed", "mismatched"}
        assert refusal.header is not None and refusal.header.lower().startswith("mcp-param-")
    (event,) = audit
    logged = json.dumps(event)
    for _, value in headers:
        if len(value) >= 4:
            assert value not in logged or value in {"Region", "Priority", "Express"}


# --------------------------------------------------------------------------------- disclosure URIs
@FUZZ
@given(st.one_of(TEXT, st.integers(), st.none(), st.binary(max_size=8)), st.integers(1, 200))
def test_fragment_index_text_is_an_index_or_malformed(index: Any, count: int) -> None:
    try:
        value = parse_fragment_index(index, count)
    except SchemaDisclosureError as refusal:
        assert refusal.category == "malformed_index"
    else:
        assert 0 <= value < count and index == str(value)


# --------------------------------------------------------------------- admission, adversarial schemas
def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def _nested_lists(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    for _ in range(depth):
        schema = {"items": schema}
    return {"type": "object", "properties": {"x": schema}}


ADVERSARIAL: dict[str, dict[str, Any]] = {
    "10,000-level properties nesting": _nested(10_000),
    "10,000-level items nesting": _nested_lists(10_000),
    "1 MB description": {"type": "object", "description": "d" * 1_000_000},
    "1 MB enum string": {"type": "object", "properties": {"e": {"enum": ["e" * 1_000_000]}}},
    "1 MB property name": {"type": "object", "properties": {"p" * 1_000_000: {"type": "string"}}},
    "huge integer bound": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 10**400}}},
    "huge integer const": {"type": "object", "properties": {"n": {"const": -(10**4000)}}},
    "$ref cycle": {
        "type": "object",
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
        "properties": {"x": {"$ref": "#/$defs/a"}},
    },
    "self $ref": {"type": "object", "properties": {"x": {"$ref": "#"}}},
    "dangling $ref": {"type": "object", "properties": {"x": {"$ref": "#/$defs/none"}}},
    "unknown $schema": {"$schema": "https://example.invalid/my-dialect", "type": "object"},
    "unknown $schema inside": {
        "type": "object",
        "properties": {"x": {"$schema": "urn:nope", "type": "string"}},
    },
}


@pytest.mark.parametrize("case", sorted(ADVERSARIAL))
def test_admission_answers_every_adversarial_schema_with_a_verdict(case: str) -> None:
    descriptor = {"name": "adversarial", "inputSchema": ADVERSARIAL[case]}
    report = admit_tools([descriptor, {"name": "fine", "inputSchema": {"type": "object"}}], AdmissionPolicy())
    assert "fine" in report.admitted  # one descriptor's failure never affects another
    if "adversarial" not in report.admitted:
        (rejection,) = report.rejected
        assert rejection["category"] and isinstance(rejection["reason"], str)
        assert len(rejection["reason"]) < 1000  # no 1 MB value echoed back
    else:
        failure = validate_instance(ADVERSARIAL[case], {})
        assert failure is None or failure.kind


def test_a_remote_ref_is_refused_and_never_fetched() -> None:
    with recording_schema_server() as (base_url, requests):
        schema = {"type": "object", "properties": {"x": {"$ref": f"{base_url}/schema.json"}}}
        report = admit_tools([{"name": "remote", "inputSchema": schema}])
        failure = validate_instance(schema, {"x": 1})
    assert report.rejected and report.rejected[0]["category"]
    assert failure is not None and failure.kind == "unresolvable_ref"
    assert requests == []


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=15,
)
_KEYWORDS = st.sampled_from(
    [
        "type",
        "properties",
        "items",
        "$ref",
        "$schema",
        "allOf",
        "anyOf",
        "not",
        "enum",
        "const",
        "required",
        "additionalProperties",
        "$defs",
        "pattern",
        "minimum",
        "x-mcp-header",
    ]
)
_SCHEMA_LIKE = st.recursive(
    st.booleans() | st.dictionaries(_KEYWORDS, _JSON, max_size=3),
    lambda children: st.dictionaries(_KEYWORDS | TEXT, children, max_size=3),
    max_leaves=12,
)


@FUZZ
@given(_SCHEMA_LIKE, _JSON)
def test_admission_and_validation_on_random_schema_shapes_never_crash(schema: Any, instance: Any) -> None:
    descriptor = {"name": "t", "inputSchema": {"type": "object", "properties": {"p": schema}}}
    report = admit_tools([descriptor])
    assert len(report.admitted) + len(report.rejected) == 1
    failure = validate_instance(descriptor["inputSchema"], {"p": instance})
    assert failure is None or failure.kind in {
        "instance",
        "unsupported_dialect",
        "invalid_schema",
        "unresolvable_ref",
    }


# ------------------------------------------------------------------- reconstruct on random fragments
_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {f"p{i}": {"type": "string", "description": "zürich 東京 " * 8} for i in range(120)},
}
_DISCLOSURE = build_schema_disclosure(
    operation="fuzz/op", alias="fuzz_op", source=b"fuzz source", input_schema=_INPUT_SCHEMA
)
_OTHER = build_schema_disclosure(
    operation="fuzz/other", alias="fuzz_other", source=b"fuzz source", input_schema={"type": "object"}
)
_FRAGMENTS = _DISCLOSURE.fragments + _OTHER.fragments


@FUZZ
@given(st.lists(st.integers(0, len(_FRAGMENTS) - 1), max_size=len(_DISCLOSURE.fragments) + 2))
def test_reconstruct_on_any_fragment_selection_is_the_document_or_a_typed_refusal(picks: list[int]) -> None:
    fragments = [_FRAGMENTS[i] for i in picks]
    try:
        document = reconstruct_schema(_DISCLOSURE.manifest, fragments)
    except SchemaDisclosureError as refusal:
        assert refusal.category in {"incomplete", "reordered", "mixed_operation", "stale", "corrupt"}
    else:
        assert picks == list(range(len(_DISCLOSURE.fragments)))
        assert document["inputSchema"]["properties"]["p0"]["type"] == "string"


@FEW
@given(
    st.integers(0, len(_DISCLOSURE.fragments) - 1), st.integers(0, 3000), st.binary(min_size=1, max_size=3)
)
def test_reconstruct_refuses_any_byte_level_corruption(index: int, offset: int, junk: bytes) -> None:
    fragment = _DISCLOSURE.fragments[index]
    text = fragment.text
    position = offset % max(len(text), 1)
    mutated = text[:position] + junk.decode("latin-1") + text[position + 1 :]
    if mutated == text:
        return
    fragments = list(_DISCLOSURE.fragments)
    try:
        fragments[index] = fragment.model_copy(update={"text": mutated})
    except ValueError:
        return  # the model refused it on construction: also a typed refusal
    with pytest.raises(SchemaDisclosureError):
        reconstruct_schema(_DISCLOSURE.manifest, fragments)


# ------------------------------------------------------------------------- raw HTTP against the lab
@pytest.fixture(scope="module")
def lab_url() -> Iterator[str]:
    with serve_asgi(contract_lab_app(stateless_http=True, json_response=True)) as url:
        yield url


SECRET = "S3CR3T-VALUE-9f2c"
_METHODS = st.sampled_from(
    ["tools/call", "tools/list", "resources/read", "prompts/get", "completion/complete", "nope"]
)
_TOOLS = st.sampled_from(
    ["route_shipment", "fetch_report", "list_regions", "flaky_search", "nested_route", "x"]
)
_HEADER_NAMES = st.sampled_from(
    [
        "mcp-param-region",
        "mcp-param-priority",
        "mcp-param-express",
        "mcp-param-api-token",
        "mcp-name",
        "mcp-method",
        "mcp-protocol-version",
        "x-forwarded-for",
        "content-type",
        "accept",
    ]
)
_HEADER_VALUES = st.one_of(
    st.just(SECRET),
    st.sampled_from(["2026-07-28", "2025-06-18", "tools/call", "=?base64??=", "true", "1", "eu-west"]),
    st.binary(max_size=24).map(lambda raw: b"=?base64?" + raw + b"?="),
    st.binary(max_size=24).filter(lambda raw: b"\r" not in raw and b"\n" not in raw and b"\x00" not in raw),
).map(lambda value: value if isinstance(value, bytes) else value.encode())


@st.composite
def _bodies(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["message", "garbage", "batch", "deep"]))
    if kind == "garbage":
        return draw(st.binary(max_size=200))
    if kind == "deep":
        depth = draw(st.integers(100, 5000))
        return b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":' + b"[" * depth + b"]" * depth + b"}"
    method = draw(_METHODS)
    params: dict[str, Any] = {
        "name": draw(_TOOLS),
        "arguments": draw(
            st.dictionaries(
                st.sampled_from(["region", "priority", "api_token", "query"]),
                st.one_of(st.just(SECRET), st.integers(), st.booleans(), st.none()),
                max_size=3,
            )
        ),
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if draw(st.booleans()):
        message["id"] = draw(st.one_of(st.integers(), TEXT, st.none(), st.booleans()))
    encoded = json.dumps(message).encode()
    return b"[" + encoded + b"]" if kind == "batch" else encoded


ALLOWED_STATUSES = {200, 202, 400, 403, 404, 405, 406, 413, 415, 421, 422}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_bodies(), st.lists(st.tuples(_HEADER_NAMES, _HEADER_VALUES), max_size=6))
def test_raw_bodies_and_headers_get_typed_answers_and_leave_no_trace(
    lab_url: str, body: bytes, headers: list[tuple[str, bytes]]
) -> None:
    with capture_logs() as logs, httpx2.Client(timeout=30) as http:
        try:
            # Names are ASCII (sampled), values raw octets: both as bytes, the pairs httpx takes.
            raw = [(name.encode("ascii"), value) for name, value in headers]
            response = http.post(lab_url, content=body, headers=raw)
        except httpx2.LocalProtocolError:
            return  # the client itself refuses to send these header bytes: nothing reached the server
    assert response.status_code in ALLOWED_STATUSES, (response.status_code, response.text[:300])
    if response.headers.get("content-type", "").startswith("application/json") and response.content:
        json.loads(response.content)
    text = logs.text()
    assert logs.tracebacks() == [], text
    assert SECRET not in text
    assert "Exception in ASGI application" not in text


def _disclosure_server() -> fastmcp.FastMCP[Any]:
    from fastmcp.server.transforms.search import RegexSearchTransform

    from agent_connector_sdk.mcp.schema_disclosure_provider import (
        describe_schema_tools,
        register_schema_resources,
    )
    from tests.support.disclosure_servers import StaticTool

    server: fastmcp.FastMCP[Any] = fastmcp.FastMCP("uris")
    server.add_tool(StaticTool(name="fuzz_op", parameters=_INPUT_SCHEMA))
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
    server.add_transform(search)
    register_schema_resources(server, search, {"fuzz_op": _DISCLOSURE})
    return server


_URI_SERVER = _disclosure_server()
_READABLE = {
    _DISCLOSURE.manifest.manifest_uri,
    *(
        f"schema-disclosure://tools/fuzz_op/{_DISCLOSURE.manifest.schema_sha256}/fragments/{i}"
        for i in range(len(_DISCLOSURE.fragments))
    ),
}


@pytest.fixture(scope="module")
def uri_url() -> Iterator[str]:
    # Raw HTTP, not fastmcp.Client: the client parses URIs (pydantic AnyUrl strips edge whitespace),
    # which would normalize exactly what this test must deliver byte for byte.
    with serve_asgi(_URI_SERVER.http_app(stateless_http=True, json_response=True)) as url:
        yield url


def _error_shape(response: httpx2.Response, uri: str) -> tuple[int, Any]:
    error = dict(response.json()["error"])
    error.pop("data", None)  # data.uri names the URI that was asked for, and so does the message
    error["message"] = str(error.get("message", "")).replace(repr(uri), "<uri>").replace(uri, "<uri>")
    return response.status_code, error


def _read(url: str, uri: str) -> httpx2.Response:
    # Mcp-Name as a conforming client sends it (base64 when the text would not survive as a field).
    return raw_post(url, "resources/read", {"uri": uri}, name_header=encode_header_value(uri))


NEVER_URI = "schema-disclosure://tools/never/" + "0" * 64 + "/manifest"


@FEW
@given(
    st.sampled_from(["manifest", "fragments/", "fragments/0", "", "manifest/"]),
    st.text(alphabet=st.characters(codec="ascii", exclude_characters="#?"), max_size=30),
)
def test_mangled_disclosure_uris_read_exactly_like_a_never_existing_one(
    uri_url: str, tail: str, suffix: str
) -> None:
    uri = f"schema-disclosure://tools/fuzz_op/{_DISCLOSURE.manifest.schema_sha256}/{tail}{suffix}"
    if uri in _READABLE:
        return
    response = _read(uri_url, uri)
    assert _error_shape(response, uri) == _error_shape(_read(uri_url, NEVER_URI), NEVER_URI), (
        uri,
        response.text,
    )


def test_base64_sentinel_examples_are_refused_not_crashing() -> None:
    # The probe's literal bytes, and canonical/non-canonical near misses.
    for raw in (b"\xe9\xe9", base64.b64encode(b"ok") + b"x", b"QQ", b"QR==", b"//8="):
        try:
            decode_header_value("=?base64?" + raw.decode("latin-1") + "?=")
        except HeaderValueError as refusal:
            assert refusal.category == "malformed"
    # Execute's own label for a descriptor whose annotation is invalid (it was AdmissionError before the
    # one-error-root redesign): the server cannot check headers against it, so it refuses.
    with pytest.raises(HeaderMismatch) as invalid:
        validate_parameter_headers(
            {
                "name": "bad",
                "inputSchema": {
                    "type": "object",
                    "properties": {"n": {"type": "number", "x-mcp-header": "N"}},
                },
            },
            {"n": 1.5},
            [],
        )
    assert invalid.value.category == "invalid_header_annotation"
