"""``disclose --json``: the document's model, from which ``schemas/disclose-report.schema.json`` is
generated (the schema is never edited by hand; a test checks real output against it)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agent_connector_sdk.core.schema_disclosure import SchemaManifest

__all__ = ["DiscloseReport", "DisclosedTool", "RefusedOperation", "disclose_report"]


class DisclosedTool(BaseModel):
    """One operation's disclosure: its manifest, and whether it verified (``null`` without ``--verify``)."""

    manifest: SchemaManifest
    verified: bool | None = Field(description="reconstructed intact (--verify); null when not verified")


class RefusedOperation(BaseModel):
    """An operation whose disclosure could not be built: the core's category and why (never values)."""

    alias: str
    operation: str
    category: str
    reason: str


class DiscloseReport(BaseModel):
    """``agent-connector disclose --json``: every disclosure built from one OpenAPI document."""

    source_sha256: str = Field(description="SHA-256 of the document as read")
    source_bytes: int
    disclosures: list[DisclosedTool]
    refusals: list[RefusedOperation]


def disclose_report(run: Any, failures: dict[str, str], *, verify: bool) -> DiscloseReport:
    """The report of a ``disclose`` run (:class:`~agent_connector_sdk.cli.disclose.DisclosureRun`)."""
    return DiscloseReport(
        source_sha256=run.source.sha256,
        source_bytes=run.source_bytes,
        disclosures=[
            DisclosedTool(manifest=d.manifest, verified=(alias not in failures) if verify else None)
            for alias, d in run.disclosures.items()
        ],
        refusals=[RefusedOperation(**r.__dict__) for r in run.refusals],
    )
