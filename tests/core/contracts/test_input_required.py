"""``validate_input_required_result``: the interim ``InputRequiredResult`` shape, rule by rule, from the
2026-07-28 text (basic/patterns/mrtr, client/elicitation, client/sampling)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_connector_sdk.core.contracts import is_input_required, validate_input_required_result
from agent_connector_sdk.core.contracts._input_required import (
    INPUT_REQUIRED_REQUEST_METHODS,
    required_capability,
)
from agent_connector_sdk.core.contracts.errors import ContractViolation

EVERYTHING: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {"listChanged": True}}

ELICIT_FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Please provide your GitHub username",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    },
}
SAMPLE: dict[str, Any] = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
        "maxTokens": 100,
    },
}
ROOTS = {"method": "roots/list", "params": {}}

# The spec's own example (basic/patterns/mrtr, "InputRequiredResult").
SPEC_EXAMPLE: dict[str, Any] = {
    "resultType": "input_required",
    "inputRequests": {"github_login": ELICIT_FORM, "capital_of_france": SAMPLE},
    "requestState": "AEAD-protected blob",
}


def _category(result: object, *, method: str = "tools/call", capabilities: Any = EVERYTHING) -> str:
    with pytest.raises(ContractViolation) as refused:
        validate_input_required_result(result, request_method=method, client_capabilities=capabilities)
    return refused.value.category


def test_the_spec_example_is_accepted() -> None:
    validate_input_required_result(SPEC_EXAMPLE, request_method="tools/call", client_capabilities=EVERYTHING)


@pytest.mark.parametrize("method", sorted(INPUT_REQUIRED_REQUEST_METHODS))
def test_every_supported_request_may_be_answered_this_way(method: str) -> None:
    validate_input_required_result(SPEC_EXAMPLE, request_method=method, client_capabilities=EVERYTHING)


@pytest.mark.parametrize("method", ["tools/list", "prompts/list", "resources/list", "completion/complete"])
def test_other_requests_must_not_be(method: str) -> None:
    # "Servers MUST NOT send InputRequiredResult responses on any other client requests."
    assert _category(SPEC_EXAMPLE, method=method) == "input_required_not_allowed"


def test_state_only_and_requests_only_are_both_valid() -> None:
    validate_input_required_result(
        {"resultType": "input_required", "requestState": "s"},
        request_method="tools/call",
        client_capabilities={},
    )
    validate_input_required_result(
        {"resultType": "input_required", "inputRequests": {"r": ROOTS}},
        request_method="tools/call",
        client_capabilities={"roots": {}},
    )


def test_neither_requests_nor_state_is_refused() -> None:
    # "Servers MUST include at least one of inputRequests or requestState".
    assert _category({"resultType": "input_required"}) == "empty_input_required"
    assert _category({"resultType": "input_required", "inputRequests": None}) == "empty_input_required"


@pytest.mark.parametrize("result_type", [None, "complete", "INPUT_REQUIRED", "task"])
def test_result_type_must_be_input_required(result_type: Any) -> None:
    result = {**SPEC_EXAMPLE, "resultType": result_type}
    if result_type is None:
        del result["resultType"]
    assert _category(result) == "invalid_result_type"


def test_not_an_object() -> None:
    assert _category(["input_required"]) == "malformed_result"


@pytest.mark.parametrize("state", [1, {"opaque": True}, ["x"], True])
def test_request_state_is_an_opaque_string(state: Any) -> None:
    assert _category({**SPEC_EXAMPLE, "requestState": state}) == "invalid_request_state"


@pytest.mark.parametrize(
    "requests",
    [
        ["not", "a", "map"],
        {"k": "elicitation/create"},
        {"k": {"method": "tools/call", "params": {}}},  # not one of the three embeddable requests
        {"k": {"params": {}}},
        {"k": {"method": "elicitation/create"}},  # params are required for elicitation
        {"k": {"method": "sampling/createMessage", "params": "x"}},
        {"k": {"method": "roots/list", "params": 3}},
    ],
)
def test_each_input_request_is_an_embeddable_request(requests: Any) -> None:
    assert _category({"resultType": "input_required", "inputRequests": requests}) == "malformed_input_request"


def test_roots_list_params_are_optional() -> None:
    validate_input_required_result(
        {"resultType": "input_required", "inputRequests": {"r": {"method": "roots/list"}}},
        request_method="tools/call",
        client_capabilities={"roots": {}},
    )


@pytest.mark.parametrize(
    ("request_", "capabilities"),
    [
        # "if a client does not declare support for elicitation, the server MUST NOT include any
        # elicitation/create requests".
        (ELICIT_FORM, {"sampling": {}, "roots": {}}),
        (SAMPLE, {"elicitation": {}, "roots": {}}),
        (ROOTS, {"elicitation": {}, "sampling": {}}),
        (ROOTS, {}),
        # URL mode needs `elicitation.url`; an empty elicitation object means form only.
        (
            {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "1"},
            },
            {"elicitation": {}},
        ),
        # Form mode when only URL mode is declared.
        (ELICIT_FORM, {"elicitation": {"url": {}}}),
        # Tool-enabled sampling needs `sampling.tools`.
        ({"method": "sampling/createMessage", "params": {**SAMPLE["params"], "tools": []}}, {"sampling": {}}),
    ],
)
def test_undeclared_capabilities_are_never_asked_for(request_: Any, capabilities: Any) -> None:
    result = {"resultType": "input_required", "inputRequests": {"key/with~chars": request_}}
    with pytest.raises(ContractViolation) as refused:
        validate_input_required_result(result, request_method="tools/call", client_capabilities=capabilities)
    assert refused.value.category == "undeclared_client_capability"
    assert refused.value.path == "/inputRequests/key~1with~0chars"


@pytest.mark.parametrize(
    ("request_", "capabilities"),
    [
        (ELICIT_FORM, {"elicitation": {}}),
        (ELICIT_FORM, {"elicitation": {"form": {}}}),
        (
            {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {}}},
            {"elicitation": {"form": {}, "url": {}}},
        ),
        (
            {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "1"},
            },
            {"elicitation": {"url": {}}},
        ),
        (
            {"method": "sampling/createMessage", "params": {**SAMPLE["params"], "tools": []}},
            {"sampling": {"tools": {}}},
        ),
    ],
)
def test_declared_capabilities_are_enough(request_: Any, capabilities: Any) -> None:
    validate_input_required_result(
        {"resultType": "input_required", "inputRequests": {"k": request_}},
        request_method="tools/call",
        client_capabilities=capabilities,
    )


def test_capabilities_left_unchecked_when_not_given() -> None:
    # A client whose SDK refuses undeclared requests in its own dispatch checks the shape only.
    validate_input_required_result(SPEC_EXAMPLE, request_method="tools/call", client_capabilities=None)
    with pytest.raises(ContractViolation):
        validate_input_required_result(
            {"resultType": "input_required", "inputRequests": {"k": {"method": "ping"}}},
            request_method="tools/call",
            client_capabilities=None,
        )


def test_required_capability_paths() -> None:
    assert required_capability("elicitation/create", None) == ("elicitation", "form")
    assert required_capability("elicitation/create", {"mode": "url"}) == ("elicitation", "url")
    assert required_capability("sampling/createMessage", {"tools": []}) == ("sampling", "tools")
    assert required_capability("roots/list", None) == ("roots",)


def test_messages_never_quote_the_state() -> None:
    secret = "state-holding-a-secret-value"
    with pytest.raises(ContractViolation) as refused:
        validate_input_required_result(
            {"resultType": "input_required", "requestState": secret, "inputRequests": {"k": ROOTS}},
            request_method="tools/call",
            client_capabilities={},
        )
    assert secret not in str(refused.value)


def test_is_input_required() -> None:
    assert is_input_required({"resultType": "input_required"})
    assert not is_input_required({"resultType": "complete"})
    assert not is_input_required({"content": []})  # absent means complete
    assert not is_input_required("input_required")
