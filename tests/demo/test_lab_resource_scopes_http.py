"""The lab's own authorization over real HTTP (issue 25): every resource the lab serves, read with each
demo token (and none). A resource template checks the scope its completion implies, so the analyst —
who is never offered ``production`` by completion — cannot read ``deployments://production/status``
either; the refusal is the uniform "Resource not found" (no oracle), and a routine refusal is no error
log."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from agent_connector_sdk.demo.contract_lab import ENVIRONMENTS, PRODUCTION_SCOPE
from agent_connector_sdk.demo.lab_service import ANALYST_TOKEN, DEMO_TOKENS, OPERATOR_TOKEN, lab_service_app
from tests.support.http_server import serve_asgi
from tests.support.raw_http import capture_logs, raw_post

DEPLOYMENTS = "deployments://{environment}/status"
DISCLOSURE_MANIFEST = "schema-disclosure://tools/{alias}/{schema_sha256}/manifest"
DISCLOSURE_FRAGMENT = "schema-disclosure://tools/{alias}/{schema_sha256}/fragments/{index}"
SKILL_FILES = {"skill://mcp-contract-reviewer/SKILL.md", "skill://mcp-contract-reviewer/_manifest"}


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    with serve_asgi(lab_service_app(json_response=True)) as url:
        yield url


def _as(token: str) -> list[tuple[str, str | bytes]]:
    return [("authorization", f"Bearer {token}")]


def _complete_environments(url: str, token: str) -> set[str]:
    params = {
        "ref": {"type": "ref/resource", "uri": DEPLOYMENTS},
        "argument": {"name": "environment", "value": ""},
    }
    answer = raw_post(url, "completion/complete", params, headers=_as(token)).json()
    return set(answer["result"]["completion"]["values"])


def _read(url: str, token: str, uri: str) -> dict[str, Any]:
    return dict(raw_post(url, "resources/read", {"uri": uri}, headers=_as(token)).json())


def _not_found(answer: dict[str, Any], uri: str) -> bool:
    expected = {"code": -32602, "message": f"Resource not found: {uri!r}", "data": {"uri": uri}}
    return answer.get("error") == expected


@pytest.mark.parametrize("token", [ANALYST_TOKEN, OPERATOR_TOKEN])
def test_every_lab_resource_read_with_each_token(lab: str, token: str) -> None:
    scopes = set(DEMO_TOKENS[token]["scopes"])
    templates = {
        t["uriTemplate"]
        for t in raw_post(lab, "resources/templates/list", {}, headers=_as(token)).json()["result"][
            "resourceTemplates"
        ]
    }
    assert templates == {DEPLOYMENTS, DISCLOSURE_MANIFEST, DISCLOSURE_FRAGMENT}
    # The only static resources are the reviewer skill's files (SEP-2640), public to every token.
    listed = raw_post(lab, "resources/list", {}, headers=_as(token)).json()["result"]["resources"]
    assert {r["uri"] for r in listed} == SKILL_FILES
    for uri in sorted(SKILL_FILES):
        assert _read(lab, token, uri)["result"]["contents"][0]["uri"] == uri

    # deployments://{environment}/status: readable exactly where completion offers the environment.
    offered = _complete_environments(lab, token)
    assert offered == ({*ENVIRONMENTS} if PRODUCTION_SCOPE in scopes else {"development", "staging"})
    with capture_logs() as logs:
        for environment in (*ENVIRONMENTS, "qa", "production/../staging"):
            uri = DEPLOYMENTS.format(environment=environment)
            answer = _read(lab, token, uri)
            if environment in offered:
                assert json.loads(answer["result"]["contents"][0]["text"])["environment"] == environment
            else:
                assert _not_found(answer, uri), answer
    loud = [r for r in logs.records if r.levelno >= logging.WARNING and "deployments://" in r.getMessage()]
    assert loud == []

    # schema-disclosure manifests and fragments: every tool this caller can find, and only those.
    found = raw_post(
        lab, "tools/call", {"name": "search_tools", "arguments": {"pattern": "."}}, headers=_as(token)
    ).json()["result"]["structuredContent"]["result"]
    assert found
    for entry in found:
        manifest = _read(lab, token, entry["manifest_uri"])
        assert manifest["result"]["contents"][0]["uri"] == entry["manifest_uri"]
        fragment_uri = entry["manifest_uri"].removesuffix("manifest") + "fragments/0"
        assert "result" in _read(lab, token, fragment_uri)
        beyond = entry["manifest_uri"].removesuffix("manifest") + f"fragments/{entry['fragment_count']}"
        assert _not_found(_read(lab, token, beyond), beyond)


def test_without_a_token_no_resource_is_read(lab: str) -> None:
    for uri in (DEPLOYMENTS.format(environment="staging"), DEPLOYMENTS.format(environment="production")):
        assert raw_post(lab, "resources/read", {"uri": uri}).status_code == 401
