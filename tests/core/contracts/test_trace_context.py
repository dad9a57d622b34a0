"""W3C trace context re-issued by a relay: same trace, the relay's own span, invalid input dropped."""

from __future__ import annotations

import pytest

from agent_connector_sdk.core.contracts import reissue_trace_context
from agent_connector_sdk.core.contracts._trace_context import (
    MAX_TRACESTATE_MEMBERS,
    TraceContext,
    parse_trace_context,
)

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
MINE = "b7ad6b7169203331"


def _mine() -> str:
    return MINE


def test_a_valid_traceparent_keeps_its_trace_and_sampling_and_gets_the_relays_span() -> None:
    meta = {
        "traceparent": f"00-{TRACE}-{PARENT}-01",
        "tracestate": "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE",
    }
    reissued = reissue_trace_context(meta, new_span_id=_mine)
    assert reissued == TraceContext(
        TRACE, MINE, True, (("rojo", "00f067aa0ba902b7"), ("congo", "t61rcWkgMzE"))
    )
    assert reissued.as_meta() == {
        "traceparent": f"00-{TRACE}-{MINE}-01",
        "tracestate": "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
    }


def test_unsampled_flags_and_unknown_flag_bits_reduce_to_the_sampled_bit() -> None:
    assert reissue_trace_context(
        {"traceparent": f"00-{TRACE}-{PARENT}-00"}, new_span_id=_mine
    ) == TraceContext(TRACE, MINE, False)
    reissued = reissue_trace_context({"traceparent": f"00-{TRACE}-{PARENT}-ff"}, new_span_id=_mine)
    assert reissued is not None and reissued.as_meta() == {"traceparent": f"00-{TRACE}-{MINE}-01"}


def test_a_later_version_is_read_by_its_version_00_prefix() -> None:
    reissued = reissue_trace_context(
        {"traceparent": f"cc-{TRACE}-{PARENT}-01-what-the-future-holds"}, new_span_id=_mine
    )
    assert reissued is not None and reissued.traceparent == f"00-{TRACE}-{MINE}-01"


@pytest.mark.parametrize(
    "traceparent",
    [
        f"00-{TRACE}-{PARENT}-01-extra",  # version 00 has exactly four fields
        f"ff-{TRACE}-{PARENT}-01",  # version ff is invalid
        f"00-{'0' * 32}-{PARENT}-01",  # all-zero trace id
        f"00-{TRACE}-{'0' * 16}-01",  # all-zero parent id
        f"00-{TRACE.upper()}-{PARENT}-01",  # uppercase hex
        f"00-{TRACE}-{PARENT}-1",
        f" 00-{TRACE}-{PARENT}-01",
        f"00-{TRACE}-{PARENT}-01\n",
        "",
        12,
        None,
        ["00-" + TRACE + "-" + PARENT + "-01"],
    ],
)
def test_an_invalid_traceparent_drops_all_trace_context(traceparent: object) -> None:
    meta = {"traceparent": traceparent, "tracestate": "rojo=1"}
    assert parse_trace_context(meta) is None
    assert reissue_trace_context(meta, new_span_id=_mine) is None


@pytest.mark.parametrize(
    "tracestate",
    [
        "Rojo=1",  # keys are lowercase
        "rojo=1,rojo=2",  # duplicate keys
        "rojo=bad,value",  # a member without '='
        "rojo=a\tb",  # a tab is not a value character
        "rojo=a=b",  # '=' is not allowed in a value
        "rojo=\u00e9",  # non-ASCII
        ",".join(f"k{i}=v" for i in range(MAX_TRACESTATE_MEMBERS + 1)),
        "k=" + "v" * 600,
        7,
    ],
)
def test_an_invalid_tracestate_is_dropped_and_the_trace_continues(tracestate: object) -> None:
    reissued = reissue_trace_context(
        {"traceparent": f"00-{TRACE}-{PARENT}-01", "tracestate": tracestate}, new_span_id=_mine
    )
    assert reissued == TraceContext(TRACE, MINE, True)
    assert "tracestate" not in reissued.as_meta()


def test_multi_tenant_keys_and_empty_members_are_valid() -> None:
    parsed = parse_trace_context(
        {"traceparent": f"00-{TRACE}-{PARENT}-01", "tracestate": "t@sys=x,, a_b-c*/d=y "}
    )
    assert parsed is not None and parsed.tracestate == (("t@sys", "x"), ("a_b-c*/d", "y"))


def test_the_default_span_ids_are_fresh_and_valid() -> None:
    meta = {"traceparent": f"00-{TRACE}-{PARENT}-01"}
    first, second = reissue_trace_context(meta), reissue_trace_context(meta)
    assert first is not None and second is not None
    assert first.trace_id == second.trace_id == TRACE
    assert len({first.parent_id, second.parent_id, PARENT}) == 3


def test_a_bad_span_id_source_is_refused() -> None:
    with pytest.raises(ValueError, match="16 lowercase hex"):
        reissue_trace_context({"traceparent": f"00-{TRACE}-{PARENT}-01"}, new_span_id=lambda: "0" * 16)
