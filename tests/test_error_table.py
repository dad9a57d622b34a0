"""The one error table (docs/reference.md) is the code's: every family's categories, exactly, its gate,
and the module it is imported from.

Categories are read from each class's ``category`` annotation (a ``Literal`` or a union of them), so
adding a category to the code without documenting it — or documenting one the code cannot raise —
fails here.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agent_connector_sdk
from agent_connector_sdk.cli.errors import CliError
from agent_connector_sdk.connectors.openapi import InvalidOpenAPIDocument, OpenAPIToolsMissing, UpstreamError
from agent_connector_sdk.core.contracts import PinFileError, SourceNotPinned
from agent_connector_sdk.core.contracts.errors import (
    AdmissionError,
    ArgumentError,
    CompletionError,
    ContractViolation,
    HeaderMismatch,
    HeaderValueError,
    PaginationError,
)
from agent_connector_sdk.core.contracts.lock import LockFileError
from agent_connector_sdk.core.disclosure_navigation import DisclosureReadRefused
from agent_connector_sdk.core.host import (
    ConfirmationRefused,
    InvalidCompletionRequest,
    ProtocolError,
    ToolExecutionError,
)
from agent_connector_sdk.core.host.bounds import BoundExceeded
from agent_connector_sdk.core.schema_disclosure import SchemaDisclosureError
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.gateway import GatewayError
from agent_connector_sdk.mcp.host.disclosure_consumer import (
    DisclosureMismatch,
    DisclosureReadFailed,
    DiscoveryFailed,
    StaleSelection,
)
from agent_connector_sdk.mcp.schema_disclosure_provider import SchemaResourceRegistrationError
from agent_connector_sdk.mcp.search_semantic import SemanticExtraMissing
from agent_connector_sdk.mcp.server import ArgumentsRefused
from agent_connector_sdk.review import ReviewError
from agent_connector_sdk.serving import ServingError
from agent_connector_sdk.state import StateConfigError, StateNotInitialized, StateUnavailable

FAMILIES: dict[str, type[AgentConnectorError]] = {
    cls.__name__: cls
    for cls in (
        SchemaDisclosureError,
        SchemaResourceRegistrationError,
        DisclosureReadRefused,
        OpenAPIToolsMissing,
        InvalidOpenAPIDocument,
        SemanticExtraMissing,
        PaginationError,
        AdmissionError,
        ArgumentError,
        HeaderValueError,
        ConfirmationRefused,
        InvalidCompletionRequest,
        HeaderMismatch,
        CompletionError,
        ToolExecutionError,
        ContractViolation,
        ProtocolError,
        DiscoveryFailed,
        DisclosureReadFailed,
        DisclosureMismatch,
        StaleSelection,
        CliError,
        ReviewError,
        ServingError,
        ArgumentsRefused,
        StateUnavailable,
        StateConfigError,
        SourceNotPinned,
        PinFileError,
        LockFileError,
        StateNotInitialized,
        BoundExceeded,
        UpstreamError,
        GatewayError,
    )
}
REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference.md"
_ROW = re.compile(
    r"^\| `(?P<name>\w+)`[^|]* \| `(?P<module>[\w.]+)` \| (?P<gate>[^|]+) \| (?P<categories>[^|]+) \|$"
)
_EVERY = re.compile(r"every ((?:`\w+`(?:, | and )?)+) categor")


def _literal_values(annotation: Any) -> set[str]:
    if typing.get_origin(annotation) is typing.Literal:
        return {str(value) for value in typing.get_args(annotation)}
    return set().union(*(_literal_values(arg) for arg in typing.get_args(annotation)))


def _code_categories(cls: type[AgentConnectorError]) -> set[str]:
    return _literal_values(typing.get_type_hints(cls)["category"])


def _table() -> dict[str, tuple[str, set[str]]]:
    text = REFERENCE.read_text(encoding="utf-8")
    section = text[text.index("## Errors") :]
    end = section.find("\n## ", 1)
    section = section if end == -1 else section[:end]
    rows: dict[str, tuple[str, set[str]]] = {}
    for line in section.splitlines():
        match = _ROW.match(line)
        if match is None:
            continue
        cell = match["categories"]
        listed = set(re.findall(r"`(\w+)`", _EVERY.sub("", cell)))
        for group in _EVERY.findall(cell):
            for family in re.findall(r"`(\w+)`", group):
                listed |= _code_categories(FAMILIES[family])
        rows[match["name"]] = (match["gate"].strip(), listed)
        _MODULES[match["name"]] = match["module"]
    return rows


_MODULES: dict[str, str] = {}


def test_the_table_lists_every_family() -> None:
    assert set(_table()) == set(FAMILIES)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_each_row_is_the_code(name: str) -> None:
    cls = FAMILIES[name]
    gate_cell, categories = _table()[name]
    assert categories == _code_categories(cls)
    gate = gate_cell.split(" / ")[0].split(" ")[0]
    assert gate == (cls.gate or "—")
    assert issubclass(cls, AgentConnectorError)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_each_row_names_a_module_the_class_imports_from(name: str) -> None:
    _table()
    module = importlib.import_module(_MODULES[name])
    assert getattr(module, name, None) is FAMILIES[name], (
        f"docs/reference.md: {name} is not in {module.__name__}"
    )


# Bases that only group families (each of their concrete subclasses is a row of its own, or below one).
_GROUPING_BASES = {"ContractError", "StateBackendError", "DisclosureConsumerError"}


def test_no_error_family_is_left_out_of_the_table() -> None:
    """Every error class the package defines is a row, below a row, or a grouping base: a new family
    cannot ship without its categories in docs/reference.md."""
    for module in pkgutil.walk_packages(agent_connector_sdk.__path__, "agent_connector_sdk."):
        if not module.name.endswith("__main__"):  # the CLI entry module runs the CLI on import
            importlib.import_module(module.name)

    def subclasses(cls: type[BaseException]) -> Iterator[type[BaseException]]:
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    families = tuple(FAMILIES.values())
    missing = {
        cls.__name__
        for cls in subclasses(AgentConnectorError)
        if cls.__module__.startswith("agent_connector_sdk.")
        and not cls.__name__.startswith("_")
        and cls.__name__ not in _GROUPING_BASES
        and not issubclass(cls, families)
    }
    assert missing == set()
