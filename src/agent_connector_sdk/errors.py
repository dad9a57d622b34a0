"""The one error root of agent-connector-sdk: every refusal the SDK raises is an :class:`AgentConnectorError`.

A host routes any failure of ours with three attributes and no message parsing:

* ``category`` — *what* went wrong: a stable, machine-readable string. Each family declares its
  categories as a ``Literal`` (``AdmissionCategory``, ``SchemaDisclosureCategory``, ...); the README
  has the one table of them all.
* ``gate`` — *which* of the five gates owns the failure (``discover``, ``admit``, ``invoke``,
  ``execute``, ``consume``), or ``None`` for failures outside a tool call's pipeline (building or
  registering a disclosure on the server).
* ``step`` — the finer step inside the gate where the family has one (the disclosure consumer's
  ``read``/``verify``/``bind``, ...); it equals ``gate`` otherwise.

Messages and attributes never carry argument or header *values* (they name fields, paths, header names
and bounds), because these errors end up in logs and audit trails.

Families keep their historical extra bases so existing ``except`` clauses keep working:
``SchemaDisclosureError`` and ``SchemaResourceRegistrationError`` are ``ValueError`` s, as documented.
"""

from __future__ import annotations

from typing import ClassVar, Literal

__all__ = ["AgentConnectorError", "Gate"]

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
