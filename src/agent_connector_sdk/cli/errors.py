"""The CLI's error family: one clear line for every way a command cannot do its job (exit code 2),
never a traceback.

:class:`CliError` is what commands raise for bad input; :class:`ServerUnavailable` says a server could
not be reviewed at all, in the one sentence
:func:`~agent_connector_sdk.review.unreachable.explain_unreachable` makes of the host's error. Files an
operator names are read and written by :mod:`agent_connector_sdk.cli.operator_files`.
"""

from __future__ import annotations

from typing import Final, Literal

from agent_connector_sdk.core.host import PeerKind
from agent_connector_sdk.errors import AgentConnectorError

__all__ = ["CliCategory", "CliError", "ServerUnavailable", "UnavailableReason"]

EXIT_USAGE: Final = 2

CliCategory = Literal["usage", "server_unavailable"]

UnavailableReason = Literal[
    "refused", "unresolvable", "unreachable", "program_not_found", "not_executable", PeerKind
]
"""Why a server could not be reviewed, when the reviewer can name it: nothing listens at the address
(``refused``), its host name does not resolve (``unresolvable``), no route to it (``unreachable``), the
stdio program is missing (``program_not_found``) or cannot be run (``not_executable``), or what
answered is not an MCP server (a :data:`~agent_connector_sdk.core.host._peer.PeerKind`: ``html_page``,
``not_http``, ``plain_http``, ``non_json_output``)."""


class CliError(AgentConnectorError):
    """Bad input or an unusable environment: printed as ``agent-connector: <message>``, exit 2.

    Category ``usage`` (the command line or a file it names cannot be used) unless a subclass says
    otherwise.
    """

    category: CliCategory
    exit_code: int = EXIT_USAGE

    def __init__(self, message: str, *, category: CliCategory = "usage") -> None:
        super().__init__(category, message)


class ServerUnavailable(CliError):
    """The server could not be reviewed at all (one sentence saying why); ``server_unavailable``.

    ``reason`` names why when the reviewer could tell (:data:`UnavailableReason`), else ``None``."""

    def __init__(self, message: str, *, reason: UnavailableReason | None = None) -> None:
        super().__init__(message, category="server_unavailable")
        self.reason: UnavailableReason | None = reason
