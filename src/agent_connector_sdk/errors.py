"""The one error root of agent-connector-sdk: every refusal the SDK raises is an :class:`AgentConnectorError`.

A host routes any failure of ours with three attributes and no message parsing:

* ``category`` — *what* went wrong: a stable, machine-readable string. Each family declares its
  categories as a ``Literal`` beside its class (``AdmissionCategory`` next to ``AdmissionError``, ...);
  docs/reference.md has the one table of them all (``tests/test_error_table.py``).
* ``gate`` — *which* of the five gates owns the failure (``discover``, ``admit``, ``invoke``,
  ``execute``, ``consume``), or ``None`` for failures outside a tool call's pipeline.
* ``step`` — the finer step inside the gate where the family has one (the disclosure consumer's
  ``read``/``verify``/``bind``, ...); ``where`` is ``step`` or else ``gate``.

One family per failure, raised once where it happens and never re-wrapped: a face (``ContractClient``,
``SchemaDisclosureConsumer``, the CLI reviewer) lets the core's and the exchange's errors through as
they are, so the same failure has the same class on every path.

The tree: each class, where it is raised (its gate, ``gate/step``, or its own step; ``—`` outside a
call's gates) and the module that defines it (``+Base``: a second base class, so a caller may catch it
as that too). ``tests/test_error_tree.py`` reads this drawing against the code: a class added, moved,
re-parented or raised at another gate without its line here fails it::

    AgentConnectorError                  —                errors
    ├── ContractError                    —                core.contracts.errors
    │   ├── PaginationError              discover         core.contracts.errors
    │   ├── SourceNotPinned              discover         core.contracts._source_pins
    │   ├── PinFileError                 discover         core.contracts._source_pins +ValueError
    │   ├── AdmissionError               admit            core.contracts.errors
    │   ├── LockFileError                admit            core.contracts.lock +ValueError
    │   ├── ArgumentError                invoke           core.contracts.errors
    │   ├── HeaderValueError             invoke           core.contracts.errors +ValueError
    │   ├── ConfirmationRefused          invoke           core.host._errors
    │   ├── InvalidCompletionRequest     invoke           core.host._errors +ValueError
    │   ├── HeaderMismatch               execute          core.contracts.errors
    │   ├── CompletionError              execute          core.contracts.errors
    │   │   └── CompletionRateLimited    execute          core.contracts._completion
    │   └── ContractViolation            consume          core.contracts.errors
    ├── ProtocolError                    exchange         core.host._errors
    │   ├── JsonRpcError                 exchange         core.host._errors
    │   ├── HttpStatusError              exchange         core.host._errors
    │   ├── UnsupportedVersion           exchange         core.host._errors
    │   ├── TransportFailure             exchange         core.host._errors
    │   ├── MalformedResponse            exchange         core.host._errors
    │   └── NotMcpServer                 exchange         core.host._errors
    ├── ToolExecutionError               execute          core.host._errors
    ├── BoundExceeded                    bounds           core.host.bounds
    ├── DisclosureConsumerError          —                mcp.host.disclosure_consumer
    │   ├── DiscoveryFailed              discover         mcp.host.disclosure_consumer
    │   ├── DisclosureReadFailed         discover/read    mcp.host.disclosure_consumer
    │   ├── DisclosureMismatch           discover/verify  mcp.host.disclosure_consumer
    │   └── StaleSelection               invoke/bind      mcp.host.disclosure_consumer
    ├── SchemaDisclosureError            disclosure       core.schema_disclosure._errors +ValueError
    ├── DisclosureReadRefused            disclosure_read  core.disclosure_navigation
    ├── SchemaResourceRegistrationError  —                mcp.server._disclosure_provider +ValueError
    ├── ArgumentsRefused                 execute          mcp.server._resolution +ToolError
    ├── UpstreamError                    execute          connectors.openapi +ToolError
    ├── GatewayError                     —                gateway._errors
    ├── OpenAPIToolsMissing              —                connectors.openapi +LookupError
    ├── InvalidOpenAPIDocument           —                connectors.openapi +ValueError
    ├── SemanticExtraMissing             —                mcp.search_semantic +ImportError
    ├── StateBackendError                state            state._base
    │   ├── StateUnavailable             state            state._base
    │   ├── StateConfigError             state            state._base +ValueError
    │   └── StateNotInitialized          state            state._base
    ├── ReviewError                      —                review.errors
    │   └── ServerUnavailable            —                review.errors
    ├── ServingError                     —                serving.errors
    └── CliError                         —                cli.errors

Every ``ProtocolError`` is made by the host's one translator from what the exchange raised; the
server's own refusals (``ArgumentsRefused``, ``UpstreamError``, ``DisclosureReadRefused``) are answered
on the wire, the first two as ``isError`` results. Below the command line each folder raises its own
family (``ReviewError``, ``ServingError``); ``cli.errors`` alone maps families to exit codes.

Project rules that a host reports instead of rejecting are not errors: they are
:class:`~agent_connector_sdk.core.contracts._findings.Finding` values (``ToolResult.findings``,
``AdmittedTool.findings``); the ``strict`` profile raises them as the family above instead.

Messages and attributes never carry argument or header *values* (they name fields, paths, header names
and bounds), because these errors end up in logs and audit trails. The server's own words travel as
separate attributes (``JsonRpcError.message``, ``HttpStatusError.words``, ``ContractViolation.server_text``),
sanitized and capped, never in ``str()``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import ClassVar, Literal

__all__ = ["AgentConnectorError", "Gate", "iter_causes"]

Gate = Literal["discover", "admit", "invoke", "execute", "consume"]
"""The five gates of a tool call (see the README's "Tool contracts")."""


class AgentConnectorError(Exception):
    """Base of every error the SDK raises on purpose.

    ``category`` is stable (subclasses narrow its type to their family's ``Literal``); ``gate`` and
    ``step`` say where it was raised. ``message`` is the value-free explanation; ``str(error)`` is the
    family's rendering of it (some prefix the category).
    """

    gate: ClassVar[Gate | None] = None
    step: ClassVar[str | None] = None

    def __init__(self, category: str, message: str, *, text: str | None = None) -> None:
        super().__init__(message if text is None else text)
        self.category = category
        self.message = message

    @property
    def where(self) -> str | None:
        """``step`` when the family has one, else ``gate``."""
        return self.step if self.step is not None else self.gate

    def __repr__(self) -> str:
        return f"{type(self).__name__}(category={self.category!r}, message={self.message!r})"


def iter_causes(error: BaseException, *, limit: int = 32) -> Iterator[BaseException]:
    """``error`` and what it was raised from or during, nearest first (``__cause__`` before
    ``__context__``, an exception group's members in order), each once, at most ``limit`` of them: a
    foreign library's chain may be long or cyclic, and its messages are read only by class."""
    seen: set[int] = set()
    pending: deque[BaseException] = deque([error])
    while pending and len(seen) < limit:
        current = pending.popleft()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend(linked for linked in (current.__cause__, current.__context__) if linked is not None)
