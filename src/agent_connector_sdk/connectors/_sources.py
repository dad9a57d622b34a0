"""OpenAPI sources: a document as the exact bytes it was read from (what disclosures bind to), parsed.

:func:`load_openapi_source` is the generic loader (JSON; the CLI adds YAML and one-line errors on top);
:func:`load_github_extract` is the embedded default, a small verbatim extract of GitHub's REST API
description: ten operations of ``@octokit/openapi`` (``generated/api.github.com.deref.json``), including the
largest, ``issues/list-events-for-timeline``; the pinned package version and the full document's
digests are recorded in the extract under ``x-agent-connector-extract``. ``scripts/github_openapi.py``
fetches the pinned package (sha256-verified) and regenerates it. The extract's own bytes are the
immutable *source* its tools' disclosures are bound to.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["GITHUB_EXTRACT_PATH", "OpenAPISource", "load_github_extract", "load_openapi_source"]

GITHUB_EXTRACT_PATH = Path(__file__).resolve().parent / "data" / "github_extract.json"
"""Package data (shipped in the wheel); ``python -m scripts.github_openapi extract`` rewrites it."""


@dataclass(frozen=True)
class OpenAPISource:
    """An OpenAPI document as the exact bytes it was read from, and parsed."""

    raw: bytes
    document: dict[str, Any]


def load_openapi_source(raw: bytes) -> OpenAPISource:
    """Parse ``raw`` as an OpenAPI JSON document (an object with ``openapi`` and ``paths``)."""
    document = json.loads(raw)
    if not isinstance(document, dict) or "paths" not in document or "openapi" not in document:
        raise ValueError("not an OpenAPI JSON document (needs 'openapi' and 'paths')")
    return OpenAPISource(raw=raw, document=document)


def load_github_extract() -> OpenAPISource:
    """The embedded GitHub extract shipped with the package."""
    return load_openapi_source(GITHUB_EXTRACT_PATH.read_bytes())
