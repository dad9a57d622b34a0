"""``review``'s one option type: :class:`ReviewOptions`, built once from the command line
(:func:`agent_connector_sdk.cli.review_options.review_options`, where every argument and file error is
refused) and passed down as it is — to the preflight, the live, demo, offline or configuration review,
the host session, and the outputs written after it. Nothing on the way copies it into another type; a
step that needs a variant (the demo's token, one server of a configuration, the progress bar) makes it
with :func:`dataclasses.replace`.

A light module (no host, report or server stack): the command line builds it before those load.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from agent_connector_sdk.core.contracts import Profile, SourcePins

__all__ = ["ProgressHook", "ReviewOptions", "ServerAddress"]

ProgressHook = Callable[[str, int], None]
"""``(event, amount)``: ``("total", n)`` once when the number of disclosures is known, then
``("advance", 1)`` per disclosure read."""


@dataclass(frozen=True)
class ServerAddress:
    """The one server named on the command line: its transport and its address (a URL, or the stdio
    command as one shell-quoted line)."""

    kind: Literal["http", "stdio"]
    address: str


@dataclass(frozen=True)
class ReviewOptions:
    """How to review, what, and what to write: ``review``'s options from parsing to the host.

    ``profile``: ``default`` (spec MUST rules reject, project rules are findings) or ``strict``
    (``review --strict``: project rules reject too)."""

    # How the host reviews a server.
    profile: Profile = "default"
    timeout: float = 30.0
    headers: Mapping[str, str] = field(default_factory=dict)
    token: str | None = None
    search_patterns: Sequence[str] = (".*",)
    call: str | None = None
    arguments: Mapping[str, Any] | None = None
    progress: ProgressHook | None = None
    source_pins: SourcePins | None = None
    deadline: float | None = 300.0
    """Seconds for the whole review (connect, every page, search, disclosures, the call)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables added to a stdio server's environment (the SDK passes only a small safe set)."""
    cwd: str | None = None
    """A stdio server's working directory (default: this process's)."""
    command: tuple[str, ...] | None = None
    """The stdio command to run when the target's address only shows it (``--mcp-config``: the
    entry as written, its ``${VAR}`` references unexpanded); default: the address, split."""
    url: str | None = None
    """The URL to connect to when the target's address only shows it (as for ``command``)."""

    # What is reviewed: exactly one of these (the command line refuses anything else).
    server: ServerAddress | None = None
    descriptor_files: tuple[Path, ...] = ()
    demo: bool = False
    mcp_config: Path | None = None
    servers: tuple[str, ...] = ()
    """``--server``: the servers of ``mcp_config`` to review (empty: all of them)."""
    concurrency: int = 4

    # What is printed and written once the report is built.
    json_output: bool = False
    descriptors: bool = False
    pin: Path | None = None
    emit_tests: Path | None = None
    lock: Any = None
    """The ``--lock`` file, read and parsed when the options were built (a bad file fails fast)."""
    lock_file: Path | None = None
    write_lock: Path | None = None
    sarif: Path | None = None
    approve: tuple[str, ...] = ()
    fail_on_any_drift: bool = False
    allow_compatible: bool = False

    @property
    def strict(self) -> bool:
        """``--strict``: project rules reject, and findings make the exit code 1."""
        return self.profile == "strict"
