"""The process-wide state a test can change and must give back: loggers (handlers, levels, propagation,
``disabled``, ``logging.disable``), environment variables (``COLUMNS`` among them), the working directory
and OpenTelemetry's global providers.

``tests/conftest.py`` takes a :func:`snapshot` before every test and :func:`restore` s it after, so no
test's outcome depends on which tests ran before it in the same worker (a CLI command run in-process
configures its loggers as a real run does; fastmcp configures its own at import).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.metrics import _internal as metrics_internal

_DEFAULT_LOGGER = ((), True, logging.NOTSET, False)


@dataclass(frozen=True)
class ProcessState:
    loggers: dict[str, tuple[tuple[logging.Handler, ...], bool, int, bool]]
    root: tuple[tuple[logging.Handler, ...], int]
    disable: int
    environ: dict[str, str]
    cwd: str
    tracer_provider: tuple[Any, bool]
    meter_provider: tuple[Any, bool]


def _loggers() -> dict[str, logging.Logger]:
    return {
        name: logger
        for name, logger in logging.Logger.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }


def snapshot() -> ProcessState:
    root = logging.getLogger()
    return ProcessState(
        loggers={
            name: (tuple(logger.handlers), logger.propagate, logger.level, logger.disabled)
            for name, logger in _loggers().items()
        },
        root=(tuple(root.handlers), root.level),
        disable=logging.root.manager.disable,
        environ=dict(os.environ),
        cwd=os.getcwd(),
        tracer_provider=(trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE._done),
        meter_provider=(metrics_internal._METER_PROVIDER, metrics_internal._METER_PROVIDER_SET_ONCE._done),
    )


def differences(before: ProcessState, after: ProcessState) -> list[str]:
    """What changed between two snapshots, named (empty when nothing did)."""
    changed = [
        f"logger {name!r}"
        for name, state in after.loggers.items()
        if before.loggers.get(name, _DEFAULT_LOGGER) != state
    ]
    changed += ["the root logger"] if before.root != after.root else []
    changed += ["logging.disable"] if before.disable != after.disable else []
    changed += [
        f"environment variable {name}"
        for name in sorted(set(before.environ) | set(after.environ))
        if before.environ.get(name) != after.environ.get(name)
    ]
    changed += ["the working directory"] if before.cwd != after.cwd else []
    changed += (
        ["the OpenTelemetry tracer provider"] if before.tracer_provider != after.tracer_provider else []
    )
    changed += ["the OpenTelemetry meter provider"] if before.meter_provider != after.meter_provider else []
    return changed


def restore(state: ProcessState, *, keep_telemetry: bool = False) -> None:
    """Give back ``state``. ``keep_telemetry``: leave OpenTelemetry's providers as they are (the
    switched recording provider of ``tests.support.otel``, installed once per process by design)."""
    for name, logger in _loggers().items():
        handlers, propagate, level, disabled = state.loggers.get(name, _DEFAULT_LOGGER)
        logger.handlers = list(handlers)
        logger.propagate, logger.level, logger.disabled = propagate, level, disabled
    root = logging.getLogger()
    root.handlers, root.level = list(state.root[0]), state.root[1]
    logging.disable(state.disable)  # also clears every logger's isEnabledFor cache (levels set above)
    if os.environ != state.environ:
        os.environ.clear()
        os.environ.update(state.environ)
    if os.getcwd() != state.cwd:
        os.chdir(state.cwd)
    if not keep_telemetry:
        trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE._done = state.tracer_provider
        metrics_internal._METER_PROVIDER, metrics_internal._METER_PROVIDER_SET_ONCE._done = (
            state.meter_provider
        )
