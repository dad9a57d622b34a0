"""The contract gateway: many child MCP servers behind one gated, disclosed catalog.

:class:`Gateway` (the Python API), :class:`GatewayConfig` / :class:`ChildSpec` (what it is told),
:class:`GatewayError` (its refusals). ``agent-connector gateway`` is the CLI over it. See
``docs/gateway.md``. The door also exports what the command line and ``serve`` use: the config's
credential check (:func:`check_credentials`), the shared verified-disclosure tier
(:func:`shared_disclosures`), ``--check``'s evidence (:func:`collect_evidence`, :func:`check_report`)
and the bearer-token settings (:class:`AuthSettings`, :func:`load_auth_file`), and the table of the JSON-RPC
codes its refusals carry (:data:`REFUSAL_CODES`).

The names resolve lazily (PEP 562): reading a config or an auth file must not load the gateway's
server stack (``fastmcp``).
"""

from __future__ import annotations

import importlib

# Not ``typing.TYPE_CHECKING`` (see the package's front door): the same names, eagerly, for type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_connector_sdk.gateway._app import (
        CONTRACT_BINDING_META_KEY,
        SCHEMA_DIGEST_META_KEY,
        Gateway,
        GatewayTool,
    )
    from agent_connector_sdk.gateway._auth import (
        AuthSettings,
        load_auth_file,
    )
    from agent_connector_sdk.gateway._config import (
        ChildSpec,
        GatewayConfig,
        check_credentials,
        load_config,
        parse_child,
    )
    from agent_connector_sdk.gateway._errors import (
        REFUSAL_CODES,
        GatewayError,
    )
    from agent_connector_sdk.gateway._evidence import (
        check_report,
        collect_evidence,
    )
    from agent_connector_sdk.gateway._shared_verified import (
        shared_disclosures,
    )

# name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "AuthSettings": "agent_connector_sdk.gateway._auth",
    "CONTRACT_BINDING_META_KEY": "agent_connector_sdk.gateway._app",
    "ChildSpec": "agent_connector_sdk.gateway._config",
    "Gateway": "agent_connector_sdk.gateway._app",
    "GatewayConfig": "agent_connector_sdk.gateway._config",
    "GatewayError": "agent_connector_sdk.gateway._errors",
    "GatewayTool": "agent_connector_sdk.gateway._app",
    "REFUSAL_CODES": "agent_connector_sdk.gateway._errors",
    "SCHEMA_DIGEST_META_KEY": "agent_connector_sdk.gateway._app",
    "check_credentials": "agent_connector_sdk.gateway._config",
    "check_report": "agent_connector_sdk.gateway._evidence",
    "collect_evidence": "agent_connector_sdk.gateway._evidence",
    "load_auth_file": "agent_connector_sdk.gateway._auth",
    "load_config": "agent_connector_sdk.gateway._config",
    "parse_child": "agent_connector_sdk.gateway._config",
    "shared_disclosures": "agent_connector_sdk.gateway._shared_verified",
}

__all__ = [
    "CONTRACT_BINDING_META_KEY",
    "REFUSAL_CODES",
    "SCHEMA_DIGEST_META_KEY",
    "AuthSettings",
    "ChildSpec",
    "Gateway",
    "GatewayConfig",
    "GatewayError",
    "GatewayTool",
    "check_credentials",
    "check_report",
    "collect_evidence",
    "load_auth_file",
    "load_config",
    "parse_child",
    "shared_disclosures",
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
