"""The disclosure caches' door: bounded, exact caches behind disclosure reads at catalog scale.

A named public face of :mod:`._cache` (the folder's ``__init__`` is the published wire format, kept to
it): the server side's disclosure registry, the ranked search and the disclosure navigation build on these.
"""

from agent_connector_sdk.core.schema_disclosure._cache import (
    BoundedLRU,
    DisclosureCache,
    DisclosureOrigin,
    FrozenSchemaMemo,
    FrozenSchemaView,
    SchemaIdentity,
    SchemaIdentityMemo,
    SchemaProvenance,
    schema_fingerprint,
)

__all__ = [
    "BoundedLRU",
    "DisclosureCache",
    "DisclosureOrigin",
    "FrozenSchemaMemo",
    "FrozenSchemaView",
    "SchemaIdentity",
    "SchemaIdentityMemo",
    "SchemaProvenance",
    "schema_fingerprint",
]
