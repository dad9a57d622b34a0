"""The runnable examples run as a user runs them (``python examples/NAME.py``) and print what their
docstrings promise: ``make test`` fails when one breaks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_gateway_over_two_children_serves_both_through_every_gate() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "gateway_over_two_children.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        "gateway over 2 children: weather, shipping",
        "weather_forecast -> {'city': 'Zürich', 'high_c': 21, 'sky': 'clear'}",
        "shipping_quote -> {'price': 6.9}",
    ]
    assert "Traceback" not in done.stderr
