"""``serve --openapi`` with real authentication: FastMCP's JWT verifier and per-tool scopes from an
``[auth]`` table; search, disclosure reads and calls agree per caller; the read path stays by name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp.server.auth.providers.jwt import RSAKeyPair

from agent_connector_sdk.connectors import load_github_extract
from agent_connector_sdk.gateway import AuthSettings, GatewayError, load_auth_file
from agent_connector_sdk.serving import ServingError
from agent_connector_sdk.serving.openapi_app import build_openapi_app, disclosure_read_path
from tests.support.cli import assert_one_line_error
from tests.support.cli import run_cli_in_process as run_cli  # exit codes and output, not the process
from tests.support.gateway import rpc
from tests.support.http_server import serve_asgi
from tests.support.raw_http import raw_post

ISSUER = "https://issuer.test/"
AUDIENCE = "github-tools"


@pytest.fixture(scope="module")
def key() -> RSAKeyPair:
    return RSAKeyPair.generate()


@pytest.fixture(scope="module")
def served(key: RSAKeyPair) -> Iterator[str]:
    auth = AuthSettings(
        issuer=ISSUER,
        audience=AUDIENCE,
        public_key_pem=key.public_key,
        require={"repos_delete": ("repo:admin",)},
    )
    app, _ = build_openapi_app(load_github_extract(), upstream="http://127.0.0.1:9", auth=auth)
    assert disclosure_read_path(app) is None  # per-tool scopes keep reads resolving by name
    with serve_asgi(app) as url:
        yield url


def _as(key: RSAKeyPair, *scopes: str) -> list[tuple[str, str]]:
    token = key.create_token(issuer=ISSUER, audience=AUDIENCE, scopes=list(scopes))
    return [("authorization", f"Bearer {token}")]


def _search(url: str, headers: list[tuple[str, str]], pattern: str) -> list[dict[str, str]]:
    _, message = rpc(
        url, "tools/call", {"name": "search_tools", "arguments": {"pattern": pattern}}, headers=headers
    )
    found = message["result"]["structuredContent"]["result"]
    return list(found) if isinstance(found, list) else []  # a str: the note of a search that abstained


def test_without_a_valid_token_nothing_is_served(served: str, key: RSAKeyPair) -> None:
    assert raw_post(served, "tools/list", {}).status_code == 401
    wrong = RSAKeyPair.generate().create_token(issuer=ISSUER, audience=AUDIENCE)
    assert (
        raw_post(served, "tools/list", {}, headers=[("authorization", f"Bearer {wrong}")]).status_code == 401
    )


def test_a_scoped_tool_is_found_read_and_called_only_with_its_scope(served: str, key: RSAKeyPair) -> None:
    admin, plain = _as(key, "repo:admin"), _as(key)
    # A plain phrase: the literal match first, then what the ranking finds related (the search is ranked).
    assert _search(served, admin, "repos_delete")[0]["name"] == "repos_delete"
    assert [e["name"] for e in _search(served, admin, "^repos_delete ")] == ["repos_delete"]
    assert "repos_delete" not in [e["name"] for e in _search(served, plain, "repos_delete")]
    assert _search(served, plain, "^repos_delete ") == []
    assert _search(served, plain, "zen")[0]["name"] == "meta_get_zen"
    uri = _search(served, admin, "repos_delete")[0]["manifest_uri"]
    assert "result" in rpc(served, "resources/read", {"uri": uri}, headers=admin)[1]
    assert rpc(served, "resources/read", {"uri": uri}, headers=plain)[1]["error"]["code"] == -32602
    arguments = {"owner": "o", "repo": "r"}
    denied = rpc(served, "tools/call", {"name": "repos_delete", "arguments": arguments}, headers=plain)[1]
    assert denied["error"]["code"] == -32602


def test_auth_config_files_and_cli_errors(tmp_path: Path, key: RSAKeyPair) -> None:
    (tmp_path / "issuer.pem").write_text(key.public_key, encoding="ascii")
    good = tmp_path / "auth.toml"
    good.write_text(
        f'[auth]\nissuer = "{ISSUER}"\naudience = "{AUDIENCE}"\npublic_key_file = "issuer.pem"\n'
        '[auth.require]\nrepos_delet = ["repo:admin"]\n',
        encoding="utf-8",
    )
    settings = load_auth_file(good)
    with pytest.raises(ServingError, match="repos_delet names no tool"):
        build_openapi_app(load_github_extract(), upstream="http://127.0.0.1:9", auth=settings)
    for own in ("call_tool", "search_tools"):
        reserved = AuthSettings(
            issuer=ISSUER, audience=AUDIENCE, public_key_pem=key.public_key, require={own: ("repo:admin",)}
        )
        with pytest.raises(ServingError, match=f"{own} is the server's own search tool"):
            build_openapi_app(load_github_extract(), upstream="http://127.0.0.1:9", auth=reserved)
    assert_one_line_error(run_cli("serve", "--auth-config", str(good)), "only applies with --openapi")
    document = Path(__file__).parents[2] / "src/agent_connector_sdk/connectors/data/github_extract.json"
    missing = run_cli("serve", "--openapi", str(document), "--auth-config", str(tmp_path / "none.toml"))
    assert_one_line_error(missing, "--auth-config: cannot read none.toml")
    typo = run_cli(
        "serve", "--openapi", str(document), "--upstream", "http://127.0.0.1:9", "--auth-config", str(good)
    )
    assert_one_line_error(typo, "repos_delet names no tool of the document")
    no_table = tmp_path / "empty.toml"
    no_table.write_text("", encoding="utf-8")
    with pytest.raises(Exception, match=r"has no \[auth\] table"):
        load_auth_file(no_table)
    broken = tmp_path / "broken.toml"
    broken.write_text("[auth\n", encoding="utf-8")
    with pytest.raises(GatewayError, match=r"broken\.toml is not valid TOML") as refused:
        load_auth_file(broken)
    assert refused.value.category == "invalid_config"
