"""The gateway's bearer-token lifetime rule (``AuthSettings.max_token_lifetime_seconds``), as a pure
function: a refused token is named by its reason, never by a claim's value. Over real HTTP in
``tests/mcp/server/test_round3_entry_http.py``."""

from __future__ import annotations

from agent_connector_sdk.gateway._auth import lifetime_refusal


def test_the_lifetime_rule_names_its_reason_without_values() -> None:
    now = 1_000_000.0
    assert lifetime_refusal({"exp": now + 10, "iat": now}, 60, False, now) is None
    assert lifetime_refusal({}, 60, False, now) == "no exp claim"
    assert lifetime_refusal({}, 60, True, now) is None
    assert lifetime_refusal({"exp": True}, 60, False, now) == "exp is not a finite number"
    assert lifetime_refusal({"exp": float("inf")}, 60, False, now) == "exp is not a finite number"
    assert lifetime_refusal({"exp": now + 61}, 60, False, now) == (
        "remaining lifetime exceeds max_token_lifetime_seconds"
    )
    assert lifetime_refusal({"exp": now + 10, "iat": now - 100}, 60, False, now) == (
        "lifetime exceeds max_token_lifetime_seconds"
    )
    assert lifetime_refusal({"exp": now + 50, "iat": now + 31}, 60, False, now) == "iat is in the future"
    assert lifetime_refusal({"exp": now + 50, "iat": now + 30}, 60, False, now) is None  # the leeway
