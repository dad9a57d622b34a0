"""A minimal, valid schema navigation entry for the gateway's cache and key tests."""

from __future__ import annotations

from typing import Any

from agent_connector_sdk.core.disclosure_navigation import SchemaNavigation

__all__ = ["NAVIGATION_FIELDS", "navigation_entry"]

NAVIGATION_FIELDS: dict[str, Any] = {
    "kind": "schema-navigation",
    "name": "tool",
    "title": None,
    "description": "does things",
    "description_cut": False,
    "arguments": [],
    "arguments_omitted": 0,
    "input_schema_sha256": "a" * 64,
    "output_schema_sha256": None,
    "schema_sha256": "b" * 64,
    "fragment_count": 1,
    "manifest_uri": "schema://tool/manifest",
}


def navigation_entry(**changes: Any) -> SchemaNavigation:
    """:data:`NAVIGATION_FIELDS` with ``changes`` applied, validated as the host parses an entry."""
    return SchemaNavigation.model_validate({**NAVIGATION_FIELDS, **changes})
