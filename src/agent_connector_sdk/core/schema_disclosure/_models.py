"""Frozen, strict wire models of a disclosure: manifest, fragment, and the two together.

Strict means no coercion: ``"1"`` is not ``1``, ``True`` is not ``1``, ``1.0`` is not ``1``. Unknown
fields are refused. Derived fields (URIs, fragment count) must agree with the fields they derive from,
so a copied or edited manifest cannot point at another tool's resources.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from agent_connector_sdk.core.schema_disclosure._encoding import MAX_DOCUMENT_BYTES
from agent_connector_sdk.core.schema_disclosure._uris import (
    ALIAS_PATTERN,
    fragment_uri_template,
    manifest_uri,
)

__all__ = [
    "FRAGMENT_TEXT_MAX_BYTES",
    "IDENTITY_FIELDS",
    "SchemaDisclosure",
    "SchemaFragment",
    "SchemaManifest",
]

FRAGMENT_TEXT_MAX_BYTES: Final = 4096
"""A fragment's ``text`` is at most 4,096 UTF-8 bytes."""

# A cut never splits a code point, so a full fragment holds at least 4,093 bytes: a document of N
# bytes has between ceil(N / 4096) and ceil(N / 4093) fragments.
_MIN_FULL_FRAGMENT_BYTES: Final = FRAGMENT_TEXT_MAX_BYTES - 3

Sha256Hex = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$", strict=True)]
Alias = Annotated[str, StringConstraints(pattern=ALIAS_PATTERN, strict=True)]
OperationId = Annotated[str, StringConstraints(min_length=1, max_length=1024, strict=True)]

_CONFIG: Final = ConfigDict(frozen=True, extra="forbid", strict=True, regex_engine="rust-regex")


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


class _SchemaIdentity(BaseModel):
    """The fields that identify one tool's complete schema document (shared by manifest and fragment)."""

    model_config = _CONFIG

    version: Annotated[StrictInt, Field(ge=1, le=1)]
    operation: OperationId
    alias: Alias
    source_sha256: Sha256Hex
    schema_sha256: Sha256Hex
    schema_bytes: Annotated[StrictInt, Field(ge=1, le=MAX_DOCUMENT_BYTES)]
    input_schema_sha256: Sha256Hex
    output_schema_sha256: Sha256Hex
    fragment_count: Annotated[StrictInt, Field(ge=1)]
    manifest_uri: str
    fragment_uri_template: str

    @model_validator(mode="after")
    def _derived_fields_agree(self) -> Any:
        if self.manifest_uri != manifest_uri(self.alias, self.schema_sha256):
            raise PydanticCustomError(
                "inconsistent_identity", "manifest_uri is not derived from alias and schema_sha256"
            )
        if self.fragment_uri_template != fragment_uri_template(self.alias, self.schema_sha256):
            raise PydanticCustomError(
                "inconsistent_identity", "fragment_uri_template is not derived from alias and schema_sha256"
            )
        lowest = _ceil_div(self.schema_bytes, FRAGMENT_TEXT_MAX_BYTES)
        highest = _ceil_div(self.schema_bytes, _MIN_FULL_FRAGMENT_BYTES)
        if not lowest <= self.fragment_count <= highest:
            raise PydanticCustomError(
                "inconsistent_identity", "fragment_count does not fit schema_bytes in full fragments"
            )
        return self


class SchemaManifest(_SchemaIdentity):
    """Identity of one tool's complete schema document, and where its fragments live.

    ``version`` is the integer 1. ``source_sha256`` hashes the immutable source (e.g. the OpenAPI
    document) the tool was generated from; ``schema_sha256``/``schema_bytes`` describe the complete
    canonical document ``{"inputSchema", "outputSchema"}``; the two schema digests hash each schema's
    own canonical form (an absent output schema is ``null``). ``manifest_uri`` and
    ``fragment_uri_template`` are derived from ``alias`` and ``schema_sha256`` and must agree with them.
    """


IDENTITY_FIELDS: Final[tuple[str, ...]] = tuple(_SchemaIdentity.model_fields)
"""The manifest's fields, which every fragment repeats verbatim."""


class SchemaFragment(_SchemaIdentity):
    """One bounded piece of the complete document, carrying the whole identity it belongs to.

    ``fragment_sha256`` is the SHA-256 of ``text.encode("utf-8")``; the model checks shape and bounds,
    :func:`reconstruct_schema` checks digests against the manifest the consumer selected.
    """

    index: Annotated[StrictInt, Field(ge=0)]
    fragment_sha256: Sha256Hex
    text: Annotated[str, StringConstraints(min_length=1, max_length=FRAGMENT_TEXT_MAX_BYTES, strict=True)]

    @model_validator(mode="after")
    def _fits_its_identity(self) -> Any:
        if self.index >= self.fragment_count:
            raise PydanticCustomError("inconsistent_identity", "index is not below fragment_count")
        try:
            size = len(self.text.encode("utf-8"))
        except UnicodeEncodeError:
            raise PydanticCustomError("corrupt", "text contains a lone surrogate") from None
        if size > FRAGMENT_TEXT_MAX_BYTES:
            raise PydanticCustomError("too_large", "text is over 4096 UTF-8 bytes")
        return self


class SchemaDisclosure(BaseModel):
    """A manifest and its fragments, in index order — what a provider serves for one tool."""

    model_config = _CONFIG

    manifest: SchemaManifest
    fragments: tuple[SchemaFragment, ...]

    @model_validator(mode="after")
    def _fragments_match_manifest(self) -> Any:
        if len(self.fragments) != self.manifest.fragment_count:
            raise PydanticCustomError("incomplete", "fragment count differs from the manifest")
        for position, fragment in enumerate(self.fragments):
            if fragment.index != position:
                raise PydanticCustomError("reordered", "fragments are not in index order")
            for name in IDENTITY_FIELDS:
                if getattr(fragment, name) != getattr(self.manifest, name):
                    raise PydanticCustomError("stale", "a fragment's identity differs from the manifest")
        return self
