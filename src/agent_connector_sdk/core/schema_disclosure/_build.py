"""Build a disclosure: canonical document → bounded, hash-bound fragments."""

from __future__ import annotations

from typing import Any, Final

from agent_connector_sdk.core.schema_disclosure._encoding import (
    SourceDigest,
    encode_schema_document,
    sha256_hex,
)
from agent_connector_sdk.core.schema_disclosure._errors import SchemaDisclosureError
from agent_connector_sdk.core.schema_disclosure._models import (
    FRAGMENT_TEXT_MAX_BYTES,
    SchemaDisclosure,
    SchemaFragment,
    SchemaManifest,
)
from agent_connector_sdk.core.schema_disclosure._uris import (
    fragment_uri_template,
    is_valid_alias,
    manifest_uri,
)

__all__ = ["FRAGMENT_ENVELOPE_MAX_BYTES", "build_schema_disclosure", "split_utf8"]

FRAGMENT_ENVELOPE_MAX_BYTES: Final = 32 * 1024
"""A fragment serialized as JSON (its whole envelope) fits in 32 KiB."""

# JSON escaping grows one text byte to at most six (a control character becomes \u00XX), so an
# envelope is bounded by its identity fields plus 6 × 4,096 bytes of text. Checking that bound once
# per disclosure proves every fragment fits, without serializing each one.
_WORST_CASE_TEXT_ESCAPE: Final = 6
_ENVELOPE_SLACK: Final = 256  # keys, quotes, index and fragment digest around the identity fields


def split_utf8(document: bytes, limit: int = FRAGMENT_TEXT_MAX_BYTES) -> list[bytes]:
    """Cut ``document`` into pieces of at most ``limit`` bytes, each as full as possible, never inside
    a code point (a cut that would land on a continuation byte ``10xxxxxx`` moves back)."""
    pieces: list[bytes] = []
    start = 0
    size = len(document)
    while start < size:
        end = start + limit
        if end < size:
            while document[end] & 0xC0 == 0x80:
                end -= 1
        pieces.append(document[start:end])
        start = end
    return pieces


def _source_digest(source: bytes | bytearray | memoryview | SourceDigest) -> str:
    if isinstance(source, SourceDigest):
        return source.sha256
    return SourceDigest.of(source).sha256


def build_schema_disclosure(
    *,
    operation: str,
    alias: str,
    source: bytes | bytearray | memoryview | SourceDigest,
    input_schema: Any,
    output_schema: Any = None,
) -> SchemaDisclosure:
    """Build the disclosure of one tool's schemas.

    ``source`` is the immutable source document's bytes, or a :class:`SourceDigest` computed once and
    reused across operations. Refuses (``SchemaDisclosureError``): an invalid alias or operation, an
    input schema that is not a JSON object, any non-JSON value (sets, bytes, tuples, non-string keys),
    lone surrogates, non-finite numbers (``invalid_schema``); a document over 16 MiB (``too_large``).
    Never returns a truncated disclosure.
    """
    if not is_valid_alias(alias):
        raise SchemaDisclosureError("invalid_schema", "alias must match [A-Za-z0-9_.-]{1,128}")
    if type(operation) is not str or not operation or len(operation) > 1024:
        raise SchemaDisclosureError("invalid_schema", "operation must be a non-empty string")
    source_sha256 = _source_digest(source)
    document, digests = encode_schema_document(input_schema, output_schema)
    pieces = split_utf8(document)
    identity: dict[str, Any] = {
        "version": 1,
        "operation": operation,
        "alias": alias,
        "source_sha256": source_sha256,
        "schema_sha256": digests.schema_sha256,
        "schema_bytes": digests.schema_bytes,
        "input_schema_sha256": digests.input_schema_sha256,
        "output_schema_sha256": digests.output_schema_sha256,
        "fragment_count": len(pieces),
        "manifest_uri": manifest_uri(alias, digests.schema_sha256),
        "fragment_uri_template": fragment_uri_template(alias, digests.schema_sha256),
    }
    manifest = SchemaManifest(**identity)
    worst_envelope = (
        len(manifest.model_dump_json().encode("utf-8"))
        + _ENVELOPE_SLACK
        + _WORST_CASE_TEXT_ESCAPE * FRAGMENT_TEXT_MAX_BYTES
    )
    if worst_envelope > FRAGMENT_ENVELOPE_MAX_BYTES:  # unreachable with valid aliases; fail closed anyway
        raise SchemaDisclosureError("too_large", "a fragment envelope could exceed 32 KiB")
    # Fully validated construction: measured as cheap as pydantic's unvalidated model_construct.
    fragments = tuple(
        SchemaFragment(**identity, index=index, fragment_sha256=sha256_hex(piece), text=piece.decode("utf-8"))
        for index, piece in enumerate(pieces)
    )
    # Every fragment was validated above from the very identity the manifest validated, in index
    # order, so re-checking them against the manifest would only repeat work.
    return SchemaDisclosure.model_construct(manifest=manifest, fragments=fragments)
