"""The client the official MCP conformance suite drives: ``python examples/conformance_client.py URL``.

The suite starts a scenario server, appends its URL to this command line and says what to do through the
environment: ``MCP_CONFORMANCE_SCENARIO`` (the scenario name) and, for some scenarios,
``MCP_CONFORMANCE_CONTEXT`` (a JSON object, e.g. the tool calls to make). The verdict is the suite's,
from what it observed on the wire.

Every tool goes through our host-side gates (``agent_connector_sdk.mcp.host.contract_client.ContractClient``):
``discover_tools`` pages ``tools/list`` and admits descriptors (a tool with an invalid ``x-mcp-header``
annotation is dropped, the others stay callable; no remote ``$ref`` is ever fetched), ``call`` validates
arguments, sends our ``Mcp-Param-*`` headers and validates the result. Resources and prompts are plain
MCP requests on the wrapped ``fastmcp.Client``.

``auth/*`` scenarios connect through FastMCP's own OAuth support (``HeadlessOAuth``: FastMCP's ``OAuth``
with the browser step replaced by following the suite's auto-approving redirect; client-credentials
providers for the machine-to-machine extensions). Elicitation, sampling and roots callbacks answer
the requests a server embeds in an ``InputRequiredResult``; ``ContractClient.call`` drives those rounds.

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
from urllib.parse import parse_qs, urlsplit

import fastmcp
import mcp_types
from fastmcp.client.auth import OAuth
from fastmcp.client.auth.client_credentials import ClientCredentialsOAuthProvider, PrivateKeyJWTOAuthProvider
from fastmcp.skills.client import SkillsClientExtension
from mcp.client.auth import AuthorizationCodeResult, OAuthFlowError
from mcp.client.auth.extensions.client_credentials import SignedJWTParameters
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from agent_connector_sdk.core.contracts import AdmissionReport, ContractError
from agent_connector_sdk.mcp.host import ContractClient, HostOptions, ProtocolError


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
        admitted = {
            tool.name: tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in tools
        }
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


# ------------------------------------------------------------------------------- authorization (OAuth)

# The suite's authorization servers accept a Client ID Metadata Document URL as client_id when they
# advertise CIMD support; they never fetch it (the scenario serves its own copy of the document).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


class HeadlessOAuth(OAuth):
    """FastMCP's OAuth client with the browser replaced by a direct HTTP request.

    Everything OAuth is FastMCP's / the ``mcp`` SDK's: protected-resource and authorization-server
    discovery, registration (pre-registered, CIMD or dynamic), PKCE, ``state`` and ``iss`` checks, scope
    selection and step-up, token exchange, refresh and storage. The only part replaced is the user at a
    browser: the suite's authorization endpoints approve at once and redirect to our ``redirect_uri``,
    so this follows that single redirect itself and hands the query's ``code``/``state``/``iss`` to the
    SDK as its callback would. No callback server is started.
    """

    _pending: AuthorizationCodeResult | None = None

    async def redirect_handler(self, authorization_url: str) -> None:
        async with self.httpx_client_factory() as http:
            response = await http.get(authorization_url, follow_redirects=False)
        location = response.headers.get("location")
        if not response.is_redirect or not location:
            raise RuntimeError(f"authorization endpoint answered HTTP {response.status_code}, no redirect")
        query = parse_qs(urlsplit(location).query)
        if "code" not in query:
            # An OAuth error redirect (error=access_denied, ...): the flow fails, as it would for a user.
            raise RuntimeError(f"authorization failed: {query.get('error', ['no code'])[0]}")
        self._pending = AuthorizationCodeResult(
            code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
        )

    async def callback_handler(self) -> AuthorizationCodeResult:
        pending, self._pending = self._pending, None
        if pending is None:
            raise RuntimeError("no authorization code: the redirect was never followed")
        return pending


def oauth_for(context: Mapping[str, Any]) -> HeadlessOAuth:
    """OAuth for an ``auth/*`` scenario: pre-registered credentials when the context gives them."""
    client_id = context.get("client_id")
    return HeadlessOAuth(
        client_name="agent-connector-sdk conformance client",
        client_metadata_url=None if client_id else CLIENT_METADATA_URL,
        client_id=str(client_id) if client_id else None,
        client_secret=str(context["client_secret"]) if context.get("client_secret") else None,
        # FastMCP defaults a pre-registered secret to client_secret_post; RFC 7591 §2 makes
        # client_secret_basic the default method when none was registered, and RFC 6749 §2.3.1 makes
        # HTTP Basic the one every authorization server must support for secrets.
        additional_client_metadata=(
            {"token_endpoint_auth_method": "client_secret_basic"} if context.get("client_secret") else None
        ),
        callback_timeout=30.0,
    )


def auth_for(scenario: str, context: Mapping[str, Any]) -> Any:
    """The client's credentials for ``scenario``, as a deployment would configure them.

    Machine-to-machine scenarios (the ``client_credentials`` grant, an extension) use FastMCP's
    client-credentials providers over the SDK's; every other ``auth/*`` scenario is the authorization
    code flow. Either way the SDK does all of OAuth.
    """
    if not scenario.startswith("auth/"):
        return None
    if scenario == "auth/client-credentials-basic":
        return ClientCredentialsOAuthProvider(
            client_id=str(context["client_id"]),
            client_secret=str(context["client_secret"]),
            token_endpoint_auth_method="client_secret_basic",
        )
    if scenario == "auth/client-credentials-jwt":
        signing = SignedJWTParameters(
            issuer=str(context["client_id"]),
            subject=str(context["client_id"]),
            signing_algorithm=str(context.get("signing_algorithm", "ES256")),
            signing_key=str(context["private_key_pem"]),
        )
        return PrivateKeyJWTOAuthProvider(
            client_id=str(context["client_id"]), assertion_provider=signing.create_assertion_provider()
        )
    return oauth_for(context)


# ------------------------------------------------------------------------------ input callbacks
# What this client answers when a server embeds requests in an InputRequiredResult (SEP-2322) or sends
# them directly. Declaring a callback is what declares the capability.


async def accept_elicitation(
    message: str, response_type: Any, params: mcp_types.ElicitRequestParams, context: Any
) -> mcp_types.ElicitResult:
    """Accept a form with a value for every property it asks for (booleans true, strings fixed)."""
    schema = getattr(params, "requested_schema", None) or {}
    samples: dict[str, Any] = {"boolean": True, "string": "conformance", "integer": 1, "number": 1}
    content = {
        name: samples.get(str(spec.get("type")), "conformance")
        for name, spec in (schema.get("properties") or {}).items()
        if isinstance(spec, Mapping)
    }
    return mcp_types.ElicitResult(action="accept", content=content)


async def answer_sampling(messages: Any, params: Any, context: Any) -> str:
    return "A sampled answer."


ROOTS = [mcp_types.Root(uri="file:///conformance/root", name="conformance root")]


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


async def request_state(client: ScenarioClient, context: Mapping[str, Any]) -> None:
    """``sep-2322-client-request-state``: every call is driven to its final result by ``call``."""
    admitted = await discover(client)
    for name in (
        "test_mrtr_echo_state",
        "test_mrtr_unrelated",
        "test_mrtr_no_state",
        "test_mrtr_no_result_type",
    ):
        if name not in admitted:
            raise ScenarioFailed(f"{name} was not admitted")
        await client.call(name, {})


async def authorized_session(client: ScenarioClient, context: Mapping[str, Any]) -> None:
    """``auth/*``: the OAuth flow runs inside the transport; list, admit and call the first tool."""
    admitted = await discover(client)
    for name, tool in list(admitted.items())[:1]:
        await client.call(name, sample_arguments(tool))


async def skills_session(client: ScenarioClient, context: Mapping[str, Any]) -> None:
    """``sep-2640-client-*`` (Skills extension): list skills; load one only when the scenario needs it.

    Loading is FastMCP's ``read_skill``: it reads the skill's files and checks each against the size
    and SHA-256 digest the listing promised, and the frontmatter against the entry. A skill that fails
    is refused (reported by name only) and nothing of it is used.
    """
    session = client.client
    skills = await session.list_skills()
    say(f"skills listed: {len(skills)}")
    if os.environ.get("MCP_CONFORMANCE_SCENARIO") == "sep-2640-client-no-prefetch":
        return  # nothing here needs a skill: its files are never fetched ahead of need
    for skill in skills[:1]:
        try:
            await session.read_skill(str(skill.uri))
        except ValidationError:
            # read_skill re-fetches the entry with skills/get before reading any file; an unusable
            # answer stops it there (nothing of the skill is read or used).
            say("skill not loaded: the skills/get answer does not match the Skills schema")
        except ValueError:
            say("skill refused: its files do not match the entry (size, digest or frontmatter)")


SCENARIOS: dict[str, Scenario] = {
    "tools_call": tools_call,
    "request-metadata": request_metadata,
    "http-standard-headers": http_standard_headers,
    "http-custom-headers": http_custom_headers,
    "http-invalid-tool-headers": http_invalid_tool_headers,
    "json-schema-ref-no-deref": json_schema_ref_no_deref,
    "json-schema-2020-12-preservation": json_schema_preservation,
    "sep-2322-client-request-state": request_state,
}


def handler_for(scenario: str) -> Scenario | None:
    if scenario.startswith("auth/"):
        return authorized_session
    if scenario.startswith("sep-2640-client-"):
        return skills_session
    return SCENARIOS.get(scenario)


def build_client(url: str, scenario: str, context: Mapping[str, Any]) -> fastmcp.Client[Any]:
    """The ``fastmcp.Client`` every scenario runs on (plain or wrapped): OAuth for ``auth/*``."""
    return fastmcp.Client(
        url,
        auth=auth_for(scenario, context),
        elicitation_handler=accept_elicitation,
        sampling_handler=answer_sampling,
        roots=ROOTS,
        extensions=[SkillsClientExtension()] if scenario.startswith("sep-2640-") else None,
    )


async def run(url: str, scenario: str, context: Mapping[str, Any], *, baseline: bool = False) -> int:
    handler = handler_for(scenario)
    if handler is None:
        say(f"unsupported scenario {scenario!r}")
        return 2
    try:
        if baseline:
            async with build_client(url, scenario, context) as raw:
                await handler(PlainClient(raw), context)
        else:
            # The suite's fixture tools carry no annotations ("may write"); the conformance runner is the
            # operator who confirmed running them, so write confirmation is explicitly opted out here.
            # The strict profile: the project's stricter rules reject too, so the suite also shows that
            # none of them refuses a conforming fixture (the json-schema-2020-12-preservation echo
            # tool's argument description points at the other fixture tool, which is documentation,
            # not the steering the cross-reference rule rejects).
            options = HostOptions(require_confirmation=False, profile="strict")
            async with ContractClient(build_client(url, scenario, context), options) as gated:
                await handler(gated, context)
    except ScenarioFailed as failure:
        say(f"{scenario}: {failure}")
        return 1
    except (ContractError, ProtocolError, MCPError) as error:
        # Category/class only: messages can quote server-supplied text.
        category = getattr(error, "category", type(error).__name__)
        path = getattr(error, "path", "")
        say(f"{scenario}: refused by {type(error).__name__} ({category}{f' at {path}' if path else ''})")
        return 1
    except KeyError as missing:
        say(f"{scenario}: the scenario context has no {missing} (MCP_CONFORMANCE_CONTEXT)")
        return 1
    except Exception as error:
        refusal = oauth_refusal(error)
        if refusal is None:
            raise
        # The SDK stopped the OAuth flow (e.g. a wrong `iss`, a resource mismatch): the scenario's point.
        say(f"{scenario}: authorization refused by the SDK ({type(refusal).__name__})")
        return 1
    return 0


def oauth_refusal(error: BaseException) -> OAuthFlowError | None:
    """The SDK's ``OAuthFlowError`` behind ``error`` (FastMCP wraps it when connecting), if any."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, OAuthFlowError):
            return seen
        if isinstance(seen, BaseExceptionGroup):
            found = [oauth_refusal(inner) for inner in seen.exceptions]
            return next((f for f in found if f is not None), None)
        seen = seen.__cause__ or seen.__context__
    return None


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
