"""Schema disclosure core (sans-I/O): a tool's schemas as hash-bound, bounded fragments.

A provider builds a :class:`SchemaDisclosure` per tool with :func:`build_schema_disclosure` and serves
its manifest and fragments (each fragment at most 4,096 UTF-8 bytes) with :func:`read_schema_fragment`.
A consumer selects a manifest, reads the fragments and calls :func:`reconstruct_schema`, which proves
the result is exactly the document the selected manifest names. Every refusal is a
:class:`SchemaDisclosureError` with a stable ``category``.
"""

from agent_connector_sdk.core.schema_disclosure._build import (
    FRAGMENT_ENVELOPE_MAX_BYTES,
    build_schema_disclosure,
)
from agent_connector_sdk.core.schema_disclosure._encoding import (
    MAX_DOCUMENT_BYTES,
    SchemaDigests,
    SourceDigest,
    canonical_json_bytes,
    compute_schema_digests,
)
from agent_connector_sdk.core.schema_disclosure._errors import (
    SchemaDisclosureCategory,
    SchemaDisclosureError,
)
from agent_connector_sdk.core.schema_disclosure._models import (
    FRAGMENT_TEXT_MAX_BYTES,
    SchemaDisclosure,
    SchemaFragment,
    SchemaManifest,
)
from agent_connector_sdk.core.schema_disclosure._reconstruct import (
    parse_fragment,
    parse_manifest,
    read_schema_fragment,
    reconstruct_schema,
)
from agent_connector_sdk.core.schema_disclosure._uris import (
    FRAGMENT_URI_TEMPLATE,
    MANIFEST_URI_TEMPLATE,
    fragment_uri,
    is_valid_alias,
    manifest_uri,
    parse_fragment_index,
)

__all__ = [
    "FRAGMENT_ENVELOPE_MAX_BYTES",
    "FRAGMENT_TEXT_MAX_BYTES",
    "FRAGMENT_URI_TEMPLATE",
    "MANIFEST_URI_TEMPLATE",
    "MAX_DOCUMENT_BYTES",
    "SchemaDigests",
    "SchemaDisclosure",
    "SchemaDisclosureCategory",
    "SchemaDisclosureError",
    "SchemaFragment",
    "SchemaManifest",
    "SourceDigest",
    "build_schema_disclosure",
    "canonical_json_bytes",
    "compute_schema_digests",
    "fragment_uri",
    "is_valid_alias",
    "manifest_uri",
    "parse_fragment",
    "parse_fragment_index",
    "parse_manifest",
    "read_schema_fragment",
    "reconstruct_schema",
]
