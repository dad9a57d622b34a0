"""A CPU-bound load of N: N processes that spin until stopped, to run beside the test suite.

    python -m scripts.cpu_load 2                       # until Ctrl-C or SIGTERM
    python -m scripts.cpu_load 2 -- make test          # runs the command beside the load, exits with its code

`make test-under-load` runs `make test` beside a load of 2 (``LOAD=1`` for a load of 1): the suite's
claim is that no test depends on the machine's speed, and a busy machine is where that shows. Each
spinner is a process of its own (no GIL shared), at normal priority, and ends with this one (SIGTERM,
SIGINT, or the command's end).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Sequence


def spin() -> None:
    """Burn one CPU until killed (pure arithmetic: no memory, no I/O)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    value = 0
    while True:
        value = (value * 1103515245 + 12345) & 0x7FFFFFFF


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("load", type=int, help="how many CPU-bound processes to run (the load average)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND...: run it beside the load")
    args = parser.parse_args(argv)
    if args.load < 0:
        parser.error("load must be 0 or more")
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.load)]
    for spinner in spinners:
        spinner.start()
    started = time.monotonic()
    print(
        f"cpu_load: {args.load} spinning process(es) {[s.pid for s in spinners]}", file=sys.stderr, flush=True
    )
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    code = 0
    try:
        if command:
            code = subprocess.call(command)
            took = time.monotonic() - started
            said = f"cpu_load: {shlex.join(command)} exited {code} after {took:.0f} s"
            said += f" beside a load of {args.load}"
            print(said, file=sys.stderr, flush=True)
        else:
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        code = 130
    finally:
        for spinner in spinners:
            if spinner.pid is not None:
                os.kill(spinner.pid, signal.SIGKILL)
            spinner.join(5)
    return code


if __name__ == "__main__":
    sys.exit(main())
