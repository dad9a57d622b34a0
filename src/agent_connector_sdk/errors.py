"""The one error root of agent-connector-sdk: every refusal the SDK raises is an :class:`AgentConnectorError`.

A host routes any failure of ours with three attributes and no message parsing:

* ``category`` — *what* went wrong: a stable, machine-readable string. Each family declares its
  categories as a ``Literal`` beside its class (``AdmissionCategory`` next to ``AdmissionError``, ...);
  the README has the one table of them all (a test keeps it equal to the code).
* ``gate`` — *which* of the five gates owns the failure (``discover``, ``admit``, ``invoke``,
  ``execute``, ``consume``), or ``None`` for failures outside a tool call's pipeline.
* ``step`` — the finer step inside the gate where the family has one (the disclosure consumer's
  ``read``/``verify``/``bind``, ...); ``where`` is ``step`` or else ``gate``.

One family per failure, raised once where it happens and never re-wrapped: a face (``ContractClient``,
``SchemaDisclosureConsumer``, the CLI reviewer) lets the core's and the exchange's errors through as
they are, so the same failure has the same class on every path. The tree (module in brackets)::

    AgentConnectorError                              errors
    ├── ContractError                                mcp.contracts.errors — our gates refused
    │   ├── PaginationError          discover        cursor chain cannot be followed
    │   ├── SourceNotPinned          discover        mcp.contracts.source_pins
    │   ├── PinFileError             discover        (also ValueError)
    │   ├── AdmissionError           admit           a descriptor or tool is not admitted
    │   ├── LockFileError            admit           mcp.contracts.lock (also ValueError)
    │   ├── ArgumentError            invoke          THE invalid-arguments error of a host
    │   ├── HeaderValueError         invoke          a value cannot become a header (also ValueError)
    │   ├── ConfirmationRefused      invoke          mcp.host.errors: write not confirmed
    │   ├── InvalidCompletionRequest invoke          mcp.host.errors (also ValueError)
    │   ├── HeaderMismatch           execute         server: headers vs body (-32020)
    │   ├── CompletionError          execute         server: completion refused
    │   │   └── CompletionRateLimited
    │   └── ContractViolation        consume         a result breaks its contract (server_text kept)
    ├── ProtocolError                (exchange)      mcp.host.errors — the conversation failed; all
    │   │                                            made by ONE translator (mcp.host.translate)
    │   ├── JsonRpcError                             the peer's error object (code, words, data)
    │   ├── HttpStatusError                          an HTTP error status and the page's own words
    │   ├── UnsupportedVersion                       no protocol revision in common
    │   ├── TransportFailure                         connection lost, timed out, unreachable
    │   ├── MalformedResponse                        this host could not read the answer
    │   └── NotMcpServer                             what answered is not MCP, and what it is (an
    │                                                HTML page, not HTTP, plain HTTP, text on stdout)
    ├── ToolExecutionError           execute         mcp.host.errors: isError, only on request
    ├── BoundExceeded                (bounds)        mcp.host.bounds: a HostBounds cap was hit
    ├── DisclosureConsumerError                      mcp.host.disclosure_consumer — its own steps
    │   ├── DiscoveryFailed          discover        the search answer is unusable
    │   ├── DisclosureReadFailed     discover/read   the provider refused or sent a bad body
    │   ├── DisclosureMismatch       discover/verify the fragments are not the document
    │   └── StaleSelection           invoke/bind     the bound identity no longer holds
    ├── SchemaDisclosureError        (disclosure)    mcp.schema_disclosure (also ValueError)
    ├── DisclosureReadRefused        (disclosure_read) server: the uniform read refusal
    ├── SchemaResourceRegistrationError              server: registering disclosures (ValueError)
    ├── ArgumentsRefused             execute         server: arguments refused, an isError result
    ├── UpstreamError                execute         connectors.openapi: the upstream API failed or
    │                                                answered more than the bound
    ├── GatewayError                                 gateway.errors: config, a child failed or changed
    ├── OpenAPIToolsMissing                          connectors.openapi (also LookupError)
    ├── InvalidOpenAPIDocument                       connectors.openapi (also ValueError)
    ├── SemanticExtraMissing                         mcp.search_semantic: the semantic extra is absent
    ├── StateBackendError            (state)         state: StateUnavailable, StateConfigError,
    │                                                StateNotInitialized
    └── CliError                                     cli.errors: usage, ServerUnavailable

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
