"""Schema disclosures built directly from the pure core (no server): defaults large enough to span
several fragments."""

from __future__ import annotations

from typing import Any

from agent_connector_sdk.core.schema_disclosure import SchemaDisclosure, build_schema_disclosure

SOURCE = b"test source document"


def make_disclosure(
    *,
    operation: str = "repos/get",
    alias: str = "repos_get",
    input_schema: dict[str, Any] | None = None,
    output_schema: Any = None,
    source: bytes = SOURCE,
) -> SchemaDisclosure:
    if input_schema is None:
        input_schema = {
            "type": "object",
            "properties": {"owner": {"type": "string", "description": "ü" * 3000}},
        }
    return build_schema_disclosure(
        operation=operation,
        alias=alias,
        source=source,
        input_schema=input_schema,
        output_schema=output_schema,
    )
