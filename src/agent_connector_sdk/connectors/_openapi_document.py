"""What an OpenAPI document must hold before its operations become tools (pure: dicts in, verdicts out).

FastMCP's parser accepts two things that turn into holes on a served API, so they are checked here
first, on the document as written:

* **Duplicate ``operationId``s.** OpenAPI requires every ``operationId`` to be unique. FastMCP
  de-duplicates the tool names silently (``deleteThing``, ``deleteThing_2``), so a policy naming
  ``deleteThing`` guards only the first of two operations. :func:`duplicate_operation_ids` finds every
  clash with both places; the connector refuses the document unless told that each derived tool
  inherits the requirements of the ID.
* **``$ref``s that resolve to nothing.** FastMCP replaces a missing target with an empty schema (a
  request body that accepts anything, an output schema of ``{"x-fastmcp-top-level-schema": "Thing"}``)
  or leaves a dangling ``#/$defs/...``. :func:`unresolvable_references` names, per operation, the
  first reference that does not resolve inside the document (a reference to another document is one
  of them: nothing is fetched); the connector drops those operations with the reason, or refuses the
  document.

Every message names places (method and path, the reference) and never the document's other values.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote

__all__ = [
    "HTTP_METHODS",
    "DocumentOperation",
    "document_operations",
    "duplicate_operation_ids",
    "place",
    "unresolvable_references",
    "without_operations",
]

HTTP_METHODS: Final = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
"""The operation keys of an OpenAPI path item, in the order the specification lists them."""

_NOT_SCHEMA_KEYS: Final = frozenset({"example", "examples", "default", "const", "enum"})
"""Keys whose values are data, not schema: a ``$ref`` member inside them is a value, not a reference."""
_NAME_MAP_KEYS: Final = frozenset({"properties", "patternProperties", "$defs", "definitions"})
"""Keys whose values map names (any name, ``example`` too) to schemas."""


def _is_schema_key(key: Any) -> bool:
    return key not in _NOT_SCHEMA_KEYS and not (isinstance(key, str) and key.startswith("x-"))


@dataclass(frozen=True)
class DocumentOperation:
    """One operation of the document: where it is, its ``operationId`` (if any) and its object."""

    method: str  # upper case
    path: str
    operation_id: str | None
    operation: Mapping[str, Any]
    path_item: Mapping[str, Any]

    @property
    def place(self) -> str:
        """``METHOD /path`` (the path quoted as JSON when it holds anything unusual)."""
        return place(self.method, self.path)

    @property
    def name(self) -> str:
        """How the connector names the operation: its ``operationId``, else ``METHOD /path``."""
        return self.operation_id if self.operation_id is not None else f"{self.method} {self.path}"


def place(method: str, path: str) -> str:
    """An operation's place for a message: ``METHOD /path`` (the path JSON-quoted when unusual)."""
    return f"{method.upper()} {_shown(path)}"


def _shown(text: str, limit: int = 200) -> str:
    plain = text.isprintable() and '"' not in text and len(text) <= limit
    return text if plain else json.dumps(text[:limit])


def document_operations(document: Mapping[str, Any]) -> Iterator[DocumentOperation]:
    """Every operation of ``document``'s ``paths``, in document order."""
    paths = document.get("paths")
    if not isinstance(paths, Mapping):
        return
    for path, item in paths.items():
        if not isinstance(item, Mapping):
            continue
        for method in HTTP_METHODS:
            operation = item.get(method)
            if isinstance(operation, Mapping):
                operation_id = operation.get("operationId")
                yield DocumentOperation(
                    method=method.upper(),
                    path=str(path),
                    operation_id=operation_id if isinstance(operation_id, str) else None,
                    operation=operation,
                    path_item=item,
                )


def duplicate_operation_ids(document: Mapping[str, Any]) -> dict[str, list[str]]:
    """``operationId -> [place, place, ...]`` for every ID used by more than one operation."""
    places: dict[str, list[str]] = {}
    for operation in document_operations(document):
        if operation.operation_id is not None:
            places.setdefault(operation.operation_id, []).append(operation.place)
    return {operation_id: where for operation_id, where in places.items() if len(where) > 1}


def _pointer_target(document: Mapping[str, Any], reference: str) -> tuple[bool, Any]:
    """``(found, value)`` for a local reference ``#/a/b`` (RFC 6901 pointer, URI-fragment escaped)."""
    if reference == "#":
        return True, document
    if not reference.startswith("#/"):
        return False, None
    value: Any = document
    for raw in reference[2:].split("/"):
        token = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(value, Mapping) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return False, None
    return True, value


class _ReferenceChecker:
    """Follows the references reachable from one operation; each target is checked once per document."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._document = document
        self._verdicts: dict[str, str | None] = {}  # reference -> None (resolves, transitively) or why not

    def first_problem(self, value: Any) -> str | None:
        """Why the first unresolvable reference reachable from ``value`` fails, ``None`` when all resolve."""
        stack: list[tuple[Any, bool]] = [(value, False)]  # (value, is a map of names to schemas)
        while stack:
            current, names = stack.pop()
            if isinstance(current, Mapping):
                reference = None if names else current.get("$ref")
                if isinstance(reference, str):
                    problem = self._reference(reference)
                    if problem is not None:
                        return problem
                for key, member in current.items():
                    if isinstance(member, Mapping | list) and (names or _is_schema_key(key)):
                        stack.append((member, not names and key in _NAME_MAP_KEYS))
            elif isinstance(current, list):
                stack.extend((member, False) for member in current if isinstance(member, Mapping | list))
        return None

    def _reference(self, reference: str) -> str | None:
        if reference in self._verdicts:
            return self._verdicts[reference]
        self._verdicts[reference] = None  # a cycle back to this reference is not a problem of its own
        found, target = _pointer_target(self._document, reference)
        if not reference.startswith("#"):
            verdict: str | None = (
                f"$ref {_shown(reference)} points outside the document (only local references resolve)"
            )
        elif not found:
            verdict = f"$ref {_shown(reference)} resolves to nothing in the document"
        else:
            verdict = self.first_problem(target)
        self._verdicts[reference] = verdict
        return verdict


def unresolvable_references(document: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """``(METHOD, path) -> reason`` for every operation whose parameters, request body or responses
    reach a ``$ref`` that does not resolve inside ``document`` (followed through what it points to)."""
    checker = _ReferenceChecker(document)
    problems: dict[tuple[str, str], str] = {}
    for operation in document_operations(document):
        reached = [
            operation.path_item.get("parameters"),
            operation.operation.get("parameters"),
            operation.operation.get("requestBody"),
            operation.operation.get("responses"),
        ]
        problem = checker.first_problem(reached)
        if problem is not None:
            problems[(operation.method, operation.path)] = problem
    return problems


def without_operations(document: dict[str, Any], removed: set[tuple[str, str]]) -> dict[str, Any]:
    """``document`` without the ``(METHOD, path)`` operations in ``removed`` (a shallow copy: the
    document itself and its unchanged path items are shared, never modified)."""
    if not removed:
        return document
    paths = dict(document["paths"])
    for method, path in removed:
        item = dict(paths[path])
        del item[method.lower()]
        paths[path] = item
    return {**document, "paths": paths}
