"""``review --descriptor FILE [--emit-tests PATH]``: review descriptors offline, and write concrete
failure cases as a runnable pytest file.

The cases are derived from each admitted descriptor's own schemas by small, explainable mutations of
one *valid* sample (so each case fails for exactly one reason): a missing required argument, a wrong
JSON type, an unknown property where ``additionalProperties`` is false, a bound crossed by one, an
unsafe integer (beyond ±2⁵³−1) or a number in an integer header, and results whose structured content
has the wrong root type. Every candidate is checked against the host's gates *now* and only kept if
they refuse it, so the emitted file holds no case that cannot fail. Header cases assert that Unicode
and edge-whitespace values travel base64-wrapped and round-trip exactly. The emitted tests import
only ``agent_connector_sdk.core.contracts``: they pin the host's behaviour for these descriptors.
(``hypothesis-jsonschema`` generates *valid* instances and does not cover 2020-12; the refusals here
are the point, so they are derived directly.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from agent_connector_sdk.core.contracts import (
    MAX_SAFE_INTEGER,
    ContractError,
    Profile,
    build_parameter_headers,
    header_annotations,
    validate_arguments,
    validate_tool_result,
)
from agent_connector_sdk.core.host import HostCore, HostOptions
from agent_connector_sdk.review.build import build_review_report, finding_reports, header_policy
from agent_connector_sdk.review.errors import ReviewError
from agent_connector_sdk.review.report import AdmissionVerdict, ReviewReport, Target, ToolReview, output_kind

__all__ = ["emit_failure_tests", "failure_cases", "review_descriptors", "valid_sample"]

_WRONG_TYPE: Final[Mapping[str, Any]] = {
    "string": 12345,
    "integer": "1",
    "number": "1.5",
    "boolean": "true",
    "object": "not an object",
    "array": "not an array",
    "null": 0,
}
_HEADER_STRINGS: Final = (
    "Zürich west",
    " leading space",
    "trailing tab\t",
    "line\nbreak",
    "=?base64?x?=",
    "東京",
)


def review_descriptors(
    descriptors: Sequence[Any], *, address: str, profile: Profile = "default"
) -> ReviewReport:
    """The offline review of ``descriptors`` (as read from the files named by ``address``)."""
    if not descriptors:
        raise ReviewError("the descriptor files hold no tools")
    # The host core's own Admit gate (pure): the same verdicts and findings a live review gets.
    core = HostCore(HostOptions(profile=profile))
    report = core.admit_listing(descriptors, pages=0)
    rejected_at = {r["index"]: r for r in report.rejected}
    tools = []
    for index, item in enumerate(descriptors):
        descriptor = item if isinstance(item, dict) else None
        rejection = rejected_at.get(index)
        verdict = (
            AdmissionVerdict(decision="rejected", category=rejection["category"], reason=rejection["reason"])
            if rejection is not None
            else AdmissionVerdict(decision="admitted")
        )
        name = descriptor.get("name") if descriptor is not None else None
        admitted = core.listed.get(name) if rejection is None and isinstance(name, str) else None
        tools.append(
            ToolReview(
                name=name if isinstance(name, str) else None,
                found="file",
                descriptor=descriptor,
                output_kind=output_kind(descriptor),
                admission=verdict,
                headers=header_policy(descriptor, applicable=True),
                findings=finding_reports(admitted.findings) if admitted is not None else [],
            )
        )
    return build_review_report(
        target=Target(kind="descriptor", address=address),
        profile=profile,
        header_gates=True,
        tools=tools,
    )


def valid_sample(schema: Any, depth: int = 0) -> Any:
    """A small instance meant to satisfy ``schema`` (callers check it against the gate)."""
    if not isinstance(schema, Mapping) or depth > 8:
        return None
    for keyword in ("const", "default"):
        if keyword in schema:
            return schema[keyword]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    for keyword in ("anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list) and schema[keyword]:
            return valid_sample(schema[keyword][0], depth + 1)
    declared = schema.get("type")
    if isinstance(declared, list):
        declared = next((t for t in declared if t != "null"), declared[0] if declared else None)
    if declared == "object" or (declared is None and "properties" in schema):
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        return {
            name: valid_sample(properties.get(name, {}), depth + 1)
            for name in required
            if isinstance(properties, Mapping)
        }
    if declared == "array":
        minimum = schema.get("minItems", 0)
        return [
            valid_sample(schema.get("items", {}), depth + 1)
            for _ in range(minimum if isinstance(minimum, int) else 0)
        ]
    if declared == "string":
        length = schema.get("minLength", 1)
        return "x" * max(length if isinstance(length, int) else 1, 1)
    if declared in ("integer", "number"):
        low = schema.get(
            "minimum",
            schema.get("exclusiveMinimum", -1) + 1 if isinstance(schema.get("exclusiveMinimum"), int) else 1,
        )
        return low if isinstance(low, int) else 1
    if declared == "boolean":
        return True
    if declared == "null":
        return None
    return "x"


def _refused(check: Any) -> str | None:
    try:
        check()
    except ContractError as error:
        return error.category
    return None


def failure_cases(descriptor: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The refusals for one admitted descriptor: ``arguments``, ``results`` and ``headers`` cases."""
    schema = descriptor.get("inputSchema", {})
    base = valid_sample(schema)
    if not isinstance(base, dict) or _refused(lambda: validate_arguments(descriptor, base)) is not None:
        base = None  # no valid starting point: only whole-argument cases
    candidates: list[tuple[str, Any]] = [("arguments are not an object", ["not", "an", "object"])]
    properties = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
    if base is not None and isinstance(properties, Mapping):
        for name in schema.get("required", []):
            candidates.append((f"required {name!r} missing", {k: v for k, v in base.items() if k != name}))
        for name, sub in properties.items():
            declared = sub.get("type") if isinstance(sub, Mapping) else None
            if isinstance(declared, str) and declared in _WRONG_TYPE:
                candidates.append(
                    (f"{name!r} has the wrong JSON type", {**base, name: _WRONG_TYPE[declared]})
                )
            if isinstance(sub, Mapping) and isinstance(sub.get("maximum"), int):
                candidates.append((f"{name!r} above its maximum", {**base, name: sub["maximum"] + 1}))
            if isinstance(sub, Mapping) and isinstance(sub.get("minimum"), int):
                candidates.append((f"{name!r} below its minimum", {**base, name: sub["minimum"] - 1}))
            if isinstance(sub, Mapping) and isinstance(sub.get("maxLength"), int):
                candidates.append(
                    (f"{name!r} longer than maxLength", {**base, name: "y" * (sub["maxLength"] + 1)})
                )
        if schema.get("additionalProperties") is False:
            candidates.append(("an unknown property", {**base, "unexpected_property": 1}))
        for annotation in header_annotations(schema, placement="spec"):
            if annotation.type == "integer" and len(annotation.path) == 1:
                candidates.append(
                    (
                        f"{annotation.header}: unsafe integer",
                        {**base, annotation.path[0]: MAX_SAFE_INTEGER + 1},
                    )
                )
                candidates.append((f"{annotation.header}: a fraction", {**base, annotation.path[0]: 1.5}))

    def invoke_gate(arguments: Any) -> str | None:
        def check() -> None:
            validate_arguments(descriptor, arguments)
            build_parameter_headers(descriptor, arguments)

        return _refused(check)

    arguments = []
    for reason, value in candidates:
        category = invoke_gate(value)
        if category is not None:
            arguments.append({"reason": reason, "arguments": value, "category": category})

    results = []
    kind = output_kind(descriptor)
    wrong_root = {"object": [], "array": {}, "scalar": {"unexpected": "object"}}.get(kind)
    result_candidates: list[tuple[str, Any]] = [
        ("content is missing", {"resultType": "complete"}),
        ("an image block without data", {"content": [{"type": "image", "mimeType": "image/png"}]}),
    ]
    if kind != "none":
        result_candidates.append(("structuredContent is missing", {"content": []}))
    if wrong_root is not None:
        result_candidates.append(
            (
                f"structuredContent is not the promised {kind}",
                {
                    "content": [{"type": "text", "text": json.dumps(wrong_root)}],
                    "structuredContent": wrong_root,
                },
            )
        )
    for reason, value in result_candidates:
        category = _refused(lambda value=value: validate_tool_result(descriptor, value))
        if category is not None:
            results.append({"reason": reason, "result": value, "category": category})

    headers = [
        {"header": annotation.header, "value": text}
        for annotation in header_annotations(schema, placement="spec")
        if annotation.type == "string"
        for text in _HEADER_STRINGS
    ]
    return {"arguments": arguments, "results": results, "headers": headers}


_TEMPLATE: Final = '''"""Failure cases generated by `agent-connector review --descriptor ... --emit-tests`.

Source: {source}

Every case below was refused by the host's gates when it was generated; these tests keep it so.
Regenerate after the descriptors change. Values are synthetic (derived from the schemas).
"""

from __future__ import annotations

import json

import pytest

from agent_connector_sdk.core.contracts import (
    ContractError,
    build_parameter_headers,
    decode_header_value,
    encode_header_value,
    validate_arguments,
    validate_tool_result,
)

DESCRIPTORS = json.loads({descriptors!r})
ARGUMENT_CASES = json.loads({arguments!r})
RESULT_CASES = json.loads({results!r})
HEADER_CASES = json.loads({headers!r})


@pytest.mark.parametrize("case", ARGUMENT_CASES, ids=lambda case: f"{{case['tool']}}: {{case['reason']}}")
def test_invoke_gate_refuses(case: dict) -> None:
    descriptor = DESCRIPTORS[case["tool"]]
    with pytest.raises(ContractError) as refused:
        validate_arguments(descriptor, case["arguments"])
        build_parameter_headers(descriptor, case["arguments"])
    assert refused.value.category == case["category"]


@pytest.mark.parametrize("case", RESULT_CASES, ids=lambda case: f"{{case['tool']}}: {{case['reason']}}")
def test_consume_gate_refuses(case: dict) -> None:
    with pytest.raises(ContractError) as refused:
        validate_tool_result(DESCRIPTORS[case["tool"]], case["result"])
    assert refused.value.category == case["category"]


@pytest.mark.parametrize(
    "case", HEADER_CASES, ids=lambda case: f"{{case['tool']}}: {{case['header']}} {{case['value']!r}}"
)
def test_header_value_travels_base64_and_round_trips(case: dict) -> None:
    wire = encode_header_value(case["value"])
    assert wire.startswith("=?base64?") and wire.endswith("?=")
    assert wire.isascii() and wire.isprintable()
    assert decode_header_value(wire) == case["value"]
'''


def emit_failure_tests(report: ReviewReport, path: Path) -> int:
    """Write the pytest file for the report's admitted descriptors; returns the number of cases."""
    descriptors: dict[str, Any] = {}
    arguments: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    headers: list[dict[str, Any]] = []
    for tool in report.tools:
        if tool.admission.decision != "admitted" or tool.descriptor is None or tool.name is None:
            continue
        descriptors[tool.name] = tool.descriptor
        cases = failure_cases(tool.descriptor)
        arguments += [{"tool": tool.name, **case} for case in cases["arguments"]]
        results += [{"tool": tool.name, **case} for case in cases["results"]]
        headers += [{"tool": tool.name, **case} for case in cases["headers"]]
    if not descriptors:
        raise ReviewError("no descriptor was admitted: there is nothing to generate failure tests for")

    def dump(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)

    text = _TEMPLATE.format(
        source=report.target.address,
        descriptors=dump(descriptors),
        arguments=dump(arguments),
        results=dump(results),
        headers=dump(headers),
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise ReviewError(f"{path}: cannot write ({error.strerror or type(error).__name__})") from None
    return len(arguments) + len(results) + len(headers)
