"""The disclosure wire names: aliases, resource URIs and fragment index text.

Fixed by the wire contract (changing any of it is a breaking change):

* manifest: ``schema-disclosure://tools/{alias}/{schema_sha256}/manifest``
* fragment: ``schema-disclosure://tools/{alias}/{schema_sha256}/fragments/{index}``

Only the canonical spelling is ever produced or accepted; nothing here normalizes.
"""

from __future__ import annotations

import re
from typing import Final

from agent_connector_sdk.core.schema_disclosure._errors import SchemaDisclosureError

__all__ = [
    "ALIAS_PATTERN",
    "FRAGMENT_URI_TEMPLATE",
    "MANIFEST_URI_TEMPLATE",
    "fragment_uri",
    "fragment_uri_template",
    "is_valid_alias",
    "manifest_uri",
    "parse_fragment_index",
]

ALIAS_PATTERN: Final = r"^[A-Za-z0-9_.-]{1,128}$"
"""An MCP tool name. ``$`` here is the Rust-regex end of text used by pydantic (no trailing newline)."""

MANIFEST_URI_TEMPLATE: Final = "schema-disclosure://tools/{alias}/{schema_sha256}/manifest"
FRAGMENT_URI_TEMPLATE: Final = "schema-disclosure://tools/{alias}/{schema_sha256}/fragments/{index}"

_ALIAS: Final = re.compile(r"[A-Za-z0-9_.-]{1,128}")
# ASCII only on purpose: `\d` and int() accept full-width and Arabic-Indic digits, which would give one
# fragment several URIs. Ten digits cover any count a 16 MiB document can have and keep int() cheap.
_INDEX: Final = re.compile(r"0|[1-9][0-9]{0,9}")


def is_valid_alias(alias: object) -> bool:
    """True for a ``str`` of 1–128 characters from ``A-Za-z0-9_.-``."""
    return isinstance(alias, str) and _ALIAS.fullmatch(alias) is not None


def manifest_uri(alias: str, schema_sha256: str) -> str:
    """The manifest resource URI for ``alias`` at ``schema_sha256``."""
    return f"schema-disclosure://tools/{alias}/{schema_sha256}/manifest"


def fragment_uri_template(alias: str, schema_sha256: str) -> str:
    """The fragment URI template, keeping the literal ``{index}``."""
    return f"schema-disclosure://tools/{alias}/{schema_sha256}/fragments/{{index}}"


def fragment_uri(alias: str, schema_sha256: str, index: int) -> str:
    """The URI of fragment ``index``."""
    return f"schema-disclosure://tools/{alias}/{schema_sha256}/fragments/{index}"


def parse_fragment_index(index: object, fragment_count: int) -> int:
    """Parse URI index text: ``0`` or ``[1-9][0-9]*`` in ASCII, below ``fragment_count``.

    Everything else — ``01``, ``-1``, ``+1``, `` 1``, ``1.0``, full-width or Arabic-Indic digits,
    an index at or past the count, non-strings — is ``malformed_index``.
    """
    if type(index) is not str or _INDEX.fullmatch(index) is None:
        raise SchemaDisclosureError("malformed_index", "fragment index must be canonical ASCII decimal")
    value = int(index)
    if value >= fragment_count:
        raise SchemaDisclosureError("malformed_index", f"fragment index is not below {fragment_count}")
    return value
