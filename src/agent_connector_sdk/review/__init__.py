"""The contract reviewer's report: its model, and building it — beside ``cli/``, which only parses
arguments and renders.

- :mod:`~agent_connector_sdk.review.report`: the report model (the one wire shape ``review --json``
  prints; the JSON Schema is generated from it).
- :mod:`~agent_connector_sdk.review.build`: building the report from what the host core decided
  (pure).
- :mod:`~agent_connector_sdk.review.live`: the I/O-driving part — a review of a running server over
  one host session (HTTP or stdio); :mod:`~agent_connector_sdk.review.enumeration` (every tool behind
  a capped search), :mod:`~agent_connector_sdk.review.stdio_server` (a stdio server's environment and
  the stderr line worth quoting) and :mod:`~agent_connector_sdk.review.unreachable` (why a server
  could not be reviewed, in one sentence) serve it; :mod:`~agent_connector_sdk.review.demo` runs the
  contract lab for ``review --demo``.
- :mod:`~agent_connector_sdk.review.offline`: the review of descriptor files, and the failure tests
  it can emit.
- :mod:`~agent_connector_sdk.review.lock`, :mod:`~agent_connector_sdk.review.sarif`,
  :mod:`~agent_connector_sdk.review.pins`: shaping the report into its contract outputs (lock
  comparison and approvals, SARIF 2.1.0, source pins) — pure; the CLI writes the files.
- :mod:`~agent_connector_sdk.review.config_review` (the reviews, at once) and
  :mod:`~agent_connector_sdk.review.config_report` (one report, pure), over the servers of
  :mod:`~agent_connector_sdk.review.configured`: every server of an MCP client's configuration.
- :mod:`~agent_connector_sdk.review.wording`: ``count`` and ``short_json``, shared with the renderer.
- :mod:`~agent_connector_sdk.review.options`: ``review``'s one option type (``ReviewOptions``), built
  once from the command line and passed down as it is to the host.
- :mod:`~agent_connector_sdk.review.errors`: the reviewer's error family (:class:`ReviewError`,
  :class:`ServerUnavailable`), exported here; the command line maps it to an exit code.

Nothing here imports from ``agent_connector_sdk.cli`` (``tests/cli/test_command_bounds.py`` holds the
package to that). Importing this package loads only its error family: the commands import the module
they use.
"""

from agent_connector_sdk.review.errors import (
    ReviewCategory,
    ReviewError,
    ServerUnavailable,
    UnavailableReason,
)

__all__ = ["ReviewCategory", "ReviewError", "ServerUnavailable", "UnavailableReason"]
