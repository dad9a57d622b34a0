"""The fixture server that the official MCP conformance suite's server scenarios are run against.

Usage::

    python examples/conformance_server.py --port N                    # ours: gated_http_app
    python examples/conformance_server.py --port N --search           # ours + RegexSearchTransform
    python examples/conformance_server.py --port N --baseline         # plain FastMCP, no gates
    python examples/conformance_server.py --port N --baseline-search  # plain FastMCP + RegexSearchTransform

It serves ``http://127.0.0.1:N/mcp`` (``--port 0`` picks a free port; the chosen URL is printed as the
first stdout line, ``READY http://127.0.0.1:N/mcp``, so a driver never has to guess a port).

The fixtures are exactly what the suite's scenario descriptions (``conformance list`` and the suite's
scenario text for ``@modelcontextprotocol/conformance@0.2.0-alpha.12``) ask for: ``test_simple_text``,
``test_image_content``, ``test_audio_content``, ``test_embedded_resource``, ``test_multiple_content_types``,
``test_error_handling``, ``test_tool_with_progress``, the ``server-stateless`` diagnostics
(``test_missing_capability``, ``test_logging_tool``, ``test_streaming_elicitation``),
``json_schema_2020_12_tool``, a tool with ``x-mcp-header`` annotated properties, the ``test://``
resources and template, the ``test_*`` prompts, a completion handler, the SEP-2322 multi-round-trip
tools and prompt (``test_input_required_result_*``: they ask through ``InputRequiredResult``, only for
capabilities the caller declared, re-ask for missing answers and keep earlier answers in the sealed
``requestState``) and one skill for the Skills extension scenarios. Every mode serves the same
fixtures; the modes differ in how the server and its ASGI app are built (see ``build_app``), so the
conformance table compares builds, not fixtures.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import json
import logging
import warnings
import wave
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import mcp_types
import uvicorn
from fastmcp import Context, FastMCP
from fastmcp.prompts import Message
from fastmcp.server.transforms.search import RegexSearchTransform
from fastmcp.skills import Skill
from fastmcp.skills.provider import SkillCatalogProvider
from fastmcp.tools.base import Tool, ToolResult
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY

from agent_connector_sdk.mcp.server import gated_http_app

Mode = Literal["ours", "ours-search", "baseline", "baseline-search"]
MODES: tuple[Mode, ...] = ("ours", "ours-search", "baseline", "baseline-search")

# A 1x1 red PNG: the scenarios only ask for "a minimal test image".
RED_PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)

HEADER_TOOL = "test_header_mirroring"
"""The fixture tool with ``x-mcp-header`` annotations (SEP-2243 server validation).

The suite picks the first listed tool that has an annotated property and then its first string-typed
annotated property, so this tool's first annotated property is the string ``region``."""

# Written out rather than generated: pydantic renders `int | None` as `anyOf`, and an `x-mcp-header` on a
# property without a plain `type` is an invalid annotation (strict peers then drop the whole tool).
HEADER_TOOL_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "dry_run": {"type": "boolean", "x-mcp-header": "Dry-Run"},
        "note": {"type": "string"},
    },
    "required": ["region"],
    "additionalProperties": False,
}

JSON_SCHEMA_TOOL = "json_schema_2020_12_tool"

# The schema the `json-schema-2020-12` scenario checks for, keyword for keyword (SEP-1613, SEP-2106).
JSON_SCHEMA_2020_12_INPUT: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

COMPLETION_CANDIDATES: dict[str, tuple[str, ...]] = {
    "arg1": ("paris", "park", "party"),
    "arg2": ("world", "work", "wonder"),
    "id": ("123", "124", "125"),
}


CONFORMANCE_SKILL = Skill(
    name="conformance-notes",
    description="Summarize a conformance run: which scenarios passed and which checks failed.",
    instructions="# Conformance notes\n\nRead `reference/checks.md`, then list failing checks by scenario.\n",
    files={"reference/checks.md": "# Checks\n\nEach check has an id, a status and an optional message.\n"},
)


def _silent_wav() -> str:
    """Base64 of a tiny valid WAV (10 ms of 8 kHz mono silence), built rather than pasted."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(1)
        writer.setframerate(8000)
        writer.writeframes(b"\x80" * 80)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


SILENT_WAV = _silent_wav()


class RawSchemaTool(Tool):
    """A tool whose ``inputSchema`` is published verbatim and whose result echoes its arguments as JSON.

    FastMCP would regenerate a function's schema; the 2020-12 scenario checks that ``$schema``,
    ``$anchor`` and ``if``/``then``/``else`` survive, and header annotations must sit on plain types."""

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(content=[mcp_types.TextContent(type="text", text=json.dumps(arguments))])


# ------------------------------------------------------------------ SEP-2322 multi-round-trip fixtures
# Each fixture asks through an `InputRequiredResult` and finishes once the client's retry carries the
# answers. FastMCP seals every outgoing `requestState` and verifies every echo (AEAD, ephemeral key), so a
# tampered state is refused before a fixture runs; fixtures only ever read state they minted themselves.

ELICITATION = "elicitation/create"
SAMPLING = "sampling/createMessage"
LIST_ROOTS = "roots/list"

# Which declared client capability each embedded request needs (the spec: a server MUST NOT send an
# input request the client has not declared support for).
CAPABILITY_FOR_METHOD = {ELICITATION: "elicitation", SAMPLING: "sampling", LIST_ROOTS: "roots"}

InputRequest = mcp_types.ElicitRequest | mcp_types.CreateMessageRequest | mcp_types.ListRootsRequest
_ANSWER_TYPES: dict[str, tuple[type[Any], ...]] = {
    ELICITATION: (mcp_types.ElicitResult,),
    SAMPLING: (mcp_types.CreateMessageResult, mcp_types.CreateMessageResultWithTools),
    LIST_ROOTS: (mcp_types.ListRootsResult,),
}


def elicit(message: str, field: str, kind: str) -> mcp_types.ElicitRequest:
    schema = {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}
    return mcp_types.ElicitRequest(
        params=mcp_types.ElicitRequestFormParams(message=message, requested_schema=schema)
    )


def sample(text: str, max_tokens: int) -> mcp_types.CreateMessageRequest:
    message = mcp_types.SamplingMessage(role="user", content=mcp_types.TextContent(type="text", text=text))
    return mcp_types.CreateMessageRequest(
        params=mcp_types.CreateMessageRequestParams(messages=[message], max_tokens=max_tokens)
    )


def list_roots() -> mcp_types.ListRootsRequest:
    return mcp_types.ListRootsRequest(params=mcp_types.RequestParams())


def declared_capabilities(ctx: Context) -> set[str]:
    """The capabilities the client declared on this request (2026-07-28: per request, in ``_meta``)."""
    capabilities = ctx.session.client_capabilities
    if capabilities is None:
        return set()
    declared = capabilities.model_dump(exclude_none=True)
    return {name for name in CAPABILITY_FOR_METHOD.values() if name in declared}


def require_capabilities(ctx: Context, requests: Mapping[str, InputRequest]) -> None:
    """SEP-2575: a request that needs an undeclared client capability is refused with -32021."""
    declared = declared_capabilities(ctx)
    missing = sorted({CAPABILITY_FOR_METHOD[r.method] for r in requests.values()} - declared)
    if missing:
        raise MCPError(
            code=MISSING_REQUIRED_CLIENT_CAPABILITY,
            message="This request needs client capabilities that were not declared",
            data={"requiredCapabilities": {name: {} for name in missing}},
        )


def _fits(request: InputRequest, answer: object) -> bool:
    if not isinstance(answer, _ANSWER_TYPES[request.method]):
        return False
    if isinstance(request, mcp_types.ElicitRequest) and isinstance(answer, mcp_types.ElicitResult):
        # An accepted form answer must hold every field the form required, with its declared type.
        if answer.action != "accept":
            return True
        schema = getattr(request.params, "requested_schema", {})
        kinds = {"string": str, "boolean": bool}
        for field in schema.get("required", []):
            value = (answer.content or {}).get(field)
            expected = kinds.get(schema["properties"][field]["type"], object)
            if not isinstance(value, expected):
                return False
    return True


def gather(
    ctx: Context, stages: Sequence[Mapping[str, InputRequest]], kind: str, *, always_state: bool = False
) -> dict[str, Any] | mcp_types.InputRequiredResult:
    """The answers to every stage's requests, or the ``InputRequiredResult`` asking for what is missing.

    Answers already received travel in ``requestState`` (sealed by FastMCP), so a retry only needs the
    answers to the current stage. An answer is taken only for a key the current stage asked for and only
    when it has the asked-for shape; anything else in ``inputResponses`` is ignored (the spec: a server
    SHOULD ignore what it does not recognize and re-request what is missing, rather than fail).
    ``always_state`` mints a ``requestState`` even when nothing is held yet.
    """
    held: dict[str, Any] = {}
    if ctx.request_state is not None:
        state = json.loads(ctx.request_state)
        if not isinstance(state, dict) or state.get("kind") != kind:
            # Sealed by this server but for another fixture: not this call's state.
            raise MCPError(
                code=mcp_types.INVALID_PARAMS, message="requestState does not belong to this request"
            )
        held = dict(state["answers"])
    responses = ctx.input_responses or {}
    for stage in stages:
        stage_open = any(key not in held for key in stage)
        for key, request in stage.items():
            if key not in held and key in responses and _fits(request, responses[key]):
                held[key] = responses[key].model_dump(by_alias=True, mode="json", exclude_none=True)
        missing = {key: request for key, request in stage.items() if key not in held}
        if missing:
            require_capabilities(ctx, missing)
            state_needed = always_state or bool(held)
            return mcp_types.InputRequiredResult(
                input_requests=dict(missing),
                request_state=json.dumps({"kind": kind, "answers": held}) if state_needed else None,
            )
        if stage_open:
            # This round's answers completed this stage, so the next stage has not been asked yet:
            # answers to it in the same retry are not answers to anything we asked.
            responses = {}
    return held


def accepted(answer: Mapping[str, Any], field: str) -> Any:
    """An elicitation answer's ``field``, or ``None`` when the user declined or cancelled."""
    return (answer.get("content") or {}).get(field) if answer.get("action") == "accept" else None


def sampled_text(answer: Mapping[str, Any]) -> str:
    content = answer.get("content")
    blocks = content if isinstance(content, list) else [content]
    return " ".join(str(b.get("text")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text")


def text_result(text: str) -> list[mcp_types.ContentBlock]:
    return [mcp_types.TextContent(type="text", text=text)]


INPUT_REQUIRED_TOOLS: tuple[str, ...] = (
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
)

AskOrAnswer = list[mcp_types.ContentBlock] | mcp_types.InputRequiredResult


def add_input_required_fixtures(server: FastMCP) -> None:
    """The tools and the prompt the ``input-required-result-*`` scenarios call (SEP-2322)."""
    user_name = {"user_name": elicit("What is your name?", "name", "string")}

    @server.tool(description="Asks for the caller's name by elicitation, then greets.", output_schema=None)
    def test_input_required_result_elicitation(ctx: Context) -> AskOrAnswer:
        answers = gather(ctx, [user_name], "elicitation")
        if isinstance(answers, mcp_types.InputRequiredResult):
            return answers
        return text_result(f"Hello, {accepted(answers['user_name'], 'name') or 'stranger'}!")

    @server.tool(description="Asks the client's model a question by sampling.", output_schema=None)
    def test_input_required_result_sampling(ctx: Context) -> AskOrAnswer:
        asks = {"capital_question": sample("What is the capital of France?", 100)}
        answers = gather(ctx, [asks], "sampling")
        if isinstance(answers, mcp_types.InputRequiredResult):
            return answers
        return text_result(f"Sampling result: {sampled_text(answers['capital_question'])}")

    @server.tool(description="Asks for the client's roots, then lists them.", output_schema=None)
    def test_input_required_result_list_roots(ctx: Context) -> AskOrAnswer:
        answers = gather(ctx, [{"client_roots": list_roots()}], "list-roots")
        if isinstance(answers, mcp_types.InputRequiredResult):
            return answers
        uris = [str(root["uri"]) for root in answers["client_roots"]["roots"]]
        return text_result(f"Found {len(uris)} root(s): {', '.join(uris)}")

    @server.tool(
        description="Asks for confirmation and carries requestState across the retry.", output_schema=None
    )
    def test_input_required_result_request_state(ctx: Context) -> AskOrAnswer:
        asks = {"confirm": elicit("Please confirm", "ok", "boolean")}
        answers = gather(ctx, [asks], "request-state", always_state=True)
        if isinstance(answers, mcp_types.InputRequiredResult):
            return answers
        # Reaching here means the echoed state unsealed and names this fixture: it was validated.
        return text_result(f"state-ok: requestState validated (ok={accepted(answers['confirm'], 'ok')})")

    @server.tool(description="Asks by elicitation, sampling and roots/list in one round.", output_schema=None)
    def test_input_required_result_multiple_inputs(ctx: Context) -> AskOrAnswer:
        asks = {
            **user_name,
            "greeting": sample("Generate a greeting", 50),
            "client_roots": list_roots(),
        }
        answers = gather(ctx, [asks], "multiple-inputs", always_state=True)
        if isinstance(answers, mcp_types.InputRequiredResult):
            return answers
        name = accepted(answers["user_name"], "name")
        roots = len(answers["client_roots"]["roots"])
        return text_result(f"{sampled_text(answers['greeting'])} {name} ({roots} root(s))")

    @server.tool(
        description="Asks two questions in two rounds, with evolving requestState.", output_schema=None
    )
    def test_input_required_result_multi_round(ctx: Context) -> AskOrAnswer:
        stages = [
            {"step1": elicit("Step 1: What is your name?", "name", "string")},
            {"step2": elicit("Step 2: What is your favorite color?", "color", "string")},
        ]
        answers = gather(ctx, stages, "multi-round", always_state=True)
        if isinstance(answers, mcp_types.InputRequiredResult):
            return answers
        name, color = accepted(answers["step1"], "name"), accepted(answers["step2"], "color")
        return text_result(f"{name}'s favorite color is {color}.")

    @server.tool(
        description="Asks for confirmation; its requestState is integrity-protected.", output_schema=None
    )
    def test_input_required_result_tampered_state(ctx: Context) -> AskOrAnswer:
        asks = {"confirm": elicit("Please confirm", "ok", "boolean")}
        answers = gather(ctx, [asks], "tampered-state", always_state=True)
        if isinstance(answers, mcp_types.InputRequiredResult):
            return answers
        return text_result("state-ok: requestState verified")

    @server.tool(description="Asks only with the input methods the client declared.", output_schema=None)
    def test_input_required_result_capabilities(ctx: Context) -> AskOrAnswer:
        offered: dict[str, InputRequest] = {
            "elicit_input": elicit("Elicitation input", "value", "string"),
            "sample_input": sample("Sample request", 50),
        }
        declared = declared_capabilities(ctx)
        asks = {key: r for key, r in offered.items() if CAPABILITY_FOR_METHOD[r.method] in declared}
        if not asks:
            raise MCPError(
                code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                message="This tool needs the client's elicitation or sampling capability",
                data={"requiredCapabilities": {"sampling": {}}},
            )
        answers = gather(ctx, [asks], "capabilities", always_state=True)
        if isinstance(answers, mcp_types.InputRequiredResult):
            return answers
        return text_result(f"capabilities-ok: received {','.join(sorted(answers))}")

    @server.prompt(description="A prompt that asks, by elicitation, for the context it should use.")
    def test_input_required_result_prompt(ctx: Context) -> list[Message] | mcp_types.InputRequiredResult:
        asks = {"user_context": elicit("What context should the prompt use?", "context", "string")}
        answers = gather(ctx, [asks], "prompt")
        if isinstance(answers, mcp_types.InputRequiredResult):
            return answers
        return [Message(f"Use this context: {accepted(answers['user_context'], 'context')}")]


def build_server(*, preserve_schemas: bool = True) -> FastMCP:
    """The FastMCP server with every fixture the selected server scenarios need (no transport, no gates).

    ``preserve_schemas=False`` keeps FastMCP's default of inlining ``$ref``s and dropping ``$defs`` from
    published schemas (the baseline); we publish schemas exactly as written, so 2020-12 keywords such
    as ``$defs``/``$anchor`` reach the client intact.
    """
    # cache_ttl: the `caching` scenario (SEP-2549) wants ttlMs/cacheScope on every cacheable result.
    server = FastMCP(
        "agent-connector-sdk conformance fixtures",
        cache_ttl=60,
        cache_scope="public",
        dereference_schemas=not preserve_schemas,
    )

    @server.tool(description="Returns a simple text block.")
    def test_simple_text() -> list[mcp_types.ContentBlock]:
        return [mcp_types.TextContent(type="text", text="This is a simple text response for testing.")]

    @server.tool(description="Returns a 1x1 PNG image block.")
    def test_image_content() -> list[mcp_types.ContentBlock]:
        return [mcp_types.ImageContent(type="image", data=RED_PIXEL_PNG, mime_type="image/png")]

    @server.tool(description="Returns a short WAV audio block.")
    def test_audio_content() -> list[mcp_types.ContentBlock]:
        return [mcp_types.AudioContent(type="audio", data=SILENT_WAV, mime_type="audio/wav")]

    @server.tool(description="Returns an embedded text resource.")
    def test_embedded_resource() -> list[mcp_types.ContentBlock]:
        return [
            mcp_types.EmbeddedResource(
                type="resource",
                resource=mcp_types.TextResourceContents(
                    uri="test://embedded-resource",
                    mime_type="text/plain",
                    text="This is an embedded resource content.",
                ),
            )
        ]

    @server.tool(description="Returns text, image and embedded resource blocks together.")
    def test_multiple_content_types() -> list[mcp_types.ContentBlock]:
        return [
            mcp_types.TextContent(type="text", text="Multiple content types test:"),
            mcp_types.ImageContent(type="image", data=RED_PIXEL_PNG, mime_type="image/png"),
            mcp_types.EmbeddedResource(
                type="resource",
                resource=mcp_types.TextResourceContents(
                    uri="test://mixed-content-resource",
                    mime_type="application/json",
                    text=json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
                ),
            ),
        ]

    # Text-only fixtures publish no output schema (output_schema=None): FastMCP would otherwise wrap a
    # `-> str` return as `{"result": string}` and then every isError result would need a conforming
    # structuredContent, which a failure cannot supply.
    @server.tool(
        description="Always fails; the failure is reported as an isError result.", output_schema=None
    )
    def test_error_handling() -> str:
        raise RuntimeError("This tool intentionally returns an error for testing")

    @server.tool(
        description="Reports progress 0/100, 50/100, 100/100 when given a progress token.", output_schema=None
    )
    async def test_tool_with_progress(ctx: Context) -> str:
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100)
            if step < 100:
                await asyncio.sleep(0.05)
        return "Progress tool completed"

    @server.tool(
        description="Needs the client's sampling capability; without it the call is refused.",
        output_schema=None,
    )
    def test_missing_capability(ctx: Context) -> str:
        # SEP-2575: a request needing an undeclared client capability is a -32021 error (HTTP 400),
        # never a tool result; FastMCP passes this one MCPError code through unmasked.
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.sampling is None:
            raise MCPError(
                code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                message="This tool requires the client's sampling capability",
                data={"requiredCapabilities": {"sampling": {}}},
            )
        return "The client declared sampling."

    # Diagnostic tools `server-stateless` calls (SEP-2575): a log line must not reach a client that set no
    # logLevel, and a response stream may carry notifications but never an independent request.
    @server.tool(description="Logs three info messages, then returns.", output_schema=None)
    async def test_logging_tool(ctx: Context) -> str:
        for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await ctx.info(message)
        return "Logging tool completed"

    @server.tool(description="Reports progress on its response stream, then returns.", output_schema=None)
    async def test_streaming_elicitation(ctx: Context) -> str:
        await ctx.report_progress(1, 2)
        return "Streaming tool completed"

    server.add_tool(
        RawSchemaTool(
            name=HEADER_TOOL,
            description="Echoes its routing arguments; they are mirrored into Mcp-Param headers.",
            parameters=HEADER_TOOL_INPUT,
        )
    )

    server.add_tool(
        RawSchemaTool(
            name=JSON_SCHEMA_TOOL,
            description="Tool with JSON Schema 2020-12 features",
            parameters=JSON_SCHEMA_2020_12_INPUT,
        )
    )

    @server.resource(
        "test://static-text",
        name="static-text",
        description="A static text resource.",
        mime_type="text/plain",
    )
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource(
        "test://static-binary",
        name="static-binary",
        description="A static binary (PNG) resource.",
        mime_type="image/png",
    )
    def static_binary() -> bytes:
        return base64.b64decode(RED_PIXEL_PNG)

    @server.resource(
        "test://template/{id}/data",
        name="template-data",
        description="A templated JSON resource.",
        mime_type="application/json",
    )
    def template_data(id: str) -> str:
        payload = {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}
        return json.dumps(payload, separators=(",", ":"))

    @server.prompt(description="A prompt without arguments.")
    def test_simple_prompt() -> str:
        return "This is a simple prompt for testing."

    @server.prompt(description="A prompt with two required arguments.")
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt(description="A prompt that embeds a resource.")
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:
        embedded = mcp_types.EmbeddedResource(
            type="resource",
            resource=mcp_types.TextResourceContents(
                uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
            ),
        )
        return [Message(embedded, role="user"), Message("Please process the embedded resource above.")]

    @server.prompt(description="A prompt with an image.")
    def test_prompt_with_image() -> list[Message]:
        image = mcp_types.ImageContent(type="image", data=RED_PIXEL_PNG, mime_type="image/png")
        return [Message(image, role="user"), Message("Please analyze the image above.")]

    add_input_required_fixtures(server)
    # SEP-2640 (Skills extension, not scored for 2026-07-28): one skill with a supporting file, served
    # by FastMCP's own provider, which also registers `skills/list` / `skills/get`.
    server.add_provider(SkillCatalogProvider([CONFORMANCE_SKILL]))

    @server.completion
    def complete(
        ref: mcp_types.PromptReference | mcp_types.ResourceTemplateReference,
        argument: mcp_types.CompletionArgument,
        context: mcp_types.CompletionContext | None,
    ) -> mcp_types.Completion:
        candidates = COMPLETION_CANDIDATES.get(argument.name, ())
        values = [value for value in candidates if value.startswith(argument.value)]
        return mcp_types.Completion(values=values, total=len(values), has_more=False)

    return server


def _search_transform() -> RegexSearchTransform:
    # Keep every scenario fixture visible except the header tool: a search transform hides exactly the
    # kind of tool whose header parity FastMCP stops enforcing (see docs/conformance.md).
    visible = [
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_error_handling",
        "test_tool_with_progress",
        "test_missing_capability",
        "test_logging_tool",
        "test_streaming_elicitation",
        JSON_SCHEMA_TOOL,
        *INPUT_REQUIRED_TOOLS,
    ]
    return RegexSearchTransform(always_visible=visible)


def build_app(mode: Mode = "ours") -> Any:
    """The ASGI app for ``mode``: the same fixtures, with or without our gates and a search transform.

    Baselines use FastMCP's defaults on purpose (they answer "what does plain FastMCP do"); ours turns
    on FastMCP's Host/Origin guard too, because a localhost server without it is open to DNS rebinding.
    """
    server = build_server(preserve_schemas=not mode.startswith("baseline"))
    if mode.endswith("-search"):
        server.add_transform(_search_transform())
    if mode.startswith("baseline"):
        return server.http_app(stateless_http=True)
    return gated_http_app(server, stateless_http=True, host_origin_protection=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0 = pick a free one)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--baseline", action="store_true", help="plain FastMCP, no gates")
    group.add_argument("--baseline-search", action="store_true", help="plain FastMCP + RegexSearchTransform")
    group.add_argument("--search", action="store_true", help="ours + RegexSearchTransform")
    parser.add_argument("--verbose", action="store_true", help="keep FastMCP's error logs")
    args = parser.parse_args(argv)
    mode: Mode = "ours"
    if args.baseline:
        mode = "baseline"
    elif args.baseline_search:
        mode = "baseline-search"
    elif args.search:
        mode = "ours-search"

    if not args.verbose:
        # The error-handling fixture fails on purpose; FastMCP would print a full traceback per call.
        logging.getLogger("fastmcp").setLevel(logging.CRITICAL)
        # A tampered requestState is refused on purpose (`input-required-result-tampered-state`).
        logging.getLogger("mcp.server.request_state").setLevel(logging.ERROR)
        # `test_logging_tool` logs on purpose; the SDK warns that logging is deprecated in 2026-07-28.
        warnings.filterwarnings("ignore", message="The logging capability is deprecated")
    config = uvicorn.Config(build_app(mode), host="127.0.0.1", port=args.port, log_level="warning")
    server = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started:
            if task.done():
                await task
                return
            await asyncio.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        print(f"READY http://127.0.0.1:{port}/mcp", flush=True)
        await task

    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
