"""Shared by benchmarks: the pinned, sha256-verified GitHub REST description and its tools' schemas.

Fetching and verification live in :mod:`scripts.github_openapi` (``npm pack`` of the pinned
``@octokit/openapi`` into ``.cache/``, tarball and document digests checked against committed constants);
this module only adds what benchmarks share on top.
"""

from __future__ import annotations

import asyncio
import time

from agent_connector_sdk.connectors import OpenAPIOperationTool, openapi_operation_tools
from scripts.github_openapi import (
    DOCUMENT_MEMBER,
    OPERATION_COUNT,
    PACKAGE,
    VERSION,
    GitHubDescription,
    load_github_description,
)

__all__ = ["GitHubDescription", "load_github_description", "load_github_tools"]


def load_github_tools() -> tuple[GitHubDescription, list[OpenAPIOperationTool]]:
    """The verified full description and every operation's tool schemas, as ``tools/list`` shows them."""
    started = time.perf_counter()
    description = load_github_description()
    tools = asyncio.run(openapi_operation_tools(description.document))
    if len(tools) != OPERATION_COUNT:
        raise RuntimeError(f"expected {OPERATION_COUNT} tools, FastMCP produced {len(tools)}")
    print(
        f"{PACKAGE}@{VERSION} {DOCUMENT_MEMBER}: {len(description.raw):,} bytes, "
        f"sha256 {description.sha256} (verified)\n"
        f"{len(tools)} operations -> FastMCP tools in {time.perf_counter() - started:.1f} s (setup, untimed)"
    )
    return description, tools
