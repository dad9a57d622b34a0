"""What judging ``pattern``/``patternProperties`` as ECMA-262 (``regress``) costs admission.

Two catalogs, each admitted cold (validator cache, regex memo and verdict memo emptied) with the
current check and with the check this replaced (Python's ``re.compile`` as the syntax judge), runs
interleaved, best of N:

* GitHub's REST API as ``tools/list`` shows it (1,223 tools, the pinned ``@octokit/openapi``);
* a synthetic 1,223-tool catalog where every tool carries 8 distinct string patterns (zod-style), the
  worst case for the per-pattern cost.

Run: ``python -m bench.pattern_admission [--repeat N]``. Prints seconds and the ratio new / old.
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import time
from collections.abc import Callable
from typing import Any

from agent_connector_sdk.core.contracts import _admission as admission
from agent_connector_sdk.core.contracts import _json_schema, admit_tools
from agent_connector_sdk.core.contracts._json_schema import clear_validator_cache
from bench._github import load_github_tools


def _python_re_judge(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def _cold(listing: str, judge: Callable[[str], bool]) -> float:
    descriptors = json.loads(listing)["tools"]
    clear_validator_cache()
    admission._VERDICTS.clear()
    saved = _json_schema.ecma_regex_valid
    _json_schema.ecma_regex_valid = judge  # type: ignore[assignment]  # the old judge, for the baseline
    try:
        gc.collect()
        started = time.perf_counter()
        report = admit_tools(descriptors)
        elapsed = time.perf_counter() - started
    finally:
        _json_schema.ecma_regex_valid = saved  # type: ignore[assignment]
    if report.rejected:
        raise RuntimeError(f"{len(report.rejected)} tools rejected: the comparison would be unfair")
    return elapsed


def _synthetic(tools: int, patterns: int) -> str:
    listing: list[dict[str, Any]] = []
    for index in range(tools):
        properties = {
            f"field_{k}": {"type": "string", "pattern": rf"^[a-z]{{{k + 1},{index % 50 + k + 2}}}[0-9_-]*$"}
            for k in range(patterns)
        }
        listing.append({"name": f"tool_{index}", "inputSchema": {"type": "object", "properties": properties}})
    return json.dumps({"tools": listing})


def _compare(label: str, listing: str, repeat: int) -> None:
    best_new = best_old = float("inf")
    for _ in range(repeat):
        best_new = min(best_new, _cold(listing, _json_schema.ecma_regex_valid))
        best_old = min(best_old, _cold(listing, _python_re_judge))
    print(
        f"  {label:<44} regress {best_new:.3f} s   re {best_old:.3f} s   ratio {best_new / best_old:.2f}x",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    _, tools = load_github_tools()
    listed: list[dict[str, Any]] = []
    for tool in tools:
        descriptor: dict[str, Any] = {"name": tool.alias, "inputSchema": tool.input_schema}
        if tool.output_schema is not None:
            descriptor["outputSchema"] = tool.output_schema
        listed.append(descriptor)
    github = json.dumps({"tools": listed})
    print(f"cold admission, best of {args.repeat} (runs interleaved):")
    _compare(f"GitHub: {len(tools)} tools", github, args.repeat)
    _compare(f"synthetic: {len(tools)} tools x 8 patterns", _synthetic(len(tools), 8), args.repeat)


if __name__ == "__main__":
    main()
