"""The rule table of docs/reference.md (spec MUST vs project rule) is the code's ``RULES``, row for row."""

from __future__ import annotations

import re
from pathlib import Path

from agent_connector_sdk.core.contracts import RULES_BY_ID
from agent_connector_sdk.core.contracts._findings import RULES
from agent_connector_sdk.core.contracts._poisoning import POISONING_CATEGORY, POISONING_RULES
from agent_connector_sdk.core.contracts.errors import AdmissionCategory, ConsumeCategory
from tests.test_error_table import _literal_values

REFERENCE = Path(__file__).resolve().parents[3] / "docs" / "reference.md"
_ROW = re.compile(
    r"^\| `(?P<id>[\w-]+)` \| (?P<cls>spec|project) \| `(?P<category>\w+)` \| (?P<clause>[^|]+) \|$"
)


def _table() -> list[tuple[str, str, str, str]]:
    text = REFERENCE.read_text(encoding="utf-8")
    section = text[text.index("## Rules: spec MUST vs project") :]
    end = section.find("\n## ", 1)
    section = section if end == -1 else section[:end]
    return [
        (m["id"], m["cls"], m["category"], m["clause"].strip())
        for line in section.splitlines()
        if (m := _ROW.match(line)) is not None
    ]


def test_the_rule_table_is_the_code() -> None:
    assert _table() == [(r.id, r.rule_class, r.category, r.clause) for r in RULES]


def test_rule_ids_are_unique_and_categories_are_real() -> None:
    assert len(RULES_BY_ID) == len(RULES)
    categories = _literal_values(ConsumeCategory) | _literal_values(AdmissionCategory)
    for rule in RULES:
        assert rule.category in categories


def test_every_rule_a_finding_can_name_is_in_the_table() -> None:
    for rule in POISONING_RULES:
        assert RULES_BY_ID[rule].category == POISONING_CATEGORY
        assert RULES_BY_ID[rule].rule_class == "project"
