"""The contract key, remembered by the entry fields it hashes, is always the key hashing gives: for
entries differing in any one field (hints flipped, a header renamed, a digest changed), the remembered
and the computed keys agree, and different contracts never share a key."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agent_connector_sdk.gateway import _verified
from agent_connector_sdk.gateway._verified import contract_key, hashed_contract_key
from tests.support.navigation import navigation_entry

_HINT = st.sampled_from([None, True, False])
_CHANGES = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["tool", "other"]),
        "title": st.sampled_from([None, "T", ""]),
        "description": st.sampled_from([None, "does things", "Deletes every record"]),
        "output_schema_sha256": st.sampled_from([None, "c" * 64]),
        "schema_sha256": st.sampled_from(["b" * 64, "d" * 64]),
        "fragment_count": st.sampled_from([1, 2]),
        "annotations": st.none()
        | st.fixed_dictionaries(
            {}, optional={"readOnlyHint": _HINT, "destructiveHint": _HINT, "openWorldHint": _HINT}
        ),
        "headers": st.none()
        | st.lists(
            st.fixed_dictionaries(
                {
                    "argument": st.sampled_from([["region"], ["a", "b"]]),
                    "header": st.sampled_from(["Mcp-Param-Region", "Mcp-Param-Zone"]),
                    "type": st.sampled_from(["string", "integer", "boolean"]),
                }
            ),
            max_size=2,
        ),
    },
)


@given(st.lists(_CHANGES, min_size=1, max_size=6))
def test_the_remembered_key_is_the_hashed_key(changes: list[dict[str, Any]]) -> None:
    entries = [navigation_entry(**change) for change in changes]
    keys: dict[str, Any] = {}
    for entry in entries + entries:  # the second round is answered from memory
        key = contract_key(entry)
        assert key == hashed_contract_key(entry)
        identity = entry.model_dump(exclude={"kind", "description_cut", "arguments", "arguments_omitted"})
        keys.setdefault(key, identity)
        assert keys[key] == identity  # one key, one contract


def test_the_memory_is_bounded() -> None:
    for index in range(_verified._KNOWN_KEYS + 10):
        contract_key(navigation_entry(name=f"t{index}"))
    assert len(_verified._keys) == _verified._KNOWN_KEYS
