"""Reading the documents the CLI is given: OpenAPI 3.0/3.1 (JSON or YAML) and tool descriptors.

Every refusal is a :class:`~agent_connector_sdk.cli.errors.CliError` naming the file and what is
wrong with it in words a user of the command understands (never a Python parameter name).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import yaml  # type: ignore[import-untyped]

from agent_connector_sdk.cli.errors import CliError
from agent_connector_sdk.cli.operator_files import unreadable_file
from agent_connector_sdk.connectors import OpenAPISource, load_github_extract

__all__ = [
    "count_operations",
    "load_descriptors",
    "load_openapi",
    "read_structured",
]

_HTTP_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


def read_structured(path: Path) -> tuple[bytes, Any]:
    """The file's exact bytes and its parsed JSON or YAML value (JSON first: it is a YAML subset, but
    JSON's own error messages are clearer for ``.json`` files)."""
    raw, value, _ = _read_structured(path)
    return raw, value


def _read_structured(path: Path) -> tuple[bytes, Any, bool]:
    """:func:`read_structured`, plus whether the value came from the JSON parser (JSON data only)."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise unreadable_file(path, error) from None
    try:
        return raw, json.loads(raw), True
    except RecursionError:
        raise CliError(f"{path}: nested too deeply to read") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as json_error:
        if path.suffix.lower() == ".json":
            raise CliError(
                f"{path}: not valid JSON (line {json_error.lineno}, column {json_error.colno})"
                if isinstance(json_error, json.JSONDecodeError)
                else f"{path}: not UTF-8 text"
            ) from None
    try:
        return raw, _load_yaml_bounded(raw), False
    except yaml.YAMLError as yaml_error:
        mark = getattr(yaml_error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise CliError(f"{path}: neither valid JSON nor valid YAML{where}") from None
    except _AliasBound as refused:
        raise CliError(f"{path}: {refused}") from None
    except RecursionError:
        raise CliError(f"{path}: nested too deeply to read") from None


YAML_EXPANSION_FACTOR: Final = 10
"""YAML aliases may expand a document to at most this many times its own nodes (or
:data:`YAML_EXPANSION_FLOOR` nodes, whichever is more)."""
YAML_EXPANSION_FLOOR: Final = 100_000


class _AliasBound(Exception):
    """A YAML document whose aliases expand past the bound, or refer to a node containing them."""


def _load_yaml_bounded(raw: bytes) -> Any:
    """``yaml.safe_load(raw)``, refusing a document whose aliases expand it past
    ``max(YAML_EXPANSION_FACTOR x its nodes, YAML_EXPANSION_FLOOR)`` nodes, or make it recursive.

    Composing keeps an alias as a second reference to the same node (cheap); what expands it is every
    later step that copies the value (the JSON round trip of :func:`load_openapi`, FastMCP's parser):
    a 539-byte document with 8 levels of 9 aliases each is 43 million nodes. So the composed node graph
    is measured first — its expanded size, each shared node counted once per reference, memoized by
    node so the count costs one visit per distinct node — and refused before anything is constructed.
    """
    loader = yaml.SafeLoader(raw)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_alias_expansion(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _check_alias_expansion(root: yaml.Node) -> None:
    expanded: dict[int, int] = {}  # id(node) -> nodes it stands for, itself included
    visiting: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            visiting.discard(key)
            expanded[key] = 1 + sum(expanded[id(child)] for child in _children(node))
            continue
        if key in expanded:
            continue
        if key in visiting:
            raise _AliasBound("a YAML alias refers to a node that contains it (a recursive document)")
        visiting.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in expanded)
    distinct = len(expanded)
    limit = max(YAML_EXPANSION_FACTOR * distinct, YAML_EXPANSION_FLOOR)
    if expanded[id(root)] > limit:
        raise _AliasBound(
            f"YAML aliases expand the document to more than {limit:,} nodes (it has {distinct:,}); "
            f"refused: aliases may expand a document to at most {YAML_EXPANSION_FACTOR} times its own "
            f"nodes (or {YAML_EXPANSION_FLOOR:,})"
        )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def load_openapi(path: str | None) -> OpenAPISource:
    """The OpenAPI document at ``path`` (JSON or YAML), or the embedded GitHub extract when ``None``."""
    if path is None:
        return load_github_extract()
    file = Path(path)
    raw, document, is_json = _read_structured(file)
    if not isinstance(document, dict):
        raise CliError(f"{file}: not an OpenAPI document (the top level is not an object)")
    version = document.get("openapi")
    if version is None and "swagger" in document:
        raise CliError(f"{file}: Swagger 2.0 is not supported; convert it to OpenAPI 3.0 or 3.1")
    if not isinstance(version, str) or not (version.startswith("3.0") or version.startswith("3.1")):
        raise CliError(f"{file}: not an OpenAPI 3.0/3.1 document (no 'openapi: 3.x' field)")
    paths = document.get("paths", {})
    if not isinstance(paths, dict):
        raise CliError(f"{file}: 'paths' must be an object")
    # FastMCP reads the parsed document as JSON data; the exact bytes stay the disclosure's source
    # identity. YAML may parse to what JSON has not (dates, integer keys such as `200:`): one JSON round
    # trip makes it JSON data. A JSON parse already is (the round trip would cost ~2 s of start-up on
    # GitHub's 73 MB description and leave a second copy's worth of freed heap behind).
    if not is_json:
        document = json.loads(json.dumps(document, default=str))
    return OpenAPISource(raw=raw, document=document)


def count_operations(document: Mapping[str, Any]) -> int:
    paths = document.get("paths")
    if not isinstance(paths, Mapping):
        return 0
    return sum(
        1
        for item in paths.values()
        if isinstance(item, Mapping)
        for method in item
        if isinstance(method, str) and method.lower() in _HTTP_METHODS
    )


def load_descriptors(path: str) -> list[Any]:
    """Tool descriptors from a file: one descriptor, a list of them, a ``tools/list`` result, or a
    ``review --json`` report (its reviewed descriptors)."""
    file = Path(path)
    _, value = read_structured(file)
    if isinstance(value, dict) and "report_version" in value and isinstance(value.get("tools"), list):
        # A `review --json` report: the descriptors it reviewed (listed and disclosed).
        return [t["descriptor"] for t in value["tools"] if isinstance(t, dict) and t.get("descriptor")]
    if isinstance(value, dict) and isinstance(value.get("tools"), list):
        return list(value["tools"])
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [value]
    raise CliError(f"{file}: expected a tool descriptor, a list of them, or a tools/list result")
