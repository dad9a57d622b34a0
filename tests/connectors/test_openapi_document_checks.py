"""What an OpenAPI document must hold before its operations become tools (issue 29): unique
``operationId``s (or, by choice, every derived tool named for the ID), references that resolve (an
operation reaching one that does not becomes no tool, with the reason; or the document is refused), and
no operation taking a name the server reserves for its own tools."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from agent_connector_sdk.connectors import InvalidOpenAPIDocument, build_openapi_server
from agent_connector_sdk.connectors._openapi_document import (
    duplicate_operation_ids,
    unresolvable_references,
    without_operations,
)

BASE = "http://127.0.0.1:9"


def _operation(operation_id: str | None, **extra: Any) -> dict[str, Any]:
    operation: dict[str, Any] = {"responses": {"204": {"description": "done"}}, **extra}
    if operation_id is not None:
        operation["operationId"] = operation_id
    return operation


def _document(paths: dict[str, Any], schemas: dict[str, Any] | None = None) -> dict[str, Any]:
    document: dict[str, Any] = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": paths}
    if schemas is not None:
        document["components"] = {"schemas": schemas}
    return document


DUPLICATES = _document(
    {
        "/things/{id}": {"delete": _operation("deleteThing")},
        "/admin/things/{id}": {"delete": _operation("deleteThing"), "get": _operation("getThing")},
    }
)


def test_a_duplicate_operation_id_is_refused_naming_both_places() -> None:
    assert duplicate_operation_ids(DUPLICATES) == {
        "deleteThing": ["DELETE /things/{id}", "DELETE /admin/things/{id}"]
    }
    with pytest.raises(InvalidOpenAPIDocument) as refused:
        build_openapi_server(DUPLICATES, base_url=BASE)
    message = refused.value.message
    assert refused.value.category == "invalid_document" and refused.value.rule == "unique_operation_ids"
    assert message == (
        'duplicate operationId "deleteThing": DELETE /things/{id} and DELETE /admin/things/{id}; '
        "OpenAPI requires operationIds to be unique"
    )


def test_allowed_duplicates_are_both_tools_and_both_stand_for_the_id() -> None:
    built = build_openapi_server(DUPLICATES, base_url=BASE, allow_duplicate_operation_ids=True)
    assert sorted(built.tools_of("deleteThing")) == ["deleteThing", "deleteThing_2"]
    assert built.tools_of("deleteThing_2") == ["deleteThing_2"]  # a tool name stands for that tool only
    assert built.tools_of("getThing") == ["getThing"]
    assert built.tools_of("nothing") == []


@pytest.mark.parametrize("reserved", ["call_tool", "search_tools"])
def test_an_operation_named_like_a_reserved_tool_is_refused(reserved: str) -> None:
    document = _document({"/x": {"post": _operation(reserved)}, "/y": {"get": _operation("fine")}})
    with pytest.raises(InvalidOpenAPIDocument, match=f'the tool "{reserved}", a name the server reserves'):
        build_openapi_server(document, base_url=BASE, reserved_names=("search_tools", "call_tool"))
    # Without reserved names (a server with no search transform) the name is an ordinary tool.
    assert reserved in build_openapi_server(document, base_url=BASE).operations


def _json_body(reference: str) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": {"$ref": reference}}}}


MISSING = _document(
    {
        "/things": {
            "post": _operation("makeThing", requestBody=_json_body("#/components/schemas/Thing")),
            "get": _operation("listThings"),
        },
        "/pets/{id}": {
            "get": {
                "operationId": "getPet",
                "responses": {"200": {"description": "ok", **_json_body("#/components/schemas/Pet")}},
            }
        },
        "/far": {"get": _operation("far", requestBody=_json_body("https://example.test/schema.json"))},
        "/loop": {"get": _operation("loop", requestBody=_json_body("#/components/schemas/Node"))},
    },
    schemas={
        # A reference two levels down resolves to nothing; a recursive one resolves.
        "Pet": {"type": "object", "properties": {"owner": {"$ref": "#/components/schemas/Owner"}}},
        "Owner": {"type": "object", "properties": {"id": {"$ref": "#/components/schemas/Nope"}}},
        "Node": {
            "type": "object",
            "properties": {
                "next": {"$ref": "#/components/schemas/Node"},
                # A property *named* like a data keyword is still a schema (and its reference resolves).
                "example": {"$ref": "#/components/schemas/Node"},
            },
            "example": {"$ref": "not a reference: example data"},
        },
    },
)


def test_an_unresolvable_reference_leaves_its_operation_out_with_the_reason() -> None:
    original = copy.deepcopy(MISSING)
    assert unresolvable_references(MISSING) == {
        ("POST", "/things"): "$ref #/components/schemas/Thing resolves to nothing in the document",
        ("GET", "/pets/{id}"): "$ref #/components/schemas/Nope resolves to nothing in the document",
        ("GET", "/far"): (
            "$ref https://example.test/schema.json points outside the document "
            "(only local references resolve)"
        ),
    }
    built = build_openapi_server(MISSING, base_url=BASE)
    assert sorted(built.operations) == ["listThings", "loop"]
    assert sorted(built.refused) == ["far", "getPet", "makeThing"]
    assert "Nope" in built.refused["getPet"]
    assert original == MISSING  # the caller's document is never modified


def test_strict_refs_refuse_the_whole_document() -> None:
    with pytest.raises(
        InvalidOpenAPIDocument, match=r"operation POST /things: \$ref #/components/schemas/Thing"
    ):
        build_openapi_server(MISSING, base_url=BASE, strict_refs=True)


def test_raw_bytes_without_a_reference_skip_the_walk_and_change_nothing() -> None:
    document = _document({"/a": {"get": _operation("a")}})
    raw = json.dumps(document).encode()
    assert build_openapi_server(document, base_url=BASE, raw=raw).refused == {}
    # The hint is only a shortcut: with "$ref" in the bytes the check runs.
    assert build_openapi_server(MISSING, base_url=BASE, raw=json.dumps(MISSING).encode()).refused


def test_without_operations_copies_only_what_it_changes() -> None:
    document = _document(
        {"/a": {"get": _operation("a"), "put": _operation("b")}, "/c": {"get": _operation("c")}}
    )
    trimmed = without_operations(document, {("PUT", "/a")})
    assert list(trimmed["paths"]["/a"]) == ["get"]
    assert trimmed["paths"]["/c"] is document["paths"]["/c"]
    assert list(document["paths"]["/a"]) == ["get", "put"]
    assert without_operations(document, set()) is document
