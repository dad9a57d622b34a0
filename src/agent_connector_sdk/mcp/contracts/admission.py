"""Admit gate: which tool descriptors a host will trust enough to call.

The host owns this gate: a server cannot force a client to accept its schemas or header annotations.
:func:`admit_tools` checks each wire descriptor (camelCase dict) on its own, so one bad descriptor never
removes the others, and explains every rejection with a stable ``category`` and a reason that names
fields and JSON pointers, never values.

Categories: ``malformed`` (shape, or not a valid 2020-12 schema), ``unsupported_dialect`` (``$schema``
other than 2020-12, anywhere), ``unresolvable_ref`` (a ``$ref`` that does not resolve inside the
descriptor itself: remote references are never fetched), ``invalid_header_annotation``,
``sensitive_header`` and ``duplicate_name``.

Duplicate names: *every* descriptor sharing a name is rejected, not only the later ones. A client
cannot know which definition the server will execute for that name, and keeping the first would let a
reordering server silently swap the contract under an admitted name. Failing closed on all of them is
the only choice that never calls a tool under a schema it does not run.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypedDict, cast
from urllib.parse import urljoin

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
from jsonschema_specifications import REGISTRY as METASCHEMAS  # type: ignore[import-untyped]
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from agent_connector_sdk.mcp.contracts.errors import AdmissionError
from agent_connector_sdk.mcp.contracts.headers import (
    X_MCP_HEADER_KEY,
    header_annotations,
    iter_schema_positions,
)
from agent_connector_sdk.mcp.contracts.pointers import json_pointer
from agent_connector_sdk.mcp.contracts.validation import check_schema

__all__ = [
    "DEFAULT_SENSITIVE_NAMES",
    "SUPPORTED_DIALECTS",
    "AdmissionPolicy",
    "AdmissionReport",
    "Rejection",
    "admit_tools",
    "is_sensitive_name",
]

SUPPORTED_DIALECTS: Final = frozenset(
    {"https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#"}
)
"""``$schema`` values treated as JSON Schema 2020-12 (an absent ``$schema`` also means 2020-12)."""

DEFAULT_SENSITIVE_NAMES: Final = frozenset(
    {
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "authorization",
        "cookie",
        "credential",
        "privatekey",
        "sessionid",
    }
)
"""Fragments that mark a header or property name as sensitive (matched on the normalized name)."""

_NON_ALNUM: Final = re.compile(r"[^a-z0-9]")


@dataclass(frozen=True, slots=True)
class AdmissionPolicy:
    """Local admission policy.

    ``profile="strict"`` (default) accepts ``x-mcp-header`` only on direct members of
    ``inputSchema.properties``; ``profile="spec"`` also accepts properties reachable through a chain of
    ``properties`` keys (the 2026-07-28 rule). ``sensitive_names`` are fragments (lowercase ASCII
    alphanumerics) that reject an annotated header or property whose normalized name contains one.
    """

    profile: Literal["strict", "spec"] = "strict"
    sensitive_names: frozenset[str] = field(default=DEFAULT_SENSITIVE_NAMES)


class Rejection(TypedDict):
    """Why one descriptor was not admitted. ``tool`` is its name, or ``None`` when it has no usable name;
    ``index`` is its position in the server's listing."""

    tool: str | None
    index: int
    category: str
    reason: str


@dataclass(frozen=True, slots=True)
class AdmissionReport:
    """``admitted``: name → descriptor, in server order. ``rejected``: one :class:`Rejection` each."""

    admitted: dict[str, dict[str, Any]]
    rejected: list[Rejection]


def is_sensitive_name(name: str, sensitive_names: Iterable[str] = DEFAULT_SENSITIVE_NAMES) -> bool:
    """Whether ``name``, NFKC-normalized, case-folded and stripped of non-alphanumerics, contains a
    sensitive fragment (``Api-Key``, ``X_API_KEY`` and fullwidth ``ＴＯＫＥＮ`` all count)."""
    normalized = _NON_ALNUM.sub("", unicodedata.normalize("NFKC", name).casefold())
    return any(fragment in normalized for fragment in sensitive_names)


def _check_dialects(schema: Any, where: str) -> None:
    for site in iter_schema_positions(schema):
        dialect = site.schema.get("$schema")
        # A non-string `$schema` (e.g. `{}`) is unhashable: test the type before set membership.
        if dialect is not None and (not isinstance(dialect, str) or dialect not in SUPPORTED_DIALECTS):
            raise AdmissionError(
                "unsupported_dialect", f"{where}{site.pointer or '/'}: $schema is not JSON Schema 2020-12"
            )


def _check_valid_schema(schema: Any, where: str) -> None:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        # The metaschema message can quote instance values; report only the location and the keyword.
        pointer = json_pointer(str(part) for part in exc.path)
        raise AdmissionError(
            "malformed",
            f"{where}{pointer or '/'} is not a valid JSON Schema 2020-12 ({exc.validator} keyword)",
        ) from None


def _check_references(schema: Any, where: str) -> None:
    """Every ``$ref``/``$dynamicRef`` must resolve within the schema itself: the registry has no
    retriever, so a remote reference is refused instead of fetched."""
    root = DRAFT202012.create_resource(schema)
    # The bundled metaschemas (no I/O) stay resolvable; anything else outside the schema is not.
    registry: Registry[Any] = METASCHEMAS.with_resource("", root).crawl()
    bases: dict[str, str] = {"": ""}
    for site in iter_schema_positions(schema):
        parent = site.pointer.rsplit("/", 1)[0] if site.pointer else ""
        base = _nearest_base(bases, parent)
        own_id = site.schema.get("$id")
        if isinstance(own_id, str):
            base = urljoin(base, own_id)
        bases[site.pointer] = base
        for keyword in ("$ref", "$dynamicRef"):
            reference = site.schema.get(keyword)
            if reference is None:
                continue
            if not isinstance(reference, str):
                raise AdmissionError("malformed", f"{where}{site.pointer}/{keyword} is not a string")
            try:
                registry.resolver(base_uri=base).lookup(reference)
            except Unresolvable:
                raise AdmissionError(
                    "unresolvable_ref",
                    f"{where}{site.pointer}/{keyword} does not resolve inside the descriptor "
                    "(remote references are never fetched)",
                ) from None


_FAILURE_CATEGORY: dict[str, str] = {
    "invalid_schema": "malformed",
    "unsupported_dialect": "unsupported_dialect",
    "unresolvable_ref": "unresolvable_ref",
}


def _check_validatable(schema: Any, where: str) -> None:
    """The Invoke and Consume gates must be able to compile the schema, or every call would be refused
    later: e.g. a ``pattern`` valid for Python ``re`` but not ECMA-262 (``\\Z``) fails here, at Admit."""
    failure = check_schema(schema)
    if failure is not None:
        raise AdmissionError(_FAILURE_CATEGORY.get(failure.kind, "malformed"), f"{where}: {failure.message}")


def _nearest_base(bases: Mapping[str, str], pointer: str) -> str:
    # Parents are visited before children, so walking up the pointer always finds a recorded base.
    while pointer not in bases:
        pointer = pointer.rsplit("/", 1)[0] if "/" in pointer else ""
    return bases[pointer]


def _check_header_placement_elsewhere(schema: Any, where: str) -> None:
    for site in iter_schema_positions(schema):
        if X_MCP_HEADER_KEY in site.schema:
            raise AdmissionError(
                "invalid_header_annotation",
                f"{where}{site.pointer or '/'}: {X_MCP_HEADER_KEY} is not allowed here",
            )


def _check_descriptor(descriptor: Mapping[str, Any], policy: AdmissionPolicy) -> None:
    input_schema = descriptor.get("inputSchema")
    if not isinstance(input_schema, Mapping):
        raise AdmissionError("malformed", "inputSchema must be a JSON object")
    if input_schema.get("type") != "object":
        raise AdmissionError("malformed", 'inputSchema must declare type "object" at its root')
    output_schema = descriptor.get("outputSchema")
    if "outputSchema" in descriptor and not isinstance(output_schema, Mapping):
        raise AdmissionError("malformed", "outputSchema must be a JSON object")
    schemas = [("inputSchema", input_schema)]
    if isinstance(output_schema, Mapping):
        schemas.append(("outputSchema", output_schema))
    for where, schema in schemas:
        _check_dialects(schema, where)
    for where, schema in schemas:
        _check_valid_schema(schema, where)
        _check_references(schema, where)
        _check_validatable(schema, where)
    if isinstance(output_schema, Mapping):
        _check_header_placement_elsewhere(output_schema, "outputSchema")
    for annotation in header_annotations(input_schema, placement=policy.profile):
        property_name = annotation.path[-1]
        if is_sensitive_name(annotation.name, policy.sensitive_names) or is_sensitive_name(
            property_name, policy.sensitive_names
        ):
            raise AdmissionError(
                "sensitive_header",
                f"inputSchema{annotation.pointer}: a sensitive argument must not be mirrored into "
                f"{annotation.header}",
            )


def admit_tools(descriptors: Iterable[Any], policy: AdmissionPolicy | None = None) -> AdmissionReport:
    """Admit the descriptors a host may call, in server order, and explain every rejection.

    Rules: ``name`` is a non-empty string and unique (all duplicates are rejected, see the module
    docstring); ``inputSchema`` is a JSON object with ``type: "object"``; ``outputSchema``, when present,
    is a JSON object; both are valid JSON Schema 2020-12 (``$schema`` absent or 2020-12 everywhere),
    and every ``$ref`` resolves locally (nothing is fetched). ``x-mcp-header`` annotations follow
    :func:`~agent_connector_sdk.mcp.contracts.headers.header_annotations` with the policy's placement
    profile, never appear in an ``outputSchema``, and never mark a sensitive name. One descriptor's
    failure, including an unexpected one such as a pathologically deep schema, never affects another.
    """
    policy = policy if policy is not None else AdmissionPolicy()
    items = list(descriptors)
    names = [item.get("name") if isinstance(item, Mapping) else None for item in items]
    counts = Counter(name for name in names if isinstance(name, str))
    admitted: dict[str, dict[str, Any]] = {}
    rejected: list[Rejection] = []
    for index, (item, name) in enumerate(zip(items, names, strict=True)):
        tool = name if isinstance(name, str) and name else None
        try:
            if not isinstance(item, Mapping):
                raise AdmissionError("malformed", "descriptor must be a JSON object")
            if tool is None:
                raise AdmissionError("malformed", "name must be a non-empty string")
            if counts[tool] > 1:
                raise AdmissionError("duplicate_name", f"{counts[tool]} descriptors share this name")
            _check_descriptor(cast(Mapping[str, Any], item), policy)
        except AdmissionError as refusal:
            rejected.append(
                {"tool": tool, "index": index, "category": refusal.category, "reason": refusal.message}
            )
            continue
        except RecursionError:
            rejected.append(
                {
                    "tool": tool,
                    "index": index,
                    "category": "malformed",
                    "reason": "schema is nested too deeply",
                }
            )
            continue
        admitted[tool] = dict(cast(Mapping[str, Any], item))
    return AdmissionReport(admitted=admitted, rejected=rejected)
