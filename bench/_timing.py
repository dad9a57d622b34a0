"""Timing helper shared by the benchmarks: best-of-N wall time, the runs interleaved side by side."""

from __future__ import annotations

import gc
import time
from collections.abc import Awaitable, Callable
from typing import Any


async def best_of(repeat: int, runs: list[Callable[[], Awaitable[Any]]]) -> list[float]:
    """Each run's best wall time over ``repeat`` rounds; within a round the runs alternate, so a
    machine that drifts slows every run alike (the ratios stay honest on a noisy 2-core host)."""
    best = [float("inf")] * len(runs)
    for _ in range(repeat):
        for position, run in enumerate(runs):
            gc.collect()
            started = time.perf_counter()
            await run()
            best[position] = min(best[position], time.perf_counter() - started)
    return best
