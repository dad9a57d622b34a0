"""Known-answer vectors: literal documents with literal digests and fragment boundaries.

Every expected value here was computed outside the library, on the committed bytes, with coreutils:
``sha256sum FILE``, ``wc -c < FILE``, ``head -c 4095 split.document.json | sha256sum`` and
``tail -c +4096 split.document.json | sha256sum`` (see ``vectors/``). A change to the canonical encoding,
the digest definitions or the fragment cut therefore fails here even though every other test (which
computes its expectations with the library's own encoder) would still pass.

* ``small``: non-ASCII kept literal (``ü`` and an astral ``🚀``), sorted keys, no output schema
  (``null``; ``sha256("null")``), one fragment.
* ``split``: 4,209 bytes whose 4,096-byte cut would land between the two bytes of an ``é`` (``c3 a9``
  at bytes 4,096–4,097), so the first fragment must end one byte early, at 4,095.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_connector_sdk.core.schema_disclosure import (
    SourceDigest,
    build_schema_disclosure,
    reconstruct_schema,
)
from agent_connector_sdk.core.schema_disclosure.encoding import encode_schema_document

VECTORS = Path(__file__).parent / "vectors"
SHA256_OF_NULL = "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"

CASES = {
    "small": {
        "input_sha256": "d5bf0c0ad6cd2a1035141f70d46e11849eb915d63ed384f3ad56a5bdfede1d07",
        "output_sha256": SHA256_OF_NULL,
        "schema_sha256": "505cbbd7b13926a3bb75dc69e1d8ae360ccedf80ef1f22cc4301088820c303b9",
        "schema_bytes": 119,
        "fragments": [(119, "505cbbd7b13926a3bb75dc69e1d8ae360ccedf80ef1f22cc4301088820c303b9")],
    },
    "split": {
        "input_sha256": "e1d5643e0c53e49c167968fb76f3a3d0e6d8b2c883749ea764c3fd8db1350ae3",
        "output_sha256": "0128ef9bd2206166dfd5663833068e0b35bbaa0b71fd9d1e0518523721a86902",
        "schema_sha256": "08d1045ded035127bf0d60a8632afccd7c29cac1d24e95665f8bcc2ba98c55ef",
        "schema_bytes": 4209,
        "fragments": [
            (4095, "8d2c7a41e45da953ab7ef8f31a5f508c330e262ed47e5897f8c0d73878a76bec"),
            (114, "e0e4cc0b7d74e7d737de47da57d317822bba5bf590f45a88683f16e8f80ee60f"),
        ],
    },
}


def _schemas(name: str) -> tuple[object, object]:
    input_schema = json.loads((VECTORS / f"{name}.input.json").read_bytes())
    output_path = VECTORS / f"{name}.output.json"
    output_schema = json.loads(output_path.read_bytes()) if output_path.exists() else None
    return input_schema, output_schema


@pytest.mark.parametrize("name", sorted(CASES))
def test_canonical_document_and_digests_are_the_literal_ones(name: str) -> None:
    expected = CASES[name]
    input_schema, output_schema = _schemas(name)
    document, digests = encode_schema_document(input_schema, output_schema)
    assert document == (VECTORS / f"{name}.document.json").read_bytes()
    assert digests.input_schema_sha256 == expected["input_sha256"]
    assert digests.output_schema_sha256 == expected["output_sha256"]
    assert digests.schema_sha256 == expected["schema_sha256"]
    assert digests.schema_bytes == expected["schema_bytes"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_fragment_boundaries_and_digests_are_the_literal_ones(name: str) -> None:
    expected = CASES[name]
    input_schema, output_schema = _schemas(name)
    disclosure = build_schema_disclosure(
        operation=f"vectors/{name}",
        alias=f"vector_{name}",
        source=SourceDigest.of(b"known-answer source"),
        input_schema=input_schema,
        output_schema=output_schema,
    )
    got = [(len(f.text.encode("utf-8")), f.fragment_sha256) for f in disclosure.fragments]
    assert got == expected["fragments"]
    assert disclosure.manifest.schema_sha256 == expected["schema_sha256"]
    assert disclosure.manifest.manifest_uri == (
        f"schema-disclosure://tools/vector_{name}/{expected['schema_sha256']}/manifest"
    )
    document = reconstruct_schema(disclosure.manifest, disclosure.fragments)
    assert document == {"inputSchema": input_schema, "outputSchema": output_schema}
