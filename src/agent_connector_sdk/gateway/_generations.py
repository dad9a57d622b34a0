"""A child's catalog as the gateway admitted it, and how it moves from one generation to the next (pure).

Each child's admitted catalog carries a **generation**: an integer that moves when, and only when, a
re-list (after ``notifications/tools/list_changed``, a periodic refresh or a reconnect) differs from the
catalog the gateway holds — in any byte of any admitted descriptor, in the admitted set, or in the
rejected set. A tool's identity is the SHA-256 of its descriptor's canonical JSON bytes (sorted keys,
no whitespace, UTF-8): that digest is the ``source_sha256`` of the tool's schema disclosure, so a
disclosure always names the exact descriptor bytes it was derived from, and a changed child tool gets a
new disclosure source at once (and, when its schemas changed, old URIs are refused as stale).

Nothing here touches the network: descriptors in, a frozen catalog and a diff out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from agent_connector_sdk.core.contracts import AdmissionReport
from agent_connector_sdk.core.schema_disclosure import SchemaDisclosureError, canonical_json_bytes
from agent_connector_sdk.core.schema_disclosure.encoding import sha256_hex

__all__ = [
    "MAX_TOOL_NAME",
    "RESERVED_TOOL_NAMES",
    "CatalogDiff",
    "ChildCatalog",
    "ChildTool",
    "Rejected",
    "build_catalog",
    "diff_catalogs",
    "gateway_name",
]

MAX_TOOL_NAME: Final = 128
"""The spec's bound on a tool name, which the namespaced gateway name must also keep."""


RESERVED_TOOL_NAMES: Final = frozenset({"search_tools", "call_tool"})
"""The gateway's own tools (its search transform's search and call tools). A child tool whose gateway
name would be one of them (child ``search``'s tool ``tools``) is rejected (``reserved_name``): it would
be listed with its own disclosure yet every call would reach the gateway's tool instead."""


def gateway_name(child: str, tool: str) -> str:
    """FastMCP's mount convention: ``NAME_tool``."""
    return f"{child}_{tool}"


@dataclass(frozen=True, slots=True)
class ChildTool:
    """One admitted child tool: its name at the child, its name at the gateway, the descriptor the host
    core admitted (a private copy) and the digest of that descriptor's canonical bytes."""

    child: str
    name: str
    exposed: str
    descriptor: Mapping[str, Any] = field(repr=False)
    descriptor_sha256: str
    schema_sha256: str | None = None
    """For a tool federated from a search-first child (:mod:`._federation`): the ``schema_sha256`` of the
    child's disclosure it was verified against (the host core holds it under that digest); ``None`` for
    a listed tool."""


@dataclass(frozen=True, slots=True)
class Rejected:
    """A child descriptor the gateway does not expose, and why (category + value-free reason)."""

    tool: str | None
    category: str
    reason: str


@dataclass(frozen=True, slots=True)
class ChildCatalog:
    """A child's admitted catalog at one generation, with the evidence of how it was obtained."""

    child: str
    generation: int
    tools: Mapping[str, ChildTool]
    """Gateway name → tool, in the child's listing order."""
    rejected: tuple[Rejected, ...]
    page_trace: tuple[str | None, ...]
    descriptors: int
    """Descriptors the child listed (admitted + rejected)."""

    def same_content(self, other: ChildCatalog) -> bool:
        """Whether ``other`` lists exactly the same admitted bytes and the same rejections."""
        mine = {name: tool.descriptor_sha256 for name, tool in self.tools.items()}
        theirs = {name: tool.descriptor_sha256 for name, tool in other.tools.items()}
        return mine == theirs and self.rejected == other.rejected


@dataclass(frozen=True, slots=True)
class CatalogDiff:
    """Gateway names added, changed (new descriptor bytes) and removed between two catalogs."""

    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)


def build_catalog(
    child: str,
    report: AdmissionReport,
    *,
    page_trace: Sequence[str | None],
    previous: ChildCatalog | None,
    schema_digests: Mapping[str, str] | None = None,
) -> ChildCatalog:
    """The catalog for ``child`` from the host core's admission ``report``.

    Beyond the core's admission, a tool whose namespaced name would exceed 128 characters is rejected
    (``name_too_long``), one whose namespaced name is one of the gateway's own tools
    (``reserved_name``, :data:`RESERVED_TOOL_NAMES`), and one whose descriptor has no canonical
    encoding (``non_canonical``). The
    generation is ``previous.generation`` when nothing differs from ``previous``, else one more (0 for
    the first catalog). ``schema_digests`` names the federated tools (name at the child → the child's
    disclosure digest).
    """
    tools: dict[str, ChildTool] = {}
    rejected = [Rejected(r["tool"], r["category"], r["reason"]) for r in report.rejected]
    for name, descriptor in report.admitted.items():
        exposed = gateway_name(child, name)
        if len(exposed) > MAX_TOOL_NAME:
            rejected.append(Rejected(name, "name_too_long", f"{child}_<tool> exceeds 128 characters"))
            continue
        if exposed in RESERVED_TOOL_NAMES:
            rejected.append(Rejected(name, "reserved_name", f"{exposed} is the gateway's own tool"))
            continue
        try:
            digest = sha256_hex(canonical_json_bytes(descriptor))
        except SchemaDisclosureError:
            rejected.append(Rejected(name, "non_canonical", "the descriptor has no canonical JSON form"))
            continue
        federated = None if schema_digests is None else schema_digests.get(name)
        tools[exposed] = ChildTool(child, name, exposed, descriptor, digest, federated)
    candidate = ChildCatalog(
        child=child,
        generation=0,
        tools=tools,
        rejected=tuple(rejected),
        page_trace=tuple(page_trace),
        descriptors=len(report.admitted) + len(report.rejected),
    )
    if previous is None:
        return candidate
    generation = previous.generation if previous.same_content(candidate) else previous.generation + 1
    return ChildCatalog(
        child, generation, tools, candidate.rejected, candidate.page_trace, candidate.descriptors
    )


def diff_catalogs(before: Mapping[str, str], new: ChildCatalog) -> CatalogDiff:
    """What the gateway must add, replace and withdraw to go from the published tools ``before``
    (gateway name → descriptor digest) to ``new``."""
    after = {name: tool.descriptor_sha256 for name, tool in new.tools.items()}
    return CatalogDiff(
        added=tuple(name for name in after if name not in before),
        changed=tuple(name for name in after if name in before and before[name] != after[name]),
        removed=tuple(name for name in before if name not in after),
    )
