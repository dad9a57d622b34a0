"""Differential test: a search transform behind the catalog cache answers exactly as FastMCP's own.

A hypothesis state machine drives two identical FastMCP servers — each with FastMCP's own
``RegexSearchTransform`` (``describe_schema_tools`` as serializer, a pinned tool, a small result cap) and
the default ``DereferenceRefsMiddleware`` — one with :func:`cache_tool_catalog`, one without. Every change
is applied to both (each holds its own copies of the tools): tools added and removed (versions,
per-tool ``require_scopes`` auth or a check on the client id, tags), enable/disable by name, key or
tag, a rule set edited in place, a ``tools/list`` middleware the cache does not know coming and going.
After each step, for three callers (no token, a reader, an admin), it compares the caller's catalog,
its ``tools/list`` (the transform's synthetic tools, built once on the cached side), the
``search_tools`` result for a pattern and the ``call_tool`` proxy's outcome for a name. Callers are set
through the ``mcp`` SDK's auth context variable, so FastMCP's real component-auth checks run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from fastmcp import FastMCP
from fastmcp.server.context import Context
from fastmcp.server.transforms.search import RegexSearchTransform
from fastmcp.server.transforms.visibility import Visibility
from fastmcp.tools.base import Tool
from fastmcp.utilities.authorization import AuthContext, require_scopes
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from agent_connector_sdk.mcp.schema_disclosure_provider import describe_schema_tools
from agent_connector_sdk.mcp.server import cache_tool_catalog
from agent_connector_sdk.mcp.server._catalog import ToolCatalogCache
from tests.support.catalog_machines import HideSecretFromNonAdmins, run_in_request, toggle_visibility
from tests.support.disclosure_servers import static_tool

NAMES = ("alpha", "beta", "gamma", "delta")
VERSIONS = (None, "1", "2")
CALLERS = ("anonymous", "reader", "admin")
PATTERNS = ("alpha", "a", "^beta", "q", "secret|page", "x{", "", "zzz", "static TEST")


def schema_variant(variant: int) -> dict[str, Any]:
    if variant == 0:
        return {"type": "object", "properties": {"q": {"type": "string", "description": "query"}}}
    if variant == 1:  # rewritten by FastMCP's dereference middleware
        return {
            "type": "object",
            "$defs": {"Page": {"type": "integer", "minimum": 1}},
            "properties": {"page": {"$ref": "#/$defs/Page", "description": "page number"}},
        }
    return {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}


def only_client(client_id: str) -> Any:
    """A component auth check on the token's client id (not a scope check the cache can key on)."""

    def check(context: AuthContext) -> bool:
        return context.token is not None and context.token.client_id == client_id

    return check


Served = tuple[FastMCP[Any], RegexSearchTransform]


def _shown(tools: Sequence[Tool]) -> list[tuple[Any, ...]]:
    return [
        (t.name, t.version, t.description, t.parameters, t.output_schema, sorted(t.tags), t.meta)
        for t in tools
    ]


class CachedEqualsUncached(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.cached, self.cached_search = self._server()
        self.plain, self.plain_search = self._server()
        self.cache: ToolCatalogCache = cache_tool_catalog(self.cached, self.cached_search)
        self.hiders = (HideSecretFromNonAdmins(), HideSecretFromNonAdmins())
        self.visibility_rules: list[tuple[Visibility, Visibility]] = []
        self.tools: dict[tuple[str, str | None], Tool] = {}
        self.compared = 0

    @staticmethod
    def _server() -> tuple[FastMCP[Any], RegexSearchTransform]:
        server: FastMCP[Any] = FastMCP("differential")
        search = RegexSearchTransform(
            search_result_serializer=describe_schema_tools, max_results=2, always_visible=["delta"]
        )
        server.add_transform(search)
        return server, search

    def teardown(self) -> None:
        self.loop.close()

    def both(self) -> tuple[Served, Served]:
        return (self.cached, self.cached_search), (self.plain, self.plain_search)

    def run(self, caller: str, server: FastMCP[Any], factory: Any) -> Any:
        return run_in_request(self.loop, server, caller, factory)

    # ---- changes, applied to both servers ---------------------------------------------------------

    @initialize()
    def seed(self) -> None:
        self.add("alpha", None, 0, scoped=False, secret=False)
        self.add("delta", None, 1, scoped=False, secret=False)

    @rule(
        name=st.sampled_from(NAMES),
        version=st.sampled_from(VERSIONS),
        variant=st.integers(0, 2),
        scoped=st.booleans(),
        secret=st.booleans(),
        by_client=st.booleans(),
    )
    def add(
        self,
        name: str,
        version: str | None,
        variant: int,
        scoped: bool,
        secret: bool,
        by_client: bool = False,
    ) -> None:
        if any(n == name and (v is None) != (version is None) for n, v in self.tools):
            return  # FastMCP refuses to mix versioned and unversioned tools of one name
        auth: Any = require_scopes("admin") if scoped else None
        if by_client:  # a check reading more of the caller than its scopes: the cache must step aside
            auth = only_client("reader")
        tool = static_tool(
            name,
            schema_variant(variant),
            auth=auth,
            description=f"Tool {name}" + (" (secret)" if secret else ""),
        ).model_copy(update={"version": version, "tags": {"secret"} if secret else set()})
        self._drop((name, version))
        self.tools[(name, version)] = tool
        for server, _ in self.both():
            server.add_tool(tool.model_copy(deep=True))  # each server its own objects

    def _drop(self, key: tuple[str, str | None]) -> None:
        if key not in self.tools:
            return
        del self.tools[key]
        for server, _ in self.both():
            server.local_provider.remove_tool(key[0])
            for (name, _), tool in self.tools.items():
                if name == key[0]:
                    server.add_tool(tool.model_copy(deep=True))

    def remove_named(self, name: str, version: str | None) -> None:
        self._drop((name, version))

    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        if self.tools:
            self._drop(data.draw(st.sampled_from(sorted(self.tools, key=repr))))

    @rule(name=st.sampled_from(NAMES), enabled=st.booleans(), how=st.sampled_from(["name", "key", "tag"]))
    def toggle(self, name: str, enabled: bool, how: str) -> None:
        for server, _ in self.both():
            toggle_visibility(server, name, enabled=enabled, how=how)

    @rule(name=st.sampled_from(NAMES))
    def rule_set_edited_in_place(self, name: str) -> None:
        """A hand-made disable rule whose name set is edited in place later (the cache re-reads it)."""
        if not self.visibility_rules:
            pair = (Visibility(False, names=set()), Visibility(False, names=set()))
            self.cached.add_transform(pair[0])
            self.plain.add_transform(pair[1])
            self.visibility_rules.append(pair)
        for rule_ in self.visibility_rules[0]:
            assert rule_.names is not None
            rule_.names.symmetric_difference_update({name})

    @rule(present=st.booleans())
    def unknown_middleware(self, present: bool) -> None:
        for (server, _), hider in zip(self.both(), self.hiders, strict=True):
            if present and hider not in server.middleware:
                server.middleware.append(hider)
            elif not present and hider in server.middleware:
                server.middleware.remove(hider)

    # ---- comparisons ---------------------------------------------------------------------------------

    @rule(caller=st.sampled_from(CALLERS), pattern=st.sampled_from(PATTERNS), name=st.sampled_from(NAMES))
    def compare(self, caller: str, pattern: str, name: str) -> None:
        answers = []
        for server, search in self.both():

            async def observe(ctx: Context, server: FastMCP[Any] = server, search: Any = search) -> Any:
                catalog = _shown(await search.get_tool_catalog(ctx))
                listed = [tool.to_mcp_tool().model_dump() for tool in await server.list_tools()]
                found = await server.call_tool("search_tools", {"pattern": pattern})
                try:
                    called = await server.call_tool("call_tool", {"name": name, "arguments": {}})
                    proxy: Any = ("ran", called.structured_content)
                except Exception as error:  # the proxy's refusal (unknown tool) or the tool's own failure
                    proxy = ("refused", type(error).__name__, str(error))
                return catalog, listed, found.structured_content, proxy

            answers.append(self.run(caller, server, observe))
        assert answers[0] == answers[1]
        self.compared += 1


CachedEqualsUncached.TestCase.settings = settings(
    max_examples=40, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestCachedEqualsUncached = CachedEqualsUncached.TestCase


def test_the_machine_serves_from_the_cache() -> None:
    """Guard against a vacuous differential: a scripted run answers from the cache (hits) and steps aside
    for an unknown middleware."""
    machine = CachedEqualsUncached()
    try:
        machine.seed()
        machine.add("beta", "2", 1, scoped=True, secret=True)
        for caller in CALLERS:
            for pattern in PATTERNS:
                machine.compare(caller, pattern, "beta")
        assert machine.cache.blocker() is None
        assert machine.cache.hits > machine.cache.misses > 0
        for _ in range(2):  # a rule set edited in place hides alpha, then shows it again
            machine.rule_set_edited_in_place("alpha")
            machine.compare("reader", "alpha", "alpha")
        hits, misses = machine.cache.hits, machine.cache.misses
        machine.add("gamma", None, 0, scoped=False, secret=False, by_client=True)  # the cache steps aside
        for caller in CALLERS:
            machine.compare(caller, "gamma", "gamma")
        assert (machine.cache.hits, machine.cache.misses) == (hits, misses)
        machine.remove_named("gamma", None)  # and serves again
        machine.compare("reader", "a", "alpha")
        assert machine.cache.hits + machine.cache.misses > hits + misses
        machine.unknown_middleware(True)
        assert machine.cache.blocker() == "middleware HideSecretFromNonAdmins touches tools/list"
        hits = machine.cache.hits
        machine.compare("reader", "a", "alpha")
        assert machine.cache.hits == hits
    finally:
        machine.teardown()
