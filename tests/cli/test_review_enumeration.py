"""``review`` finds every tool behind a search that caps its results, and says so when it cannot.

A FastMCP server hides 24 tools behind ``RegexSearchTransform(max_results=3)`` — names that are
prefixes of others (``repos``, ``repos_get``), mixed case, ``.`` and ``-`` — and discloses each lazily.
Reviewed over real HTTP as a user runs it: the default review reaches and verifies all 24 (a capped
search is split by name prefix); a caller's own pattern that returns the cap is reported incomplete,
with "N of N+ tools reviewed" in the text output.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, cast

import pytest
from fastmcp import FastMCP
from fastmcp.server.middleware import Middleware
from fastmcp.server.transforms.search import RegexSearchTransform

from agent_connector_sdk.core.schema_disclosure import SourceDigest
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    DisclosureOrigin,
    describe_schema_tools,
    register_schema_resources,
)
from agent_connector_sdk.mcp.server import RequestBounds
from agent_connector_sdk.review.enumeration import SearchEnumeration
from agent_connector_sdk.review.live import _READS_PER_TOOL
from tests.support.cli import run_cli_in_process
from tests.support.disclosure_servers import static_tool
from tests.support.http_server import serve_asgi

NAMES = [
    "repos",
    "repos_get",
    "repos_get_x",
    "repos_list",
    "Repos.Upper",
    "repos-dash",
    "a",
    "a.b",
    "a-b",
    "z9",
    *(f"issues_{i}" for i in range(1, 13)),
    "search_things",
    "x",
]


def _server() -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP("capped")
    for name in NAMES:
        server.add_tool(static_tool(name, {"type": "object", "properties": {"q": {"type": "string"}}}))
    search = RegexSearchTransform(search_result_serializer=describe_schema_tools, max_results=3)
    server.add_transform(search)
    source = SourceDigest.of(b"capped")
    register_schema_resources(
        server, search, {name: DisclosureOrigin(f"op-{name}", source.sha256) for name in NAMES}
    )
    return server


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve_asgi(_server().http_app(stateless_http=True)) as address:
        yield address


def test_default_review_enumerates_every_tool_behind_a_capped_search(url: str) -> None:
    run = run_cli_in_process("review", url, "--json")
    assert run.code == 0, run.err
    report = run.json()
    search = report["search"]
    assert search["complete"] is True and search["incomplete"] is None
    assert search["entries"] == len(NAMES) and search["searches"] > 1
    found = {tool["name"]: tool for tool in report["tools"] if tool["found"] == "search"}
    assert sorted(found) == sorted(NAMES)
    assert all(tool["disclosure"]["verified"] for tool in found.values())


def test_a_capped_pattern_of_the_callers_own_is_reported_incomplete(url: str) -> None:
    run = run_cli_in_process("review", url, "--json", "--search", "issues")
    assert run.code == 0, run.err
    search = run.json()["search"]
    assert search["entries"] == 3 and search["complete"] is False
    assert "may be its cap" in search["incomplete"]
    text = run_cli_in_process("review", url, "--search", "issues")
    assert "3 of 3+ tools reviewed" in text.out
    assert "incomplete" in text.out


def test_a_callers_pattern_below_the_cap_is_complete(url: str) -> None:
    run = run_cli_in_process(
        "review", url, "--json", "--search", "^repos_get"
    )  # 2 matches, below the cap of 3
    assert run.code == 0, run.err
    search = run.json()["search"]
    assert search["entries"] == 2 and search["complete"] is True and search["searches"] == 2


class _CappedCatalog:
    """FastMCP's regex search in memory: first ``cap`` matches of ``(?i)pattern`` over name + text."""

    def __init__(self, names: list[str], cap: int) -> None:
        self.texts = [(name, f"{name} a description q") for name in names]
        self.cap = cap

    async def discover(self, pattern: str) -> list[Any]:
        matcher = re.compile("(?i)" + pattern)
        found: list[Any] = []
        for name, text in self.texts:
            if matcher.search(text):
                found.append(SimpleNamespace(name=name))
                if len(found) >= self.cap:
                    break
        return found


def _enumerate(names: list[str], cap: int) -> SearchEnumeration:
    entries: dict[str, Any] = {}
    enumeration = SearchEnumeration(cast(Any, _CappedCatalog(names, cap)), entries)
    asyncio.run(enumeration.run([".*"]))
    assert sorted(entries) == sorted(names) and enumeration.incomplete is None
    return enumeration


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
@pytest.mark.parametrize("cap", [5, 50])
def test_searches_grow_with_tools_over_the_cap_not_the_alphabet(order: str, cap: int) -> None:
    # 1,200 names shaped like an OpenAPI catalog's (shared "group_verb_object" prefixes).
    groups = ["actions", "activity", "apps", "repos", "issues", "orgs", "users", "git", "teams", "pulls"]
    names = [
        f"{groups[i % 10]}_{verb}_{i}"
        for i, verb in zip(range(1200), ["get", "list", "set"] * 400, strict=True)
    ]
    if order == "sorted":
        names.sort()
    else:
        random.Random(7).shuffle(names)
    searches = _enumerate(names, cap).searches
    # One search per cap-full of tools is the floor; the old split (every alphabet character at
    # every prefix) took tens of times that.
    assert len(names) / cap <= searches <= 6 * len(names) / cap + 10


def test_prefixes_case_and_name_alphabet_split_exactly() -> None:
    names = [*NAMES, "REPOS_get_y", "a.b.c", "a-b-c", "a_b", "9", "-", "."]
    for cap in (2, 3, 4):
        _enumerate(names, cap)
    random.Random(3).shuffle(names)
    _enumerate(names, 2)


class _ReadsInFlight(Middleware):
    """Counts the disclosure reads the server serves at once (each held briefly so overlaps show)."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0

    async def on_read_resource(self, context: Any, call_next: Any) -> Any:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(0.02)
            return await call_next(context)
        finally:
            self.now -= 1


def test_disclosure_reads_overlap_within_the_served_per_caller_bound() -> None:
    server = _server()
    reads = _ReadsInFlight()
    server.add_middleware(reads)
    with serve_asgi(server.http_app(stateless_http=True)) as address:
        run = run_cli_in_process("review", address, "--json")
    assert run.code == 0, run.err
    verified = [t for t in run.json()["tools"] if t["found"] == "search" and t["disclosure"]["verified"]]
    assert len(verified) == len(NAMES)
    # Tools are reviewed a few at a time (not one read after another), never past what a served
    # app admits from one caller at once (over it answers HTTP 429).
    assert _READS_PER_TOOL < reads.most <= RequestBounds().max_in_flight_per_caller
