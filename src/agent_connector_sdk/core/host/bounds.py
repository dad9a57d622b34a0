"""The host's bounds (:class:`~agent_connector_sdk.mcp.host.HostBounds`) as checks, and the one refusal they
raise.

A server that never stops sending must not be able to hold a host forever or fill its memory. Each
check here is pure (the deadline, a cancel scope, is :mod:`~agent_connector_sdk.mcp.host._deadline`'s); the
byte cap that holds while reading lives with the transport (:mod:`~agent_connector_sdk.mcp.host._wire`). A
bound that is hit raises :class:`BoundExceeded`, which names the bound (the
:class:`~agent_connector_sdk.mcp.host.HostBounds` field) and its limit: the refusal is the host's own, never
reported as the server's error, and never a silently truncated result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from agent_connector_sdk.core.contracts import AdmissionPolicy, json_bound_crossed
from agent_connector_sdk.core.host._options import HostBounds
from agent_connector_sdk.errors import AgentConnectorError

__all__ = [
    "BoundCategory",
    "BoundExceeded",
    "bounded_policy",
    "check_list_items",
    "check_listing_size",
    "check_navigation_entries",
    "check_result_size",
]

BoundCategory = Literal["bound_exceeded"]


class BoundExceeded(AgentConnectorError):
    """This host refused to take more from a server than a :class:`~agent_connector_sdk.mcp.host.HostBounds`
    allows.

    ``bound`` is the field's name (``deadline_s``, ``max_tools``, ``max_message_bytes``, ...) and
    ``limit`` its value; the message names both. Category ``bound_exceeded``; step ``bounds``.
    """

    step: ClassVar[str | None] = "bounds"
    category: BoundCategory

    def __init__(self, bound: str, limit: float, what: str) -> None:
        shown = f"{limit:g} s" if bound == "deadline_s" else f"{limit:,}"
        super().__init__("bound_exceeded", f"{what}: over this host's {bound} ({shown})")
        self.bound = bound
        self.limit = limit


def bounded_policy(policy: AdmissionPolicy, bounds: HostBounds) -> AdmissionPolicy:
    """``policy`` with the descriptor and header bounds of ``bounds`` applied (the stricter wins)."""
    return dataclasses.replace(
        policy,
        max_descriptor_bytes=min(
            policy.max_descriptor_bytes, bounds.max_descriptor_bytes, bounds.max_schema_bytes
        ),
        max_schema_depth=min(policy.max_schema_depth, bounds.max_schema_depth),
        max_header_name_length=min(policy.max_header_name_length, bounds.max_header_name_length),
        max_mirrored_headers=min(policy.max_mirrored_headers, bounds.max_mirrored_headers),
    )


def check_listing_size(count: int, bounds: HostBounds) -> None:
    """Tools listed so far (all pages together) against ``max_tools``."""
    if count > bounds.max_tools:
        raise BoundExceeded("max_tools", bounds.max_tools, "the tools/list listing has too many tools")


def check_list_items(count: int, bounds: HostBounds, method: str) -> None:
    """Prompts, resources or templates listed so far (all pages together) against ``max_list_items``."""
    if count > bounds.max_list_items:
        raise BoundExceeded(
            "max_list_items", bounds.max_list_items, f"the {method} listing has too many items"
        )


def check_navigation_entries(count: int, bounds: HostBounds) -> None:
    """Entries of one search result against ``max_navigation_entries`` (before any is parsed)."""
    if count > bounds.max_navigation_entries:
        raise BoundExceeded(
            "max_navigation_entries", bounds.max_navigation_entries, "the search returned too many entries"
        )


def check_result_size(raw: Mapping[str, Any], bounds: HostBounds) -> None:
    """One ``tools/call`` result (text, blobs and structuredContent together) against
    ``max_result_bytes``, measured without serializing it."""
    if json_bound_crossed(raw, max_bytes=bounds.max_result_bytes) is not None:
        raise BoundExceeded("max_result_bytes", bounds.max_result_bytes, "the tool result is too large")
