"""Invoke: write confirmation — a tool that may write runs only after the host says yes (pure).

The schema disclosure contract keeps write confirmation mandatory after reconstruction: a verified
schema tells a host *how* to call a tool, never *that* it may. MCP tool annotations are hints
(``readOnlyHint`` defaults to false, ``destructiveHint`` to true), so the safe reading is:

* a tool runs without confirmation only when its annotations say ``readOnlyHint: true`` **and** do not
  say ``destructiveHint: true`` (a descriptor claiming both is contradictory; we believe the worse);
* missing or malformed annotations mean "may write".

The host supplies the decision (a callback, possibly async, in the I/O layer). What the callback is
shown is a :class:`ConfirmationRequest`: the tool's identity, its hints and a **value-free** summary of
the arguments — names and JSON types only — because confirmation prompts end up in logs and UIs and
argument values may be secrets. This module decides and describes; it never asks anyone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from agent_connector_sdk.mcp.contracts.errors import ContractError

__all__ = [
    "ArgumentShape",
    "ConfirmationRefused",
    "ConfirmationRequest",
    "WriteHints",
    "confirmation_request",
    "refuse_unconfirmed",
    "requires_confirmation",
]

ConfirmationCategory = Literal["confirmation_required", "confirmation_declined"]


class ConfirmationRefused(ContractError):
    """Invoke: a tool that may write was not confirmed, so it was not called.

    Categories: ``confirmation_required`` (the host gave no confirmation callback) and
    ``confirmation_declined`` (the callback said no). ``tool`` names the tool; no argument value is
    ever part of the message.
    """

    gate = "invoke"
    categories: ClassVar[tuple[ConfirmationCategory, ...]] = (
        "confirmation_required",
        "confirmation_declined",
    )

    def __init__(self, category: ConfirmationCategory, message: str, *, tool: str) -> None:
        super().__init__(category, message)
        self.tool = tool


@dataclass(frozen=True, slots=True)
class WriteHints:
    """The two annotations that decide confirmation, as the descriptor states them (``None``: absent)."""

    read_only: bool | None
    destructive: bool | None

    @classmethod
    def of(cls, annotations: object) -> WriteHints:
        """Read the hints from a descriptor's ``annotations`` (a dict, or anything else: absent).

        Only a real JSON boolean counts; ``"true"`` or ``1`` is as good as absent, so a malformed
        annotation can never turn a writing tool into a read-only one.
        """
        if not isinstance(annotations, Mapping):
            return cls(None, None)
        read_only = annotations.get("readOnlyHint")
        destructive = annotations.get("destructiveHint")
        return cls(
            read_only if isinstance(read_only, bool) else None,
            destructive if isinstance(destructive, bool) else None,
        )


def requires_confirmation(annotations: object) -> bool:
    """Whether a tool with these ``annotations`` may only run after confirmation.

    False only for ``readOnlyHint: true`` without ``destructiveHint: true``; true for everything else,
    absent or malformed annotations included.
    """
    hints = WriteHints.of(annotations)
    return not (hints.read_only is True and hints.destructive is not True)


def _json_type(value: Any) -> str:
    # bool before int: in Python a bool is an int, in JSON it is not.
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return "unknown"


@dataclass(frozen=True, slots=True)
class ArgumentShape:
    """One supplied argument, without its value: its name and JSON type."""

    name: str
    json_type: str


@dataclass(frozen=True, slots=True)
class ConfirmationRequest:
    """What a host's confirmation callback is shown. Contains no argument values by construction."""

    tool: str
    title: str | None
    hints: WriteHints
    arguments: tuple[ArgumentShape, ...]

    def summary(self) -> str:
        """One line for a prompt or a log: tool, hints and argument names with types."""
        shown = ", ".join(f"{shape.name}: {shape.json_type}" for shape in self.arguments) or "no arguments"
        return (
            f"{self.tool} (readOnlyHint={self.hints.read_only}, destructiveHint={self.hints.destructive})"
            f" with {shown}"
        )


def confirmation_request(descriptor: Mapping[str, Any], arguments: Mapping[str, Any]) -> ConfirmationRequest:
    """The value-free :class:`ConfirmationRequest` for calling ``descriptor`` with ``arguments``."""
    title = descriptor.get("title")
    return ConfirmationRequest(
        tool=str(descriptor.get("name", "")),
        title=title if isinstance(title, str) else None,
        hints=WriteHints.of(descriptor.get("annotations")),
        arguments=tuple(
            ArgumentShape(str(name), _json_type(value)) for name, value in sorted(arguments.items())
        ),
    )


def refuse_unconfirmed(request: ConfirmationRequest, decision: bool | None) -> None:
    """Raise :class:`ConfirmationRefused` unless ``decision`` is exactly ``True``.

    ``decision`` is the callback's answer, or ``None`` when the host supplied no callback. Anything but
    ``True`` (``False``, ``None``, a truthy non-bool) refuses: the check fails closed.
    """
    if decision is True:
        return
    if decision is None:
        raise ConfirmationRefused(
            "confirmation_required",
            f"tool {request.tool!r} may write (annotations do not say readOnlyHint: true) and the host "
            "supplied no confirmation callback",
            tool=request.tool,
        )
    raise ConfirmationRefused(
        "confirmation_declined", f"the host declined to confirm calling {request.tool!r}", tool=request.tool
    )
