"""Option types that several commands share (cyclopts reads the help from the annotation).

One declaration per option, so the same ``--port`` says the same thing under ``serve`` and
``gateway``; a command's default stays at its own parameter (``--namespace`` is ``default`` for
``state`` and ``gateway`` for the gateway).
"""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

__all__ = ["ConfigServers", "Host", "Namespace", "Port", "ReplicaId"]

Host = Annotated[str, Parameter(help="address to bind")]
Port = Annotated[int, Parameter(help="port to bind (0: any free port; the real one is printed)")]
ReplicaId = Annotated[
    str | None, Parameter(help="name this replica (sent as the Agent-Connector-Replica header)")
]
Namespace = Annotated[str, Parameter(help="the catalog namespace the replicas share")]
ConfigServers = Annotated[
    list[str] | None,
    Parameter(help="with --mcp-config: only this server of the file (repeatable)", negative=()),
]
