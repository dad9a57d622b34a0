"""Property tests: arbitrary JSON schemas round-trip; every single mutation is refused."""

from __future__ import annotations

import hashlib
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_connector_sdk.core.schema_disclosure import (
    SchemaDisclosure,
    SchemaDisclosureError,
    SchemaFragment,
    build_schema_disclosure,
    parse_fragment,
    reconstruct_schema,
)
from agent_connector_sdk.core.schema_disclosure._models import IDENTITY_FIELDS

# Text that exercises the encoder: astral plane, control characters, quotes and backslashes,
# everything but lone surrogates (which are not text and are refused elsewhere).
_TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)
# Long enough to span several fragments; built by repetition so generation stays cheap while cuts
# still land on random mixes of 1- to 4-byte characters.
_LONG_TEXT = st.builds(
    lambda unit, times: (unit * (6000 // len(unit) + 1))[:times],
    st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=1, max_size=30),
    st.integers(1500, 6000),
)
_SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _TEXT
)
_JSON = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_TEXT, children, max_size=4),
    max_leaves=25,
)
_SCHEMA = st.builds(
    lambda extra, description: {**extra, "type": "object", "description": description},
    st.dictionaries(_TEXT, _JSON, max_size=5),
    _LONG_TEXT,
)
_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _disclose(input_schema: dict[str, Any], output_schema: Any, alias: str = "tool") -> SchemaDisclosure:
    return build_schema_disclosure(
        operation="op", alias=alias, source=b"src", input_schema=input_schema, output_schema=output_schema
    )


@_SETTINGS
@given(input_schema=_SCHEMA, output_schema=_JSON)
def test_round_trip_and_bounds(input_schema: dict[str, Any], output_schema: Any) -> None:
    d = _disclose(input_schema, output_schema)
    for fragment in d.fragments:
        raw = fragment.text.encode("utf-8")
        assert len(raw) <= 4096
        assert raw.decode("utf-8") == fragment.text  # each decodes as UTF-8 on its own
    assert reconstruct_schema(d.manifest, d.fragments) == {
        "inputSchema": input_schema,
        "outputSchema": output_schema,
    }


def _wire(fragment: SchemaFragment, **changes: Any) -> dict[str, Any]:
    return {**fragment.model_dump(), **changes}


def _refused(d: SchemaDisclosure, fragments: list[SchemaFragment | dict[str, Any]]) -> bool:
    """Fragments arrive as wire dicts or models; refusal may happen when parsing or reconstructing."""
    try:
        parsed = [f if isinstance(f, SchemaFragment) else parse_fragment(f) for f in fragments]
        reconstruct_schema(d.manifest, parsed)
    except SchemaDisclosureError:
        return True
    return False


def _other_value(name: str, value: Any, data: st.DataObject) -> Any:
    if isinstance(value, bool) or name == "version":
        return 2
    if isinstance(value, int):
        return value + data.draw(st.sampled_from([-1, 1, 7]))
    if name.endswith("sha256"):
        other = data.draw(st.text(alphabet="0123456789abcdef", min_size=64, max_size=64))
        return other if other != value else hashlib.sha256(value.encode()).hexdigest()
    return value + data.draw(st.sampled_from(["x", "_2", "A"]))


@_SETTINGS
@given(input_schema=_SCHEMA, other_schema=_SCHEMA, data=st.data())
def test_every_single_mutation_is_refused(
    input_schema: dict[str, Any], other_schema: dict[str, Any], data: st.DataObject
) -> None:
    d = _disclose(input_schema, None)
    fragments: list[SchemaFragment | dict[str, Any]] = list(d.fragments)
    count = len(fragments)
    mutation = data.draw(st.sampled_from(["drop", "duplicate", "swap", "flip", "identity", "splice"]))
    if mutation == "drop":
        del fragments[data.draw(st.integers(0, count - 1))]
    elif mutation == "duplicate":
        i = data.draw(st.integers(0, count - 1))
        fragments.insert(data.draw(st.integers(0, count)), fragments[i])
    elif mutation == "swap":
        if count < 2:
            fragments = [fragments[0], fragments[0]]
        else:
            i, j = data.draw(st.lists(st.integers(0, count - 1), min_size=2, max_size=2, unique=True))
            fragments[i], fragments[j] = fragments[j], fragments[i]
    elif mutation == "flip":
        i = data.draw(st.integers(0, count - 1))
        raw = bytearray(d.fragments[i].text.encode("utf-8"))
        position = data.draw(st.integers(0, len(raw) - 1))
        raw[position] ^= 1 << data.draw(st.integers(0, 7))
        fragments[i] = _wire(d.fragments[i], text=raw.decode("utf-8", errors="surrogateescape"))
    elif mutation == "identity":
        i = data.draw(st.integers(0, count - 1))
        name = data.draw(st.sampled_from([*IDENTITY_FIELDS, "index", "fragment_sha256"]))
        fragments[i] = _wire(
            d.fragments[i], **{name: _other_value(name, getattr(d.fragments[i], name), data)}
        )
    else:  # splice a fragment from another disclosure (other schema, maybe other alias)
        alias = data.draw(st.sampled_from(["tool", "tool2"]))
        other = _disclose(other_schema, data.draw(_JSON), alias=alias)
        if other.manifest.schema_sha256 == d.manifest.schema_sha256 and alias == "tool":
            other = _disclose(other_schema, {"changed": True}, alias=alias)
        i = data.draw(st.integers(0, min(count, len(other.fragments)) - 1))
        fragments[i] = other.fragments[i]
    assert _refused(d, fragments), mutation
