"""A process as a person runs it, measured: exit code, stdout and stderr *bytes*, wall time, CPU time (user
+ system, its own and its reaped children's: what the process costs whatever the machine's load; assert
on it, and on the wall time only as a hang guard), and its own peak RSS (``VmHWM`` from
``/proc/self/status`` written at exit; ``wait4``'s ``ru_maxrss`` when it died before it could say, which
also counts the address space it was forked from)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from tests.support.cli import ROOT

BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029")

# Run before the program (``python -c PROBE MODULE ARGS...``): reports the peak at exit, then runs
# MODULE as ``python -m MODULE ARGS...`` would.
_PEAK_PROBE = (
    "import atexit, os, runpy, sys\n"
    "def _peak():\n"
    "    with open('/proc/self/status') as status, open(os.environ['MEASURED_PEAK_FILE'], 'w') as out:\n"
    "        out.write(next(line for line in status if line.startswith('VmHWM:')))\n"
    "atexit.register(_peak)\n"
    "module = sys.argv[1]\n"
    "sys.argv = [module, *sys.argv[2:]]\n"
    "runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
)


@dataclass(frozen=True)
class Measured:
    code: int
    out: bytes
    err: bytes
    wall: float
    peak_mb: float
    cpu: float = 0.0

    @property
    def text(self) -> str:
        """Everything the person saw (stdout, then stderr), decoded strictly."""
        return self.out.decode("utf-8") + self.err.decode("utf-8")


def control_characters(data: bytes) -> list[str]:
    """What a terminal acts on in ``data``: C0 (but LF), DEL, C1, bidi controls, separators,
    surrogates; decoding is strict, so invalid UTF-8 fails here too."""
    text = data.decode("utf-8")
    return [hex(ord(c)) for c in text if c != "\n" and (unicodedata.category(c) in ("Cc", "Cs") or c in BIDI)]


def run_measured(
    module: str, args: Sequence[str], *, timeout: float = 60, env_extra: dict[str, str] | None = None
) -> Measured:
    """``python -m MODULE ARGS`` from the repository root, measured (see the module docstring);
    ``env_extra`` is added to this process's environment."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), ROOT]), "COLUMNS": "200"}
    env.update(env_extra or {})
    env.pop("NO_COLOR", None)
    peak_file = tempfile.NamedTemporaryFile(prefix="measured-peak-", delete=False)  # noqa: SIM115
    peak_file.close()
    env["MEASURED_PEAK_FILE"] = peak_file.name
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-c", _PEAK_PROBE, module, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )
    streams: dict[str, bytes] = {}
    readers = [
        threading.Thread(target=lambda name=name, pipe=pipe: streams.__setitem__(name, pipe.read()))
        for name, pipe in (("out", process.stdout), ("err", process.stderr))
    ]
    for reader in readers:
        reader.start()
    killer = threading.Timer(timeout, process.kill)
    killer.start()
    try:
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        killer.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join()
    peak_mb = usage.ru_maxrss / 1024
    try:
        with open(peak_file.name, encoding="ascii") as reported:
            words = reported.read().split()
        if len(words) >= 2 and words[1].isdigit():
            peak_mb = int(words[1]) / 1024  # VmHWM is in kB
    finally:
        os.unlink(peak_file.name)
    wall = time.monotonic() - started
    cpu = usage.ru_utime + usage.ru_stime
    return Measured(process.returncode, streams["out"], streams["err"], wall, peak_mb, cpu)
