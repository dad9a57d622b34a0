"""An OpenAPI tool's failures, modelled inside its published output schema (pure: dicts in, dicts out).

An output schema is a promise that holds for error results too (project policy: an ``isError`` result
with ``structuredContent`` must conform). FastMCP derives a tool's output schema from the operation's
success response alone, so no failure could conform to it: an upstream 404 became a JSON-RPC error.
Here the success schema gets a second branch, the **failure envelope**::

    {"error": {"category": "upstream_error", "message": "...", "status": 404, "body": {...}}}

``category`` and ``message`` say why the call failed (the same words as the result's text);
``status`` is the upstream's HTTP status when it answered one; ``body`` is the upstream's error body,
present only when the server echoes error bodies (``upstream_errors="echo"``) and the body is JSON
that conforms to what the document declares for that status. Its schema is the document's declared
error responses (``4XX``/``404``/``default``, JSON content), so a caller sees their shape before any
call fails. Nothing in the envelope is ever made up: a field is present only with a true value.

:func:`with_failure_envelope` builds the combined schema (FastMCP's ``x-fastmcp-wrap-result`` wrapper
keeps its ``properties.result``, so FastMCP's client still unwraps a success);
:func:`declared_error_bodies` reads the declared error bodies of one operation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from fastmcp.utilities.openapi.json_schema_converter import convert_openapi_schema_to_json_schema

__all__ = [
    "FAILURE_KEY",
    "ErrorBodies",
    "declared_error_bodies",
    "error_body_schema_for",
    "failure_content",
    "success_schema",
    "with_failure_envelope",
]

FAILURE_KEY: Final = "error"
"""The one member of a failure envelope."""

_JSON_MEDIA: Final = re.compile(r"^application/(?:[\w.+-]+\+)?json$|^text/json$", re.IGNORECASE)
_COMPONENT_PREFIX: Final = "#/components/schemas/"
_DATA_KEYS: Final = frozenset({"example", "examples", "default", "enum", "const"})
_NAME_MAP_KEYS: Final = frozenset({"properties", "patternProperties"})

ErrorBodies = dict[str, dict[str, Any]]
"""Status key as the document writes it (``"404"``, ``"4XX"``, ``"default"``) -> JSON Schema of the body
(its references rewritten to ``#/$defs/...``)."""


def _is_error_status(key: str) -> bool:
    return key == "default" or (len(key) == 3 and key[0] in "45" and key[1:].replace("X", "0").isdigit())


def _local(document: Mapping[str, Any], value: Any, depth: int = 0) -> Any:
    """``value`` with a ``$ref`` to another place of the document followed (responses may be references)."""
    while isinstance(value, Mapping) and isinstance(value.get("$ref"), str) and depth < 16:
        reference: str = value["$ref"]
        if not reference.startswith("#/"):
            return None
        target: Any = document
        for token in reference[2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            target = target.get(token) if isinstance(target, Mapping) else None
        value, depth = target, depth + 1
    return value


def _components_reached(document: Mapping[str, Any], schema: Any) -> dict[str, Any] | None:
    """The component schemas ``schema`` reaches by ``#/components/schemas/...`` references (transitively);
    ``None`` when it reaches a reference of another kind (not expressible under ``$defs``)."""
    components = document.get("components")
    schemas = components.get("schemas") if isinstance(components, Mapping) else None
    reached: dict[str, Any] = {}
    stack: list[tuple[Any, bool]] = [(schema, False)]  # (value, is a map of names to schemas)
    while stack:
        current, names = stack.pop()
        if isinstance(current, Mapping):
            reference = None if names else current.get("$ref")
            if isinstance(reference, str):
                if not reference.startswith(_COMPONENT_PREFIX):
                    return None
                name = reference.removeprefix(_COMPONENT_PREFIX).split("/", 1)[0]
                if name not in reached:
                    target = schemas.get(name) if isinstance(schemas, Mapping) else None
                    if target is None:
                        return None
                    reached[name] = target
                    stack.append((target, False))
            stack.extend(
                (value, not names and key in _NAME_MAP_KEYS)
                for key, value in current.items()
                if names or key not in _DATA_KEYS
            )
        elif isinstance(current, list):
            stack.extend((item, False) for item in current)
    return reached


def _as_json_schema(schema: Any, openapi_version: str | None, names: bool = False) -> Any:
    """An OpenAPI schema as JSON Schema, its component references rewritten to ``#/$defs/...``."""
    if isinstance(schema, Mapping):
        converted = {}
        for key, value in schema.items():
            if names:
                converted[key] = _as_json_schema(value, None)
            elif key == "$ref" and isinstance(value, str) and value.startswith(_COMPONENT_PREFIX):
                converted[key] = "#/$defs/" + value.removeprefix(_COMPONENT_PREFIX)
            elif key in _DATA_KEYS:
                converted[key] = value
            else:
                converted[key] = _as_json_schema(value, None, key in _NAME_MAP_KEYS)
        if openapi_version is not None:
            return convert_openapi_schema_to_json_schema(
                converted, openapi_version, remove_read_only=False, remove_write_only=True
            )
        return converted
    if isinstance(schema, list):
        return [_as_json_schema(item, None) for item in schema]
    return schema


def declared_error_bodies(
    document: Mapping[str, Any], operation: Mapping[str, Any]
) -> tuple[ErrorBodies, dict[str, Any]]:
    """``(bodies, defs)``: the JSON Schema of each declared 4xx/5xx/``default`` JSON response body of
    ``operation``, and the component schemas they reach (converted, keyed for ``$defs``). A response
    without a JSON body, or whose schema reaches a reference outside ``components/schemas``, declares
    no body (the envelope then carries none for that status)."""
    version = document.get("openapi")
    openapi_version = version if isinstance(version, str) else None
    responses = operation.get("responses")
    bodies: ErrorBodies = {}
    defs: dict[str, Any] = {}
    if not isinstance(responses, Mapping):
        return bodies, defs
    for status, declared in responses.items():
        key = str(status).upper() if str(status).lower() != "default" else "default"
        response = _local(document, declared)
        if not _is_error_status(key) or not isinstance(response, Mapping):
            continue
        content = response.get("content")
        if not isinstance(content, Mapping):
            continue
        media = next((_local(document, v) for k, v in content.items() if _JSON_MEDIA.match(str(k))), None)
        schema = media.get("schema") if isinstance(media, Mapping) else None
        if not isinstance(schema, Mapping):
            continue
        reached = _components_reached(document, schema)
        if reached is None:
            continue
        for name, component in reached.items():
            if name not in defs:
                defs[name] = _as_json_schema(component, openapi_version)
        bodies[key] = _as_json_schema(schema, openapi_version)
    return bodies, defs


def error_body_schema_for(bodies: ErrorBodies, status: int) -> dict[str, Any] | None:
    """The declared body schema for ``status``: the exact code, else its range (``4XX``), else
    ``default``; ``None`` when the document declares none."""
    for key in (str(status), f"{str(status)[0]}XX", "default"):
        if key in bodies:
            return bodies[key]
    return None


def _envelope(bodies: ErrorBodies) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "category": {"type": "string", "description": "why the call failed (e.g. upstream_error)"},
        "message": {"type": "string", "description": "the failure in words (the result's text)"},
        "status": {
            "type": "integer",
            "minimum": 100,
            "maximum": 599,
            "description": "the HTTP status the upstream API answered",
        },
    }
    distinct: list[dict[str, Any]] = []
    for schema in bodies.values():
        if schema not in distinct:
            distinct.append(schema)
    if distinct:
        body = distinct[0] if len(distinct) == 1 else {"anyOf": distinct}
        properties["body"] = {
            **body,
            "description": "the upstream's error body as the API document declares it (echoed bodies only)",
        }
    return {
        "type": "object",
        "description": "present only on a failed call (isError: true)",
        "properties": properties,
        "required": ["category", "message"],
        "additionalProperties": False,
    }


def with_failure_envelope(
    success: Mapping[str, Any], bodies: ErrorBodies, defs: Mapping[str, Any]
) -> dict[str, Any]:
    """``success`` (an output schema as FastMCP derives it: an object, or the ``x-fastmcp-wrap-result``
    wrapper of a non-object) extended so that a failure envelope conforms as well."""
    merged_defs = {**defs, **(success.get("$defs") or {})}
    envelope = _envelope(bodies)
    combined: dict[str, Any]
    if success.get("x-fastmcp-wrap-result"):
        # The wrapper keeps `properties.result` at its root (FastMCP's client unwraps through it);
        # exactly one of `result` (a success) and `error` (a failure) is present.
        combined = {key: value for key, value in success.items() if key not in ("$defs", "required")}
        combined["properties"] = {**success.get("properties", {}), FAILURE_KEY: envelope}
        combined["oneOf"] = [{"required": ["result"]}, {"required": [FAILURE_KEY]}]
        combined["additionalProperties"] = False
    else:
        branch = {key: value for key, value in success.items() if key != "$defs"}
        failure = {
            "type": "object",
            "properties": {FAILURE_KEY: envelope},
            "required": [FAILURE_KEY],
            "additionalProperties": False,
        }
        combined = {"type": "object", "anyOf": [branch, failure]}
    if merged_defs:
        combined["$defs"] = merged_defs
    return combined


def success_schema(output_schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The success branch of an output schema :func:`with_failure_envelope` built (with its ``$defs``),
    so that a value breaking it is described by the keyword it breaks there, not by ``anyOf``. A
    wrapped (non-object) schema is returned whole: its ``result`` member is the success branch."""
    branches = output_schema.get("anyOf")
    if output_schema.get("x-fastmcp-wrap-result") or not isinstance(branches, list) or len(branches) != 2:
        return output_schema
    defs = output_schema.get("$defs")
    return {**branches[0], "$defs": defs} if defs else dict(branches[0])


def failure_content(
    category: str, message: str, *, status: int | None = None, body: Any = None, has_body: bool = False
) -> dict[str, Any]:
    """A failure envelope (see the module doc); ``body`` is included only when ``has_body``."""
    failure: dict[str, Any] = {"category": category, "message": message}
    if status is not None:
        failure["status"] = status
    if has_body:
        failure["body"] = body
    return {FAILURE_KEY: failure}
