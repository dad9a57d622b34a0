"""Pure policy behind the schema disclosure provider and consumer (sans-I/O, no FastMCP objects).

Two jobs, shared by both ends so they cannot drift:

* **Navigation** — :func:`build_navigation_entry` turns a tool's name, title, description and current
  wire-form schemas into a bounded ``schema-navigation`` entry (digests, fragment count, manifest URI,
  a short argument summary — never the schemas). :class:`SchemaNavigation` is the strict wire model a
  consumer parses such an entry with.
* **Read authorization** — :func:`authorize_disclosure_read` decides one ``resources/read`` of a
  manifest or fragment URI: given the exact requested URI, the disclosure registered under the URI's
  alias (if any) and the caller's *visible* tool of that name (if any), it returns the body to serve or
  raises :class:`DisclosureReadRefused` with a category. Every category maps to the same wire refusal;
  the category exists for logs and tests only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StringConstraints

from agent_connector_sdk.core.contracts import HeaderType, header_annotations
from agent_connector_sdk.core.contracts.errors import AdmissionError
from agent_connector_sdk.core.schema_disclosure import (
    SchemaDigests,
    SchemaDisclosure,
    SchemaDisclosureError,
    canonical_json_bytes,
    fragment_uri,
    manifest_uri,
    read_schema_fragment,
)
from agent_connector_sdk.core.schema_disclosure.cache import (
    DisclosureCache,
    DisclosureOrigin,
    SchemaIdentity,
    SchemaIdentityMemo,
    schema_fingerprint,
)
from agent_connector_sdk.core.schema_disclosure.encoding import encode_schema_document, split_utf8
from agent_connector_sdk.errors import AgentConnectorError

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "MAX_NAVIGATION_HEADERS",
    "MAX_SUMMARY_ARGUMENTS",
    "NAVIGATION_KIND",
    "ArgumentSummary",
    "DisclosureAddress",
    "DisclosureReadRefused",
    "ParameterHeader",
    "ReadRefusalCategory",
    "SchemaNavigation",
    "ToolHints",
    "VerifiedSchemaSnapshots",
    "VisibleToolSchemas",
    "authorize_disclosure_read",
    "build_navigation_entry",
    "parse_disclosure_uri",
    "serve_disclosure_read",
    "summarize_arguments",
    "summarize_parameter_headers",
    "summarize_tool_hints",
    "type_label",
]

NAVIGATION_KIND: Final = "schema-navigation"
MAX_DESCRIPTION_CHARS: Final = 1000
"""A navigation entry's description is cut to at most this many characters (``description_cut``)."""
MAX_SUMMARY_ARGUMENTS: Final = 32
"""At most this many arguments are summarized; ``arguments_omitted`` counts the rest."""
MAX_NAVIGATION_HEADERS: Final = 64
"""A navigation entry lists at most this many ``Mcp-Param-*`` headers (more: ``headers`` is ``None``)."""
_MAX_TITLE_CHARS: Final = 200
_MAX_NAME_CHARS: Final = 128
_MAX_TYPE_CHARS: Final = 64

Sha256Hex = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$", strict=True)]
_STRICT: Final = ConfigDict(frozen=True, extra="forbid", strict=True, regex_engine="rust-regex")


# --------------------------------------------------------------------------------------------------
# Navigation
# --------------------------------------------------------------------------------------------------


class ArgumentSummary(BaseModel):
    """One argument of a tool, summarized: its name, a short type label, and whether it is required."""

    model_config = _STRICT

    name: Annotated[str, StringConstraints(max_length=_MAX_NAME_CHARS + 1, strict=True)]
    type: Annotated[str, StringConstraints(max_length=_MAX_TYPE_CHARS + 1, strict=True)]
    required: StrictBool


_PropertyName = Annotated[str, StringConstraints(strict=True)]
_HEADER_NAME: Final = r"^Mcp-Param-[!#$%&'*+.^_`|~0-9A-Za-z-]+$"  # the RFC 9110 token after the prefix


class ParameterHeader(BaseModel):
    """One ``x-mcp-header`` argument: the ``argument``'s path of ``properties`` keys from the input
    schema's root, the ``header`` a call must carry (``Mcp-Param-{name}``), and the declared ``type``."""

    model_config = _STRICT

    argument: Annotated[list[_PropertyName], Field(min_length=1, max_length=512)]
    header: Annotated[str, StringConstraints(pattern=_HEADER_NAME, strict=True)]
    type: HeaderType


class ToolHints(BaseModel):
    """The tool's behaviour hints (MCP ``ToolAnnotations``), as ``tools/list`` would show them.

    Untrusted, exactly like the listing's: a host may only use them to *add* a confirmation (a tool
    that does not say ``readOnlyHint: true``, or says ``destructiveHint: true``, may write)."""

    model_config = _STRICT

    readOnlyHint: StrictBool | None = None
    destructiveHint: StrictBool | None = None
    idempotentHint: StrictBool | None = None
    openWorldHint: StrictBool | None = None


_HINT_NAMES: Final = tuple(ToolHints.model_fields)


class SchemaNavigation(BaseModel):
    """A search result entry that points at a tool's disclosed schemas instead of containing them.

    Digests, ``fragment_count`` and ``manifest_uri`` are computed from the tool's *current* wire-form
    schemas when the search runs. They are ``None`` only when the tool's schemas cannot be disclosed
    at all (e.g. over 16 MiB); such an entry cannot be selected.
    """

    model_config = _STRICT

    kind: Literal["schema-navigation"]
    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,128}$", strict=True)]
    title: Annotated[str, StringConstraints(max_length=_MAX_TITLE_CHARS + 1, strict=True)] | None
    description: Annotated[str, StringConstraints(max_length=MAX_DESCRIPTION_CHARS, strict=True)] | None
    description_cut: StrictBool
    arguments: Annotated[list[ArgumentSummary], Field(max_length=MAX_SUMMARY_ARGUMENTS)]
    arguments_omitted: Annotated[StrictInt, Field(ge=0)]
    input_schema_sha256: Sha256Hex | None
    output_schema_sha256: Sha256Hex | None
    schema_sha256: Sha256Hex | None
    fragment_count: Annotated[StrictInt, Field(ge=1)] | None
    manifest_uri: str | None
    headers: Annotated[list[ParameterHeader], Field(max_length=MAX_NAVIGATION_HEADERS)] | None = None
    """The tool's header map, so a host can send the ``Mcp-Param-*`` headers a call needs without
    reading the schema. ``None``: not stated (an older provider, invalid annotations, or more than
    :data:`MAX_NAVIGATION_HEADERS`) — read the schema. ``[]``: the tool declares none."""
    annotations: ToolHints | None = None
    """The tool's hints, so write confirmation decides on the same ``readOnlyHint``/``destructiveHint``
    a listed tool would carry. ``None``: not stated (an older provider, or a tool without hints)."""
    contract_sha256: Sha256Hex | None = None
    """The tool's contract fingerprint as published (:func:`~agent_connector_sdk.core.contracts.
    _fingerprint.fingerprint`, the lock's ``sha256``: name, title, description, icons, both schemas,
    annotations, execution, host-facing ``_meta``, header map): the value a caller binds a call to. A
    call bound to it runs only against exactly that contract. ``None``: not stated (an older provider,
    or a contract that cannot be fingerprinted)."""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_COMPOSITE_BRANCHES: Final = 8
"""A composite label names at most this many branches (more: ``…``)."""


def type_label(schema: Any) -> str:
    """A short, human-readable label of a JSON Schema's type (what navigation entries and ``review``
    show per argument). A summary, not a type system: unknown shapes are ``any``.

    A composite says what it is: ``oneOf(Cat, Dog)``, ``anyOf(object, integer)``, ``allOf(Base,
    object)``, naming each branch (a ``$ref`` by its target's name), so a caller knows a value must
    match one (or some, or all) of several shapes before reading the full schema. A list of types, and
    a union of bare types (``anyOf: [{type: string}, {type: null}]``, the same thing), is
    ``string|null``."""
    return _type_label(schema)


def _bare_types(branches: list[Any]) -> list[str] | None:
    """The branches' types when each branch is only ``{"type": T}`` (distinct): a plain type list."""
    types = [b.get("type") if isinstance(b, dict) and len(b) == 1 else None for b in branches]
    if all(isinstance(t, str) for t in types) and len(set(types)) == len(types):
        return [str(t) for t in types]
    return None


def _type_label(schema: Any, depth: int = 0) -> str:
    if not isinstance(schema, dict):
        return "any"
    if depth < 2:
        for key in ("oneOf", "anyOf", "allOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                bare = _bare_types(branches) if key != "allOf" else None
                if bare is not None:
                    return "|".join(bare)
                named = [_type_label(branch, depth + 1) for branch in branches[:_COMPOSITE_BRANCHES]]
                more = ", …" if len(branches) > _COMPOSITE_BRANCHES else ""
                return f"{key}({', '.join(named)}{more})"
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/") and reference.rsplit("/", 1)[-1]:
        return reference.rsplit("/", 1)[-1]
    declared = schema.get("type")
    if isinstance(declared, str):
        if declared == "array":
            items = schema.get("items")
            if isinstance(items, dict) and depth < 2:
                inner = _type_label(items, depth + 1)
                return f"{inner}[]" if inner != "any" else "array"
            return "array"
        return declared
    if isinstance(declared, list) and all(isinstance(item, str) for item in declared):
        return "|".join(declared)
    if "enum" in schema or "const" in schema:
        return "enum"
    if "properties" in schema or "$ref" in schema:
        return "object"
    return "any"


def summarize_arguments(input_schema: Any) -> tuple[list[dict[str, Any]], int]:
    """Summarize a tool's top-level arguments: ``([{name, type, required}, ...], omitted_count)``.

    At most :data:`MAX_SUMMARY_ARGUMENTS` entries; names and type labels are cut so the summary stays
    bounded however large the schema is. Required arguments come first, so a cut keeps what a caller
    must supply.
    """
    if not isinstance(input_schema, dict):
        return [], 0
    properties = input_schema.get("properties")
    if not isinstance(properties, dict):
        return [], 0
    raw_required = input_schema.get("required")
    required = (
        {name for name in raw_required if isinstance(name, str)} if isinstance(raw_required, list) else set()
    )
    names = sorted(properties, key=lambda name: (name not in required,))
    shown = names[:MAX_SUMMARY_ARGUMENTS]
    summary = [
        {
            "name": _cut(name, _MAX_NAME_CHARS + 1),
            "type": _cut(_type_label(properties[name]), _MAX_TYPE_CHARS + 1),
            "required": name in required,
        }
        for name in shown
    ]
    return summary, len(names) - len(shown)


def summarize_parameter_headers(input_schema: Any) -> list[dict[str, Any]] | None:
    """The header map of a tool's input schema, as the contract gates read it (``placement="spec"``),
    JSON-ready for :class:`ParameterHeader`; ``None`` when the annotations are invalid or too many."""
    try:
        annotations = header_annotations(input_schema, placement="spec")
    except AdmissionError:
        return None
    if len(annotations) > MAX_NAVIGATION_HEADERS:
        return None
    return [{"argument": list(a.path), "header": a.header, "type": a.type} for a in annotations]


def summarize_tool_hints(annotations: Mapping[str, Any] | None) -> dict[str, bool] | None:
    """The boolean hints of a tool's wire-form ``annotations`` (camelCase), JSON-ready for
    :class:`ToolHints`; ``None`` when there are none. Anything but a real ``true``/``false`` is dropped
    (as good as absent, which a host reads as "may write")."""
    if not isinstance(annotations, Mapping):
        return None
    hints = {name: annotations[name] for name in _HINT_NAMES if isinstance(annotations.get(name), bool)}
    return hints or None


def _document_identity(input_schema: Any, output_schema: Any) -> tuple[SchemaDigests, int]:
    document, digests = encode_schema_document(input_schema, output_schema)
    return digests, len(split_utf8(document))


def build_navigation_entry(
    *,
    name: str,
    title: str | None,
    description: str | None,
    input_schema: Any,
    output_schema: Any,
    memo: SchemaIdentityMemo | None = None,
    annotations: Mapping[str, Any] | None = None,
    contract_sha256: str | None = None,
) -> dict[str, Any]:
    """The ``schema-navigation`` entry for one tool, as a JSON-ready dict valid for :class:`SchemaNavigation`.

    ``input_schema``/``output_schema`` must be the schemas exactly as the wire shows them; the digests
    and ``fragment_count`` are those a disclosure built from the same schemas has, so the entry's
    ``manifest_uri`` names the resource a provider serves for the tool as it is now. ``memo`` (optional)
    skips re-hashing schemas fingerprinted before; the entry is the same. ``annotations`` (optional) are
    the tool's wire-form ``annotations``; their boolean hints travel in the entry (:class:`ToolHints`).
    ``contract_sha256`` (optional): the tool's contract fingerprint as published, stated as it is.
    """
    cut = description is not None and len(description) > MAX_DESCRIPTION_CHARS
    arguments, omitted = summarize_arguments(input_schema)
    entry: dict[str, Any] = {
        "kind": NAVIGATION_KIND,
        "name": name,
        "title": _cut(title, _MAX_TITLE_CHARS + 1) if title is not None else None,
        "description": description[:MAX_DESCRIPTION_CHARS] if description is not None else None,
        "description_cut": cut,
        "arguments": arguments,
        "arguments_omitted": omitted,
        "input_schema_sha256": None,
        "output_schema_sha256": None,
        "schema_sha256": None,
        "fragment_count": None,
        "manifest_uri": None,
        "headers": summarize_parameter_headers(input_schema),
        "annotations": summarize_tool_hints(annotations),
    }
    if contract_sha256 is not None:
        entry["contract_sha256"] = contract_sha256
    try:
        if memo is None:
            digests, count = _document_identity(input_schema, output_schema)
        else:  # exact: keyed on the schemas' fingerprint (see SchemaIdentityMemo)
            identity = memo.identify(input_schema, output_schema)
            digests, count = identity.digests, identity.fragment_count
    except SchemaDisclosureError:
        return entry  # not disclosable: the entry says so by carrying no identity
    entry.update(
        input_schema_sha256=digests.input_schema_sha256,
        output_schema_sha256=digests.output_schema_sha256,
        schema_sha256=digests.schema_sha256,
        fragment_count=count,
        manifest_uri=manifest_uri(name, digests.schema_sha256),
    )
    return entry


# --------------------------------------------------------------------------------------------------
# Read authorization
# --------------------------------------------------------------------------------------------------

ReadRefusalCategory = Literal[
    "malformed_uri",
    "unknown_alias",
    "not_visible",
    "alias_mismatch",
    "stale",
    "unvouched",
    "malformed_index",
    "non_canonical",
]

# Deliberately strict and ASCII-only; anything else is refused before any lookup. `fullmatch` (not `$`)
# so a trailing newline cannot slip through. The index group is loose on purpose: the core's
# `read_schema_fragment` owns the index rule, and the final byte-for-byte comparison backs both up.
_DISCLOSURE_URI: Final = re.compile(
    r"schema-disclosure://tools/(?P<alias>[A-Za-z0-9_.-]{1,128})/(?P<digest>[0-9a-f]{64})"
    r"/(?:(?P<manifest>manifest)|fragments/(?P<index>[^/?#]{1,32}))",
    re.ASCII,
)


class DisclosureReadRefused(AgentConnectorError):
    """A disclosure read was refused. ``category`` is for logs and tests; the wire refusal is uniform."""

    step: ClassVar[str | None] = "disclosure_read"
    category: ReadRefusalCategory

    def __init__(self, category: ReadRefusalCategory) -> None:
        super().__init__(category, f"disclosure read refused: {category}", text=category)


@dataclass(frozen=True, slots=True)
class DisclosureAddress:
    """What a disclosure URI names: ``index`` is the raw index text, ``None`` for the manifest."""

    alias: str
    schema_sha256: str
    index: str | None


@dataclass(frozen=True, slots=True)
class VisibleToolSchemas:
    """The caller's visible tool: its exact name, its current wire-form schemas and its version.

    ``identity``, when set, is the schemas' already-established identity (a frozen-schema server's
    memo); it is not part of equality, since it only saves recomputing what the schemas determine.
    """

    name: str
    input_schema: Any
    output_schema: Any
    identity: SchemaIdentity | None = field(default=None, compare=False)
    version: str | None = None


def _fingerprint(input_schema: Any, output_schema: Any) -> bytes | None:
    """The exact schema fingerprint (see :func:`schema_fingerprint`), or ``None`` for non-plain data."""
    return schema_fingerprint(input_schema, output_schema)


class VerifiedSchemaSnapshots:
    """Per alias, the fingerprint of the exact schemas last proven to hash to that alias's manifest.

    Every read must check the visible tool's *current* schemas against the disclosure. Canonical JSON
    plus SHA-256 of a large schema costs milliseconds, on every fragment read; an exact ``marshal``
    fingerprint costs a fraction of that. A read whose schemas fingerprint exactly as a previously
    verified read of the same alias and schema digest is therefore the same check; anything else — a
    replaced schema, an in-place edit, another key order — falls back to full canonical hashing. At most
    one entry per alias is kept (the registry's aliases bound it).
    """

    def __init__(self) -> None:
        self._verified: dict[str, tuple[str, bytes]] = {}

    def matches(self, alias: str, schema_sha256: str, fingerprint: bytes) -> bool:
        return self._verified.get(alias) == (schema_sha256, fingerprint)

    def remember(self, alias: str, schema_sha256: str, fingerprint: bytes) -> None:
        self._verified[alias] = (schema_sha256, fingerprint)

    def forget(self, alias: str) -> None:
        self._verified.pop(alias, None)


def parse_disclosure_uri(uri: object) -> DisclosureAddress | None:
    """Split a disclosure URI into alias, digest and index text, or ``None`` when it is not one."""
    if type(uri) is not str:
        return None
    match = _DISCLOSURE_URI.fullmatch(uri)
    if match is None:
        return None
    return DisclosureAddress(match["alias"], match["digest"], None if match["manifest"] else match["index"])


def _body(model: BaseModel) -> str:
    return canonical_json_bytes(model.model_dump(mode="json")).decode("utf-8")


def _require_current_schemas(visible_tool: VisibleToolSchemas, manifest: Any) -> None:
    """The visible tool's current schemas hash exactly to the manifest's digests, or ``stale``."""
    try:
        _, current = encode_schema_document(visible_tool.input_schema, visible_tool.output_schema)
    except SchemaDisclosureError:
        raise DisclosureReadRefused("stale") from None
    if (
        current.input_schema_sha256 != manifest.input_schema_sha256
        or current.output_schema_sha256 != manifest.output_schema_sha256
        or current.schema_sha256 != manifest.schema_sha256
    ):
        raise DisclosureReadRefused("stale")


def authorize_disclosure_read(
    uri: str,
    *,
    disclosures: Mapping[str, SchemaDisclosure],
    visible_tool: VisibleToolSchemas | None,
    snapshots: VerifiedSchemaSnapshots | None = None,
) -> str:
    """Serve one read of a manifest or fragment URI, or refuse it.

    ``visible_tool`` is the tool the *caller* can see under the URI's alias (exact, case-sensitive
    name), or ``None``. The read is served only when all of these hold: the URI parses; a disclosure
    is registered under the alias and its manifest names that alias; the tool is visible with exactly
    that name; the URI's digest, and the digests of the tool's current schemas, equal the
    disclosure's; the index is canonical and in range; and the requested URI equals, byte for byte,
    the URI derived from the manifest. The body is the manifest or fragment as canonical JSON.

    ``snapshots`` (optional) lets a read skip re-hashing schemas that are exactly those a previous read
    of the same alias verified (see :class:`VerifiedSchemaSnapshots`); the verdict is the same.
    """
    address = parse_disclosure_uri(uri)
    if address is None:
        raise DisclosureReadRefused("malformed_uri")
    if visible_tool is None or visible_tool.name != address.alias:
        raise DisclosureReadRefused("not_visible")
    disclosure = disclosures.get(address.alias)
    if disclosure is None:
        raise DisclosureReadRefused("unknown_alias")
    manifest = disclosure.manifest
    if manifest.alias != visible_tool.name:
        raise DisclosureReadRefused("alias_mismatch")
    if address.schema_sha256 != manifest.schema_sha256:
        raise DisclosureReadRefused("stale")
    fingerprint = (
        _fingerprint(visible_tool.input_schema, visible_tool.output_schema) if snapshots is not None else None
    )
    if (
        snapshots is None
        or fingerprint is None
        or not snapshots.matches(manifest.alias, manifest.schema_sha256, fingerprint)
    ):
        _require_current_schemas(visible_tool, manifest)
        if snapshots is not None and fingerprint is not None:
            snapshots.remember(manifest.alias, manifest.schema_sha256, fingerprint)
    return _canonical_body(uri, address, disclosure)


def serve_disclosure_read(
    uri: str,
    *,
    origin: DisclosureOrigin | None,
    visible_tool: VisibleToolSchemas | None,
    memo: SchemaIdentityMemo,
    cache: DisclosureCache,
) -> str:
    """Serve one read from the tool's *current* schemas, building its disclosure on first need.

    The same decision as :func:`authorize_disclosure_read`, for a registry that knows each alias's
    :class:`DisclosureOrigin` instead of holding a prebuilt disclosure: refused unless the URI parses,
    the alias has an origin, the caller sees a tool of exactly that name, the URI's digest equals the
    digest of that tool's current schemas (via ``memo``, exact), the index is canonical and in range, and
    the URI equals the canonical one byte for byte. The disclosure served is the one built from exactly
    those schemas (``cache``), so after a schema change the new identity reads at once and the old one is
    ``stale`` — a navigation entry computed from the current schemas always names a readable resource.
    """
    address = parse_disclosure_uri(uri)
    if address is None:
        raise DisclosureReadRefused("malformed_uri")
    if visible_tool is None or visible_tool.name != address.alias:
        raise DisclosureReadRefused("not_visible")
    if origin is None:
        raise DisclosureReadRefused("unknown_alias")
    identity = visible_tool.identity
    if identity is None:
        try:
            identity = memo.identify(visible_tool.input_schema, visible_tool.output_schema)
        except SchemaDisclosureError:
            raise DisclosureReadRefused("stale") from None
    if address.schema_sha256 != identity.digests.schema_sha256:
        raise DisclosureReadRefused("stale")
    try:
        disclosure = cache.get_or_build(
            visible_tool.name, origin, identity, visible_tool.input_schema, visible_tool.output_schema
        )
    except SchemaDisclosureError:
        raise DisclosureReadRefused("stale") from None
    return _canonical_body(uri, address, disclosure)


def _canonical_body(uri: str, address: DisclosureAddress, disclosure: SchemaDisclosure) -> str:
    """The last step of every read, prebuilt or lazy: the manifest, or the fragment at a canonical,
    in-range index, as canonical JSON — only when ``uri`` is, byte for byte, the URI the manifest
    derives (``non_canonical`` otherwise; a bad index is ``malformed_index``)."""
    manifest = disclosure.manifest
    if address.index is None:
        if uri != manifest.manifest_uri:
            raise DisclosureReadRefused("non_canonical")
        return _body(manifest)
    try:
        fragment = read_schema_fragment(disclosure, address.index)
    except SchemaDisclosureError:
        raise DisclosureReadRefused("malformed_index") from None
    if uri != fragment_uri(manifest.alias, manifest.schema_sha256, fragment.index):
        raise DisclosureReadRefused("non_canonical")
    return _body(fragment)
