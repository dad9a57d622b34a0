from __future__ import annotations

import pytest

from agent_connector_sdk.core.schema_disclosure import SchemaDisclosure
from tests.support.disclosures import make_disclosure


@pytest.fixture
def disclosure() -> SchemaDisclosure:
    d = make_disclosure(
        output_schema={"type": "array", "items": {"type": "string", "description": "é" * 2000}}
    )
    assert d.manifest.fragment_count >= 3
    return d
