"""``agent-connector disclose``: build (and optionally verify and write) the schema disclosures of every
operation of an OpenAPI document. No network: the document's servers are never called."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from agent_connector_sdk.cli.errors import CliError
from agent_connector_sdk.cli.sources import count_operations
from agent_connector_sdk.connectors import OpenAPISource
from agent_connector_sdk.connectors.openapi import (
    InvalidOpenAPIDocument,
    OpenAPIOperationTool,
    build_openapi_server,
    list_operation_tools,
)
from agent_connector_sdk.core.schema_disclosure import (
    SchemaDisclosure,
    SchemaDisclosureError,
    SourceDigest,
    build_schema_disclosure,
    canonical_json_bytes,
    parse_fragment,
    parse_manifest,
    reconstruct_schema,
)
from agent_connector_sdk.serving.openapi_app import SEARCH_TOOL_NAMES, document_refusal
from agent_connector_sdk.serving.openapi_document import document_info

__all__ = ["DisclosureRun", "Refusal", "build_disclosures", "verify_disclosure", "write_disclosures"]

# Operations are never called: FastMCP only needs *a* base URL to build the tools.
_UNUSED_BASE_URL = "http://127.0.0.1"


@dataclass(frozen=True)
class Refusal:
    """An operation whose disclosure could not be built (or verified): the core's category and why."""

    alias: str
    operation: str
    category: str
    reason: str


@dataclass
class DisclosureRun:
    """What one ``disclose`` run built: disclosures by alias, refusals, and the source identity."""

    source: SourceDigest
    source_bytes: int
    title: str
    disclosures: dict[str, SchemaDisclosure] = field(default_factory=dict)
    refusals: list[Refusal] = field(default_factory=list)


async def _operation_tools(
    source: OpenAPISource, allow_duplicate_operation_ids: bool, strict_refs: bool
) -> tuple[list[OpenAPIOperationTool], dict[str, str]]:
    """The tools ``serve`` would build (the same refusals, the same reserved names), and the
    operations left out with why."""
    try:
        openapi = build_openapi_server(
            source.document,
            base_url=_UNUSED_BASE_URL,
            allow_duplicate_operation_ids=allow_duplicate_operation_ids,
            strict_refs=strict_refs,
            reserved_names=SEARCH_TOOL_NAMES,
            raw=source.raw,
        )
    except InvalidOpenAPIDocument as error:  # the connector or FastMCP's parser refused the document
        raise CliError(document_refusal(error)) from None
    except ValueError as error:  # e.g. a reference FastMCP cannot follow
        raise CliError(str(error)) from None
    try:
        return await list_operation_tools(openapi), dict(openapi.refused)
    finally:
        await openapi.aclose()


def build_disclosures(
    source: OpenAPISource,
    *,
    operation: str | None = None,
    progress: Callable[[str, int], None] | None = None,
    allow_duplicate_operation_ids: bool = False,
    strict_refs: bool = False,
) -> DisclosureRun:
    """Build the disclosure of every operation (or only ``operation``, by ID or tool name). An operation
    the connector leaves out (an unresolvable ``$ref``) is a refusal of category ``unresolvable_ref``."""
    if count_operations(source.document) == 0:
        raise CliError(
            "the document has no operations (its 'paths' define no HTTP methods): nothing to disclose"
        )
    tools, left_out = anyio.run(_operation_tools, source, allow_duplicate_operation_ids, strict_refs)
    if operation is not None:
        tools = [tool for tool in tools if operation in (tool.alias, tool.operation)]
        left_out = {name: reason for name, reason in left_out.items() if name == operation}
        if not tools and not left_out:
            raise CliError(
                f"no operation or tool named {json.dumps(operation, ensure_ascii=False)} in the document"
            )
    digest = SourceDigest.of(source.raw)
    run = DisclosureRun(source=digest, source_bytes=len(source.raw), title=document_info(source.document)[0])
    run.refusals.extend(Refusal("", name, "unresolvable_ref", reason) for name, reason in left_out.items())
    if progress is not None:
        progress("total", len(tools))
    for tool in tools:
        try:
            run.disclosures[tool.alias] = build_schema_disclosure(
                operation=tool.operation,
                alias=tool.alias,
                source=digest,
                input_schema=tool.input_schema,
                output_schema=tool.output_schema,
            )
        except SchemaDisclosureError as error:
            run.refusals.append(Refusal(tool.alias, tool.operation, error.category, error.message))
        if progress is not None:
            progress("advance", 1)
    return run


def _body(model: Any) -> bytes:
    # Exactly the bytes a provider serves for the resource (canonical JSON).
    return canonical_json_bytes(model.model_dump(mode="json"))


def write_disclosures(run: DisclosureRun, out: Path) -> int:
    """Write ``out/{alias}/manifest.json`` and ``out/{alias}/fragments/{index}.json``.

    Returns the number of files written."""
    written = 0
    try:
        for alias, disclosure in run.disclosures.items():
            fragments = out / alias / "fragments"
            fragments.mkdir(parents=True, exist_ok=True)
            (out / alias / "manifest.json").write_bytes(_body(disclosure.manifest))
            written += 1
            for fragment in disclosure.fragments:
                (fragments / f"{fragment.index}.json").write_bytes(_body(fragment))
                written += 1
    except OSError as error:
        raise CliError(f"{out}: cannot write ({error.strerror or type(error).__name__})") from None
    return written


def verify_disclosure(disclosure: SchemaDisclosure, out: Path | None = None) -> str | None:
    """Re-parse the served bodies (from ``out`` when given: what was written) and reconstruct them as a
    consumer would; ``None`` when intact, else the core's refusal category."""
    alias = disclosure.manifest.alias
    try:
        if out is not None:
            manifest = parse_manifest((out / alias / "manifest.json").read_bytes())
            fragments = [
                parse_fragment((out / alias / "fragments" / f"{index}.json").read_bytes())
                for index in range(manifest.fragment_count)
            ]
        else:
            manifest = parse_manifest(_body(disclosure.manifest))
            fragments = [parse_fragment(_body(fragment)) for fragment in disclosure.fragments]
        reconstruct_schema(manifest, fragments)
    except SchemaDisclosureError as error:
        return error.category
    except OSError:
        return "unreadable"
    return None
