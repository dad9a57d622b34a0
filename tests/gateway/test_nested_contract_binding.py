"""A call binds to the whole contract through a gateway of a gateway: the innermost child flips its tool
from read-only to "Deletes every record" (schemas unchanged). A caller of the outer gateway that bound
its call to the contract it read there (``contract_sha256`` of the outer navigation entry) is refused
-32015 on both call routes, and nothing reaches the innermost child — also while the outer gateway has
not searched the inner one again since (its refresh is long): the outer gateway's call carries the
binding of the contract it verified at the inner gateway, which judges it against what it holds now."""

from __future__ import annotations

from typing import Any

from agent_connector_sdk.gateway import CONTRACT_BINDING_META_KEY, ChildSpec, Gateway, GatewayConfig
from tests.gateway.test_contract_binding import Flipping
from tests.support.gateway import parse_message, search, wait_for
from tests.support.http_server import serve_asgi
from tests.support.raw_http import raw_post


def _call(url: str, params: dict[str, Any], binding: str) -> dict[str, Any]:
    return parse_message(raw_post(url, "tools/call", params, meta={CONTRACT_BINDING_META_KEY: binding}))


def test_a_hint_flip_behind_an_inner_gateway_makes_a_bound_call_stale_at_the_outer_one() -> None:
    child = Flipping()
    with serve_asgi(child.server().streamable_http_app(stateless_http=True)) as child_url:
        inner = Gateway(
            GatewayConfig(children=(ChildSpec("db", url=child_url),), refresh=0.3, relist_interval=0.3)
        )
        with serve_asgi(inner.http_app()) as inner_url:
            # The outer gateway does not look at the inner one again on its own for a minute.
            outer = Gateway(GatewayConfig(children=(ChildSpec("in", url=inner_url),), refresh=60))
            with serve_asgi(outer.http_app()) as url:
                wait_for(lambda: outer.children["in"].state == "up", timeout=30, what="inner gateway up")
                (read,) = search(url, "in_db_records")
                assert read["annotations"] == {"readOnlyHint": True}
                binding = read["contract_sha256"]
                direct = {"name": "in_db_records", "arguments": {}}
                proxied = {"name": "call_tool", "arguments": {"name": "in_db_records", "arguments": {}}}
                for params in (direct, proxied):  # bound to the contract it is: runs
                    assert _call(url, params, binding)["result"]["content"][0]["text"] == "done"
                assert child.calls == ["records", "records"]

                held = inner.tool("db_records")
                assert held is not None
                child.flipped = True
                wait_for(
                    lambda: (
                        (now := inner.tool("db_records")) is not None
                        and now.contract_sha256 != held.contract_sha256
                    ),
                    timeout=30,
                    what="the inner gateway to publish the flipped tool",
                )
                # No search through the outer gateway since: its bound call must still not run.
                for params in (direct, proxied):
                    message = _call(url, params, binding)
                    assert "result" not in message, message
                    assert message["error"]["code"] == -32015, message
                assert child.calls == ["records", "records"]  # nothing reached the innermost child

                # Searched again, the outer gateway publishes what the tool now is; bound to that,
                # the call runs (the caller confirmed the destructive tool).
                wait_for(
                    lambda: search(url, "in_db_records")[0]["contract_sha256"] != binding,
                    timeout=30,
                    what="the outer gateway to publish the flipped tool",
                )
                (flipped,) = search(url, "in_db_records")
                assert flipped["description"] == "Deletes every record"
                assert flipped["annotations"] == {"readOnlyHint": False, "destructiveHint": True}
                assert flipped["schema_sha256"] == read["schema_sha256"]
                confirmed = _call(url, direct, flipped["contract_sha256"])
                assert confirmed["result"]["content"][0]["text"] == "done"
                assert child.calls == ["records", "records", "records"]
