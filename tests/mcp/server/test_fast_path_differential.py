"""Differential test: the name-resolved read path decides every read exactly as the whole-catalog path.

A hypothesis state machine drives one real FastMCP server (search transform, FastMCP's default
``DereferenceRefsMiddleware``, a declared per-tool middleware that hides tagged tools from callers
without the ``admin`` scope) through random sequences of: tool add/remove (with versions and per-tool
auth), server-level enable/disable by name, key or tag, schema replacement and in-place schema edits,
registry origin add/remove, an undeclared list middleware coming and going, and reads — valid, stale,
guessed, non-canonical — by two callers with different scopes. After every read it checks that
``registry.read`` (fast) and ``registry.read_exact`` (a fresh ``get_tool_catalog``) resolved the same
visible tool and produced the same body or the same refusal.

Callers are set through the ``mcp`` SDK's own auth context variable (what its bearer-auth middleware
sets per request), so FastMCP's real component-auth checks run; the HTTP test covers the wire.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from fastmcp import FastMCP
from fastmcp.server.middleware.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.transforms.search import RegexSearchTransform
from fastmcp.tools.base import Tool
from fastmcp.utilities.authorization import require_scopes
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from mcp.shared.exceptions import MCPError

from agent_connector_sdk.core.disclosure_navigation import build_navigation_entry
from agent_connector_sdk.core.schema_disclosure import SourceDigest
from agent_connector_sdk.core.schema_disclosure.cache import DisclosureCache, DisclosureOrigin
from agent_connector_sdk.mcp.schema_disclosure_provider import (
    describe_schema_tools,
    register_schema_resources,
)
from tests.support.catalog_machines import HideSecretFromNonAdmins, run_in_request, toggle_visibility
from tests.support.disclosure_servers import static_tool

NAMES = ("alpha", "beta")
VERSIONS = (None, "1", "2")
CALLERS = ("reader", "admin")
SOURCE = SourceDigest.of(b"differential source")


def schema_variant(variant: int) -> dict[str, Any]:
    """Small schemas, some with ``$defs``/``$ref`` (rewritten by the dereference middleware), one
    long enough for several fragments."""
    if variant == 0:
        return {"type": "object", "properties": {"q": {"type": "string"}}}
    if variant == 1:
        return {
            "type": "object",
            "$defs": {"Page": {"type": "integer", "minimum": 1}},
            "properties": {"page": {"$ref": "#/$defs/Page"}},
        }
    if variant == 2:
        return {
            "type": "object",
            "properties": {f"f{i:03d}": {"type": "string", "description": "x" * 60} for i in range(120)},
        }
    return {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}


class DropsLastTool(Middleware):
    """Not per-tool (its result for a list is not the union of its results per tool): never declared."""

    async def on_list_tools(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Sequence[Tool]]
    ) -> Sequence[Tool]:
        tools = list(await call_next(context))
        return tools[:-1]


class FastPathEqualsExactPath(RuleBasedStateMachine):
    FROZEN = False  # the frozen-schemas declaration (then the machine never edits a schema in place)

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.server: FastMCP[Any] = FastMCP("differential")
        self.search = RegexSearchTransform(search_result_serializer=describe_schema_tools)
        self.server.add_transform(self.search)
        self.hider = HideSecretFromNonAdmins()
        if not self.FROZEN:
            self.server.add_middleware(self.hider)
        self.dropper = DropsLastTool()
        self.registry = register_schema_resources(
            self.server,
            self.search,
            {},
            per_tool_middleware=[self.hider],
            cache=DisclosureCache(max_entries=4, max_bytes=64 * 1024),
            frozen_schemas=self.FROZEN,
        )
        self.tools: dict[tuple[str, str | None], Tool] = {}
        self.seen_uris: list[str] = []
        self.reads = 0
        self.served = 0
        self.fast_reads = 0

    def teardown(self) -> None:
        self.loop.close()

    def run(self, caller: str, coroutine_factory: Any) -> Any:
        return run_in_request(self.loop, self.server, caller, lambda _ctx: coroutine_factory())

    # ---- catalog changes ------------------------------------------------------------------------

    @initialize()
    def seed(self) -> None:
        self.add(name="alpha", version=None, variant=0, scoped=False, secret=False)

    @rule(
        name=st.sampled_from(NAMES),
        version=st.sampled_from(VERSIONS),
        variant=st.integers(0, 3),
        scoped=st.booleans(),
        secret=st.booleans(),
    )
    def add(self, name: str, version: str | None, variant: int, scoped: bool, secret: bool) -> None:
        if any(n == name and (v is None) != (version is None) for n, v in self.tools):
            return  # FastMCP refuses to mix versioned and unversioned tools of one name
        tool = static_tool(
            name, schema_variant(variant), auth=require_scopes("admin") if scoped else None
        ).model_copy(update={"version": version, "tags": {"secret"} if secret else set()})
        self._drop((name, version))
        self.server.add_tool(tool)
        self.tools[(name, version)] = tool

    def _drop(self, key: tuple[str, str | None]) -> None:
        """Remove one (name, version) through public API: remove the name, re-add its other versions."""
        if key not in self.tools:
            return
        del self.tools[key]
        self.server.local_provider.remove_tool(key[0])
        for (name, _), tool in self.tools.items():
            if name == key[0]:
                self.server.add_tool(tool)

    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        if not self.tools:
            return
        self._drop(data.draw(st.sampled_from(sorted(self.tools, key=repr))))

    @precondition(lambda self: not self.FROZEN)
    @rule(data=st.data())
    def edit_schema_in_place(self, data: st.DataObject) -> None:
        if not self.tools:
            return
        key = data.draw(st.sampled_from(sorted(self.tools, key=repr)))
        self.tools[key].parameters["description"] = data.draw(st.sampled_from(["edited", "again", "ü"]))

    @rule(name=st.sampled_from(NAMES), enabled=st.booleans(), how=st.sampled_from(["name", "key", "tag"]))
    def toggle(self, name: str, enabled: bool, how: str) -> None:
        toggle_visibility(self.server, name, enabled=enabled, how=how)

    @rule(name=st.sampled_from(NAMES), registered=st.booleans())
    def register(self, name: str, registered: bool) -> None:
        if not registered:
            self.registry.remove(name)
        elif any(key[0] == name for key in self.tools):
            self.registry.replace(name, DisclosureOrigin(f"op-{name}", SOURCE.sha256))

    @rule(present=st.booleans())
    def declared_middleware(self, present: bool) -> None:
        middleware = self.server.middleware
        if present and self.hider not in middleware:
            middleware.append(self.hider)
        elif not present and self.hider in middleware:
            middleware.remove(self.hider)

    @rule(present=st.booleans())
    def undeclared_middleware(self, present: bool) -> None:
        middleware = self.server.middleware
        if present and self.dropper not in middleware:
            middleware.append(self.dropper)
        elif not present and self.dropper in middleware:
            middleware.remove(self.dropper)

    # ---- reads --------------------------------------------------------------------------------------

    def _current_uris(self, caller: str, name: str) -> list[str]:
        """The URIs a navigation entry for ``name`` would lead this caller to (via the exact catalog)."""

        async def catalog() -> Sequence[Tool]:
            from fastmcp.server.dependencies import get_context

            return await self.search.get_tool_catalog(get_context())

        for tool in self.run(caller, catalog):
            if tool.name == name:
                entry = build_navigation_entry(
                    name=tool.name,
                    title=None,
                    description=None,
                    input_schema=tool.parameters,
                    output_schema=tool.output_schema,
                )
                uri = entry["manifest_uri"]
                if uri is None:
                    return []
                base = uri.removesuffix("manifest")
                count = entry["fragment_count"]
                return [uri, f"{base}fragments/0", f"{base}fragments/{count - 1}", f"{base}fragments/{count}"]
        return []

    @rule(
        caller=st.sampled_from(CALLERS),
        name=st.sampled_from(NAMES),
        pick=st.integers(0, 7),
        guessed=st.sampled_from(["", "digest", "leading-zero", "not-a-uri", "upper"]),
    )
    def read(self, caller: str, name: str, pick: int, guessed: str) -> None:
        candidates = self._current_uris("admin", name) + self._current_uris(caller, name) + self.seen_uris
        fallback = f"schema-disclosure://tools/{name}/{'0' * 64}/manifest"
        uri = candidates[pick % len(candidates)] if candidates else fallback
        self.seen_uris = [*self.seen_uris, uri][-12:]
        if guessed == "digest":
            uri = f"schema-disclosure://tools/{name}/{'ab' * 32}/manifest"
        elif guessed == "leading-zero" and "/fragments/" in uri:
            uri = uri.replace("/fragments/", "/fragments/0")
        elif guessed == "not-a-uri":
            uri = uri + "?x"
        elif guessed == "upper":
            uri = uri.replace("tools", "TOOLS")

        async def both() -> tuple[Any, Any, Any, Any, bool]:
            fast_tool = exact_tool = None
            from agent_connector_sdk.core.disclosure_navigation import parse_disclosure_uri

            address = parse_disclosure_uri(uri)
            if address is not None:
                fast_tool = await self.registry._visible_tool(address.alias, exact=False)
                exact_tool = await self.registry._visible_tool(address.alias, exact=True)
            outcomes: list[tuple[Any, ...]] = []
            for read in (self.registry.read, self.registry.read_exact):
                try:
                    outcomes.append(("served", await read(uri)))
                except MCPError as refusal:
                    outcomes.append(("refused", refusal.error.code, refusal.error.message))
            return fast_tool, exact_tool, outcomes[0], outcomes[1], self.registry.fast_path_blocker() is None

        fast_tool, exact_tool, fast, exact, fast_path = self.run(caller, both)
        assert fast_tool == exact_tool
        assert fast == exact
        self.reads += 1
        self.served += fast[0] == "served"
        self.fast_reads += fast_path

    @invariant()
    def tool_objects_are_not_shared_by_the_test(self) -> None:
        # The machine mutates schemas in place on purpose; make sure those are the server's own objects.
        for (name, version), tool in self.tools.items():
            assert tool.name == name and tool.version == version


FastPathEqualsExactPath.TestCase.settings = settings(
    max_examples=35,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestFastPathEqualsExactPath = FastPathEqualsExactPath.TestCase


class FrozenFastPathEqualsExactPath(FastPathEqualsExactPath):
    """The same, for a server that declares its schemas frozen (memoized on the schema objects)."""

    FROZEN = True


FrozenFastPathEqualsExactPath.TestCase.settings = FastPathEqualsExactPath.TestCase.settings
TestFrozenFastPathEqualsExactPath = FrozenFastPathEqualsExactPath.TestCase


@pytest.mark.parametrize("machine_type", [FastPathEqualsExactPath, FrozenFastPathEqualsExactPath])
def test_the_machine_exercises_served_reads_on_the_fast_path(
    machine_type: type[FastPathEqualsExactPath],
) -> None:
    """Guard against a vacuous differential: a scripted run serves reads through the fast path."""
    machine = machine_type()
    try:
        machine.seed()
        machine.register("alpha", True)
        machine.add("beta", "2", 1, scoped=True, secret=True)
        machine.register("beta", True)
        for pick in range(4):
            machine.read("admin", "alpha", pick, "")
            machine.read("admin", "beta", pick, "")
            machine.read("reader", "beta", pick, "")
        assert machine.fast_reads == machine.reads == 12, machine.registry.fast_path_blocker()
        assert machine.served >= 6  # admin: alpha and beta manifest + fragments; reader: beta hidden
        # A middleware hides the highest version from the reader; the catalog then shows a lower one.
        machine.add("gamma", "2", 3, scoped=False, secret=True)
        machine.add("gamma", "1", 0, scoped=False, secret=False)
        machine.register("gamma", True)
        for pick in range(4):
            machine.read("reader", "gamma", pick, "")
        # The highest version is unauthorized for the reader: the catalog falls back to a lower one.
        machine.add("beta", "3", 0, scoped=True, secret=False)
        machine.add("beta", "1", 3, scoped=False, secret=False)
        served = machine.served
        for pick in range(8):  # candidates: the admin's 4 URIs (version 3), then the reader's (version 1)
            machine.read("reader", "beta", pick, "")
        # Versions added after the origin was registered: it never vouched for their schemas.
        assert machine.served == served
        machine.register("beta", True)  # the origin registered again, for the versions there now
        for pick in range(8):
            machine.read("reader", "beta", pick, "")
        assert machine.served > served
        machine.undeclared_middleware(True)
        assert machine.registry.fast_path_blocker() is not None
        machine.read("admin", "alpha", 0, "")
    finally:
        machine.teardown()
