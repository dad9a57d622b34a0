"""Every cache and record the server side owns has a bound, and stays exact while it evicts.

Differential where it matters: answers through a small (constantly evicting) cache equal answers from
a fresh cache for every input, so eviction never changes a verdict.
"""

from __future__ import annotations

from typing import Any

from agent_connector_sdk.audit import BoundedAuditSink
from agent_connector_sdk.core.contracts import (
    RateLimiter,
    ValidatorCache,
    validate_instance,
)
from agent_connector_sdk.demo.contract_lab import contract_lab_server
from agent_connector_sdk.mcp.server import ServerGates


def _schema(index: int) -> dict[str, Any]:
    return {"type": "object", "properties": {"n": {"type": "integer", "maximum": index}}, "required": ["n"]}


def test_validator_cache_is_bounded_and_eviction_never_changes_a_verdict() -> None:
    small = ValidatorCache(maxsize=8)
    for round_ in range(2):
        for index in range(40):
            schema = _schema(index)
            for instance in ({"n": index}, {"n": index + 1}, {}, {"n": "x"}):
                assert validate_instance(schema, instance, cache=small) == validate_instance(
                    schema, instance, cache=ValidatorCache()
                ), (round_, index, instance)
            assert len(small) <= 8


def test_rate_limiter_tracks_at_most_max_keys_callers() -> None:
    limiter = RateLimiter(5, 60.0, max_keys=50)
    for index in range(5000):
        limiter.acquire(f"caller-{index}")
        assert len(limiter) <= 50


def test_audit_sinks_keep_only_the_most_recent_events() -> None:
    sink = BoundedAuditSink(maxlen=10)
    for index in range(1000):
        sink({"event": "e", "index": index})
    assert [event["index"] for event in sink.events()] == list(range(990, 1000))


def test_the_header_gates_default_record_is_bounded_over_many_calls() -> None:
    server = contract_lab_server()
    gates = ServerGates()
    gates.install(server)
    recent = gates.headers.audit.recent  # type: ignore[attr-defined]
    for index in range(1500):
        recent({"event": "parameter_headers_accepted", "tool": "t", "index": index})
    assert len(recent.events()) == 1024
    assert recent.events()[-1]["index"] == 1499


def test_upstream_header_policy_holds_one_entry_per_operation_however_often_it_is_built() -> None:
    import httpx2

    from agent_connector_sdk.connectors import UpstreamHeaderPolicy, build_openapi_server, load_github_extract

    document = load_github_extract().document
    operations = sum(
        1
        for item in document["paths"].values()
        for method in item
        if method in {"get", "put", "post", "delete", "patch"}
    )
    client = httpx2.AsyncClient(base_url="http://127.0.0.1:9")
    for _ in range(5):
        build_openapi_server(document, client=client)
    policy = UpstreamHeaderPolicy.for_client(client)
    assert len(policy) == operations
    assert sum(isinstance(hook, UpstreamHeaderPolicy) for hook in client.event_hooks["request"]) == 1
