"""The MCP adapters: thin translations between the pure layer (:mod:`agent_connector_sdk.core`, where
``schema_disclosure`` and ``contracts`` live) and the ``mcp``/``fastmcp`` SDKs.

* :mod:`.host` — the host side (one :class:`~agent_connector_sdk.mcp.host.HostSession` per connection);
* :mod:`.server` — the server side (the gates on a FastMCP server);
* :mod:`.schema_disclosure_provider` and :mod:`.schema_disclosure` — the published disclosure paths;
* :mod:`.compat` — the one seam of private ``mcp``/``fastmcp`` access, with version checks.

This door itself exports the preflight (what answers at an address or a program path, before a host
session is opened), lazily: importing any adapter runs this file first.
"""

from __future__ import annotations

import importlib

# Not ``typing.TYPE_CHECKING`` (see the package's front door): the same names, eagerly, for type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_connector_sdk.mcp._preflight import (
        HEAD_BYTES,
        HttpProbe,
        ProgramCheck,
        check_program,
        check_url,
        html_title,
        probe_http,
    )

# name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "HEAD_BYTES": "agent_connector_sdk.mcp._preflight",
    "HttpProbe": "agent_connector_sdk.mcp._preflight",
    "ProgramCheck": "agent_connector_sdk.mcp._preflight",
    "check_program": "agent_connector_sdk.mcp._preflight",
    "check_url": "agent_connector_sdk.mcp._preflight",
    "html_title": "agent_connector_sdk.mcp._preflight",
    "probe_http": "agent_connector_sdk.mcp._preflight",
}

__all__ = [
    "HEAD_BYTES",
    "HttpProbe",
    "ProgramCheck",
    "check_program",
    "check_url",
    "html_title",
    "probe_http",
]


def __getattr__(name: str) -> object:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value  # resolve once; later lookups are plain module attributes
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
