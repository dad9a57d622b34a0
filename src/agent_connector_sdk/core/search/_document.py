"""What the ranking reads of a tool: its name, title, description and arguments (pure).

A :class:`SearchDocument` is built from an MCP tool descriptor (the ``tools/list`` shape) by
:func:`document_from_tool`. Anything malformed in the descriptor is skipped, never raised: a server's
odd tool must not break its neighbours' search.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["SearchDocument", "document_from_tool"]

# Bounds on what one tool contributes to an index: a hostile or generated descriptor must not make a
# search (or an index build) cost more than its neighbours by orders of magnitude.
MAX_TEXT_CHARS: Final = 16_000
MAX_ARGUMENTS: Final = 256


@dataclass(frozen=True, slots=True)
class SearchDocument:
    """One tool as the search ranks it.

    ``arguments`` holds ``(argument name, argument description)`` pairs in schema order (the
    description is ``""`` where the schema has none).
    """

    name: str
    title: str = ""
    description: str = ""
    arguments: tuple[tuple[str, str], ...] = ()

    def regex_text(self) -> str:
        """The text a regex is matched against, as FastMCP's search builds it: the name, the
        description, then each argument's name and description, joined by single spaces."""
        parts = [self.name]
        if self.description:
            parts.append(self.description)
        for argument, description in self.arguments:
            parts.append(argument)
            if description:
                parts.append(description)
        return " ".join(parts)


def _text(value: object) -> str:
    return value[:MAX_TEXT_CHARS] if isinstance(value, str) else ""


def document_from_tool(descriptor: Mapping[str, Any]) -> SearchDocument:
    """The :class:`SearchDocument` of an MCP tool descriptor (``name``, ``title`` or
    ``annotations.title``, ``description``, ``inputSchema.properties`` with their descriptions)."""
    name = descriptor.get("name")
    if not isinstance(name, str):
        raise TypeError("a tool descriptor needs a string 'name'")
    title = _text(descriptor.get("title"))
    if not title:
        annotations = descriptor.get("annotations")
        if isinstance(annotations, Mapping):
            title = _text(annotations.get("title"))
    schema = descriptor.get("inputSchema")
    arguments: list[tuple[str, str]] = []
    if isinstance(schema, Mapping):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            for argument, field in properties.items():
                if len(arguments) >= MAX_ARGUMENTS:
                    break
                if not isinstance(argument, str):
                    continue
                described = _text(field.get("description")) if isinstance(field, Mapping) else ""
                arguments.append((argument[:200], described))
    return SearchDocument(
        name=name,
        title=title,
        description=_text(descriptor.get("description")),
        arguments=tuple(arguments),
    )
