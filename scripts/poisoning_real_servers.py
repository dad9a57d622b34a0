"""False positives of the poisoning rules on real MCP servers (``make poisoning-real-servers``).

What it does, in order:

1. Node 22 and the interop peers (``scripts.interop``: server-everything, server-filesystem,
   server-memory, mcp-server-time), plus the measuring set pinned in ``interop/poisoning/`` — npm
   packages from the committed ``package-lock.json`` (every tarball integrity-checked, every version
   checked after installing) into ``.cache/poisoning-peers/`` and PyPI packages from
   ``python-peers.txt`` into ``.cache/poisoning-python/``. Only this script installs that set: it costs
   ~500 MB and about a minute with warm npm and pip caches (npm 41 s, pip 23 s, measured on two busy
   cores), which ``make test`` must not pay. Both steps are skipped when the caches hold the pins.
2. Each server runs over stdio under ``agent-connector review --json -- CMD``, the default profile, as
   a user runs it: no token, ``HOME`` a scratch directory (desktop-commander and chrome-devtools-mcp
   write configuration and telemetry state there), telemetry and update checks off where a flag exists.
3. Per server: the tools listed and admitted, the poisoning findings by rule, and how many tools name a
   sibling tool in their prose (the pointers the ``cross-reference`` rule must leave alone).
4. Each server's listing (the descriptors the review reports) is written to
   ``tests/core/contracts/real_servers/`` with its package and version: the fixtures
   ``tests/core/contracts/test_poisoning_real_servers.py`` runs the pure rules on, offline.

``--docs`` rewrites the table in ``docs/reference.md`` (between the ``poisoning-real-servers`` markers)
and the fixtures; ``--check-docs`` fails when either differs from this run. The exit status is non-zero
when a server could not be reviewed or any poisoning finding was made (the target is none).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from agent_connector_sdk.core.contracts._poisoning import (
    POISONING_RULES,
    _mention_tokens,
    _NameIndex,
    descriptor_texts,
    visible_text,
)
from agent_connector_sdk.sanitize import sanitize_text
from scripts.interop import (
    PINS,
    PYTHON_PEERS,
    _locked_versions,
    _python_pins,
    ensure_npm_peers,
    ensure_packages,
    ensure_python_peers,
)

ROOT = Path(__file__).resolve().parent.parent
MEASURED_PINS = PINS / "poisoning"
MEASURED_PYTHON = MEASURED_PINS / "python-peers.txt"
NPM_CACHE = ROOT / ".cache" / "poisoning-peers"
PYTHON_CACHE = ROOT / ".cache" / "poisoning-python"
INTEROP_PYTHON_CACHE = ROOT / ".cache" / "interop-python"
FIXTURES = ROOT / "tests" / "core" / "contracts" / "real_servers"
DOCS = ROOT / "docs" / "reference.md"
BEGIN: Final = "<!-- begin of the table `python -m scripts.poisoning_real_servers --docs` writes -->"
END: Final = "<!-- end of the table the poisoning script writes -->"
REVIEW_TIMEOUT_S: Final = 60
REVIEW_DEADLINE_S: Final = 120


def log(message: str) -> None:
    print(f"[poisoning] {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Server:
    """One measured server: where it comes from and how it starts over stdio."""

    slug: str
    package: str
    registry: str  # "npm" or "PyPI"
    pins: str  # "interop" (the interop matrix's set) or "measured" (interop/poisoning/)
    start: tuple[str, ...]
    """The command after the package's entry point; ``{scratch}`` is the run's scratch directory."""
    entry: str = ""
    """npm: the entry script inside the package; PyPI: the console script."""
    env: tuple[tuple[str, str], ...] = ()


SERVERS: Final = (
    Server("server-everything", "@modelcontextprotocol/server-everything", "npm", "interop", ("stdio",)),
    Server(
        "server-filesystem", "@modelcontextprotocol/server-filesystem", "npm", "interop", ("{scratch}/files",)
    ),
    Server(
        "server-memory",
        "@modelcontextprotocol/server-memory",
        "npm",
        "interop",
        (),
        env=(("MEMORY_FILE_PATH", "{scratch}/memory.jsonl"),),
    ),
    Server("mcp-server-time", "mcp-server-time", "PyPI", "interop", ("--local-timezone", "UTC")),
    Server(
        "server-sequential-thinking",
        "@modelcontextprotocol/server-sequential-thinking",
        "npm",
        "measured",
        (),
    ),
    Server("server-github", "@modelcontextprotocol/server-github", "npm", "measured", ()),
    Server("context7-mcp", "@upstash/context7-mcp", "npm", "measured", ()),
    Server("notion-mcp-server", "@notionhq/notion-mcp-server", "npm", "measured", ()),
    Server(
        "desktop-commander",
        "@wonderwhy-er/desktop-commander",
        "npm",
        "measured",
        (),
        entry="desktop-commander",
    ),
    Server(
        "chrome-devtools-mcp",
        "chrome-devtools-mcp",
        "npm",
        "measured",
        ("--no-usage-statistics",),
        entry="chrome-devtools-mcp",
        env=(("CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS", "1"),),
    ),
    Server("mcp-server-fetch", "mcp-server-fetch", "PyPI", "measured", ()),
    Server("mcp-server-git", "mcp-server-git", "PyPI", "measured", ("--repository", "{scratch}/repo")),
    Server("duckduckgo-mcp-server", "duckduckgo-mcp-server", "PyPI", "measured", ()),
)


@dataclass
class Measured:
    server: Server
    version: str
    error: str = ""
    tools: list[dict[str, Any]] = field(default_factory=list)
    admitted: int = 0
    findings: dict[str, int] = field(default_factory=dict)
    naming_siblings: int = 0

    @property
    def total(self) -> int:
        return sum(self.findings.values())


@dataclass(frozen=True)
class Installed:
    node: Path
    interop_npm: Path
    measured_npm: Path
    interop_python: Path
    measured_python: Path


def install() -> Installed:
    interop = ensure_npm_peers()
    measured_npm = ensure_packages(interop.node, NPM_CACHE, MEASURED_PINS)
    return Installed(
        node=interop.node,
        interop_npm=interop.packages,
        measured_npm=measured_npm,
        interop_python=ensure_python_peers(INTEROP_PYTHON_CACHE, PYTHON_PEERS),
        measured_python=ensure_python_peers(PYTHON_CACHE, MEASURED_PYTHON),
    )


def version_of(server: Server) -> str:
    if server.registry == "PyPI":
        return _python_pins(PYTHON_PEERS if server.pins == "interop" else MEASURED_PYTHON)[server.package]
    return _locked_versions(PINS if server.pins == "interop" else MEASURED_PINS)[server.package]


def _npm_entry(packages: Path, server: Server) -> Path:
    package_dir = packages / "node_modules" / server.package
    manifest = json.loads((package_dir / "package.json").read_text())
    bins = manifest["bin"]
    if isinstance(bins, dict):
        entry = bins[server.entry] if server.entry else next(iter(bins.values()))
    else:
        entry = bins
    return package_dir / str(entry)


def command_of(server: Server, installed: Installed, scratch: Path) -> list[str]:
    args = [part.replace("{scratch}", str(scratch)) for part in server.start]
    if server.registry == "PyPI":
        venv = installed.interop_python if server.pins == "interop" else installed.measured_python
        return [str(venv / "bin" / (server.entry or server.package)), *args]
    packages = installed.interop_npm if server.pins == "interop" else installed.measured_npm
    return [str(installed.node), str(_npm_entry(packages, server)), *args]


def review(server: Server, command: Sequence[str], scratch: Path) -> dict[str, Any]:
    """``agent-connector review --json -- COMMAND`` (default profile) with ``HOME`` in ``scratch``."""
    home = scratch / "home"
    home.mkdir(exist_ok=True)
    env_args = [
        arg
        for name, value in server.env
        for arg in ("--env", f"{name}={value.replace('{scratch}', str(scratch))}")
    ]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_connector_sdk.cli",
            "review",
            "--json",
            "--timeout",
            str(REVIEW_TIMEOUT_S),
            "--deadline",
            str(REVIEW_DEADLINE_S),
            *env_args,
            "--",
            *command,
        ],
        env={**os.environ, "HOME": str(home)},
        cwd=scratch,
        capture_output=True,
        text=True,
        timeout=REVIEW_DEADLINE_S + 30,
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip():
        last = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise RuntimeError(sanitize_text(last[0])[:300])
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def naming_siblings(tools: Sequence[dict[str, Any]]) -> int:
    """How many tools name another tool of the listing in their prose (title/description fields, in
    the visible text, as the rule reads them): the pointers ``cross-reference`` leaves alone."""
    names = [str(tool.get("name")) for tool in tools]
    index = _NameIndex(name for name in names if len(name) >= 3)
    count = 0
    for tool in tools:
        for _, text, prose in descriptor_texts(tool):
            visible = visible_text(text)
            if prose and index.mentioned(visible, _mention_tokens(visible)) - {tool.get("name")}:
                count += 1
                break
    return count


def measure(server: Server, installed: Installed) -> Measured:
    measured = Measured(server, version_of(server))
    with tempfile.TemporaryDirectory(prefix=f"poisoning-{server.slug}-") as scratch_dir:
        scratch = Path(scratch_dir)
        (scratch / "files").mkdir()
        if server.slug == "mcp-server-git":
            subprocess.run(["git", "init", "-q", str(scratch / "repo")], check=True)
        try:
            report = review(server, command_of(server, installed, scratch), scratch)
        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as error:
            measured.error = str(error)
            log(f"FAIL {server.slug}: {measured.error}")
            return measured
    measured.tools = [tool["descriptor"] for tool in report["tools"]]
    measured.admitted = sum(1 for tool in report["tools"] if tool["admission"]["decision"] == "admitted")
    # The tools' findings and those in what the server says besides them (instructions, prompts,
    # resources and templates, as it declares them): a false positive in either is one.
    said = (report.get("server_text") or {}).get("findings", [])
    every = [finding for tool in report["tools"] for finding in tool.get("findings", [])] + said
    for finding in every:
        if finding["rule"] in POISONING_RULES:
            measured.findings[finding["rule"]] = measured.findings.get(finding["rule"], 0) + 1
    measured.naming_siblings = naming_siblings(measured.tools)
    log(
        f"{'ok  ' if not measured.total else 'FAIL'} {server.slug} {measured.version}: "
        f"{len(measured.tools)} tools, {measured.total} poisoning findings, "
        f"{measured.naming_siblings} naming a sibling"
    )
    return measured


# --------------------------------------------------------------------------- outputs


def fixture_text(measured: Measured) -> str:
    """The fixture file: provenance, then one descriptor per line (small diffs on a version bump)."""
    head = {
        "package": measured.server.package,
        "version": measured.version,
        "registry": measured.server.registry,
        "captured_by": "python -m scripts.poisoning_real_servers --docs (review --json, default profile)",
    }
    lines = [json.dumps(tool, ensure_ascii=False, sort_keys=True) for tool in measured.tools]
    body = ",\n".join(f"  {line}" for line in lines)
    return json.dumps(head, ensure_ascii=False)[:-1] + ', "tools": [\n' + body + "\n]}\n"


def render_table(results: Sequence[Measured]) -> str:
    rules = " | ".join(f"`{rule}`" for rule in POISONING_RULES)
    rows = [
        f"| server | registry | tools | admitted | {rules} | naming a sibling |",
        "|---|---|---|---|" + "---|" * len(POISONING_RULES) + "---|",
    ]
    for result in results:
        name = f"{result.server.package} {result.version}"
        if result.error:
            rows.append(f"| {name} | {result.server.registry} | not reviewed: {result.error} |")
            continue
        counts = " | ".join(str(result.findings.get(rule, 0)) for rule in POISONING_RULES)
        rows.append(
            f"| {name} | {result.server.registry} | {len(result.tools)} | {result.admitted} | {counts} "
            f"| {result.naming_siblings} |"
        )
    tools = sum(len(result.tools) for result in results)
    findings = sum(result.total for result in results)
    rows.append("")
    rows.append(
        f"{len(results)} servers, {tools} tools, {findings} poisoning findings (default profile, "
        "`review --json`). *Naming a sibling*: tools whose prose names another tool of the same "
        "listing — pointers, which `cross-reference` does not report."
    )
    return "\n".join(rows) + "\n"


def rendered_docs(results: Sequence[Measured]) -> str:
    text = DOCS.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + "\n" + render_table(results) + text[end:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else None)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--docs", action="store_true", help="rewrite the docs table and the test fixtures")
    mode.add_argument("--check-docs", action="store_true", help="fail when the docs or fixtures are stale")
    args = parser.parse_args(argv)
    installed = install()
    results = [measure(server, installed) for server in SERVERS]
    docs = rendered_docs(results)
    fixtures = {FIXTURES / f"{r.server.slug}.json": fixture_text(r) for r in results if not r.error}
    failed = any(result.error or result.total for result in results)
    if args.docs:
        DOCS.write_text(docs, encoding="utf-8")
        FIXTURES.mkdir(parents=True, exist_ok=True)
        for path, text in fixtures.items():
            path.write_text(text, encoding="utf-8")
        log(f"wrote {DOCS.relative_to(ROOT)} and {len(fixtures)} fixtures in {FIXTURES.relative_to(ROOT)}")
    elif args.check_docs:
        stale = [DOCS] if DOCS.read_text(encoding="utf-8") != docs else []
        stale += [
            p for p, text in fixtures.items() if not p.is_file() or p.read_text(encoding="utf-8") != text
        ]
        for path in stale:
            log(f"stale: {path.relative_to(ROOT)} (make poisoning-real-servers-docs rewrites it)")
        failed = failed or bool(stale)
    else:
        print(render_table(results), end="")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
