"""The canonical encoding's steps, for the code that checks a disclosure's digests itself.

A named public face of :mod:`._encoding` and :mod:`._build` (the folder's ``__init__`` is the published
wire format, kept to it): the complete canonical document with its digests, SHA-256 as lowercase hex,
and the UTF-8-safe cut of a document into fragment texts.
"""

from agent_connector_sdk.core.schema_disclosure._build import split_utf8
from agent_connector_sdk.core.schema_disclosure._encoding import encode_schema_document, sha256_hex

__all__ = ["encode_schema_document", "sha256_hex", "split_utf8"]
