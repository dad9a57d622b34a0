"""The serving assembly's error family: why ``serve`` cannot build or bind the server it was asked for.

:class:`ServingError` names the option, file or document that cannot be served and what is wrong with it
(``usage``), or the address that cannot be bound and the system's reason (``cannot_bind``). The command
line decides the exit code and prints the message (``cli/exit_codes.py``); nothing here knows about
either.
"""

from __future__ import annotations

from typing import Literal

from agent_connector_sdk.errors import AgentConnectorError

__all__ = ["ServingCategory", "ServingError"]

ServingCategory = Literal["usage", "cannot_bind"]


class ServingError(AgentConnectorError):
    """The server cannot be built or bound as asked: ``usage`` (an option, a file or the document) or
    ``cannot_bind`` (the address is taken, not this machine's, or not permitted)."""

    category: ServingCategory

    def __init__(self, message: str, *, category: ServingCategory = "usage") -> None:
        super().__init__(category, message)
