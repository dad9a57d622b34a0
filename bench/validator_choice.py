"""Which JSON Schema engine validates instances: python-jsonschema vs jsonschema_rs, same calls, one run.

Run: ``python -m bench.validator_choice`` (from the repository root). For each case both engines get
the same compiled-once schema and the same instance; timings are interleaved (engine A, engine B,
repeat) and the best of several repeats is kept, so a noisy machine affects both sides alike.

Columns (operations per second):

* ``py gate`` — what ``validate_instance`` did before: ``best_match(validator.iter_errors(x))``;
* ``py is_valid`` — python-jsonschema's cheapest verdict, for a fair floor;
* ``rs is_valid`` — jsonschema_rs's verdict (what ``validate_instance`` now calls first);
* ``ours`` — today's ``validate_instance`` end to end (cache lookup + verdict);

and the ratios ``rs / py gate`` and ``rs / py is_valid`` (> 1: jsonschema_rs is faster).

Cases: (a) the contract lab's small result schemas (``list_regions``' array of strings, an object with
three typed properties); (b) the input schemas of the committed GitHub extract's operation tools, with
an instance holding the minimal required arguments built from the schema (the verdict of both engines
is printed; the point is the timing of the same call on both).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # allow `python bench/validator_choice.py` as well as `-m`
    sys.path.insert(0, str(ROOT))

import jsonschema_rs  # noqa: E402
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # noqa: E402
from jsonschema.exceptions import best_match  # type: ignore[import-untyped]  # noqa: E402
from referencing import Registry  # noqa: E402

from agent_connector_sdk.connectors._sources import load_github_extract  # noqa: E402
from agent_connector_sdk.connectors.openapi import openapi_operation_tools  # noqa: E402
from agent_connector_sdk.core.contracts._validation import validate_instance  # noqa: E402
from agent_connector_sdk.demo.contract_lab import REGIONS  # noqa: E402

REPEATS = 5
TARGET_SECONDS = 0.02  # per timing sample


def _minimal(schema: Any, depth: int = 0) -> Any:
    """A value for ``schema`` with only what ``required`` demands (enough for a timing, not a fuzzer)."""
    if not isinstance(schema, dict) or depth > 8:
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf", "allOf"):
        if schema.get(combinator):
            return _minimal(schema[combinator][0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        return {name: _minimal(properties.get(name, {}), depth + 1) for name in schema.get("required", [])}
    return {
        "string": "octocat",
        "integer": 1,
        "number": 1.5,
        "boolean": True,
        "array": [],
        "null": None,
    }.get(kind if isinstance(kind, str) else "", "x")


def _ops_per_second(call: Callable[[], object]) -> Callable[[], float]:
    timer = timeit.Timer(call)
    number, _ = timer.autorange()
    number = max(1, int(number * TARGET_SECONDS / 0.2))

    def sample() -> float:
        return number / timer.timeit(number)

    return sample


def _measure(schema: Any, instance: Any) -> tuple[list[float], bool, bool]:
    py = Draft202012Validator(schema, registry=Registry())
    rs = jsonschema_rs.validator_for(schema, validate_formats=False)
    samplers = [
        _ops_per_second(lambda: best_match(py.iter_errors(instance))),
        _ops_per_second(lambda: py.is_valid(instance)),
        _ops_per_second(lambda: rs.is_valid(instance)),
        _ops_per_second(lambda: validate_instance(schema, instance)),
    ]
    best = [0.0] * len(samplers)
    for _ in range(REPEATS):
        for index, sample in enumerate(samplers):  # interleaved: noise hits every engine alike
            best[index] = max(best[index], sample())
    return best, bool(py.is_valid(instance)), rs.is_valid(instance)


def _row(label: str, rates: list[float], verdicts: str) -> str:
    py_gate, py_valid, rs_valid, ours = rates
    return (
        f"{label[:38]:<38} {py_gate:>10,.0f} {py_valid:>10,.0f} {rs_valid:>11,.0f} {ours:>10,.0f}"
        f" {rs_valid / py_gate:>8.1f}x {rs_valid / py_valid:>8.1f}x  {verdicts}"
    )


HEADER = (
    f"{'case':<38} {'py gate':>10} {'py is_valid':>10} {'rs is_valid':>11} {'ours':>10}"
    f" {'rs/pygate':>9} {'rs/pyvalid':>9}  verdict py/rs"
)


def main() -> None:
    object_schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string"},
            "priority": {"type": "integer"},
            "express": {"type": "boolean"},
        },
        "required": ["region", "priority", "express"],
    }
    small: list[tuple[str, Any, Any]] = [
        ("list_regions (array of strings)", {"type": "array", "items": {"type": "string"}}, list(REGIONS)),
        (
            "array of 5 strings",
            {"type": "array", "items": {"type": "string"}},
            ["eu-central", "eu-west", "us-east", "ap-south", "sa-east"],
        ),
        ("object, 3 typed props", object_schema, {"region": "eu-west", "priority": 2, "express": True}),
    ]
    tools = asyncio.run(openapi_operation_tools(load_github_extract().document))
    github = [(f"github {tool.alias}", tool.input_schema, _minimal(tool.input_schema)) for tool in tools]

    print(
        "ops/s per validation call (best of",
        REPEATS,
        "interleaved repeats); ratios > 1: jsonschema_rs faster",
    )
    print(HEADER)
    ratios_gate: list[float] = []
    ratios_valid: list[float] = []
    for title, cases in (("(a) small result schemas", small), ("(b) GitHub extract input schemas", github)):
        print(title)
        for label, schema, instance in cases:
            rates, py_ok, rs_ok = _measure(schema, instance)
            ratios_gate.append(rates[2] / rates[0])
            ratios_valid.append(rates[2] / rates[1])
            verdicts = f"{'valid' if py_ok else 'invalid'}/{'valid' if rs_ok else 'invalid'}"
            print(_row(label, rates, verdicts))
    print(
        f"geometric mean rs/py gate: {statistics.geometric_mean(ratios_gate):.1f}x, "
        f"rs/py is_valid: {statistics.geometric_mean(ratios_valid):.1f}x over {len(ratios_gate)} cases"
    )


if __name__ == "__main__":
    main()
