"""Write confirmation policy (pure): who needs confirming, what the host is shown, and refusals."""

from __future__ import annotations

import pytest

from agent_connector_sdk.mcp.contracts.errors import ContractError
from agent_connector_sdk.mcp.contracts.write_confirmation import (
    ConfirmationRefused,
    WriteHints,
    confirmation_request,
    refuse_unconfirmed,
    requires_confirmation,
)


@pytest.mark.parametrize(
    ("annotations", "needed"),
    [
        ({"readOnlyHint": True}, False),
        ({"readOnlyHint": True, "destructiveHint": False}, False),
        # contradictory: believe the worse
        ({"readOnlyHint": True, "destructiveHint": True}, True),
        ({"readOnlyHint": False}, True),
        ({"destructiveHint": False}, True),  # not read-only: may still write
        ({}, True),
        (None, True),
        ("readOnly", True),
        # only a real boolean counts
        ({"readOnlyHint": "true"}, True),
        ({"readOnlyHint": 1}, True),
    ],
)
def test_only_a_plain_read_only_hint_skips_confirmation(annotations: object, needed: bool) -> None:
    assert requires_confirmation(annotations) is needed


def test_hints_ignore_non_boolean_values() -> None:
    assert WriteHints.of({"readOnlyHint": "yes", "destructiveHint": 0}) == WriteHints(None, None)


def test_request_is_value_free() -> None:
    descriptor = {"name": "delete_repo", "title": "Delete", "annotations": {"destructiveHint": True}}
    secret = "ghp_SECRET_TOKEN_VALUE"
    request = confirmation_request(
        descriptor, {"owner": "octo", "token": secret, "count": 3, "force": True, "tags": ["a"], "x": None}
    )
    assert request.tool == "delete_repo" and request.title == "Delete"
    assert request.hints == WriteHints(None, True)
    assert [(a.name, a.json_type) for a in request.arguments] == [
        ("count", "integer"),
        ("force", "boolean"),
        ("owner", "string"),
        ("tags", "array"),
        ("token", "string"),
        ("x", "null"),
    ]
    text = repr(request) + request.summary()
    assert secret not in text and "octo" not in text


@pytest.mark.parametrize(
    ("decision", "category"),
    [(None, "confirmation_required"), (False, "confirmation_declined"), (1, "confirmation_declined")],
)
def test_anything_but_true_refuses(decision: object, category: str) -> None:
    request = confirmation_request({"name": "write_it"}, {"v": "secret-value"})
    with pytest.raises(ConfirmationRefused) as caught:
        refuse_unconfirmed(request, decision)  # type: ignore[arg-type]
    assert caught.value.category == category
    assert caught.value.gate == "invoke"
    assert caught.value.tool == "write_it"
    assert isinstance(caught.value, ContractError)
    assert "secret-value" not in str(caught.value)


def test_true_confirms() -> None:
    refuse_unconfirmed(confirmation_request({"name": "w"}, {}), True)
