"""``/healthz`` answers whatever the children do, and a lying child costs a bounded amount of memory.

Real processes: each search-first child its own process (a 3 s search, a liar inventing names and
misstating digests, a plain one that is then SIGSTOPped), a raw JSON-RPC child whose ``tools/list``
cursors cycle A→B→A, and the gateway itself (the CLI). While callers' searches fan out to all of them,
``/healthz`` keeps answering (within a generous hang guard: how fast is measured by
``bench/gateway_federated.py``, not asserted here), the cycling child is ``down`` with the lie named
(``repeated_cursor``), and the stopped one is seen as hung. The memory bar of the issue (+100 MB over
the same gateway without the lying child) is checked by ``/proc`` resident sets of two gateways, one
with and one without the liar, that answered the same searches."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.gateway.test_federation_on_demand import HANG_GUARD, _child, _gateway, _rss_mb, _search
from tests.support.gateway import wait_for
from tests.support.hostile_server import hostile_app
from tests.support.http_server import serve_asgi

ROUNDS = 6
MEMORY_BAR_MB = 100.0


def _healthz(url: str) -> tuple[int, dict[str, Any]]:
    response = httpx2.get(url.removesuffix("/mcp") + "/healthz", timeout=HANG_GUARD)
    body: dict[str, Any] = response.json()
    return response.status_code, body


def _states(url: str) -> dict[str, dict[str, Any]]:
    return {child["name"]: child for child in _healthz(url)[1]["children"]}


def _wait_state(url: str, child: str, field: str, wanted: object, what: str) -> None:
    """Until ``child``'s ``field`` in ``/healthz`` is ``wanted`` (``...``: is anything but null)."""

    def reached() -> bool:
        value = _states(url)[child][field]
        return value is not None if wanted is ... else bool(value == wanted)

    wait_for(reached, HANG_GUARD, what)


@pytest.fixture
def hostile() -> Iterator[dict[str, Any]]:
    with (
        _child("slow") as (_, slow),
        _child("liar") as (_, liar),
        _child("notes") as (stopped_process, stopped),
        serve_asgi(hostile_app(), path="") as base,
    ):
        yield {
            "slow": slow,
            "liar": liar,
            "stopped": stopped,
            "stopped_pid": stopped_process.pid,
            "cyclic": f"{base}/cyclic_pages/mcp",
        }
        os.kill(stopped_process.pid, signal.SIGCONT)  # so that it can be terminated


def test_healthz_answers_under_every_hostile_child_and_the_liar_costs_bounded_memory(
    hostile: dict[str, Any],
) -> None:
    others = [f"slow={hostile['slow']}", f"stopped={hostile['stopped']}", f"cyclic={hostile['cyclic']}"]
    with (
        _gateway(*others) as (without_process, without),
        _gateway(*others, f"liar={hostile['liar']}") as (with_process, with_liar),
    ):
        for url in (without, with_liar):
            _wait_state(url, "stopped", "state", "up", "stopped up")
            _wait_state(url, "slow", "state", "up", "slow up")
        wait_for(lambda: _states(with_liar)["liar"]["state"] == "up", HANG_GUARD, "liar up")
        # The cycling listing is a lie the gateway names, never a loop: that child is down for it.
        for url in (without, with_liar):
            _wait_state(url, "cyclic", "state", "down", "cyclic down")
            cyclic = _states(url)["cyclic"]
            assert "repeated_cursor" in str(cyclic.get("last_error")) + str(cyclic.get("reason")), cyclic
        assert _search(with_liar, "anything") == ["liar_real_0"]  # 20 inventions and a wrong digest refused
        baseline = {"without": _rss_mb(without_process.pid), "with": _rss_mb(with_process.pid)}

        os.kill(hostile["stopped_pid"], signal.SIGSTOP)
        answered: dict[str, list[int]] = {"without": [], "with": []}
        failures: list[BaseException] = []

        def search_rounds(url: str) -> None:
            try:
                for round_ in range(ROUNDS):  # each search waits on the slow and the stopped child
                    _search(url, f"x{round_}")
            except BaseException as error:  # reported below, not lost in the thread
                failures.append(error)

        searching = [
            threading.Thread(target=search_rounds, args=(url,), daemon=True) for url in (without, with_liar)
        ]
        for thread in searching:
            thread.start()
        while any(thread.is_alive() for thread in searching):
            for name, url in (("without", without), ("with", with_liar)):
                status, body = _healthz(url)  # answers (HANG_GUARD is the only clock here)
                answered[name].append(status)
                assert {child["name"] for child in body["children"]} >= {"slow", "stopped", "cyclic"}
            threading.Event().wait(0.5)
        for thread in searching:
            thread.join(timeout=HANG_GUARD)
        assert not failures, failures
        assert answered["without"] and answered["with"]
        assert set(answered["without"] + answered["with"]) <= {200, 503}
        # The stopped child is seen as hung without any caller's call to it succeeding.
        for url in (without, with_liar):
            _wait_state(url, "stopped", "last_error", ..., "the stopped child seen as hung")
        grown = {
            "without": _rss_mb(without_process.pid) - baseline["without"],
            "with": _rss_mb(with_process.pid) - baseline["with"],
        }
        print(f"gateway RSS growth over {ROUNDS} searches: {grown} MB; baseline {baseline} MB")
        # +100 MB over the same gateway without that child: the bar, in resident memory as /proc says.
        assert _rss_mb(with_process.pid) - _rss_mb(without_process.pid) < MEMORY_BAR_MB
        assert grown["with"] < MEMORY_BAR_MB
