"""Human output for the CLI: rich tables (colour only on a terminal), plain text everywhere else.

Every string a server (or a descriptor file) chose passes :func:`~agent_connector_sdk.sanitize.sanitize_text`
before rich sees it (:func:`_s`: sanitize, cap, then escape rich markup), so no server string can put a
control character, an escape sequence or a bidi control on the terminal, and descriptors printed in
full go through :func:`~agent_connector_sdk.sanitize.sanitize_json`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from agent_connector_sdk.core.contracts import escaped as escape_name
from agent_connector_sdk.core.disclosure_navigation import type_label
from agent_connector_sdk.review.report import ContractChangeReport, ReviewReport, ToolDriftReport, ToolReview
from agent_connector_sdk.review.wording import count, short_json
from agent_connector_sdk.sanitize import sanitize_json, sanitize_text

__all__ = ["count", "render_review", "short_json"]


_NAME: Final = 160  # tool names are ≤ 128 characters when admitted; rejected ones may be anything
_FIELD: Final = 400
_HEADER_ROWS: Final = 32  # the default max_mirrored_headers


def _s(value: Any, limit: int = _FIELD) -> str:
    """A server-controlled string for rich: sanitized, capped, markup escaped."""
    return escape(sanitize_text("" if value is None else value, limit))


def _print(console: Console, *objects: Any, **options: Any) -> None:
    """``console.print`` without emoji replacement: rich would turn a server's ``:white_check_mark:``
    into ✅, text the server never sent (whatever console the caller passed)."""
    console.print(*objects, emoji=False, **options)


_VALUE_COLUMN: Final = 9
"""Where a labelled line's value starts (``summary  …``): its wrapped lines start there too."""


def _labelled(console: Console, label: str, value: str, **options: Any) -> None:
    """``label`` then ``value`` (markup), every wrapped line of the value indented to the value's column
    (at least :data:`_VALUE_COLUMN`; a longer label's own width), at every console width."""
    head = Text.from_markup(label, emoji=False)
    grid = Table.grid(padding=0)
    grid.add_column(width=max(_VALUE_COLUMN, head.cell_len), no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row(head, Text.from_markup(value, emoji=False))
    _print(console, grid, **options)


class _Table(Table):
    """A rich table whose string cells are markup read without emoji replacement (see :func:`_print`)."""

    def add_row(self, *renderables: Any, **options: Any) -> None:
        cells = [
            Text.from_markup(cell, emoji=False) if isinstance(cell, str) else cell for cell in renderables
        ]
        super().add_row(*cells, **options)


def _name(value: Any) -> str:
    """A tool name for rich: every character outside printable ASCII as its code point (a Cyrillic
    ``а`` in ``reаd_file`` or the Hangul filler U+3164 must not read as the original), then
    :func:`_s`. A plain name is shown as it is."""
    if isinstance(value, str) and not (value.isascii() and value.isprintable()):
        value = escape_name(value)
    return _s("?" if value is None else value, _NAME)


def _identity(tool: ToolReview) -> str:
    """The tool's name and, when the server gave one that differs, its title (``title`` or the
    annotations' ``title``): a destructive tool titled "read_file (safe, read-only)" must show it."""
    shown = _name(tool.name or "?")
    descriptor = tool.descriptor or {}
    annotations = descriptor.get("annotations")
    title = descriptor.get("title")
    if not isinstance(title, str) and isinstance(annotations, dict):
        title = annotations.get("title")
    if isinstance(title, str) and title and title != tool.name:
        shown += f"\n[dim]title:[/dim] {_s(title, 200)}"
    return shown


def _hints(tool: ToolReview) -> str:
    """The server's own behaviour hints (untrusted), as MCP defines their defaults: read-only, or it
    may write (destructive unless ``destructiveHint`` is false)."""
    if tool.descriptor is None:
        return "?"
    annotations = tool.descriptor.get("annotations")
    hints = annotations if isinstance(annotations, dict) else {}
    if hints.get("readOnlyHint") is True:
        return "read-only"
    if hints.get("destructiveHint") is False:
        return "writes"
    return "[yellow]destructive[/yellow]"


def _cursor(value: str | None) -> str:
    return "(first)" if value is None else sanitize_text(json.dumps(value, ensure_ascii=False), 80)


def _arguments(tool: ToolReview) -> str:
    schema = tool.descriptor.get("inputSchema") if tool.descriptor else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or not properties:
        return "—"
    required = schema.get("required", []) if isinstance(schema, dict) else []
    parts = []
    for name, sub in properties.items():
        mark = "*" if isinstance(required, list) and name in required else ""
        shown = sanitize_text(type_label(sub), 64)  # the label navigation shows (composites named)
        parts.append(f"{sanitize_text(name, 80)}{mark}: {shown}")
        if len(parts) >= 64:
            parts.append(f"… {len(properties) - len(parts)} more")
            break
    # One argument per line: a narrow column then wraps between arguments, not inside one.
    return "\n".join(sanitize_text(part, 200) for part in parts)


def _admission(tool: ToolReview) -> str:
    """The verdict and its category; the reason is printed under the table (long pointers and
    sentences in a narrow column would break mid-word)."""
    verdict = tool.admission
    if verdict.decision == "admitted":
        return "[green]admitted[/green]"
    return "[red]rejected[/red]"


def _found(tool: ToolReview) -> str:
    """Where the tool was found, and for one behind search whether its disclosure verified (the
    digests are in --json: a hash in a narrow column only breaks mid-word)."""
    check = tool.disclosure
    if check is None:
        return tool.found
    if not check.verified:
        return f"{tool.found}\n[red]disclosure failed[/red]\n{_s(check.step, 40)}: {_s(check.category, 80)}"
    fragments = count(check.fragment_count or 0, "fragment")
    return f"{tool.found}\n[green]verified[/green]\n{fragments}\n{check.schema_bytes or 0:,} B"


def render_review(report: ReviewReport, console: Console, *, descriptors: bool = False) -> None:
    """Print ``report`` for a person: identity, page trace, tools, header policy, probe, call, summary."""
    target = report.target
    _print(console, f"[bold]review[/bold] {_s(target.address)}  ({target.kind})")
    if report.server is not None:
        server = report.server
        _labelled(
            console,
            "server   ",
            f"{_s(server.name or '?', _NAME)} {_s(server.version, 80)}"
            f" · protocol {_s(server.protocol_version or '?', 40)}",
        )
    gates = "applicable" if report.header_gates == "applicable" else "not applicable (no HTTP headers)"
    _labelled(console, "policy   ", f"host profile {report.profile} · Mcp-Param-* header gates {gates}")
    if report.target.kind != "descriptor":
        trace = escape(sanitize_text(" → ".join(_cursor(cursor) for cursor in report.page_trace), 2_000))
        _labelled(
            console,
            "pages    ",
            f"{count(len(report.page_trace), 'tools/list request')}; cursors sent: {trace}",
        )
    if report.search is not None:
        search = report.search
        patterns = ", ".join(json.dumps(p) for p in search.patterns)
        entries = count(search.entries, "navigation entry", "navigation entries")
        line = f"{_name(search.tool)} for {_s(patterns)}: {entries}"
        line += f" ({count(search.searches, 'search', 'searches')})" if search.searches > 1 else ""
        if search.category is not None:
            line += f" [red]failed[/red] {_s(search.category, 80)}: {_s(search.reason)}"
        elif search.incomplete is not None:
            line += f" [yellow]incomplete[/yellow]: {_s(search.incomplete)}"
        _labelled(console, "search   ", line)

    table = _Table(title="tools", title_justify="left", show_lines=False, expand=False)
    # A name is one word: never broken mid-word (an ellipsis when the screen is narrow; the full name is
    # in --json); a title wraps at spaces. Short fixed words do not wrap; prose columns wrap at spaces.
    table.add_column("tool", overflow="ellipsis", min_width=_name_width(report.tools))
    table.add_column("arguments", overflow="fold")  # a long header would not shrink: * in the legend
    table.add_column("output", no_wrap=True)
    table.add_column("found", overflow="fold")
    table.add_column("admission", overflow="fold", min_width=11)  # "destructive" whole
    for tool in report.tools:
        table.add_row(
            _identity(tool),
            escape(_arguments(tool)),
            tool.output_kind,
            _found(tool),
            f"{_admission(tool)}\n{_hints(tool)}",
        )
    _print(console, table)
    for tool in report.tools:
        if tool.admission.decision != "admitted":
            _labelled(
                console,
                "rejected ",
                f"{_name(tool.name or '?')}: [bold]{_s(tool.admission.category, 80)}[/bold] — "
                f"{_s(tool.admission.reason)}",
            )
    _render_headers(report.tools, console, applicable=report.header_gates == "applicable")
    if descriptors:
        for tool in report.tools:
            if tool.descriptor is not None:
                _print(console, f"[bold]descriptor[/bold] {_name(tool.name or '?')}")
                # In full (that is what --descriptors asks for), but through the JSON sanitizer: JSON
                # escapes C0 controls itself, sanitize_json the rest (DEL, C1, bidi controls).
                text = sanitize_json(json.dumps(tool.descriptor, indent=2, ensure_ascii=False))
                _print(console, text, markup=False, highlight=False)
    _render_server_text(report, console)
    if report.completion is not None:
        probe = report.completion
        # A prompt by name, a resource template by its URI template.
        referenced = "" if probe.ref is None else _name(probe.ref.get("name") or probe.ref.get("uri", ""))
        if probe.ref is None:
            _labelled(
                console, "completion ", f"advertised; not probed: {_s(probe.note or probe.reason or '?')}"
            )
        elif probe.category is not None:
            _labelled(
                console,
                "completion ",
                f"{referenced}.{_s(probe.argument, 80)}: [red]{_s(probe.category, 80)}[/red]",
            )
        else:
            said = count(len(probe.values), "value")
            if probe.total is not None:
                said += f" of {probe.total:,}"
            if probe.has_more:
                said += ", more available"
            _labelled(
                console,
                "completion ",
                f"{referenced}.{_s(probe.argument, 80)} "
                f"(empty prefix): {said}: {escape(short_json(probe.values))}",
            )
    if report.call is not None:
        call = report.call
        style = (
            "green" if call.outcome == "validated" else ("yellow" if call.outcome == "tool_error" else "red")
        )
        line = f"{_name(call.tool)}: [{style}]{call.outcome}[/{style}]"
        if call.category is not None:
            line += f" at {_s(call.gate or '?', 40)}: {_s(call.category, 80)} — {_s(call.reason)}"
        elif call.reason is not None:  # no gate refused it (an unknown tool): the reason says what happened
            line += f" — {_s(call.reason)}"
        _labelled(console, "call     ", line)
        if call.code is not None:
            _labelled(console, "", f"JSON-RPC error {call.code}: {_s(call.message, 500)}")
        elif call.message is not None:  # an HTTP error page's own words
            _labelled(console, "", f"server said: {_s(call.message, 500)}")
        if call.text is not None:
            # The server's own words (tool error text, a text result, a rejected result's text), each of
            # its lines under the first.
            _labelled(console, " " * _VALUE_COLUMN + "text: ", _lines(call.text, 1_000))
        if call.headers_sent:
            _labelled(console, "", f"headers sent: {_s(', '.join(call.headers_sent))} (values not shown)")
        if call.content_types:
            _labelled(console, "", f"content blocks: {_s(', '.join(call.content_types))}")
        if call.outcome in ("validated", "tool_error"):
            shown = (
                "(absent)"
                if call.structured_content_present is False
                else escape(short_json(call.structured_content, 240))
            )
            _labelled(console, "", f"structuredContent: {shown}")
    _render_findings(report, console)
    _render_contract(report, console)
    summary = report.summary
    problems = summary.findings - len(summary.rejected) - len(summary.disclosure_failures)
    _labelled(
        console,
        "[bold]summary[/bold]  ",
        f"{count(len(summary.admitted), 'tool')} admitted, "
        f"{len(summary.rejected)} rejected, {count(len(summary.disclosure_failures), 'disclosure failure')}"
        + (f", {count(problems, 'other failure')} (search, completion, call or lock)" if problems else "")
        + f"; {count(summary.project_findings, 'project-rule finding')}"
        + (" (rejections with --strict)" if summary.project_findings else "")
        + ("; --strict exits 1" if summary.findings or summary.project_findings else ""),
    )
    _render_legend(report, console)
    if report.search is not None and (report.search.incomplete is not None or report.search.category):
        # Never let a capped or failed search pass for a complete review: say how much was seen.
        reviewed = sum(1 for tool in report.tools if tool.found == "search")
        _print(
            console,
            f"[yellow]{reviewed} of {reviewed}+ tools reviewed[/yellow] behind "
            f"{_name(report.search.tool)}: its search could not be enumerated completely, more may exist",
        )


def _render_server_text(report: ReviewReport, console: Console) -> None:
    """The server's instructions as a model reads them (already sanitized and cut in the report; an
    operator approving a server must see what it tells the model) and what else it lists."""
    said = report.server_text
    if said is None:
        return
    if said.instructions is not None:
        size = f" ({said.instructions_chars:,} characters)" if said.instructions_chars is not None else ""
        _print(console, f"[bold]instructions[/bold]{size}:")
        _print(console, f"  {_lines(said.instructions, 2_000)}")
    listed = [
        f"{count(number, noun)}"
        for number, noun in (
            (said.prompts, "prompt"),
            (said.resources, "resource"),
            (said.resource_templates, "resource template"),
        )
        if number is not None
    ]
    if listed:
        _labelled(console, "also     ", f"{', '.join(listed)} (as declared)")
    for note in said.notes:
        _labelled(console, "note     ", _s(note, 300))


def _render_findings(report: ReviewReport, console: Console) -> None:
    """Project rules the server breaks that this profile reported instead of rejecting."""
    rows = [(tool.name or "?", finding) for tool in report.tools for finding in tool.findings]
    if report.call is not None:
        rows += [(report.call.tool, finding) for finding in report.call.findings]
    if report.server_text is not None:
        rows += [("(server)", finding) for finding in report.server_text.findings]
    for name, finding in rows[:200]:
        _labelled(
            console,
            "finding  ",
            f"{_name(name)}: [yellow]{_s(finding.rule, 80)}[/yellow] "
            f"({_s(finding.category, 80)}) at {_s(finding.path or '/', 200)} — {_s(finding.message, 300)}",
        )


def _render_headers(tools: Sequence[ToolReview], console: Console, *, applicable: bool) -> None:
    """Each ``Mcp-Param-*`` header once: the argument it mirrors, its type and what decides the field
    value; the reviewer's sample values once per type below the table (the JSON report keeps every
    rule's samples). A rejected tool's headers are never sent, and the table says so."""
    # At most _HEADER_ROWS rules per tool: a tool mirroring thousands of arguments is rejected anyway
    # (max_mirrored_headers); the row after them says how many were not shown.
    rows = [(tool, rule) for tool in tools for rule in tool.headers.rules[:_HEADER_ROWS]]
    hidden = {id(tool): len(tool.headers.rules) - _HEADER_ROWS for tool in tools}
    invalid = [tool for tool in tools if tool.headers.category is not None]
    if not rows and not invalid:
        return
    title = "header policy" + ("" if applicable else " (not applicable over stdio: shown for reference)")
    table = _Table(title=title, title_justify="left")
    table.add_column("tool", no_wrap=True, overflow="ellipsis", min_width=_name_width(tools))
    table.add_column("argument", no_wrap=True, overflow="ellipsis")
    table.add_column("header", no_wrap=True, overflow="ellipsis")
    table.add_column("field value (type: rule)", overflow="fold")
    samples: dict[str, str] = {}
    for index, (tool, rule) in enumerate(rows):
        if tool.admission.decision != "admitted":
            decides = "[red]never sent[/red] (the tool is rejected)"
        else:
            decides = _HEADER_RULE.get(rule.type, "")
            samples.setdefault(rule.type, _samples(rule))
        table.add_row(
            _name(tool.name or "?"),
            _s(_argument_path(rule.argument), 200),
            _s(rule.header, 200),
            f"{_s(rule.type, 40)}: {decides}",
        )
        last_of_tool = index + 1 == len(rows) or rows[index + 1][0] is not tool
        if last_of_tool and hidden[id(tool)] > 0:
            table.add_row(_name(tool.name or "?"), f"… {hidden[id(tool)]:,} more not shown", "", "")
    for tool in invalid:
        table.add_row(
            _name(tool.name or "?"),
            "—",
            "—",
            f"[red]{_s(tool.headers.category, 80)}[/red]: {_s(tool.headers.reason)}",
        )
    _print(console, table)
    for declared, shown in samples.items():
        _labelled(console, "", f"{declared} samples: {shown}")


_HEADER_RULE: Final = {
    "string": "plain, or base64 when not printable ASCII",
    "integer": "decimal, within ±(2^53 - 1)",
    "boolean": "true or false",
}


def _argument_path(pointer: str) -> str:
    """``/properties/target/properties/zone`` as the argument a caller writes: ``target.zone``."""
    parts = pointer.split("/")[1:]
    names = [part.replace("~1", "/").replace("~0", "~") for part in parts[1::2]]
    return ".".join(names) if parts[0::2] and all(p == "properties" for p in parts[0::2]) else pointer


def _samples(rule: Any) -> str:
    parts = []
    for sample in rule.samples:
        shown = _s(json.dumps(sample.value, ensure_ascii=False), 120)
        if sample.encoding == "refused":
            parts.append(f"{shown} → [red]refused[/red] ({_s(sample.category, 80)})")
        else:
            parts.append(f"{shown} → {_s(sample.wire, 200)}")
    return ", ".join(parts)


def _name_width(tools: Sequence[ToolReview]) -> int:
    """The tool column's least width: the longest name up to 24 characters, so a narrow screen cuts
    long names with an ellipsis instead of squeezing every name."""
    return min(max((len(tool.name or "?") for tool in tools), default=4), 24)


def _lines(value: Any, limit: int) -> str:
    """Server text with its own line breaks kept (each line sanitized; the rest of the text capped)."""
    text = "" if value is None else str(value)
    lines = text.replace("\r\n", "\n").split("\n")
    shown = [_s(line, limit) for line in lines[:40]]
    if len(lines) > 40:
        shown.append(f"… {len(lines) - 40:,} more lines")
    return "\n".join(shown)


def _render_legend(report: ReviewReport, console: Console) -> None:
    """What the report's words mean, once, for the words this report used."""
    found = {tool.found for tool in report.tools}
    notes = []
    if "search" in found:
        notes.append(
            "found: listed = in tools/list; search = behind the server's search tool, its schema "
            "read by disclosure and verified"
        )
    if report.summary.project_findings:
        notes.append(
            "finding: a project rule stricter than the spec; reported here, a rejection with --strict"
        )
    if report.summary.rejected:
        notes.append("rejected: a host never calls it; the category says which rule (docs/reference.md)")
    if notes and any("*:" in _arguments(tool) for tool in report.tools):
        notes.insert(0, "arguments: * marks a required one")
    for index, note in enumerate(notes):
        _labelled(console, "legend   " if index == 0 else "", note, style="dim")


_SEVERITY_STYLE: Final = {
    "escalation": "bold red",
    "breaking": "red",
    "compatible": "yellow",
    "narrowing": "dim",
    "cosmetic": "dim",
}
_CALLOUT_WORDS: Final = {"address": "address", "url": "URL", "path": "path", "instruction": "instruction"}
_CONTEXT: Final = 40  # characters of unchanged text kept on each side of a word-level change


def _words(change: ContractChangeReport) -> str:
    """A word-level diff as ``kept [-deleted-]{+inserted+}``, long unchanged runs elided."""
    parts = []
    for index, edit in enumerate(change.words):
        if edit.op == "equal":
            text = edit.text
            if len(text) > 2 * _CONTEXT:
                head = text[:_CONTEXT] if index > 0 else ""
                tail = text[-_CONTEXT:] if index < len(change.words) - 1 else ""
                text = f"{head}…{tail}"
            parts.append(_s(text, 2 * _CONTEXT + 1))
        elif edit.op == "delete":
            parts.append(f"[red]\\[-{_s(edit.text, 200)}-][/red]")
        else:
            parts.append(f"[green]{{+{_s(edit.text, 200)}+}}[/green]")
    return "".join(parts)


def _values(change: ContractChangeReport) -> str:
    if change.words:
        return _words(change)
    if change.kind == "added":
        return f"added {escape(short_json(change.new, 100))}"
    if change.kind == "removed":
        return f"removed (was {escape(short_json(change.old, 100))})"
    return f"{escape(short_json(change.old, 100))} → {escape(short_json(change.new, 100))}"


def _render_drift(drift: ToolDriftReport, console: Console) -> None:
    name = _s(drift.escaped or drift.tool, _NAME)
    head: str = drift.status
    if drift.status == "changed" and drift.fields:
        head += f" ({_s(', '.join(drift.fields))})"
    elif drift.previous is not None:
        head += f" (was {_s(escape_name(drift.previous), _NAME)})" + (
            " with changes" if drift.changes else ""
        )
    if drift.severity is not None:
        style = _SEVERITY_STYLE[drift.severity]
        head += f", [{style}]{drift.severity}[/{style}]"
    elif drift.digest_only:
        head += ", [red]unknown[/red] (digest-only lock entry)"
    if drift.confusable_of is not None:
        head += f": [bold red]looks like {_s(escape_name(drift.confusable_of), _NAME)}[/bold red]"
    if drift.diff_sha256 is not None:
        head += f"  diff {drift.diff_sha256[:12]}"
    if drift.approved:
        head += " — [green]approved[/green]"
    # One line per change, never wrapped: a change is read (and grepped) as one line.
    _print(console, f"         {name}: {head}", soft_wrap=True)
    for change in drift.changes:
        style = _SEVERITY_STYLE[change.severity]
        where = _s(change.pointer, 200)
        _print(
            console,
            f"           [{style}]{change.severity:<10}[/{style}] {where}: {_values(change)}"
            f"  [dim]— {_s(change.reason, 200)}[/dim]",
            soft_wrap=True,
        )
        # What the new text adds that a word diff lets a reader miss: each on its own line.
        for callout in change.callouts:
            _print(
                console,
                f"             [bold]adds {_CALLOUT_WORDS[callout.kind]}[/bold]: {_s(callout.text, 200)}",
                soft_wrap=True,
            )
    if drift.changes_omitted:
        _print(console, f"           … {count(drift.changes_omitted, 'more change')} not listed (see --json)")


def _render_contract(report: ReviewReport, console: Console) -> None:
    """The contract lock's verdict per tool, and the server's skills (findings: :func:`_render_findings`)."""
    if report.lock is not None:
        lock = report.lock
        where = "" if lock.entry else " (no entry for this server: every tool is new)"
        failing = sum(1 for drift in lock.tools if drift.fails)
        rule = {
            "any": "any drift",
            "escalation_or_breaking": "escalation and breaking drift",
            "reapproval": "every change to re-approve",
        }[lock.fail_on]
        _print(
            console,
            f"lock     {_s(lock.file)} for {_s(lock.server)}{where}: "
            f"{count(lock.drifted, 'tool')} drifted of {len(lock.tools)}, "
            f"{count(failing, 'finding')} ({rule} fails --strict)",
            soft_wrap=True,
        )
        if lock.digest_only:
            _labelled(
                console,
                "",
                "[yellow]this lock holds digests only (format 1): drift is found but not shown; "
                "re-write it with --write-lock to see and class each change[/yellow]",
            )
        for drift in lock.tools:
            if drift.status == "unchanged":
                continue  # counted above; a drift report lists what needs a person's attention
            _render_drift(drift, console)
    if report.skills is not None:
        _labelled(console, "skills   ", f"{count(len(report.skills), 'skill')} (MCP Skills extension)")
        for skill in report.skills:
            _labelled(
                console,
                "",
                f"{_s(skill.name)}: {_s(skill.description)} ({count(skill.files, 'file')}, {_s(skill.uri)})",
            )
