"""One server as an MCP client's configuration names it: what a review connects to (light: no I/O).

The CLI reads these from an ``mcpServers`` file (:mod:`agent_connector_sdk.cli.mcp_config`); the
configuration review (:mod:`agent_connector_sdk.review.config_report`) reviews each.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["ConfiguredServer"]


@dataclass(frozen=True, slots=True)
class ConfiguredServer:
    """One entry of the file: ready to connect (``error is None``), or why it cannot be (one line,
    naming a variable or a field, never a value).

    ``shown`` is the address as the file writes it (references unexpanded): the report's target and
    the lock's server key. ``command``/``url``/``env``/``headers`` hold the expanded values, used only
    to connect."""

    name: str
    kind: Literal["stdio", "http"]
    shown: str
    command: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    token: str | None = None
    error: str | None = None
