"""The schema disclosure error: one class, a stable ``category`` per failure kind."""

from __future__ import annotations

from typing import ClassVar, Final, Literal, get_args

from agent_connector_sdk.errors import AgentConnectorError

__all__ = ["SchemaDisclosureCategory", "SchemaDisclosureError"]

SchemaDisclosureCategory = Literal[
    "stale",
    "mixed_operation",
    "malformed_index",
    "incomplete",
    "reordered",
    "corrupt",
    "inconsistent_identity",
    "too_large",
    "invalid_schema",
]
_CATEGORIES: Final = frozenset(get_args(SchemaDisclosureCategory))


class SchemaDisclosureError(AgentConnectorError, ValueError):
    """A disclosure could not be built, served or reconstructed (still a ``ValueError``, as documented).

    ``category`` is stable and machine-readable:

    * ``stale`` — a fragment's identity differs from the *selected* manifest of the same operation
      (another schema or source digest): the consumer holds outdated knowledge.
    * ``mixed_operation`` — a fragment belongs to another operation or alias.
    * ``malformed_index`` — a fragment index text is not canonical ASCII decimal or is out of range.
    * ``incomplete`` — an index is missing or duplicated.
    * ``reordered`` — every index is present once, but not in order.
    * ``corrupt`` — bytes do not match their digests, length or canonical form.
    * ``inconsistent_identity`` — a manifest or fragment contradicts itself (e.g. URIs not derived from
      its alias and digest) or is not a well-formed identity at all.
    * ``too_large`` — over a bound (16 MiB document, 4,096-byte fragment, 32 KiB envelope).
    * ``invalid_schema`` — the input is not disclosable JSON (non-object input schema, non-JSON value,
      lone surrogate, non-finite number, invalid alias or operation).

    Messages name fields and bounds, never schema content. ``gate`` is ``None``: building runs on the
    server before any call, reconstruction inside the host's Discover (the consumer re-raises it as
    its own ``verify`` step).
    """

    step: ClassVar[str | None] = "disclosure"
    category: SchemaDisclosureCategory

    def __init__(self, category: SchemaDisclosureCategory, message: str) -> None:
        if category not in _CATEGORIES:  # a programming error, never user input
            raise AssertionError(f"unknown schema disclosure category {category!r}")
        super().__init__(category, message, text=f"{category}: {message}")
