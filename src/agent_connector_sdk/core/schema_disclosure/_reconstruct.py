"""Serve and reconstruct: one fragment by its URI index; the whole document from fragments."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any, NoReturn

from pydantic import BaseModel, ValidationError

from agent_connector_sdk.core.schema_disclosure._encoding import encode_schema_document, sha256_hex
from agent_connector_sdk.core.schema_disclosure._errors import (
    SchemaDisclosureCategory,
    SchemaDisclosureError,
)
from agent_connector_sdk.core.schema_disclosure._models import (
    FRAGMENT_TEXT_MAX_BYTES,
    IDENTITY_FIELDS,
    SchemaDisclosure,
    SchemaFragment,
    SchemaManifest,
)
from agent_connector_sdk.core.schema_disclosure._uris import parse_fragment_index

__all__ = ["parse_fragment", "parse_manifest", "read_schema_fragment", "reconstruct_schema"]

_ROUTING_FIELDS = ("operation", "alias")


def read_schema_fragment(disclosure: SchemaDisclosure, index: str) -> SchemaFragment:
    """Serve fragment ``index`` given as URI text: ``0`` or ``[1-9][0-9]*`` (ASCII), below the count.

    ``"01"``, ``"-1"``, ``"+1"``, ``" 1"``, ``"1.0"``, ``"１"``, ``"١"`` and out-of-range indices raise
    ``SchemaDisclosureError("malformed_index")``.
    """
    position = parse_fragment_index(index, disclosure.manifest.fragment_count)
    return disclosure.fragments[position]


def _refuse_model(error: ValidationError, default: SchemaDisclosureCategory) -> NoReturn:
    kinds = {item["type"] for item in error.errors(include_input=False, include_url=False)}
    category: SchemaDisclosureCategory = default
    if "json_invalid" in kinds:
        category = "corrupt"
    else:
        candidates: tuple[SchemaDisclosureCategory, ...] = ("too_large", "corrupt", "inconsistent_identity")
        for candidate in candidates:
            if candidate in kinds:
                category = candidate
                break
    # The pydantic message may quote input values; report field locations and kinds only.
    where = sorted({".".join(str(p) for p in item["loc"]) or "<root>" for item in error.errors()})
    raise SchemaDisclosureError(
        category, f"invalid {', '.join(where)} ({', '.join(sorted(kinds))})"
    ) from None


def _parse(model: type[BaseModel], data: str | bytes | dict[str, Any]) -> Any:
    try:
        if isinstance(data, str | bytes):
            return model.model_validate_json(data)
        return model.model_validate(data)
    except ValidationError as error:
        _refuse_model(error, "inconsistent_identity")


def parse_manifest(data: str | bytes | dict[str, Any]) -> SchemaManifest:
    """Parse a manifest from wire JSON (text/bytes) or a dict; refusals are ``SchemaDisclosureError``."""
    manifest: SchemaManifest = _parse(SchemaManifest, data)
    return manifest


def parse_fragment(data: str | bytes | dict[str, Any]) -> SchemaFragment:
    """Parse a fragment from wire JSON (text/bytes) or a dict; refusals are ``SchemaDisclosureError``."""
    fragment: SchemaFragment = _parse(SchemaFragment, data)
    return fragment


def _require_same_identity(selected: SchemaManifest, fragment: SchemaFragment) -> None:
    for name in _ROUTING_FIELDS:
        if getattr(fragment, name) != getattr(selected, name):
            raise SchemaDisclosureError(
                "mixed_operation", f"fragment {name} differs from the selected manifest"
            )
    for name in IDENTITY_FIELDS:
        if getattr(fragment, name) != getattr(selected, name):
            raise SchemaDisclosureError("stale", f"fragment {name} differs from the selected manifest")


def _refuse_non_finite(token: str) -> NoReturn:
    raise SchemaDisclosureError("corrupt", f"document contains the non-JSON constant {token}")


def reconstruct_schema(
    selected_manifest: SchemaManifest, fragments: Iterable[SchemaFragment]
) -> dict[str, Any]:
    """Reassemble and verify the complete document ``{"inputSchema": ..., "outputSchema": ...}``.

    The *selected* manifest (the one the consumer chose from navigation) is the only authority: each
    fragment's identity must equal it exactly (``mixed_operation`` for another operation or alias,
    ``stale`` for any other identity field); indices must be exactly ``0..fragment_count-1`` once each
    (``incomplete``) and in order (``reordered``); each fragment's digest must match its text, the
    concatenation must match ``schema_bytes`` and ``schema_sha256``, and each schema's canonical
    re-encoding must match its own digest (``corrupt``). A fragment's own hash never stands in for
    the selected manifest.
    """
    if type(selected_manifest) is not SchemaManifest:
        raise SchemaDisclosureError("inconsistent_identity", "selected manifest must be a SchemaManifest")
    # Re-run the model's checks: a manifest made with model_construct skipped them.
    selected = parse_manifest(selected_manifest.model_dump())
    ordered = list(fragments)
    for fragment in ordered:
        if type(fragment) is not SchemaFragment:
            raise SchemaDisclosureError("inconsistent_identity", "fragments must be SchemaFragment objects")
        _require_same_identity(selected, fragment)
    indices = [fragment.index for fragment in ordered]
    if len(indices) != selected.fragment_count or set(indices) != set(range(selected.fragment_count)):
        raise SchemaDisclosureError("incomplete", "fragment indices are not exactly 0..fragment_count-1")
    if indices != list(range(selected.fragment_count)):
        raise SchemaDisclosureError("reordered", "fragments are not in index order")
    document_hash = hashlib.sha256()
    pieces: list[bytes] = []
    for fragment in ordered:
        try:
            piece = fragment.text.encode("utf-8")
        except UnicodeEncodeError:
            raise SchemaDisclosureError(
                "corrupt", f"fragment {fragment.index} has a lone surrogate"
            ) from None
        if len(piece) > FRAGMENT_TEXT_MAX_BYTES:
            raise SchemaDisclosureError("too_large", f"fragment {fragment.index} is over 4096 bytes")
        if sha256_hex(piece) != fragment.fragment_sha256:
            raise SchemaDisclosureError(
                "corrupt", f"fragment {fragment.index} text does not match its digest"
            )
        document_hash.update(piece)
        pieces.append(piece)
    document = b"".join(pieces)
    if len(document) != selected.schema_bytes or document_hash.hexdigest() != selected.schema_sha256:
        raise SchemaDisclosureError("corrupt", "concatenated fragments do not match the manifest")
    try:
        decoded = json.loads(document, parse_constant=_refuse_non_finite)
    except SchemaDisclosureError:
        raise
    except (ValueError, RecursionError):
        raise SchemaDisclosureError("corrupt", "concatenated fragments are not JSON") from None
    if type(decoded) is not dict or set(decoded) != {"inputSchema", "outputSchema"}:
        raise SchemaDisclosureError("corrupt", "document must hold exactly inputSchema and outputSchema")
    # Re-encoding proves the bytes were canonical (a hash over non-canonical JSON would otherwise
    # pass) and yields each schema's own digest in the same step.
    try:
        canonical, digests = encode_schema_document(
            decoded["inputSchema"], decoded["outputSchema"], decoded_json=True
        )
    except SchemaDisclosureError:
        raise SchemaDisclosureError("corrupt", "document is not a disclosable schema pair") from None
    if canonical != document:
        raise SchemaDisclosureError("corrupt", "document is not in canonical form")
    if digests.input_schema_sha256 != selected.input_schema_sha256:
        raise SchemaDisclosureError("corrupt", "inputSchema does not match its digest")
    if digests.output_schema_sha256 != selected.output_schema_sha256:
        raise SchemaDisclosureError("corrupt", "outputSchema does not match its digest")
    return decoded
