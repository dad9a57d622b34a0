"""``review --pin FILE``: the reviewed ``source_sha256`` of every verified disclosure (pure shaping).

Per alias, for this server, in the :class:`~agent_connector_sdk.core.contracts._source_pins.SourcePins`
format that ``review --pins`` (and the disclosure consumer) read; the CLI writes the file.
"""

from __future__ import annotations

from agent_connector_sdk.core.contracts import SourcePins
from agent_connector_sdk.review.report import ReviewReport

__all__ = ["reviewed_source_pins"]


def reviewed_source_pins(report: ReviewReport) -> tuple[SourcePins, int]:
    """The pins of ``report``'s verified disclosures, and how many tools they pin."""
    pins = SourcePins()
    pinned = 0
    for tool in report.tools:
        check = tool.disclosure
        if tool.name is not None and check is not None and check.verified and check.source_sha256:
            pins = pins.with_source(report.target.address, tool.name, check.source_sha256)
            pinned += 1
    return pins, pinned
