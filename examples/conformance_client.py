"""The client the official MCP conformance suite drives: ``python examples/conformance_client.py URL``.

The suite starts a scenario server, appends its URL to this command line and says what to do through the
environment: ``MCP_CONFORMANCE_SCENARIO`` (the scenario name) and, for some scenarios,
``MCP_CONFORMANCE_CONTEXT`` (a JSON object, e.g. the tool calls to make). The verdict is the suite's,
from what it observed on the wire.

Every tool goes through our host-side gates (``agent_connector_sdk.mcp.client.ContractClient``):
``discover_tools`` pages ``tools/list`` and admits descriptors (a tool with an invalid ``x-mcp-header``
annotation is dropped, the others stay callable; no remote ``$ref`` is ever fetched), ``call`` validates
arguments, sends our ``Mcp-Param-*`` headers and validates the result. Resources and prompts are plain
MCP requests on the wrapped ``fastmcp.Client``.

``--baseline`` runs the same scenario steps on a plain ``fastmcp.Client`` instead (every listed tool is
"admitted", calls go through ``call_tool_mcp``, headers are whatever the ``mcp`` SDK mirrors); it exists
only for the side-by-side table in ``docs/conformance.md``.

Exit status: 0 when the scenario's steps ran; 1 when a step failed in a way the scenario did not ask for.
Gate refusals are printed (names and categories only) and, where refusing is the point of the scenario,
are not failures.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import fastmcp
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.mcp.client import ContractClient, ProtocolError
from agent_connector_sdk.mcp.contracts import ContractError
from agent_connector_sdk.mcp.contracts.admission import AdmissionReport


class ScenarioFailed(Exception):
    """A scenario step could not be carried out (e.g. the tool it needs was not admitted)."""


class ScenarioClient(Protocol):
    """What the scenario steps use: ``ContractClient``'s surface (the plain baseline mimics it)."""

    @property
    def client(self) -> fastmcp.Client[Any]: ...

    async def discover_tools(self) -> AdmissionReport: ...

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> Any: ...


class PlainClient:
    """The baseline: a bare, already entered ``fastmcp.Client`` behind the ``ScenarioClient`` surface,
    with no gates."""

    def __init__(self, client: fastmcp.Client[Any]) -> None:
        self._client = client

    @property
    def client(self) -> fastmcp.Client[Any]:
        return self._client

    async def discover_tools(self) -> AdmissionReport:
        tools = await self._client.list_tools()
        admitted = {tool.name: tool.model_dump(by_alias=True, mode="json", exclude_none=True)
                    for tool in tools}
        return AdmissionReport(admitted=admitted, rejected=[])

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> Any:
        return await self._client.call_tool_mcp(name, dict(arguments or {}))


Scenario = Callable[[ScenarioClient, Mapping[str, Any]], Awaitable[None]]


def say(message: str) -> None:
    print(f"conformance_client: {message}", file=sys.stderr, flush=True)


async def discover(client: ScenarioClient) -> dict[str, dict[str, Any]]:
    """Discover and admit; report refusals by tool name and category (never values)."""
    report = await client.discover_tools()
    for rejection in report.rejected:
        say(f"not admitted: {rejection['tool']!r} ({rejection['category']})")
    return dict(report.admitted)


def sample_arguments(tool: Mapping[str, Any]) -> dict[str, Any]:
    """Minimal arguments for ``tool``'s required properties, by declared type (for scenarios that only
    need *a* call, such as "call every admitted tool")."""
    schema = tool.get("inputSchema", {})
    properties = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
    samples: dict[str, Any] = {"string": "us-west1", "integer": 1, "number": 1.5, "boolean": True}
    arguments: dict[str, Any] = {}
    for name in schema.get("required", []) if isinstance(schema, Mapping) else []:
        declared = properties.get(name, {}) if isinstance(properties, Mapping) else {}
        kind = declared.get("type") if isinstance(declared, Mapping) else None
        arguments[name] = samples.get(kind, "x") if isinstance(kind, str) else "x"
    return arguments


# ------------------------------------------------------------------------------------------ scenarios


async def tools_call(client: ScenarioClient, context: Mapping[str, Any]) -> None:
    """``tools_call``: call ``add_numbers`` with two numbers."""
    admitted = await discover(client)
    if "add_numbers" not in admitted:
        raise ScenarioFailed("add_numbers was not admitted")
    result = await client.call("add_numbers", {"a": 5, "b": 3})
    say(f"add_numbers -> {len(result.content)} content block(s)")


async def request_metadata(client: ScenarioClient, context: Mapping[str, Any]) -> None:
    """``request-metadata``: ordinary requests; the SDK puts ``_meta`` and the version header on each."""
    admitted = await discover(client)
    for name, tool in admitted.items():
        await client.call(name, sample_arguments(tool))


async def http_standard_headers(client: ScenarioClient, context: Mapping[str, Any]) -> None:
    """``http-standard-headers``: exercise every method that carries ``Mcp-Method`` / ``Mcp-Name``."""
    admitted = await discover(client)
    for name, tool in admitted.items():
        await client.call(name, sample_arguments(tool))
    session = client.client
    for resource in await session.list_resources():
        await session.read_resource(str(resource.uri))
    for prompt in await session.list_prompts():
        await session.get_prompt(prompt.name)


def drop_optional_nulls(tool: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Treat ``null`` for an *optional* argument as "not provided".

    The scenario asks for ``verbose: null`` on a property typed ``boolean``: our Invoke gate refuses that
    (the tool's own schema does not allow null), while SEP-2243 says a null or absent argument gets no
    header. A host that means "no value" omits the argument, which is what this caller does; required
    arguments are left alone so a null there is still refused by the gate.
    """
    schema = tool.get("inputSchema", {})
    required = set(schema.get("required", [])) if isinstance(schema, Mapping) else set()
    return {key: value for key, value in arguments.items() if value is not None or key in required}


async def http_custom_headers(client: ScenarioClient, context: Mapping[str, Any]) -> None:
    """``http-custom-headers``: make exactly the calls the context lists; headers come from our gates."""
    admitted = await discover(client)
    for call in context.get("toolCalls", []):
        name = str(call["name"])
        tool = admitted.get(name, {})
        await client.call(name, drop_optional_nulls(tool, dict(call.get("arguments") or {})))


async def http_invalid_tool_headers(client: ScenarioClient, context: Mapping[str, Any]) -> None:
    """``http-invalid-tool-headers``: call every *admitted* tool; admission must have dropped the invalid."""
    admitted = await discover(client)
    for name, tool in admitted.items():
        await client.call(name, sample_arguments(tool))


async def json_schema_ref_no_deref(client: ScenarioClient, context: Mapping[str, Any]) -> None:
    """``json-schema-ref-no-deref``: list and admit; a network ``$ref`` is never fetched."""
    await discover(client)


async def json_schema_preservation(client: ScenarioClient, context: Mapping[str, Any]) -> None:
    """``json-schema-2020-12-preservation``: echo the focal tool's schema back exactly as we hold it."""
    admitted = await discover(client)
    focal = admitted.get("json_schema_2020_12_tool")
    if focal is None:
        raise ScenarioFailed("json_schema_2020_12_tool was not admitted")
    await client.call("json_schema_echo", {"schema": focal["inputSchema"]})


SCENARIOS: dict[str, Scenario] = {
    "tools_call": tools_call,
    "request-metadata": request_metadata,
    "http-standard-headers": http_standard_headers,
    "http-custom-headers": http_custom_headers,
    "http-invalid-tool-headers": http_invalid_tool_headers,
    "json-schema-ref-no-deref": json_schema_ref_no_deref,
    "json-schema-2020-12-preservation": json_schema_preservation,
}


async def run(url: str, scenario: str, context: Mapping[str, Any], *, baseline: bool = False) -> int:
    handler = SCENARIOS.get(scenario)
    if handler is None:
        say(f"unsupported scenario {scenario!r}")
        return 2
    try:
        if baseline:
            async with fastmcp.Client(url) as raw:
                await handler(PlainClient(raw), context)
        else:
            async with ContractClient(fastmcp.Client(url)) as gated:
                await handler(gated, context)
    except ScenarioFailed as failure:
        say(f"{scenario}: {failure}")
        return 1
    except (ContractError, ProtocolError, MCPError) as error:
        # Category/class only: messages can quote server-supplied text.
        category = getattr(error, "category", type(error).__name__)
        say(f"{scenario}: refused by {type(error).__name__} ({category})")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    baseline = "--baseline" in args
    if baseline:
        args.remove("--baseline")
    if len(args) != 1:
        say("usage: conformance_client.py [--baseline] URL (with MCP_CONFORMANCE_SCENARIO set)")
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    return asyncio.run(run(args[0], scenario, context, baseline=baseline))


if __name__ == "__main__":
    raise SystemExit(main())
