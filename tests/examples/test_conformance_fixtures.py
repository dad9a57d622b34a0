"""The conformance examples without Node: the fixture server starts over real HTTP, exposes what the
suite's server scenarios call, and the client's scenario plumbing works against it (so a broken example
fails ``make test`` instead of only ``make conformance``)."""

from __future__ import annotations

# Write confirmation (on by default) is opted out in this module: these tests exercise other gates;
# tests/mcp/host/test_write_confirmation.py covers confirmation itself.
import base64
import hashlib
import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import fastmcp
import httpx2
import pytest

from agent_connector_sdk.mcp.host import HostOptions
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from scripts import conformance, conformance_table
from tests.support.http_server import serve_asgi
from tests.support.raw_http import raw_post

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


server_example = _load("conformance_server")
client_example = _load("conformance_client")

FIXTURE_TOOLS = {
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
    "test_header_mirroring",
    "json_schema_2020_12_tool",
}


@pytest.fixture(scope="module")
def ours_url() -> Iterator[str]:
    with serve_asgi(server_example.build_app("ours")) as url:
        yield url


def _post_call(url: str, name: str, arguments: dict[str, Any], headers: dict[str, str]) -> httpx2.Response:
    params = {"name": name, "arguments": arguments}
    return raw_post(url, "tools/call", params, headers=list(headers.items()))


async def test_ours_exposes_every_fixture_over_http(ours_url: str) -> None:
    async with fastmcp.Client(ours_url) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert set(tools) >= FIXTURE_TOOLS
        # Published as written: the 2020-12 scenario looks for these keywords verbatim.
        schema = tools["json_schema_2020_12_tool"].input_schema
        assert schema == server_example.JSON_SCHEMA_2020_12_INPUT
        assert tools["test_header_mirroring"].input_schema["properties"]["region"]["x-mcp-header"] == "Region"

        text = await client.call_tool_mcp("test_simple_text", {})
        assert text.content[0].text == "This is a simple text response for testing."
        image = await client.call_tool_mcp("test_image_content", {})
        assert image.content[0].mime_type == "image/png"
        audio = await client.call_tool_mcp("test_audio_content", {})
        assert base64.b64decode(audio.content[0].data)[:4] == b"RIFF"
        failed = await client.call_tool_mcp("test_error_handling", {})
        assert failed.is_error is True

        resources = {str(resource.uri) for resource in await client.list_resources()}
        assert {"test://static-text", "test://static-binary"} <= resources
        templated = await client.read_resource("test://template/123/data")
        expected = {"id": "123", "templateTest": True, "data": "Data for ID: 123"}
        assert json.loads(templated[0].text) == expected
        prompts = {prompt.name for prompt in await client.list_prompts()}
        assert {"test_simple_prompt", "test_prompt_with_arguments"} <= prompts
        completion = await client.complete(
            {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, {"name": "arg1", "value": "par"}
        )
        assert completion.values == ["paris", "park", "party"]


def test_ours_refuses_a_mismatched_parameter_header(ours_url: str) -> None:
    response = _post_call(
        ours_url, "test_header_mirroring", {"region": "eu-west1"}, {"mcp-param-region": "us-east1"}
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020


def test_ours_refuses_a_foreign_host(ours_url: str) -> None:
    # DNS-rebinding protection (the `dns-rebinding-protection` scenario): a non-localhost Host is refused.
    response = _post_call(ours_url, "test_simple_text", {}, {"host": "evil.example"})
    assert 400 <= response.status_code < 500


def test_baseline_is_plain_fastmcp_with_the_same_tools() -> None:
    async def names(url: str) -> set[str]:
        async with fastmcp.Client(url) as client:
            return {tool.name for tool in await client.list_tools()}

    import anyio

    with serve_asgi(server_example.build_app("baseline")) as url:
        assert anyio.run(names, url) >= FIXTURE_TOOLS
        # FastMCP's default Host/Origin guard is off: the baseline serves a foreign Host.
        assert _post_call(url, "test_simple_text", {}, {"host": "evil.example"}).status_code == 200


async def test_client_scenarios_run_against_the_fixture_server(ours_url: str) -> None:
    async with ContractClient(
        fastmcp.Client(ours_url), options=HostOptions(require_confirmation=False)
    ) as client:
        admitted = await client_example.discover(client)
        assert "test_header_mirroring" in admitted
        context = {
            "toolCalls": [
                {
                    "name": "test_header_mirroring",
                    "arguments": {"region": "Zürich west", "priority": None, "dry_run": True},
                }
            ]
        }
        # Unicode travels base64-wrapped and the optional null is dropped; the gated server agrees.
        await client_example.http_custom_headers(client, context)
    assert await client_example.run(ours_url, "no-such-scenario", {}) == 2
    # End to end through `run`, gated and plain: discovery works against the fixture server, and a
    # scenario whose tool does not exist here fails with status 1 instead of a traceback.
    assert await client_example.run(ours_url, "json-schema-ref-no-deref", {}) == 0
    assert await client_example.run(ours_url, "json-schema-ref-no-deref", {}, baseline=True) == 0
    assert await client_example.run(ours_url, "tools_call", {}) == 1


def test_client_argument_helpers() -> None:
    tool = {
        "inputSchema": {
            "type": "object",
            "required": ["region", "count"],
            "properties": {
                "region": {"type": "string"},
                "count": {"type": "integer"},
                "verbose": {"type": "boolean"},
            },
        }
    }
    assert client_example.sample_arguments(tool) == {"region": "us-west1", "count": 1}
    assert client_example.drop_optional_nulls(tool, {"region": None, "verbose": None, "count": 2}) == {
        "region": None,
        "count": 2,
    }


def test_tarball_integrity_check_refuses_other_bytes(tmp_path: Path) -> None:
    tarball = tmp_path / "pkg.tgz"
    tarball.write_bytes(b"node")
    good = "sha512-" + base64.b64encode(hashlib.sha512(b"node").digest()).decode()
    conformance._check_integrity(tarball, good)
    other = "sha512-" + base64.b64encode(hashlib.sha512(b"n0de").digest()).decode()
    with pytest.raises(SystemExit):
        conformance._check_integrity(tarball, other)


def test_table_reads_json_and_sse_bodies_and_collapses_checks() -> None:
    assert conformance_table._json_payload('{"id": 1}') == {"id": 1}
    assert conformance_table._json_payload('event: message\ndata: {"id": 2}\n\n') == {"id": 2}
    checks = [
        {"id": "a", "name": "A", "status": "SUCCESS"},
        {"id": "a", "name": "A", "status": "FAILURE"},
        {"id": "b", "name": "B", "status": "SKIPPED"},
    ]
    collapsed = conformance_table._collapse(checks)
    assert collapsed == {("a", "A"): "FAILURE", ("b", "B"): "SKIPPED"}
    assert conformance_table._scenario_verdict(collapsed) == "**FAIL** (1)"


INPUT_REQUIRED_TOOLS = set(server_example.INPUT_REQUIRED_TOOLS)


def _gated_client(url: str) -> ContractClient:
    # The conformance client's callbacks: declaring them declares elicitation, sampling and roots.
    return ContractClient(
        client_example.build_client(url, "sep-2322-client-request-state", {}),
        options=HostOptions(require_confirmation=False),
    )


async def test_input_required_fixtures_complete_through_the_contract_client(ours_url: str) -> None:
    # Both ends gated: the server's self-check passes every interim result, ContractClient answers
    # through its callbacks, echoes requestState and validates the final result.
    async with _gated_client(ours_url) as client:
        admitted = await client_example.discover(client)
        assert set(admitted) >= INPUT_REQUIRED_TOOLS
        greeting = await client.call("test_input_required_result_elicitation", {})
        assert greeting.content[0]["text"] == "Hello, conformance!"
        two_rounds = await client.call("test_input_required_result_multi_round", {})
        assert two_rounds.content[0]["text"] == "conformance's favorite color is conformance."
        several = await client.call("test_input_required_result_multiple_inputs", {})
        assert several.content[0]["text"] == "A sampled answer. conformance (1 root(s))"
        state = await client.call("test_input_required_result_request_state", {})
        assert state.content[0]["text"].startswith("state-ok")
        roots = await client.call("test_input_required_result_list_roots", {})
        assert roots.content[0]["text"] == "Found 1 root(s): file:///conformance/root"
        prompt = await client.client.get_prompt("test_input_required_result_prompt")
        content = prompt.messages[0].content
        assert content.type == "text" and "conformance" in getattr(content, "text", "")


def _call_with(url: str, name: str, params: dict[str, Any], capabilities: dict[str, Any]) -> Any:
    call = {"name": name, "arguments": {}, **params}
    meta = {"io.modelcontextprotocol/clientCapabilities": capabilities}
    response = raw_post(url, "tools/call", call, request_id=9, meta=meta)
    return response.status_code, conformance_table._json_payload(response.text)


def test_a_fixture_never_asks_for_an_undeclared_capability(ours_url: str) -> None:
    # Only sampling declared: the capabilities fixture asks by sampling alone ...
    _, answer = _call_with(ours_url, "test_input_required_result_capabilities", {}, {"sampling": {}})
    requests = answer["result"]["inputRequests"]
    assert [request["method"] for request in requests.values()] == ["sampling/createMessage"]
    # ... and the elicitation fixture refuses with -32021 rather than ask what cannot be answered.
    status, refused = _call_with(ours_url, "test_input_required_result_elicitation", {}, {"sampling": {}})
    assert (status, refused["error"]["code"]) == (400, -32021)
    assert refused["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_a_tampered_request_state_is_refused(ours_url: str) -> None:
    everything: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
    _, first = _call_with(ours_url, "test_input_required_result_tampered_state", {}, everything)
    state = first["result"]["requestState"]
    answers = {"inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}}}
    _, good = _call_with(
        ours_url, "test_input_required_result_tampered_state", {**answers, "requestState": state}, everything
    )
    assert good["result"]["content"][0]["text"] == "state-ok: requestState verified"
    _, bad = _call_with(
        ours_url,
        "test_input_required_result_tampered_state",
        {**answers, "requestState": state[:-2] + "AA"},
        everything,
    )
    assert bad["error"]["code"] == -32602


def test_the_script_covers_every_scenario_the_suite_lists() -> None:
    # No Node needed: the listing parser against the suite's own output format.
    line = "  - input-required-result-basic-elicitation [2026-07-28]"
    match = conformance.LISTED.match(line)
    assert match is not None and match["name"] == "input-required-result-basic-elicitation"
    assert not set(conformance.SERVER_SCENARIOS) & set(conformance.EXTENSION_SERVER_SCENARIOS)
    assert set(conformance.AUTH_CLIENT_SCENARIOS) <= set(conformance.CLIENT_SCENARIOS)
    assert conformance.server_args("http://x")[-2:] == ["--spec-version", "2026-07-28"]


def _authorization_endpoint(location: str | None, status: int = 302) -> Any:
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    async def authorize(request: Any) -> Response:
        headers = {"location": location} if location is not None else {}
        return Response(status_code=status, headers=headers)

    return Starlette(routes=[Route("/authorize", authorize)])


async def test_headless_oauth_hands_the_redirects_code_to_the_sdk() -> None:
    # Only the browser is replaced: one GET to the authorization endpoint, its redirect parsed.
    redirect = "http://localhost:3000/callback?code=c0de&state=st4te&iss=https%3A%2F%2Fas.example"
    with serve_asgi(_authorization_endpoint(redirect), path="/authorize") as url:
        oauth = client_example.oauth_for({})
        await oauth.redirect_handler(url + "?response_type=code")
        result = await oauth.callback_handler()
    assert (result.code, result.state, result.iss) == ("c0de", "st4te", "https://as.example")
    with pytest.raises(RuntimeError, match="never followed"):
        await oauth.callback_handler()  # one code per redirect


@pytest.mark.parametrize(
    ("location", "status", "message"),
    [
        ("http://localhost:3000/callback?error=access_denied&state=s", 302, "access_denied"),
        (None, 200, "no redirect"),
    ],
)
async def test_headless_oauth_fails_like_a_refusing_user(
    location: str | None, status: int, message: str
) -> None:
    with serve_asgi(_authorization_endpoint(location, status), path="/authorize") as url:
        oauth = client_example.oauth_for({})
        with pytest.raises(RuntimeError, match=message):
            await oauth.redirect_handler(url)


def test_credentials_follow_the_scenario_context() -> None:
    pre_registered = client_example.oauth_for({"client_id": "pre", "client_secret": "s3cret"})
    assert pre_registered._client_id == "pre" and pre_registered._client_metadata_url is None
    assert pre_registered._additional_client_metadata == {"token_endpoint_auth_method": "client_secret_basic"}
    cimd = client_example.oauth_for({})
    assert cimd._client_metadata_url == client_example.CLIENT_METADATA_URL
    assert client_example.auth_for("tools_call", {}) is None
    machine = client_example.auth_for(
        "auth/client-credentials-basic", {"client_id": "m", "client_secret": "x"}
    )
    assert type(machine).__name__ == "ClientCredentialsOAuthProvider"
