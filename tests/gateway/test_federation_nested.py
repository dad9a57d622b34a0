"""A gateway behind a gateway: the inner one is itself a search-first server, so the outer one
federates it — its tools, found by searches, not its proxy — and the guarantees compose: a call never
re-lists, a child schema that changes behind both is picked up by the next search through the outer
gateway (its generation moves), and the outer gateway validates against the new schema before anything
is sent."""

from __future__ import annotations

from collections import Counter

from agent_connector_sdk.gateway import ChildSpec, Gateway, GatewayConfig
from tests.support.gateway import call, rpc, search, wait_for
from tests.support.gateway_children import Misbehaving, recording
from tests.support.http_server import serve_asgi


def _methods(log: list[dict[str, str]]) -> Counter[str]:
    return Counter(f"{h.get('mcp-method')} {h.get('mcp-name', '')}".strip() for h in log)


def test_a_gateway_of_a_gateway_federates_calls_without_re_listing_and_follows_schema_changes() -> None:
    bad = Misbehaving()
    with serve_asgi(bad.server().streamable_http_app(stateless_http=True)) as bad_url:
        inner = Gateway(
            GatewayConfig(children=(ChildSpec("bad", url=bad_url),), refresh=0.3, relist_interval=0.3)
        )
        inner_log: list[dict[str, str]] = []
        with serve_asgi(recording(inner.http_app(), inner_log)) as inner_url:
            outer = Gateway(
                GatewayConfig(children=(ChildSpec("in", url=inner_url),), refresh=60, relist_interval=0.5)
            )
            with serve_asgi(outer.http_app()) as url:
                wait_for(lambda: outer.children["in"].state == "up", timeout=30, what="inner gateway up")
                assert [entry["name"] for entry in search(url, "bad_")] == [
                    "in_bad_listing",
                    "in_bad_morph",
                    "in_bad_ok",
                ]
                catalog = outer.children["in"].catalog
                assert catalog is not None
                assert set(catalog.tools) == {"in_bad_listing", "in_bad_morph", "in_bad_ok"}
                assert {(r.tool, r.category) for r in catalog.rejected} == {
                    ("call_tool", "synthetic_proxy"),
                    ("search_tools", "synthetic_proxy"),
                }
                # The inner gateway rejected bad_leaky: it is in no catalog and no route reaches it.
                assert (
                    rpc(url, "tools/call", {"name": "in_bad_leaky", "arguments": {}})[1]["error"]["code"]
                    == -32602
                )
                assert (
                    rpc(url, "tools/call", {"name": "in_call_tool", "arguments": {"name": "bad_leaky"}})[1][
                        "error"
                    ]["code"]
                    == -32602
                )

                # Calls go straight to the tool: no tools/list, search or disclosure read per call.
                before = len(inner_log)
                for _ in range(5):
                    assert call(url, "in_bad_ok", {})["content"][0]["text"] == "ok v1"
                assert _methods(inner_log[before:]) == Counter({"tools/call bad_ok": 5})

                # The child's schema changes behind both gateways: the next search through the outer
                # gateway sees the new digest at once (its generation moves), and the outer gateway
                # validates against the new schema (b now required) before sending.
                assert call(url, "in_bad_morph", {"a": "x"})["content"][0]["text"] == "morph v1"
                generation = outer.children["in"].health().generation
                bad.version = 2
                wait_for(
                    lambda: inner.children["bad"].health().generation == 1, timeout=30, what="inner moved"
                )
                # Ranked: plain words find related tools too (in_bad_ok...), the named one first.
                assert search(url, "bad_morph")[0]["name"] == "in_bad_morph"
                assert outer.children["in"].health().generation == (generation or 0) + 1
                calls_before = len(bad.calls)
                refused = call(url, "in_bad_morph", {"a": "x"})
                assert refused["isError"] is True and len(bad.calls) == calls_before
                assert call(url, "in_bad_morph", {"a": "x", "b": 1})["content"][0]["text"] == "morph v2"
