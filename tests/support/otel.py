"""OpenTelemetry for tests: the SDK's in-memory span exporter and metric reader, switched on per test.

The API allows one global tracer (and meter) provider per process, and libraries bind to it at first use
(the ``mcp`` SDK keeps a module-level tracer), so the provider here is installed once per process and
*switched*: while no test records, its tracers are the API's no-op tracer, exactly as when no SDK is
configured, so tests elsewhere in the same worker see no difference (no span contexts, nothing injected
into ``_meta``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_NO_OP = trace.NoOpTracer()


class _SwitchedTracer(trace.Tracer):
    def __init__(self, real: trace.Tracer, switch: _Switch) -> None:
        self._real = real
        self._switch = switch

    def _current(self) -> trace.Tracer:
        return self._real if self._switch.on else _NO_OP

    def start_span(self, *args: Any, **kwargs: Any) -> trace.Span:
        return self._current().start_span(*args, **kwargs)

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        return self._current().start_as_current_span(*args, **kwargs)


@dataclass
class _Switch:
    on: bool = False


class _SwitchedProvider(TracerProvider):
    def __init__(self, switch: _Switch) -> None:
        super().__init__()
        self._switch = switch

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        return _SwitchedTracer(super().get_tracer(*args, **kwargs), self._switch)


@dataclass
class Recording:
    """What one test recorded: finished spans and the metric points."""

    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def spans(self) -> Sequence[ReadableSpan]:
        return self.exporter.get_finished_spans()

    def histogram_points(self, name: str, *, wait: float = 5.0) -> list[dict[str, Any]]:
        """``{attributes..., "count": n}`` for each data point of histogram ``name`` measured since the
        last read, waiting up to ``wait`` seconds for a first one (a server measures a request after
        its answer is sent, so the client can be first to look)."""
        deadline = time.monotonic() + wait
        while True:
            points = self._points(name)
            if points or time.monotonic() > deadline:
                return points
            time.sleep(0.02)

    def _points(self, name: str) -> list[dict[str, Any]]:
        data = self.reader.get_metrics_data()
        points: list[dict[str, Any]] = []
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        for point in metric.data.data_points:
                            count = getattr(point, "count", 0)  # histogram points count
                            if count:
                                points.append({**dict(point.attributes or {}), "count": count})
        return points


_SWITCH = _Switch()
_EXPORTER = InMemorySpanExporter()
# Delta: each read holds only what was measured since the previous one (so per test).
_READER = InMemoryMetricReader(preferred_temporality={Histogram: AggregationTemporality.DELTA})
_installed = False


def _install() -> None:
    global _installed
    if _installed:
        return
    provider = _SwitchedProvider(_SWITCH)
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[_READER]))
    _installed = True


@contextmanager
def recording_telemetry() -> Iterator[Recording]:
    """Record spans (and read metrics) for the duration of the block."""
    _install()
    _EXPORTER.clear()
    _READER.get_metrics_data()  # what earlier tests measured is read and dropped
    _SWITCH.on = True
    try:
        yield Recording(_EXPORTER, _READER)
    finally:
        _SWITCH.on = False
