"""Canonical JSON and digests: the byte-level contract both ends of a disclosure share.

Canonical form (fixed by the wire contract): sorted keys, separators ``,`` and ``:``, UTF-8 with
literal (unescaped) non-ASCII, non-finite numbers refused. It is exactly what
``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)`` emits for
plain JSON values, so any consumer with a standard JSON library can reproduce a digest.

``json.dumps`` alone is too forgiving for a digest: it silently turns tuples into arrays and integer
keys into strings, so two different Python values would share one digest and a value that is not JSON
would look like JSON. ``_require_json`` refuses those before encoding.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Final

from agent_connector_sdk.core.schema_disclosure._errors import SchemaDisclosureError

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "SchemaDigests",
    "SourceDigest",
    "canonical_json_bytes",
    "compute_schema_digests",
    "encode_schema_document",
    "sha256_hex",
]

MAX_DOCUMENT_BYTES: Final = 16 * 1024 * 1024
"""The complete ``{"inputSchema", "outputSchema"}`` document may use at most 16 MiB."""

_SHA256_HEX: Final = re.compile(r"[0-9a-f]{64}")
_PLAIN_SCALARS: Final = frozenset({str, int, bool, type(None)})
_MAX_DEPTH: Final = 512  # deeper than any real schema; keeps the walk and json.dumps off the C stack limit

_ENCODER: Final = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, check_circular=False
)
_DOCUMENT_PREFIX: Final = b'{"inputSchema":'
_DOCUMENT_MIDDLE: Final = b',"outputSchema":'
_DOCUMENT_SUFFIX: Final = b"}"


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class SourceDigest:
    """The SHA-256 of the immutable source bytes a tool was generated from, computed once.

    One source document usually serves every operation (GitHub's is 73 MB for 1,223 operations), so
    hash it once with :meth:`of` and pass the digest to every ``build_schema_disclosure`` call.
    """

    sha256: str

    def __post_init__(self) -> None:
        if not isinstance(self.sha256, str) or _SHA256_HEX.fullmatch(self.sha256) is None:
            raise SchemaDisclosureError("invalid_schema", "source digest must be 64 lowercase hex characters")

    @classmethod
    def of(cls, source: bytes | bytearray | memoryview) -> SourceDigest:
        """Hash ``source`` (bytes, bytearray or memoryview)."""
        if not isinstance(source, bytes | bytearray | memoryview):
            raise SchemaDisclosureError("invalid_schema", "source must be bytes")
        return cls(hashlib.sha256(source).hexdigest())


def _require_json(root: Any) -> None:
    """Refuse anything ``json.loads`` could not have produced (tuples, sets, bytes, non-str keys...).

    Iterative, with an explicit depth bound, so hostile nesting cannot exhaust the interpreter stack.
    Exact type checks (``type(x) is dict``) are deliberate: the subclasses they exclude (OrderedDict,
    enums, custom str) are legitimate JSON in spirit, but a digest must not depend on how a subclass
    happens to serialize.
    """
    # Hot loop (it visits every node of every schema): strings, the common leaf, are skipped first,
    # and keys are checked in their own loop so the value loop stays short.
    stack: list[tuple[Any, int]] = [(root, 0)]
    pop = stack.pop
    push = stack.append
    while stack:
        value, depth = pop()
        kind = type(value)
        if kind is dict:
            for key in value:
                if type(key) is not str:
                    raise SchemaDisclosureError("invalid_schema", "object keys must be strings")
            items = value.values()
        elif kind is list:
            items = value
        elif kind is float:
            if not math.isfinite(value):
                raise SchemaDisclosureError("invalid_schema", "non-finite numbers are not JSON")
            continue
        elif kind in _PLAIN_SCALARS:
            continue
        else:
            raise SchemaDisclosureError("invalid_schema", f"{kind.__name__} is not a JSON value")
        if depth >= _MAX_DEPTH:
            raise SchemaDisclosureError("invalid_schema", f"schema nests deeper than {_MAX_DEPTH} levels")
        for item in items:
            item_kind = type(item)
            if item_kind is str:
                continue
            if item_kind is dict or item_kind is list or item_kind not in _PLAIN_SCALARS:
                push((item, depth + 1))


def canonical_json_bytes(value: Any) -> bytes:
    """Encode a JSON value canonically. Refuses non-JSON values, non-finite numbers, lone surrogates."""
    _require_json(value)
    try:
        return _ENCODER.encode(value).encode("utf-8")
    except UnicodeEncodeError:
        raise SchemaDisclosureError("invalid_schema", "text contains a lone surrogate") from None
    except ValueError:  # allow_nan=False; _require_json already refuses these, kept as a backstop
        raise SchemaDisclosureError("invalid_schema", "non-finite numbers are not JSON") from None
    except RecursionError:
        raise SchemaDisclosureError("invalid_schema", "schema nests too deeply") from None


def _encode_decoded_json(value: Any) -> bytes:
    try:
        return _ENCODER.encode(value).encode("utf-8")
    except UnicodeEncodeError:  # json.loads lets lone surrogates through (as \\ud800 escapes)
        raise SchemaDisclosureError("invalid_schema", "text contains a lone surrogate") from None
    except RecursionError:
        raise SchemaDisclosureError("invalid_schema", "schema nests too deeply") from None


@dataclass(frozen=True, slots=True)
class SchemaDigests:
    """Digests of a tool's two schemas and of the complete canonical document they form."""

    input_schema_sha256: str
    output_schema_sha256: str
    schema_sha256: str
    schema_bytes: int


def encode_schema_document(
    input_schema: Any, output_schema: Any = None, *, decoded_json: bool = False
) -> tuple[bytes, SchemaDigests]:
    """Return the complete canonical document and its digests.

    Sorted keys put ``inputSchema`` before ``outputSchema``, so the document is the two schemas'
    canonical bytes spliced into a fixed frame: each schema is encoded once and serves both its own
    digest and the document's. An absent output schema is ``null``.

    ``decoded_json=True`` is for values that came straight out of ``json.loads`` with non-finite
    constants refused: those can hold no tuple, set, bytes or non-string key, so the type walk is
    skipped (reconstruction re-encodes every document it receives).
    """
    if type(input_schema) is not dict:
        raise SchemaDisclosureError("invalid_schema", "input schema must be a JSON object")
    encode = _encode_decoded_json if decoded_json else canonical_json_bytes
    input_bytes = encode(input_schema)
    output_bytes = encode(output_schema)
    size = len(_DOCUMENT_PREFIX) + len(input_bytes) + len(_DOCUMENT_MIDDLE) + len(output_bytes) + 1
    if size > MAX_DOCUMENT_BYTES:
        raise SchemaDisclosureError(
            "too_large", f"schema document is {size} bytes; the bound is {MAX_DOCUMENT_BYTES}"
        )
    document = b"".join((_DOCUMENT_PREFIX, input_bytes, _DOCUMENT_MIDDLE, output_bytes, _DOCUMENT_SUFFIX))
    digests = SchemaDigests(
        input_schema_sha256=sha256_hex(input_bytes),
        output_schema_sha256=sha256_hex(output_bytes),
        schema_sha256=sha256_hex(document),
        schema_bytes=size,
    )
    return document, digests


def compute_schema_digests(input_schema: Any, output_schema: Any = None) -> SchemaDigests:
    """Digests of a tool's current schemas, as a provider re-checks them on every read."""
    return encode_schema_document(input_schema, output_schema)[1]
