"""The gateway's own log lines, captured for a test (names, categories and counts: what an operator reads)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Lines", "gateway_log"]


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def matching(self, fragment: str) -> list[str]:
        return [line for line in self.lines if fragment in line]


@contextmanager
def gateway_log() -> Iterator[Lines]:
    """The gateway's own log lines (attached to its logger directly: other tests may have turned
    propagation off while configuring the CLI's one-line logging)."""
    logger = logging.getLogger("agent_connector_sdk.gateway")
    handler = Lines()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
