"""What ``serve`` composes from the applications floor — the contract lab and the ``--auth-config``
reader — handed to the serving assembly (:class:`~agent_connector_sdk.serving.assembly.ServedParts`),
which sits below them and so cannot import them itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_connector_sdk.connectors import OpenAPISource
from agent_connector_sdk.serving import ServingError
from agent_connector_sdk.serving.assembly import BuiltLab, ServedParts

if TYPE_CHECKING:
    from agent_connector_sdk.serving.openapi_app import ToolAuth  # a type only (see serving.assembly)

__all__ = ["served_parts"]


def served_parts(load_document: Callable[[str], OpenAPISource]) -> ServedParts:
    """The lab and the auth reader, each loaded only when ``serve`` uses it (the gateway package loads
    FastMCP's client: ~0.3 s of a start-up that only ``--auth-config`` needs)."""
    return ServedParts(load_document=load_document, build_lab=_build_lab, load_auth=_load_auth)


def _build_lab(**options: Any) -> BuiltLab:
    """The contract lab's app (``lab_service_app``'s keyword options), its tokens and pinned tools."""
    from agent_connector_sdk.demo.lab_service import (
        ANALYST_TOKEN,
        OPERATOR_TOKEN,
        PINNED_TOOLS,
        lab_service_app,
    )

    return BuiltLab(lab_service_app(**options), (ANALYST_TOKEN, OPERATOR_TOKEN), frozenset(PINNED_TOOLS))


def _load_auth(path: Path) -> ToolAuth:
    """``serve --auth-config``: the file's ``[auth]`` table (one line on a bad file)."""
    from agent_connector_sdk.gateway import GatewayError, load_auth_file

    try:
        return load_auth_file(path)
    except GatewayError as error:
        raise ServingError(f"--auth-config: {error.message}") from None
