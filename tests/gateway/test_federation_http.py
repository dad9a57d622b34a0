"""No proxy of a proxy, over real Streamable HTTP: search-first children (``serve --openapi`` with a
recording upstream, and the contract lab) behind the gateway. Their synthetic ``search_tools`` /
``call_tool`` are never republished; their hidden tools are federated one by one (enumerated, verified
against the child's digests, admitted) and published as ``NAME_tool`` under the gateway's own
authorization; a tool that was not admitted, or that the caller's scopes do not cover, is never run,
whatever route the caller takes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastmcp.server.auth.providers.jwt import RSAKeyPair

from agent_connector_sdk.connectors import load_github_extract
from agent_connector_sdk.demo.lab_service import lab_service_app
from agent_connector_sdk.gateway import AuthSettings, ChildSpec, Gateway, GatewayConfig
from agent_connector_sdk.serving.openapi_app import build_openapi_app
from tests.support.gateway import rpc, wait_for
from tests.support.http_server import serve_asgi
from tests.support.raw_http import RecordingUpstream

ISSUER = "https://issuer.test/"
AUDIENCE = "gw"


@dataclass
class Stack:
    url: str
    gateway: Gateway
    upstream: RecordingUpstream
    key: RSAKeyPair

    def headers(self, *scopes: str) -> list[tuple[str, str]]:
        token = self.key.create_token(issuer=ISSUER, audience=AUDIENCE, scopes=list(scopes))
        return [("authorization", f"Bearer {token}")]

    def call(self, name: str, arguments: dict[str, Any], *scopes: str) -> dict[str, Any]:
        _, message = rpc(
            self.url, "tools/call", {"name": name, "arguments": arguments}, headers=self.headers(*scopes)
        )
        return message

    def proxied(self, name: str, arguments: dict[str, Any], *scopes: str) -> dict[str, Any]:
        return self.call("call_tool", {"name": name, "arguments": arguments}, *scopes)

    def search(self, pattern: str, *scopes: str) -> list[str]:
        result = self.call("search_tools", {"pattern": pattern}, *scopes)["result"]
        found = result["structuredContent"]["result"]
        # A str is the one-line note of a ranked search that found nothing relevant.
        return [entry["name"] for entry in found] if isinstance(found, list) else []


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    key = RSAKeyPair.generate()
    upstream = RecordingUpstream()
    with serve_asgi(upstream.app, path="") as upstream_url:
        openapi_app, _ = build_openapi_app(load_github_extract(), upstream=upstream_url)
        with (
            serve_asgi(openapi_app) as openapi_url,
            serve_asgi(lab_service_app(demo_tokens=False)) as lab_url,
        ):
            auth = AuthSettings(
                issuer=ISSUER,
                audience=AUDIENCE,
                public_key_pem=key.public_key,
                require={"oa_repos_delete": ("repo:admin",)},
            )
            config = GatewayConfig(
                children=(ChildSpec("oa", url=openapi_url), ChildSpec("lab", url=lab_url)), auth=auth
            )
            gateway = Gateway(config)
            with serve_asgi(gateway.http_app()) as url:
                yield Stack(url, gateway, upstream, key)


def _catalog(stack: Stack, child: str) -> Any:
    catalog = stack.gateway.children[child].catalog
    assert catalog is not None
    return catalog


def _up(stack: Stack) -> None:
    wait_for(lambda: all(c.state == "up" for c in stack.gateway.children.values()), 60, "children up")


def test_hidden_tools_are_found_by_searches_never_enumerated(stack: Stack) -> None:
    _up(stack)
    child = stack.gateway.children["oa"]
    withheld = {(r.tool, r.category) for r in _catalog(stack, "oa").rejected}
    assert withheld == {("call_tool", "synthetic_proxy"), ("search_tools", "synthetic_proxy")}
    assert stack.gateway.tool("oa_call_tool") is None and stack.gateway.tool("oa_search_tools") is None
    assert child.federation is None  # nothing enumerated while serving
    searches_before = child.searches
    # Found through the gateway's own search: the pattern went to the child's search, the entry was
    # verified and admitted, and the gateway answers with its own navigation entry.
    assert stack.search("zen", "any") == ["oa_meta_get_zen"]
    assert child.searches == searches_before + 1
    tool = _catalog(stack, "oa").tools["oa_meta_get_zen"]
    assert tool.schema_sha256 is not None
    assert len(stack.gateway.verified) >= 1 and stack.gateway.verified.count("oa") >= 1
    # Only what searches and calls named is published, never the whole catalog.
    assert child.federated < 200


def test_a_federated_tool_runs_at_the_child_and_its_result_is_relayed(stack: Stack) -> None:
    _up(stack)
    # Never searched for: the call resolves this one name through the child first.
    assert stack.gateway.tool("oa_issues_list_events_for_timeline") is None
    before = len(stack.upstream.requests)
    message = stack.call("oa_issues_list_events_for_timeline", {"owner": "o", "repo": "r", "issue_number": 7})
    assert "result" in message, message
    assert message["result"]["structuredContent"]["result"] == [
        {"event": "labeled", "id": 1, "node_id": "LE_1"}
    ]
    (request,) = stack.upstream.requests[before:]
    assert (request["method"], request["path"]) == ("GET", "/repos/o/r/issues/7/timeline")


def test_a_guarded_federated_tool_is_never_run_for_a_caller_without_its_scope(stack: Stack) -> None:
    _up(stack)
    before = len(stack.upstream.requests)
    arguments = {"owner": "o", "repo": "r"}
    assert "oa_repos_delete" not in stack.search("repos_delete", "base")
    for route in (stack.call, stack.proxied):
        refused = route("oa_repos_delete", arguments, "base")
        assert "error" in refused or refused["result"].get("isError") is True, refused
    # The child's own proxy is not published: the route the issue found open is gone.
    for name in ("oa_call_tool", "lab_call_tool"):
        message = stack.call(name, {"name": "repos_delete", "arguments": arguments}, "base")
        assert message["error"]["code"] == -32602
    assert stack.upstream.requests[before:] == []

    allowed = stack.call("oa_repos_delete", arguments, "repo:admin")
    assert "result" in allowed, allowed
    (request,) = stack.upstream.requests[before:]
    assert (request["method"], request["path"]) == ("DELETE", "/repos/o/r")


def test_a_hidden_tool_the_gateway_rejects_is_never_callable_by_any_route(stack: Stack) -> None:
    _up(stack)
    stack.search(".", "any")  # what the lab's search answers is verified, and some of it refused
    catalog = _catalog(stack, "lab")
    rejected = {r.tool for r in catalog.rejected if r.category not in ("synthetic_proxy",)}
    hidden_rejected = sorted(name for name in rejected if name is not None)
    assert hidden_rejected, [(r.tool, r.category) for r in catalog.rejected]
    for name in hidden_rejected:
        exposed = f"lab_{name}"
        assert stack.gateway.tool(exposed) is None
        assert exposed not in stack.search(name, "any")
        assert stack.call(exposed, {}, "any")["error"]["code"] == -32602
        proxied = stack.proxied(exposed, {}, "any")
        assert "error" in proxied or proxied["result"].get("isError") is True


def test_a_federated_tool_with_header_annotations_is_called_with_its_headers(stack: Stack) -> None:
    _up(stack)
    assert "lab_search_evidence" in stack.search("search_evidence", "any")
    tool = stack.gateway.tool("lab_search_evidence")
    assert tool is not None and tool.source.schema_sha256 is not None  # hidden behind the lab's search
    params = {"name": "lab_search_evidence", "arguments": {"query": "carrier", "region": "eu-west"}}
    headers = [*stack.headers("any"), ("mcp-param-region", "eu-west")]
    _, message = rpc(stack.url, "tools/call", params, headers=headers)
    # The lab's gates refuse a call whose Mcp-Param-* headers do not match its body (-32020): the
    # gateway sent the header its host core computed from the disclosed schema, and the tool ran.
    assert "result" in message and message["result"].get("isError") is not True, message
    assert isinstance(message["result"]["structuredContent"], list)  # the array the output schema says


async def test_check_lists_the_withheld_proxy_tools_without_counting_them_as_problems(stack: Stack) -> None:
    from agent_connector_sdk.gateway import check_report, collect_evidence

    evidence = await collect_evidence(stack.gateway.children["oa"], probe=False)
    assert {(r.tool, r.category) for r in evidence.rejected} == {
        ("call_tool", "synthetic_proxy"),
        ("search_tools", "synthetic_proxy"),
    }
    report = check_report([evidence])
    assert [p.kind for p in report.problems] == ["no_probe"] and report.passed
