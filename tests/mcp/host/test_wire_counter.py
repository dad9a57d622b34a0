"""The host's JSON value counter (``_wire.ValueCounter``) against a byte-by-byte reading of the same
stream: equal counts after every chunk, for any bytes (JSON or not) and any chunking.

The counter skips whole strings and the bytes between them with regexes (a Python step per chunk);
the reference below steps through every byte, so the two share no code."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agent_connector_sdk.mcp.host._wire import EventValueCounter, ValueCounter


class ByteByByte:
    """The reference: ``{``, ``[`` and ``,`` outside strings, a backslash inside a string escaping the
    byte after it (across chunks too)."""

    def __init__(self) -> None:
        self.count = 0
        self.in_string = False
        self.escaped = False

    def feed(self, chunk: bytes) -> int:
        for byte in chunk:
            if self.escaped:
                self.escaped = False
            elif self.in_string:
                if byte == 0x5C:
                    self.escaped = True
                elif byte == 0x22:
                    self.in_string = False
            elif byte == 0x22:
                self.in_string = True
            elif byte in b"{[,":
                self.count += 1
        return self.count


_BYTES = st.binary(max_size=200) | st.lists(st.sampled_from(list(b'{}[],:"\\ ab\n\xc3')), max_size=200).map(
    bytes
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab,{}[]"\\:\u00e9\n', max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(alphabet='a,{["\\', max_size=3), inner)
    ),
    max_leaves=30,
)


def _chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(cut, len(data)) for cut in cuts} | {0, len(data)})
    return [data[start:end] for start, end in itertools.pairwise(points)] or [b""]


def _same(data: bytes, cuts: list[int]) -> None:
    counter, reference = ValueCounter(), ByteByByte()
    for chunk in _chunks(data, cuts):
        assert counter.feed(chunk) == reference.feed(chunk), (data, cuts)
        assert (counter._in_string, counter._escaped) == (reference.in_string, reference.escaped)


@given(_BYTES, st.lists(st.integers(min_value=0, max_value=200), max_size=8))
def test_any_bytes_any_chunking_count_as_the_byte_by_byte_reading(data: bytes, cuts: list[int]) -> None:
    _same(data, cuts)


@given(_JSON, st.lists(st.integers(min_value=0, max_value=400), max_size=8), st.booleans())
def test_json_documents_count_as_the_byte_by_byte_reading(
    value: Any, cuts: list[int], ascii_only: bool
) -> None:
    _same(json.dumps(value, ensure_ascii=ascii_only).encode(), cuts)


def test_escapes_and_quotes_at_every_chunk_boundary() -> None:
    data = b'{"a\\"b":[1,"\\\\",{"c,d":"\\u0022"}],"e":"[{,"}'
    for cut in range(len(data) + 1):
        for second in range(cut, len(data) + 1):
            _same(data, [cut, second])
    # the outer object and its second member, the list and its 2nd and 3rd items, the inner object
    assert ValueCounter().feed(data) == 6


def test_a_large_answer_counts_as_the_reference_per_event_too() -> None:
    entry = {"name": "pulls_list", "description": 'Lists "pulls", [all] {of} them,\n\\ok', "n": [1, 2, 3]}
    document = json.dumps({"result": [entry] * 500}).encode()
    counter, reference = ValueCounter(), ByteByByte()
    for start in range(0, len(document), 4096):
        assert counter.feed(document[start : start + 4096]) == reference.feed(document[start : start + 4096])
    events = EventValueCounter(1)  # a cap under its size: the event is counted
    stream = b"event: message\ndata: " + document + b"\n\n"
    assert events.feed(stream) == reference.count
