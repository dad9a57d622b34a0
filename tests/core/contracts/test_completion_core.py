"""Completion policy, pure: request validation, authorized filtering, result shape, sliding-window limits."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.contracts import (
    MAX_COMPLETION_VALUES,
    CompletionRateLimited,
    CompletionRequest,
    RateLimiter,
    completion_result,
    filter_completions,
    parse_completion_params,
)
from agent_connector_sdk.core.contracts._completion import MAX_ARGUMENT_VALUE_LENGTH, MAX_CONTEXT_ARGUMENTS
from agent_connector_sdk.core.contracts.errors import CompletionError

ENVIRONMENTS = ["production", "prod-eu", "preview", "staging", "dev"]


# --- request validation ---------------------------------------------------------------------------------


def test_prompt_and_resource_requests_parse() -> None:
    request = parse_completion_params(
        {
            "ref": {"type": "ref/prompt", "name": "deploy"},
            "argument": {"name": "environment", "value": "pr"},
            "context": {"arguments": {"service": "api"}},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
        }
    )
    assert request == CompletionRequest("ref/prompt", "deploy", "environment", "pr", {"service": "api"})
    request = parse_completion_params(
        {
            "ref": {"type": "ref/resource", "uri": "env://{name}/config"},
            "argument": {"name": "name", "value": ""},
        }
    )
    assert (request.ref_type, request.ref_key, request.argument_value, dict(request.context_arguments)) == (
        "ref/resource",
        "env://{name}/config",
        "",
        {},
    )


GOOD_REF = {"type": "ref/prompt", "name": "deploy"}
GOOD_ARG = {"name": "environment", "value": "p"}


@pytest.mark.parametrize(
    "params",
    [
        None,
        [],
        {"argument": GOOD_ARG},
        {"ref": "deploy", "argument": GOOD_ARG},
        {"ref": {"type": "ref/tool", "name": "x"}, "argument": GOOD_ARG},
        {"ref": {"type": "ref/prompt"}, "argument": GOOD_ARG},
        {"ref": {"type": "ref/prompt", "name": ""}, "argument": GOOD_ARG},
        {"ref": {"type": "ref/resource", "name": "x"}, "argument": GOOD_ARG},
        {"ref": GOOD_REF},
        {"ref": GOOD_REF, "argument": {"name": "environment"}},
        {"ref": GOOD_REF, "argument": {"name": "environment", "value": 5}},
        {"ref": GOOD_REF, "argument": {"name": "", "value": "p"}},
        {"ref": GOOD_REF, "argument": {"name": "e", "value": "p" * (MAX_ARGUMENT_VALUE_LENGTH + 1)}},
        {"ref": GOOD_REF, "argument": GOOD_ARG, "context": []},
        {"ref": GOOD_REF, "argument": GOOD_ARG, "context": {"arguments": ["a"]}},
        {"ref": GOOD_REF, "argument": GOOD_ARG, "context": {"arguments": {"a": 1}}},
        {"ref": GOOD_REF, "argument": GOOD_ARG, "context": {"arguments": {"a": "x" * 5000}}},
        {
            "ref": GOOD_REF,
            "argument": GOOD_ARG,
            "context": {"arguments": {f"k{i}": "v" for i in range(MAX_CONTEXT_ARGUMENTS + 1)}},
        },
    ],
)
def test_invalid_requests_are_refused(params: Any) -> None:
    with pytest.raises(CompletionError) as info:
        parse_completion_params(params)
    assert info.value.category == "invalid_request"


def test_refusal_never_echoes_the_value() -> None:
    secret = "SECRET-" + "x" * MAX_ARGUMENT_VALUE_LENGTH
    with pytest.raises(CompletionError) as info:
        parse_completion_params({"ref": GOOD_REF, "argument": {"name": "e", "value": secret}})
    assert "SECRET" not in str(info.value)


# --- authorized filtering and the result shape ------------------------------------------------------------


def test_analyst_never_receives_production() -> None:
    analyst = {"staging", "dev", "preview"}
    matches = filter_completions(ENVIRONMENTS, "p", analyst)
    assert matches == ["preview"]
    result = completion_result(matches)
    assert result == {"values": ["preview"], "total": 1, "hasMore": False}  # total leaks nothing
    assert filter_completions(ENVIRONMENTS, "prod", analyst) == []


def test_operator_sees_all_matches_in_order() -> None:
    assert filter_completions(ENVIRONMENTS, "pr", lambda v: True) == ["production", "prod-eu", "preview"]


def test_matching_is_a_case_insensitive_prefix_and_keeps_spelling() -> None:
    assert filter_completions(["Production", "eu-prod", "PRE"], "pR", lambda v: True) == ["Production", "PRE"]
    assert filter_completions(["a", "a", "b"], "", lambda v: True) == ["a", "b"]


def test_authorization_predicate_sees_every_match_before_counting() -> None:
    asked: list[str] = []

    def allowed(value: str) -> bool:
        asked.append(value)
        return value != "prod-eu"

    assert filter_completions(ENVIRONMENTS, "pr", allowed) == ["production", "preview"]
    assert asked == ["production", "prod-eu", "preview"]


@pytest.mark.parametrize(
    ("count", "has_more"), [(0, False), (99, False), (100, False), (101, True), (250, True)]
)
def test_result_is_capped_at_100_with_total_and_has_more(count: int, has_more: bool) -> None:
    matches = [f"v{i:03d}" for i in range(count)]
    result = completion_result(matches)
    assert result["values"] == matches[:MAX_COMPLETION_VALUES]
    assert (result["total"], result["hasMore"]) == (count, has_more)


def test_limit_may_be_lowered_never_raised() -> None:
    assert completion_result(["a", "b", "c"], limit=2) == {"values": ["a", "b"], "total": 3, "hasMore": True}
    for bad in (101, -1, True):
        with pytest.raises(ValueError):
            completion_result(["a"], limit=bad)


@settings(max_examples=60, deadline=None)
@given(
    candidates=st.lists(st.text(alphabet="abP", max_size=4), max_size=150),
    prefix=st.text(alphabet="abp", max_size=2),
    allowed=st.sets(st.text(alphabet="abP", max_size=4)),
)
def test_filter_and_shape_properties(candidates: list[str], prefix: str, allowed: set[str]) -> None:
    matches = filter_completions(candidates, prefix, allowed)
    assert all(m in allowed and m.casefold().startswith(prefix.casefold()) for m in matches)
    assert len(matches) == len(set(matches))
    result = completion_result(matches)
    assert len(result["values"]) <= MAX_COMPLETION_VALUES
    assert result["total"] == len(matches)
    assert result["hasMore"] == (len(matches) > len(result["values"]))


# --- the rate limiter ------------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_window_limit_and_retry_after() -> None:
    clock = FakeClock()
    limiter = RateLimiter(3, 10.0, clock=clock)
    assert [limiter.acquire("alice") for _ in range(3)] == [None, None, None]
    assert limiter.acquire("alice") == 10_000
    clock.now += 4.0
    assert limiter.acquire("alice") == 6_000
    clock.now += 6.0  # the first three requests leave the window together
    assert limiter.acquire("alice") is None


def test_window_slides_rather_than_resets() -> None:
    clock = FakeClock()
    limiter = RateLimiter(3, 10.0, clock=clock)
    for at in (0.0, 5.0, 9.0):
        clock.now = 1000.0 + at
        assert limiter.acquire("k") is None
    clock.now = 1010.5  # only the request at t=0 has left
    assert limiter.acquire("k") is None
    clock.now = 1011.0  # window holds t=5, 9, 10.5; the oldest leaves at t=15
    assert limiter.acquire("k") == 4_000


def test_refusals_are_not_counted_and_callers_are_independent() -> None:
    clock = FakeClock()
    limiter = RateLimiter(1, 1.0, clock=clock)
    assert limiter.acquire("alice") is None
    for _ in range(50):
        assert limiter.acquire("alice") == 1_000
    assert limiter.acquire("bob") is None
    clock.now += 1.0
    assert limiter.acquire("alice") is None


def test_retry_after_is_at_least_one_millisecond() -> None:
    clock = FakeClock()
    limiter = RateLimiter(1, 1.0, clock=clock)
    limiter.acquire("k")
    clock.now += 0.99999
    assert limiter.acquire("k") == 1


def test_check_raises_a_typed_rate_limit_error() -> None:
    limiter = RateLimiter(1, 30.0, clock=FakeClock())
    limiter.check("alice")
    with pytest.raises(CompletionRateLimited) as info:
        limiter.check("alice")
    err = info.value
    assert isinstance(err, CompletionError)
    assert (err.category, err.retry_after_ms, err.gate) == ("rate_limited", 30_000, "execute")
    assert "alice" not in str(err)


def test_tracked_callers_are_bounded() -> None:
    clock = FakeClock()
    limiter = RateLimiter(1, 60.0, clock=clock, max_keys=3)
    for key in ("a", "b", "c"):
        limiter.acquire(key)
    limiter.acquire("a")  # refused, but "a" is now the most recently seen
    limiter.acquire("d")  # evicts "b", the least recently seen
    assert len(limiter) == 3
    assert limiter.acquire("a") is not None  # still tracked, still limited
    assert limiter.acquire("b") is None  # forgotten: a fresh window


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_requests": 0, "window_seconds": 1.0},
        {"max_requests": True, "window_seconds": 1.0},
        {"max_requests": 1, "window_seconds": 0},
        {"max_requests": 1, "window_seconds": float("inf")},
        {"max_requests": 1, "window_seconds": 10**400},
        {"max_requests": 1, "window_seconds": True},
        {"max_requests": 1, "window_seconds": 1.0, "max_keys": 0},
    ],
)
def test_limiter_configuration_is_checked(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        RateLimiter(**kwargs)


@settings(max_examples=40, deadline=None)
@given(
    gaps=st.lists(st.floats(min_value=0, max_value=3, allow_nan=False), min_size=1, max_size=40),
    limit=st.integers(min_value=1, max_value=5),
)
def test_never_more_than_the_limit_in_any_window(gaps: list[float], limit: int) -> None:
    clock = FakeClock()
    limiter = RateLimiter(limit, 5.0, clock=clock)
    admitted: list[float] = []
    for gap in gaps:
        clock.now += gap
        retry = limiter.acquire("k")
        if retry is None:
            admitted.append(clock.now)
        else:
            assert retry >= 1
    for start in admitted:
        assert sum(1 for t in admitted if start <= t < start + 5.0) <= limit
