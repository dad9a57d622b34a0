"""The host library against a hostile server over real Streamable HTTP: every bound is a typed
refusal naming the bound, one malformed descriptor costs only itself, HTTP errors keep their words.

The CLI cases (exit codes, one-line messages, bytes on the terminal, wall time and peak RSS) are in
``tests/cli/test_hostile_review.py``; this module drives ``ContractClient`` and the disclosure consumer.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import fastmcp
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_connector_sdk.core.contracts.errors import PaginationError
from agent_connector_sdk.core.contracts.lock import ContractLock
from agent_connector_sdk.core.host import (
    HostBounds,
    HostOptions,
    HttpStatusError,
    JsonRpcError,
    MalformedResponse,
)
from agent_connector_sdk.core.host.bounds import BoundExceeded
from agent_connector_sdk.mcp.host._wire import ValueCounter
from agent_connector_sdk.mcp.host.contract_client import ContractClient
from agent_connector_sdk.mcp.host.disclosure_consumer import CallerScope, SchemaDisclosureConsumer
from tests.support.audit import recorded
from tests.support.hostile_server import hostile_app
from tests.support.http_server import serve_asgi


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_asgi(hostile_app(), path="") as url:
        yield url


@asynccontextmanager
async def _host(url: str, bounds: HostBounds | None = None) -> AsyncIterator[ContractClient]:
    client = fastmcp.Client(url, timeout=10)
    options = HostOptions(bounds=bounds if bounds is not None else HostBounds(), require_confirmation=False)
    host = ContractClient(client, options)
    async with host:
        yield host


async def test_one_malformed_descriptor_is_rejected_alone(base: str) -> None:
    # {"$ref": "#"} as a whole inputSchema made the SDK's result model refuse the page; read raw, it
    # is one rejection and its neighbours are admitted.
    async with _host(f"{base}/ref_root/mcp") as host:
        report = await host.discover_tools()
    assert list(report.admitted) == ["clean", "clean_too"]
    assert [(r["tool"], r["category"]) for r in report.rejected] == [("ref_root", "malformed")]


async def test_control_characters_in_tool_names_are_rejected_alone(base: str) -> None:
    async with _host(f"{base}/ansi/mcp") as host:
        report = await host.discover_tools()
    assert set(report.admitted) == {"clean", "headers", "clean_too"}
    rejected = {r["tool"]: r for r in report.rejected}
    assert rejected["crlf\r\nX-Evil: 1"]["category"] == "malformed"
    assert all("\x1b" not in r["reason"] and "\r" not in r["reason"] for r in report.rejected)


async def test_a_schema_deeper_than_the_bound_is_rejected_alone(base: str) -> None:
    async with _host(f"{base}/deep_schema-40/mcp") as host:
        report = await host.discover_tools()
    assert list(report.admitted) == ["clean", "clean_too"]
    (rejection,) = report.rejected
    assert rejection["category"] == "invalid_schema" and "max_schema_depth (64)" in rejection["reason"]


async def test_a_schema_deeper_than_the_parser_is_refused_by_depth(base: str) -> None:
    async with _host(f"{base}/deep_schema-10000/mcp") as host:
        with pytest.raises(BoundExceeded) as refused:
            await host.discover_tools()
    assert refused.value.bound == "max_schema_depth"


async def test_too_many_tools_is_refused_naming_the_bound(base: str) -> None:
    async with _host(f"{base}/tool_flood-101/mcp", HostBounds(max_tools=100)) as host:
        with pytest.raises(BoundExceeded) as refused:
            await host.discover_tools()
    assert (refused.value.bound, refused.value.limit, refused.value.category) == (
        "max_tools",
        100,
        "bound_exceeded",
    )
    assert "max_tools (100)" in str(refused.value)


async def test_a_message_over_the_byte_bound_is_cut_while_reading(base: str) -> None:
    async with _host(f"{base}/big_schema-300000/mcp", HostBounds(max_message_bytes=100_000)) as host:
        with pytest.raises(BoundExceeded) as refused:
            await host.discover_tools()
    assert refused.value.bound == "max_message_bytes"


async def test_a_message_with_too_many_values_is_cut_while_reading(base: str) -> None:
    async with _host(f"{base}/tool_flood-1000/mcp", HostBounds(max_message_values=1_000)) as host:
        with pytest.raises(BoundExceeded) as refused:
            await host.discover_tools()
    assert refused.value.bound == "max_message_values"


async def test_the_deadline_bounds_a_listing_whose_pages_never_end(base: str) -> None:
    started = time.monotonic()
    async with _host(f"{base}/slow_pages-300/mcp", HostBounds(deadline_s=1.5)) as host:
        with pytest.raises(BoundExceeded) as refused:
            await host.discover_tools()
    assert refused.value.bound == "deadline_s" and "deadline_s (1.5 s)" in str(refused.value)
    assert time.monotonic() - started < 20  # a hang guard: 100 pages × 0.3 s = 30 s without it


async def test_a_result_over_the_result_bound_is_refused(base: str) -> None:
    async with _host(f"{base}/big_text-5000/mcp", HostBounds(max_result_bytes=1_000)) as host:
        await host.discover_tools()
        with pytest.raises(BoundExceeded) as refused:
            await host.call("clean", {"q": "x"})
        assert refused.value.bound == "max_result_bytes"
        events = [e for e in recorded(host.audit) if e.get("event") == "call"]
        assert events[-1]["outcome"] == "bound_exceeded"


async def test_navigation_entries_are_bounded_before_parsing(base: str) -> None:
    client = fastmcp.Client(f"{base}/nav_flood-11/mcp", timeout=10)
    consumer = SchemaDisclosureConsumer(
        client,
        scope=CallerScope("test", base),
        options=HostOptions(bounds=HostBounds(max_navigation_entries=10)),
    )
    async with client:
        with pytest.raises(BoundExceeded) as refused:
            await consumer.discover(".*")
        assert refused.value.bound == "max_navigation_entries"
    client = fastmcp.Client(f"{base}/nav_flood-10/mcp", timeout=10)
    consumer = SchemaDisclosureConsumer(
        client,
        scope=CallerScope("test", base),
        options=HostOptions(bounds=HostBounds(max_navigation_entries=10)),
    )
    async with client:
        assert len(await consumer.discover(".*")) == 10


async def test_an_http_error_keeps_its_status_and_the_servers_words(base: str) -> None:
    client = fastmcp.Client(f"{base}/unauthorized/mcp", timeout=10)
    host = ContractClient(client)
    with pytest.raises(JsonRpcError) as failed:
        await host.__aenter__()
    assert (failed.value.code, failed.value.http_status) == (-32001, 401)
    assert failed.value.message.startswith("Unauthorized: a bearer token is required\\x1b")
    error = host.session.http_guard.last_error
    assert error is not None and (error.status, error.code) == (401, -32001)
    client = fastmcp.Client(f"{base}/forbidden_host/mcp", timeout=10)
    host = ContractClient(client)
    with pytest.raises(HttpStatusError) as forbidden:
        await host.__aenter__()
    assert (forbidden.value.status, forbidden.value.words) == (
        403,
        "Access is only allowed at localhost:3000",
    )


def _values(value: Any) -> int:
    """What ValueCounter counts, from the parsed value: each container, and each member after the
    first of a container."""
    if isinstance(value, dict):
        return 1 + max(len(value) - 1, 0) + sum(_values(v) for v in value.values())
    if isinstance(value, list):
        return 1 + max(len(value) - 1, 0) + sum(_values(v) for v in value)
    return 0


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(alphabet=st.sampled_from('ab,{}[]"\\:\u00e9'), max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet='a,{["\\', max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(_json, st.integers(min_value=1, max_value=7), st.booleans())
def test_value_counter_counts_structure_only_whatever_the_chunking(
    value: Any, size: int, ascii_only: bool
) -> None:
    data = json.dumps(value, ensure_ascii=ascii_only).encode()
    counter = ValueCounter()
    for start in range(0, len(data), size):
        counter.feed(data[start : start + size])
    assert counter.count == _values(value)


@pytest.mark.parametrize("status", [404, 500, 503])
async def test_other_http_errors_keep_their_words_too(base: str, status: int) -> None:
    client = fastmcp.Client(f"{base}/http_error-{status}/mcp", timeout=10)
    host = ContractClient(client)
    with pytest.raises(HttpStatusError) as failed:
        await host.__aenter__()
    assert failed.value.status == status
    assert (failed.value.words or "").startswith("upstream said no\\x1b")  # sanitized once, here
    error = host.session.http_guard.last_error
    assert error is not None and (error.message or "").startswith("upstream said no\x1b")  # raw on the wire


# ------------------------------------------------------------------------------ one translator
@pytest.mark.parametrize("size", [10_000, 20_000, 300_000])
async def test_an_error_page_of_any_size_is_its_status_and_the_servers_words(base: str, size: int) -> None:
    # A reverse proxy's 502 page: over ERROR_BODY_BYTES it used to be a bare RuntimeError.
    client = fastmcp.Client(f"{base}/error_page-{size}/mcp", timeout=10)
    host = ContractClient(client)
    with pytest.raises(HttpStatusError) as failed:
        await host.__aenter__()
    assert failed.value.status == 502 and failed.value.category == "http_error"
    assert failed.value.words == "backend exploded\\x1b[2J\\x1b]0;pwned\\x07\\x1b[31m\\u202eevil\\x9b1m\\x7f"
    assert str(failed.value) == "HTTP 502"  # the words stay an attribute (they may quote values)


@pytest.mark.parametrize("size", [100, 20_000, 2_000_000])
async def test_an_error_page_on_a_call_is_a_typed_error_and_the_session_closes_cleanly(
    base: str, size: int
) -> None:
    # A 500 on a call used to raise the private _MessageTooLarge, escaping __aexit__ in a group.
    async with _host(f"{base}/call_error_page-{size}/mcp") as host:
        await host.discover_tools()
        with pytest.raises(HttpStatusError) as failed:
            await host.call("clean", {"q": "x"})
        assert failed.value.status == 500 and (failed.value.words or "").startswith("backend exploded")
        events = [e for e in recorded(host.audit) if e.get("event") == "call"]
        assert events[-1] == {
            "event": "call",
            "tool": "clean",
            "outcome": "protocol_error",
            "http_status": 500,
        }


@pytest.mark.parametrize("size", [100, 20_000, 2_000_000])
async def test_a_json_rpc_error_at_an_http_error_status_keeps_code_words_and_status(
    base: str, size: int
) -> None:
    async with _host(f"{base}/json_error_page-{size}/mcp") as host:
        await host.discover_tools()
        with pytest.raises(JsonRpcError) as failed:
            await host.call("clean", {"q": "x"})
    assert (failed.value.code, failed.value.http_status) == (-32050, 500)
    assert failed.value.message.startswith("backend on fire\\x1b[2J")  # sanitized, never raw


async def test_a_servers_own_minus_32000_is_its_error_not_a_closed_connection(base: str) -> None:
    async with _host(f"{base}/rpc_error/mcp") as host:
        with pytest.raises(JsonRpcError) as failed:
            await host.discover_tools()
    assert failed.value.code == -32000 and failed.value.message.startswith("backend on fire")
    assert failed.value.http_status is None


async def test_a_number_the_parser_refuses_is_a_local_failure_not_the_servers_parse_error(base: str) -> None:
    async with _host(f"{base}/huge_int/mcp") as host:
        await host.discover_tools()
        with pytest.raises(MalformedResponse) as failed:
            await host.call("clean", {"q": "x"})
    assert "not JSON-RPC this host parses (number out of range" in failed.value.message
    assert "9999" not in str(failed.value)


async def test_a_compressed_answer_is_named_as_such_not_as_too_large(base: str) -> None:
    async with _host(f"{base}/gzip/mcp") as host:
        with pytest.raises(MalformedResponse) as failed:
            await host.discover_tools()
    assert "Content-Encoding gzip" in failed.value.message and "max_message_bytes" not in str(failed.value)


async def test_an_sse_event_is_bounded_by_the_message_bound_and_named(base: str) -> None:
    async with _host(f"{base}/sse_big-2000000/mcp") as host:  # 2 MB: under the default bound, read
        await host.discover_tools()
        result = await host.call("clean", {"q": "x"})
        assert len(result.raw["content"][0]["text"]) == 2_000_000
    async with _host(f"{base}/sse_big-2000000/mcp", HostBounds(max_message_bytes=1_000_000)) as host:
        await host.discover_tools()
        with pytest.raises(BoundExceeded) as refused:
            await host.call("clean", {"q": "x"})
    assert refused.value.bound == "max_message_bytes"


# ------------------------------------------------------------------------------ one bad descriptor
@pytest.mark.parametrize(
    ("mode", "category", "reason"),
    [
        ("nonfinite", "malformed", "a non-finite number at /inputSchema/properties/q/default"),
        ("surrogate", "malformed", "a string holding a lone surrogate at /inputSchema/properties/q/default"),
        ("deep_schema-150", "invalid_schema", "the descriptor nests deeper than max_schema_depth (64)"),
    ],
)
async def test_one_unrepresentable_descriptor_is_rejected_alone_even_under_a_lock(
    base: str, mode: str, category: str, reason: str
) -> None:
    # 1e400 was admitted as inf (then fingerprinting failed the whole lock); a lone surrogate or a
    # schema nested ~150 levels failed the whole page in the SDK's parser.
    url = f"{base}/{mode}/mcp"
    async with _host(url) as host:
        report = await host.discover_tools()
        listed = list(host.admitted.values())
    assert list(report.admitted) == ["clean", "clean_too"]
    (rejection,) = report.rejected
    assert (rejection["category"], rejection["reason"]) == (category, reason)
    lock = ContractLock().with_server(url, listed)
    client = fastmcp.Client(url, timeout=10)
    async with ContractClient(client, HostOptions(lock=lock, require_confirmation=False)) as locked:
        under_lock = await locked.discover_tools()
        assert list(under_lock.admitted) == ["clean", "clean_too"]
        assert (await locked.call("clean", {"q": "x"})).is_error is False


# ------------------------------------------------------------------------------ bounded listings
async def test_a_prompts_listing_that_never_ends_is_refused_at_the_page_bound(base: str) -> None:
    async with _host(f"{base}/endless_prompts-10/mcp", HostBounds(max_pages=20)) as host:
        with pytest.raises(PaginationError) as refused:
            await host.session.list_catalog("prompts")
    assert refused.value.category == "page_limit" and len(refused.value.trace) == 20


async def test_a_prompts_listing_is_bounded_by_items_and_by_the_deadline(base: str) -> None:
    async with _host(f"{base}/endless_prompts-400/mcp", HostBounds(max_list_items=1_000)) as host:
        with pytest.raises(BoundExceeded) as refused:
            await host.session.list_catalog("prompts")
        assert refused.value.bound == "max_list_items" and "prompts/list" in str(refused.value)
    started = time.monotonic()
    bounds = HostBounds(deadline_s=1.0, max_pages=100_000, max_list_items=10_000_000)
    async with _host(f"{base}/endless_prompts-500/mcp", bounds) as host:
        with pytest.raises(BoundExceeded) as late:
            await host.session.list_catalog("prompts")
    assert late.value.bound == "deadline_s"
    # A hang guard (quiet: connect + the 1 s deadline); the listing never ends without it.
    assert time.monotonic() - started < 20


async def test_a_listing_the_server_does_not_serve_is_its_json_rpc_error(base: str) -> None:
    async with _host(f"{base}/endless_prompts-3/mcp") as host:
        for kind in ("resources", "resourceTemplates"):
            with pytest.raises(JsonRpcError) as unknown:  # the hostile server has neither
                await host.session.list_catalog(kind)
            assert unknown.value.code == -32601


# ------------------------------------------------------------------------------ poisoning everywhere
EXPECTED_POISONING = {
    "shadow": {("cross-reference", "/description")},
    "nested": {("instruction-markup", "/inputSchema/properties/q/description")},
    "nested_q": {("instruction-markup", "/description")},
    "enum_tool": {("instruction-markup", "/inputSchema/properties/q/enum/1")},
    "comment": {("instruction-markup", "/description")},
    "image": {("instruction-markup", "/description")},
    "selectors": {("hidden-unicode", "/description")},
    "shy": {("hidden-unicode", "/description"), ("instruction-markup", "/description")},
    "fullwidth": {("instruction-markup", "/title")},
    "split": {("instruction-markup", "/")},
    "r\u0435ad_file": {("name-charset", "/name"), ("confusable-name", "/name")},
    "read_file": {("confusable-name", "/name")},
    "read\u3164file": {("name-charset", "/name")},
    "Delete": {("confusable-name", "/name")},
    "delete": {("confusable-name", "/name")},
}


async def test_poisoning_is_found_over_the_whole_descriptor_and_in_names(base: str) -> None:
    async with _host(f"{base}/poisoned/mcp") as host:
        report = await host.discover_tools()
        found = {
            name: {(f.rule, f.path) for f in host.session.core.listed[name].findings}
            for name in report.admitted
        }
    assert {name: rules for name, rules in found.items() if rules} == EXPECTED_POISONING
    assert not found["clean"] and not found["clean_too"]  # an annotations title is read, and clean
    assert not found["pointer"]  # pointers to siblings are documentation
    messages = [f.message for name in report.admitted for f in host.session.core.listed[name].findings]
    assert "name looks like r\\u0435ad_file" in messages
    assert "name differs only in case from delete" in messages
    assert "description steers the use of other tools (clean)" in messages
    assert not [m for m in messages if "Ignore" in m or "attacker" in m]  # never a quote of the text


async def test_strict_rejects_every_poisoned_tool_and_keeps_the_clean_ones(base: str) -> None:
    client = fastmcp.Client(f"{base}/poisoned/mcp", timeout=10)
    async with ContractClient(client, HostOptions(profile="strict", require_confirmation=False)) as host:
        report = await host.discover_tools()
    assert list(report.admitted) == ["clean", "pointer", "clean_too"]
    assert {r["tool"] for r in report.rejected} == set(EXPECTED_POISONING)
    assert {r["category"] for r in report.rejected} == {"tool_poisoning"}
