"""The fingerprint's fast paths against the documented definition: copy-on-write normalization equals a
plain full-copy walk and never touches its input; the digests composed from per-field bytes equal
SHA-256 over the whole canonical view (issue 22: a cold listing with a contract lock)."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.contracts import fingerprint
from agent_connector_sdk.core.contracts._fingerprint import _normalized, contract_view
from agent_connector_sdk.core.contracts.errors import AdmissionError

ORDER_FREE = {"required", "type"}


def reference_normalized(value: Any) -> Any:
    """The definition: a full copy with every all-string ``required``/``type`` array sorted."""
    if isinstance(value, dict):
        return {
            key: sorted(child)
            if key in ORDER_FREE and isinstance(child, list) and all(isinstance(e, str) for e in child)
            else reference_normalized(child)
            for key, child in value.items()
        }
    if isinstance(value, list):
        return [reference_normalized(child) for child in value]
    return value


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


KEYS = st.sampled_from(["type", "required", "properties", "items", "enum", "x", "ü"])
SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["a", "b", "string", "null", "é"])
JSON = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=25,
)


class Subclassed(dict):  # type: ignore[type-arg]
    pass


@settings(max_examples=400, deadline=None)
@given(JSON)
def test_copy_on_write_normalization_equals_the_full_copy_and_leaves_its_input_alone(value: Any) -> None:
    before = copy.deepcopy(value)
    normalized = _normalized(value)
    assert normalized == reference_normalized(before)
    assert canonical(normalized) == canonical(reference_normalized(before))  # types too (1 vs True)
    assert value == before and canonical(value) == canonical(before)


@settings(max_examples=200, deadline=None)
@given(
    st.fixed_dictionaries(
        {"name": st.sampled_from(["t", "ü-tool"])},
        optional={
            "title": st.text(max_size=5),
            "description": st.text(max_size=20),
            "inputSchema": JSON,
            "outputSchema": JSON,
            "annotations": st.dictionaries(st.sampled_from(["readOnlyHint", "title"]), SCALARS, max_size=2),
        },
    )
)
def test_composed_digests_equal_hashing_the_whole_canonical_view(descriptor: dict[str, Any]) -> None:
    try:
        view = contract_view(descriptor)
        found = fingerprint(descriptor)
    except AdmissionError:
        return
    assert found.sha256 == hashlib.sha256(canonical(view)).hexdigest()
    body = {field: value for field, value in view.items() if field != "name"}
    assert found.contract_sha256 == hashlib.sha256(canonical(body)).hexdigest()
    assert found.fields == {
        field: hashlib.sha256(canonical(value)).hexdigest() for field, value in view.items()
    }


def test_subclasses_are_copied_into_plain_containers_and_depth_is_bounded() -> None:
    normalized = _normalized(Subclassed(type=["b", "a"], items=Subclassed()))
    assert type(normalized) is dict and type(normalized["items"]) is dict
    assert normalized == {"type": ["a", "b"], "items": {}}
    deep: Any = {}
    for _ in range(600):
        deep = {"items": deep}
    with pytest.raises(AdmissionError) as refused:
        _normalized(deep)
    assert refused.value.category == "malformed"
