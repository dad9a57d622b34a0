"""Benchmarks: run from the repository root as ``python -m bench.<name>``; each prints ratios measured
side by side in one run (never asserted in unit tests)."""
