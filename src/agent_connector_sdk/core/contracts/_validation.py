"""Invoke: tool arguments checked against the admitted ``inputSchema``, in the schema's own dialect.

All JSON Schema work (dialects, the offline registry, compile + cache, failure categories, the
engines and where they differ) lives in :mod:`._json_schema`, shared with Admit, Execute and Consume;
this module is the Invoke gate on top of it. The names re-exported below (``validate_instance``,
``ValidatorCache``, ...) keep their old import path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_connector_sdk.core.contracts._json_schema import (
    DRAFT_2020_12,
    MAX_INSTANCE_DEPTH,
    VALIDATOR_CACHE_SIZE,
    SchemaFailure,
    SchemaKey,
    ValidatorCache,
    check_schema,
    clear_validator_cache,
    default_validator_cache,
    exact_value_key,
    validate_instance,
    validate_keyed,
)
from agent_connector_sdk.core.contracts.errors import ArgumentError

__all__ = [
    "DRAFT_2020_12",
    "MAX_INSTANCE_DEPTH",
    "VALIDATOR_CACHE_SIZE",
    "SchemaFailure",
    "SchemaKey",
    "ValidatorCache",
    "check_schema",
    "clear_validator_cache",
    "default_validator_cache",
    "exact_value_key",
    "validate_arguments",
    "validate_instance",
]


def validate_arguments(
    tool: Mapping[str, Any],
    arguments: Mapping[str, Any] | None,
    *,
    cache: ValidatorCache | None = None,
    input_key: SchemaKey | None = None,
) -> None:
    """Invoke gate: check ``arguments`` against the wire descriptor's ``inputSchema``.

    ``tool`` is the wire descriptor dict (camelCase). ``None`` arguments are validated as ``{}`` (the
    ``tools/call`` params member is optional). The schema is evaluated in the dialect it declares (any
    of the five in :data:`~agent_connector_sdk.core.contracts._json_schema.DIALECTS`). Raises
    :class:`ArgumentError` with category:

    - ``invalid_arguments`` — the arguments are not an object, or fail the schema; ``.path`` is a JSON
      pointer into the arguments and the message names the failing keyword, never the value;
    - ``invalid_schema`` — the descriptor has no usable ``inputSchema``;
    - ``unsupported_dialect`` — ``$schema`` is not one of the supported dialects (or they are mixed);
    - ``unresolvable_ref`` — a ``$ref`` that does not resolve inside the schema (never fetched).

    ``input_key``: the tool's ``inputSchema`` object as a :class:`SchemaKey` made when the tool was
    admitted; when given, it is the schema checked (the same verdict, without serializing it per call).
    """
    schema: Any = input_key
    if schema is None:
        schema = tool.get("inputSchema") if isinstance(tool, Mapping) else None
    if not isinstance(schema, Mapping | SchemaKey):
        raise ArgumentError("invalid_schema", "tool descriptor has no inputSchema object")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise ArgumentError("invalid_arguments", "arguments must be a JSON object", path="")
    # jsonschema's "object" type is ``dict``; a read-only Mapping view must not fail as "not an object".
    instance = arguments if isinstance(arguments, dict) else dict(arguments)
    failure: SchemaFailure | None = (
        validate_keyed(schema, instance, cache=cache)
        if isinstance(schema, SchemaKey)
        else validate_instance(schema, instance, cache=cache)
    )
    if failure is None:
        return
    if failure.kind == "instance":
        raise ArgumentError(
            "invalid_arguments",
            f"arguments refused: {failure.message}",
            path=failure.path,
        )
    raise ArgumentError(failure.kind, f"inputSchema refused: {failure.message}", path="")
