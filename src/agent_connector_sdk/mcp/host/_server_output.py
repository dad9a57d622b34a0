"""What a server writes besides its answers — stderr and log notifications — through the one sanitizer.

A stdio server's stderr is inherited by default: every byte it writes (ESC, BEL, CR, C1-CSI, RLO, at
any volume) lands on the operator's terminal. A server's ``notifications/message`` is printed by
fastmcp's default log handler with its data as sent. Neither passes the sanitizer that every other
server string passes, so a :class:`~.HostSession` installs, on the client it drives
(``HostOptions(sanitize_server_output=False)`` is the explicit opt-out):

* :class:`StderrRelay` for a stdio server whose stderr would be inherited: each line sanitized
  (:func:`~agent_connector_sdk.sanitize.sanitize_text`), cut at :data:`MAX_LINE_CHARACTERS`, prefixed
  with the server's label, at most :data:`LINES_PER_SECOND` lines a second (a burst of
  :data:`BURST_LINES`) and :data:`MAX_RELAYED_BYTES` in all; what is dropped is counted and said. It
  keeps reading whatever it drops, so a server is never blocked on a full pipe;
* :func:`sanitized_log_message` on every ``notifications/message`` before the client's log handler
  (fastmcp's default, or the caller's) sees it: the logger name and the data become one sanitized,
  capped string.

A caller that keeps a stdio server's stderr off the terminal and only quotes it when the server
fails (``review -- CMD``) hands the transport a :class:`StderrRecord` instead: the last
:data:`STDERR_TAIL_BYTES` kept in memory, nothing on disk, the pipe always drained (a server writing
300 MB of stderr costs neither 300 MB of disk nor of memory, and never blocks on a full pipe).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any, Final, TextIO

from agent_connector_sdk.sanitize import sanitize_text

__all__ = [
    "BURST_LINES",
    "LINES_PER_SECOND",
    "MAX_LINE_CHARACTERS",
    "MAX_LOG_CHARACTERS",
    "MAX_RELAYED_BYTES",
    "STDERR_TAIL_BYTES",
    "StderrRecord",
    "StderrRelay",
    "sanitized_log_message",
]

MAX_LINE_CHARACTERS: Final = 500
"""Characters of one stderr line relayed (after sanitizing; the rest of the line is dropped)."""
LINES_PER_SECOND: Final = 20
BURST_LINES: Final = 100
MAX_RELAYED_BYTES: Final = 1 << 20
"""Bytes of stderr read per relay before everything further is dropped (and counted)."""
MAX_LOG_CHARACTERS: Final = 2_000
"""Characters of one log notification's data handed to the log handler, after sanitizing."""
STDERR_TAIL_BYTES: Final = 64 * 1024
"""Bytes of a server's stderr a :class:`StderrRecord` keeps: its last ones (the rest is counted only)."""
_READ_LIMIT: Final = 4_096  # bytes read per readline: a line without end costs at most this much


class StderrRelay:
    """A pipe to hand a stdio transport as its server's stderr (:attr:`writer`), relayed line by line
    to ``sink`` (default: this process's ``sys.stderr`` at the time of writing) — see the module
    docstring. :meth:`close` closes this process's copy of the write end; the relay thread ends when
    the server's copy closes too."""

    def __init__(self, label: str, sink: TextIO | None = None) -> None:
        self.label = sanitize_text(label, 60)
        self._sink = sink
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._reader = os.fdopen(read_fd, "rb")
        self._tokens = float(BURST_LINES)
        self._last = time.monotonic()
        self.relayed_bytes = 0
        self.dropped_lines = 0
        self._exhausted = False
        self.last_line: str | None = None
        """The last non-empty line read (sanitized, at most 300 characters), dropped or not."""
        self._thread = threading.Thread(target=self._pump, name=f"stderr {self.label}", daemon=True)
        self._thread.start()

    def close(self) -> None:
        if not self.writer.closed:
            self.writer.close()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the relay to read the last of the server's stderr (tests, orderly shutdown)."""
        self._thread.join(timeout)

    def _write(self, text: str) -> None:
        sink = self._sink if self._sink is not None else sys.stderr
        try:
            sink.write(f"[{self.label}] {text}\n")
            sink.flush()
        except (OSError, ValueError):
            pass  # the sink is gone (closed at shutdown): the relay keeps draining the pipe

    def _allowed(self) -> bool:
        now = time.monotonic()
        self._tokens = min(float(BURST_LINES), self._tokens + (now - self._last) * LINES_PER_SECOND)
        self._last = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False

    def _relay(self, line: str, over_budget: bool) -> None:
        """Pass one line on (sanitized, capped), or count it dropped (over the byte budget, or over
        the rate); the first line over the budget says so once."""
        if over_budget:
            if not self._exhausted:
                self._exhausted = True
                self._write(f"more than {MAX_RELAYED_BYTES:,} bytes of stderr: the rest is dropped")
            self.dropped_lines += 1
            return
        if not self._allowed():
            self.dropped_lines += 1
            return
        if self.dropped_lines:
            self._write(f"({self.dropped_lines:,} lines dropped: more than {LINES_PER_SECOND}/s)")
            self.dropped_lines = 0
        if line:
            self._write(sanitize_text(line, MAX_LINE_CHARACTERS))

    def _pump(self) -> None:
        partial = False  # inside a line longer than one read: its rest is dropped
        try:
            while chunk := self._reader.readline(_READ_LIMIT):
                self.relayed_bytes += len(chunk)
                continuation, partial = partial, not chunk.endswith(b"\n")
                if continuation:
                    continue
                line = chunk.decode("utf-8", "replace").strip()
                self._relay(line, self._exhausted or self.relayed_bytes > MAX_RELAYED_BYTES)
                if line:
                    self.last_line = sanitize_text(line, 300)  # after it was passed on
        finally:
            self._reader.close()
            if self.dropped_lines:
                self._write(f"({self.dropped_lines:,} lines dropped)")


class StderrRecord:
    """A pipe to hand a stdio transport as its server's stderr (:attr:`writer`) whose last
    :data:`STDERR_TAIL_BYTES` are kept (:meth:`tail`), raw, for the caller to judge and quote through
    the sanitizer; everything before them is read, counted (:attr:`total_bytes`) and dropped. A
    thread drains the pipe as fast as the server writes, so the server never blocks on it.
    :meth:`close` closes this process's copy of the write end (after the server started); the thread
    ends when the server's copies close too."""

    def __init__(self, label: str, keep: int = STDERR_TAIL_BYTES) -> None:
        self.label = sanitize_text(label, 60)
        self.keep = keep
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._read_fd = read_fd
        self._tail = bytearray()
        self._lock = threading.Lock()
        self.total_bytes = 0
        self._thread = threading.Thread(target=self._pump, name=f"stderr {self.label}", daemon=True)
        self._thread.start()

    def close(self) -> None:
        if not self.writer.closed:
            self.writer.close()

    def join(self, timeout: float | None = None) -> None:
        """Wait (at most ``timeout``) for the record to read the last of the server's stderr."""
        self._thread.join(timeout)

    def tail(self) -> bytes:
        """The last bytes read so far (at most :attr:`keep`), raw: the server's, unsanitized."""
        with self._lock:
            return bytes(self._tail)

    def _pump(self) -> None:
        try:
            while chunk := os.read(self._read_fd, 1 << 16):
                with self._lock:
                    self.total_bytes += len(chunk)
                    self._tail += chunk
                    if len(self._tail) > self.keep:
                        del self._tail[: len(self._tail) - self.keep]
        except OSError:
            pass  # the read end was closed under us: nothing more to keep
        finally:
            os.close(self._read_fd)


def sanitized_log_message(message: Any) -> Any:
    """A ``notifications/message`` params object whose ``logger`` and ``data`` are sanitized, capped
    strings (data that is not a string is shown as its JSON); the level is the SDK's validated one."""
    data = message.data
    if not isinstance(data, str):
        try:
            data = json.dumps(data, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError):
            data = repr(type(data))
    logger = message.logger
    return message.model_copy(
        update={
            "data": sanitize_text(data, MAX_LOG_CHARACTERS),
            "logger": sanitize_text(logger, 100) if isinstance(logger, str) else None,
        }
    )
