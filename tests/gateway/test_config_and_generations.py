"""Pure parts of the gateway: child specs and configuration files, catalogs and their generations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_connector_sdk.core.contracts import AdmissionReport, Rejection
from agent_connector_sdk.gateway import ChildSpec, GatewayConfig, GatewayError, load_config, parse_child
from agent_connector_sdk.gateway._config import resolve_credentials
from agent_connector_sdk.gateway._generations import build_catalog, diff_catalogs


def test_child_forms() -> None:
    http = parse_child("weather=http://127.0.0.1:9/mcp")
    assert (http.name, http.url, http.transport) == ("weather", "http://127.0.0.1:9/mcp", "streamable_http")
    stdio = parse_child("files=-- python 'my server.py' --flag")
    assert stdio.command == ("python", "my server.py", "--flag") and stdio.transport == "stdio"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("weather", "NAME=URL"),
        ("we_ather=http://x", "no '_'"),
        ("=http://x", "1-32 characters"),
        ("w=ftp://x", "http:// or https://"),
        ("w=--", "nothing after"),
        ("w=-- 'open", "unbalanced"),
    ],
)
def test_bad_child_forms_are_one_typed_error(text: str, fragment: str) -> None:
    with pytest.raises(GatewayError) as caught:
        parse_child(text)
    assert caught.value.category == "invalid_config" and fragment in caught.value.message


def test_config_rules() -> None:
    with pytest.raises(GatewayError, match="at least one child"):
        GatewayConfig(children=())
    twice = (ChildSpec("a", url="http://x"), ChildSpec("a", url="http://y"))
    with pytest.raises(GatewayError, match="given twice"):
        GatewayConfig(children=twice)
    with pytest.raises(GatewayError, match="call_timeout"):
        GatewayConfig(children=twice[:1], call_timeout=0)
    for header in ("Host", "Mcp-Param-Region", "mcp-protocol-version", "bad header"):
        with pytest.raises(GatewayError):
            ChildSpec("a", url="http://x", headers_env={header: "VAR"})


def test_config_file_and_credentials_by_reference(tmp_path: Path) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(
        """
[gateway]
call_timeout = 3
refresh = 30

[children.weather]
url = "http://127.0.0.1:9/mcp"
headers_env = { Authorization = "WEATHER_AUTH" }

[children.files]
command = ["python", "files.py"]
env_env = { FILES_TOKEN = "GW_FILES_TOKEN" }
""",
        encoding="utf-8",
    )
    config = load_config(path, (parse_child("extra=http://127.0.0.1:10/mcp"),))
    assert [c.name for c in config.children] == ["weather", "files", "extra"]
    assert config.call_timeout == 3 and config.refresh == 30
    weather = config.children[0]
    assert "secret" not in repr(weather)  # a spec holds references, never values
    headers, env = resolve_credentials(weather, {"WEATHER_AUTH": "Bearer secret"})
    assert headers == {"Authorization": "Bearer secret"} and env == {}
    with pytest.raises(GatewayError) as caught:
        resolve_credentials(config.children[1], {"UNRELATED": "secret"})
    assert "GW_FILES_TOKEN" in caught.value.message and "secret" not in str(caught.value)
    with pytest.raises(GatewayError, match="line break"):
        resolve_credentials(weather, {"WEATHER_AUTH": "a\r\nX-Evil: 1"})


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("[gateway]\ncall_timeout = 'x'", "number of seconds"),
        ("[gateway]\nunknown = 1", "unknown key"),
        ("[children.a]\nurl = 'http://x'\nsecret = 'x'", "unknown key secret"),
        ("[other]\n", "unknown table"),
        ("not toml = = =", "not valid TOML"),
    ],
)
def test_bad_config_files(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(GatewayError) as caught:
        load_config(path)
    assert fragment in caught.value.message


def _report(tools: dict[str, dict[str, Any]], rejected: list[Rejection] | None = None) -> AdmissionReport:
    return AdmissionReport(admitted=tools, rejected=rejected or [])


def _tool(description: str = "d") -> dict[str, Any]:
    return {"name": "t", "description": description, "inputSchema": {"type": "object"}}


def test_generation_moves_only_when_the_catalog_differs() -> None:
    first = build_catalog("c", _report({"t": _tool()}), page_trace=[None], previous=None)
    assert first.generation == 0 and list(first.tools) == ["c_t"]
    same = build_catalog("c", _report({"t": _tool()}), page_trace=[None, "x"], previous=first)
    assert same.generation == 0
    changed = build_catalog("c", _report({"t": _tool("other")}), page_trace=[None], previous=same)
    assert changed.generation == 1
    assert changed.tools["c_t"].descriptor_sha256 != first.tools["c_t"].descriptor_sha256
    published = {name: tool.descriptor_sha256 for name, tool in first.tools.items()}
    assert diff_catalogs(published, changed).changed == ("c_t",)
    rejection: Rejection = {
        "tool": "u",
        "index": 1,
        "category": "sensitive_header",
        "reason": "r",
        "descriptor": {},
    }
    more_rejected = build_catalog(
        "c", _report({"t": _tool("other")}, [rejection]), page_trace=[None], previous=changed
    )
    assert more_rejected.generation == 2
    gone = build_catalog("c", _report({}), page_trace=[None], previous=more_rejected)
    diff = diff_catalogs({n: t.descriptor_sha256 for n, t in more_rejected.tools.items()}, gone)
    assert (diff.added, diff.changed, diff.removed) == ((), (), ("c_t",))


def test_a_namespaced_name_over_128_characters_is_rejected() -> None:
    long_name = "x" * 126
    catalog = build_catalog(
        "ab", _report({long_name: _tool(), "ok": _tool()}), page_trace=[None], previous=None
    )
    assert list(catalog.tools) == ["ab_ok"]
    assert [(r.tool, r.category) for r in catalog.rejected] == [(long_name, "name_too_long")]


def test_operator_knobs_probe_and_lock_in_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(
        "[gateway]\nrelist_interval = 2.5\ndegrade_after = 5\nshutdown_grace = 0\nlock = 'approved.lock'\n\n"
        "[children.files]\ncommand = ['python', 'files.py']\n"
        "[children.files.probe]\ntool = 'read'\narguments = { path = 'README.md' }\n",
        encoding="utf-8",
    )
    config = load_config(path)
    assert (config.relist_interval, config.degrade_after, config.shutdown_grace) == (2.5, 5, 0)
    assert config.lock == tmp_path / "approved.lock"  # relative to the file
    (files,) = config.children
    assert files.probe is not None and files.probe.tool == "read"
    assert dict(files.probe.arguments) == {"path": "README.md"}


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("[gateway]\ndegrade_after = 0\n", "degrade_after"),
        ("[gateway]\ndegrade_after = 1.5\n", "degrade_after"),
        ("[gateway]\nshutdown_grace = -1\n", "shutdown_grace"),
        ("[gateway]\nrelist_interval = 0\n", "relist_interval"),
        ("[gateway]\nlock = 3\n", "lock"),
        ("[children.c.probe]\narguments = {}\n", "probe"),
        ("[children.c.probe]\ntool = 'x'\nextra = 1\n", "probe"),
        ("[children.c.probe]\ntool = 'x'\narguments = 'a=1'\n", "probe"),
    ],
)
def test_bad_operator_settings_are_one_typed_error(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "gateway.toml"
    child = "" if "[children.c" in content else "[children.c]\nurl = 'http://127.0.0.1:9/mcp'\n"
    body = content.replace(
        "[children.c.probe]", "[children.c]\nurl = 'http://127.0.0.1:9/mcp'\n[children.c.probe]"
    )
    path.write_text(body + child, encoding="utf-8")
    with pytest.raises(GatewayError) as refused:
        load_config(path)
    assert refused.value.category == "invalid_config" and fragment in refused.value.message
