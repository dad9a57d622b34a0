"""The error tree drawn in ``agent_connector_sdk.errors``'s docstring names every family the SDK has."""

from __future__ import annotations

import importlib
import pkgutil

import agent_connector_sdk
from agent_connector_sdk import errors
from agent_connector_sdk.errors import AgentConnectorError


def _all_subclasses(cls: type[BaseException]) -> set[type[BaseException]]:
    found: set[type[BaseException]] = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_all_subclasses(sub)}
    return found


def test_every_error_class_is_drawn_in_the_root_docstring() -> None:
    for module in pkgutil.walk_packages(agent_connector_sdk.__path__, "agent_connector_sdk."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    doc = errors.__doc__ or ""
    missing = sorted(
        cls.__name__
        for cls in _all_subclasses(AgentConnectorError)
        if cls.__module__.startswith("agent_connector_sdk") and cls.__name__ not in doc
    )
    assert missing == []
