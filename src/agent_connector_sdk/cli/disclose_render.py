"""``disclose``'s text output: the source, the largest schemas, one disclosure's fragments, the
verification verdicts and the refused operations (every name and reason from the document through the
one sanitizer, then escaped from rich markup)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from rich.console import Console

from agent_connector_sdk.cli.console import output_console
from agent_connector_sdk.sanitize import sanitize_text

__all__ = ["render_disclosures", "render_fragments"]


def render_disclosures(
    run: Any,
    failures: dict[str, str],
    *,
    verify: bool,
    written: int,
    out: Path | None,
    top: int,
    stream: TextIO,
) -> None:
    from rich.markup import escape
    from rich.table import Table

    from agent_connector_sdk.cli.render import count

    def shown(text: str, limit: int = 200) -> str:
        # Names and reasons come from the document: through the one sanitizer, then safe from markup.
        return escape(sanitize_text(text, limit))

    console = output_console(stream)
    manifests = [d.manifest for d in run.disclosures.values()]
    total = sum(m.schema_bytes for m in manifests)
    fragments = sum(m.fragment_count for m in manifests)
    console.print(f"source   {shown(run.title)} · sha256 {run.source.sha256} · {run.source_bytes:,} bytes")
    console.print(
        f"built    {count(len(manifests), 'disclosure')} "
        f"({count(fragments, 'fragment')} of at most 4,096 bytes), "
        f"{total:,} canonical schema bytes in all"
    )
    table = Table(title=f"largest schemas (top {min(top, len(manifests))})", title_justify="left")
    for column, justify in (
        ("tool", "left"),
        ("operation", "left"),
        ("schema bytes", "right"),
        ("fragments", "right"),
        ("schema sha256", "left"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for m in sorted(manifests, key=lambda m: -m.schema_bytes)[: max(top, 0)]:
        table.add_row(
            shown(m.alias),
            shown(m.operation),
            f"{m.schema_bytes:,}",
            str(m.fragment_count),
            m.schema_sha256[:16] + "…",
        )
    console.print(table)
    if len(manifests) == 1:
        render_fragments(next(iter(run.disclosures.values())), console)
    if verify:
        intact = len(manifests) - len(failures)
        where = f" from the files in {out}" if out is not None else ""
        console.print(f"verified {intact} of {len(manifests)} reconstructed intact{where}")
        for alias, category in failures.items():
            console.print(f"  [red]FAILED[/red] {shown(alias)}: {category}")
    if out is not None:
        console.print(f"wrote    {count(written, 'file')} under {out}")
    if run.refusals:
        console.print(f"refused  {count(len(run.refusals), 'operation')}:")
        for refusal in run.refusals:
            where = shown(refusal.operation)
            if refusal.alias:
                where = f"{shown(refusal.alias)} ({where})"
            console.print(f"  {where}: {refusal.category} — {shown(refusal.reason, 400)}")
    else:
        console.print("refused  none")


def render_fragments(disclosure: Any, console: Console) -> None:
    """One disclosure's fragments: the URI a host reads, its size and its digest."""
    from rich.markup import escape

    from agent_connector_sdk.core.schema_disclosure import read_schema_fragment

    manifest = disclosure.manifest
    console.print(f"manifest {escape(sanitize_text(manifest.manifest_uri, 400))}")
    console.print(f"fragment {escape(sanitize_text(manifest.fragment_uri_template, 400))}")
    for index in range(manifest.fragment_count):
        fragment = read_schema_fragment(disclosure, str(index))
        size = len(fragment.text.encode("utf-8"))
        console.print(f"  {{index}}={index:<4d} {size:5,d} bytes  sha256 {fragment.fragment_sha256[:16]}…")
