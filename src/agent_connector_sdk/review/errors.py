"""The reviewer's error family: why a review could not be done, for the operator to act on.

:class:`ReviewError` is an option, file or server answer the review cannot use (``usage``: the message
names the option or file and what is wrong with it); :class:`ServerUnavailable` says a server could not
be reviewed at all, in the one sentence :func:`~agent_connector_sdk.review.unreachable.explain_unreachable`
makes of the host's error, with the reason typed when the reviewer can name it. The command line decides
the exit code and prints the message (``cli/exit_codes.py``); nothing here knows about either.
"""

from __future__ import annotations

from typing import Literal

from agent_connector_sdk.core.host import PeerKind
from agent_connector_sdk.errors import AgentConnectorError

__all__ = ["ReviewCategory", "ReviewError", "ServerUnavailable", "UnavailableReason"]

ReviewCategory = Literal["usage", "server_unavailable"]

UnavailableReason = Literal[
    "refused", "unresolvable", "unreachable", "program_not_found", "not_executable", PeerKind
]
"""Why a server could not be reviewed, when the reviewer can name it: nothing listens at the address
(``refused``), its host name does not resolve (``unresolvable``), no route to it (``unreachable``), the
stdio program is missing (``program_not_found``) or cannot be run (``not_executable``), or what
answered is not an MCP server (a :data:`~agent_connector_sdk.core.host._peer.PeerKind`: ``html_page``,
``not_http``, ``plain_http``, ``non_json_output``)."""


class ReviewError(AgentConnectorError):
    """The review cannot use what it was given (an option, a file, a lock): category ``usage``, the
    message names the option or file and what is wrong, never a value it was given in secret."""

    category: ReviewCategory

    def __init__(self, message: str, *, category: ReviewCategory = "usage") -> None:
        super().__init__(category, message)


class ServerUnavailable(ReviewError):
    """The server could not be reviewed at all (one sentence saying why); ``server_unavailable``.

    ``reason`` names why when the reviewer could tell (:data:`UnavailableReason`), else ``None``."""

    def __init__(self, message: str, *, reason: UnavailableReason | None = None) -> None:
        super().__init__(message, category="server_unavailable")
        self.reason: UnavailableReason | None = reason
