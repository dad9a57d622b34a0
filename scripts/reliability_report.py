"""Regenerate ``docs/reliability.md``: what was tried against the server side, how much, and what held.

Usage: ``python -m scripts.reliability_report`` (writes the file; ``--output PATH`` elsewhere,
``--clients/--iterations`` for the load part). One command runs, on loopback only:

1. the hardening, fault, cache-bound and fuzz test modules (pytest, JUnit XML read back): every test
   with its outcome and duration, the fuzz tests with their hypothesis example budgets;
2. ``bench.load`` (two identical rounds, concurrent clients, fixed mix): requests, errors, p50/p99, RSS.

Nothing is typed in by hand: every number in the document comes from this run.
"""

from __future__ import annotations

import argparse
import ast
import json
import platform
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODULES = {
    "tests/mcp/server/test_hardening_http.py": "Hostile input over raw HTTP (the eight probe findings)",
    "tests/mcp/server/test_faults_http.py": (
        "Faults: upstream down, slow, garbage; clients cancelled mid-call"
    ),
    "tests/mcp/server/test_cache_bounds.py": "Every cache and audit record has a bound",
    "tests/core/contracts/test_gate_caches.py": "Every cache and audit record has a bound: the gates' own",
    "tests/fuzz/test_fuzz.py": "Fuzzing (hypothesis)",
    "tests/mcp/test_compat.py": "Private FastMCP/mcp internals: tested versions only",
    "tests/mcp/server/test_round2_hardening_http.py": (
        "Second attack round (issue 25): one header rulebook, bounded work, proxies, logs"
    ),
    "tests/mcp/server/test_upstream_boundary_http.py": "Second attack round: the OpenAPI upstream boundary",
    "tests/demo/test_lab_resource_scopes_http.py": "Second attack round: the lab's resources, each token",
    "tests/state/test_fail_closed_http.py": (
        "Second attack round: shared state survives or fails closed (real Redis, two replicas, nginx)"
    ),
    "tests/state/test_state_backends.py": "State backends against a real redis-server (outages, data loss)",
    "tests/mcp/server/test_round3_entry_http.py": (
        "Third attack round (issue 29): authenticate first, slow senders, bounded tokens, open binds"
    ),
    "tests/gateway/test_token_lifetime.py": "Third attack round: the token lifetime rule, value-free",
    "tests/mcp/server/test_entry_bounds.py": (
        "Third attack round: the JSON bound is a linear scan; the entry holds at most 2× a body"
    ),
    "tests/mcp/server/test_openapi_failure_contract_http.py": (
        "Third attack round (issue 29): OpenAPI failures inside the contract, upstream answers bounded"
    ),
    "tests/connectors/test_openapi_document_checks.py": (
        "Third attack round: OpenAPI documents checked before serving (duplicate IDs, $refs, reserved names)"
    ),
    "tests/gateway/test_serve_openapi_duplicate_ids_auth.py": (
        "Third attack round: a reused operationId cannot escape its [auth.require] scope (real JWTs)"
    ),
    "tests/cli/test_openapi_document_cli.py": (
        "Third attack round: YAML alias bombs, and serve/disclose output through the one sanitizer"
    ),
}


def _docstrings(path: Path) -> tuple[str, dict[str, str], dict[str, str]]:
    """Module docstring, test name -> first docstring line, test name -> hypothesis budget."""
    tree = ast.parse(path.read_text())
    docs: dict[str, str] = {}
    budgets: dict[str, str] = {}
    constants: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            for keyword in node.value.keywords:
                if keyword.arg == "max_examples" and isinstance(keyword.value, ast.Constant):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            constants[target.id] = str(keyword.value.value)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_"):
            doc = ast.get_docstring(node)
            if doc:
                docs[node.name] = " ".join(doc.split("\n\n")[0].split())
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Name) and decorator.id in constants:
                    budgets[node.name] = constants[decorator.id]
                if isinstance(decorator, ast.Call):
                    for keyword in decorator.keywords:
                        if keyword.arg == "max_examples" and isinstance(keyword.value, ast.Constant):
                            budgets[node.name] = str(keyword.value.value)
    summary = " ".join((ast.get_docstring(tree) or "").split("\n\n")[0].split())
    return summary, docs, budgets


def _run_tests() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "junit.xml"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--junitxml={report}",
                *MODULES,
            ],
            cwd=ROOT,
            check=False,
            stdout=subprocess.DEVNULL,
        )
        tree = ElementTree.parse(report)
    cases = []
    for case in tree.iter("testcase"):
        failed = case.find("failure") is not None or case.find("error") is not None
        skipped = case.find("skipped") is not None
        cases.append(
            {
                "file": case.get("classname", "").replace(".", "/") + ".py",
                "name": case.get("name", ""),
                "seconds": float(case.get("time", "0")),
                "outcome": "failed" if failed else "skipped" if skipped else "passed",
            }
        )
    return cases


def _run_load(clients: int, iterations: int) -> dict[str, Any]:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.load",
            "--json",
            "--clients",
            str(clients),
            "--iterations",
            str(iterations),
        ],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
    )
    summary: dict[str, Any] = json.loads(completed.stdout)
    return summary


def render(cases: list[dict[str, Any]], load: dict[str, Any]) -> str:
    lines = [
        "# Reliability: what was tried against the server side, how much, what held",
        "",
        "Regenerated by `python -m scripts.reliability_report` (every number below comes from that run; "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}, Python {platform.python_version()}, "
        "loopback only).",
        "",
        "Allowed outcomes everywhere: the right answer or a typed refusal with the right status — never a "
        "500, a hang, a traceback in the logs, or a parameter/header value in a log line or audit event.",
        "",
        "## Policies (where the issue was silent)",
        "",
        "- DNS rebinding: on by default (`gated_http_app`, `contract_lab_app`, `serve`): FastMCP's "
        "Host/Origin guard in `auto` mode checks Host and Origin on loopback binds; `allowed_hosts=` / "
        "`allowed_origins=` extend it (and turn it on for other binds).",
        "- Upstream headers (OpenAPI tools): only the operation's declared header parameters, the upstream "
        "client's own headers, HTTP framing and `traceparent`, `tracestate`, `accept-language`; never "
        "`Mcp-Param-*`, `Mcp-*`, API keys, cookies, `X-Forwarded-*`, `Origin` or custom caller headers.",
        "- Rate-limit and in-flight identity: the verified token's client, else the peer address; "
        "`X-Forwarded-For` counts only from `--trusted-proxies` (addresses or CIDR blocks) and is ignored "
        "from any other peer (one window per peer, whatever it forwards); a peer that appears in its own "
        "forwarded chain (an ASGI server rewrote it from the header) shares `forwarded:unverified`, and so "
        "does a forwarded hop that is not an IP address (made-up hops mint no identities).",
        "- Upstream errors (OpenAPI tools): a typed `upstream_error` result with the status and a generic "
        "message; the body goes to the log (bounded, escaped, argument values replaced) and to the caller "
        "only with `serve --upstream-errors=echo`. Only arguments fill declared upstream headers.",
        "- OpenAPI failures inside the contract: every operation tool with an output schema publishes a "
        "failure envelope beside its success shape (`error`: category, message, upstream status, and — "
        "echo mode only — the body when it has the shape the document declares for that status), so a "
        "failed call is a conforming `isError` result, never a JSON-RPC error or a made-up value.",
        "- OpenAPI documents: duplicate `operationId`s refused naming both places (or, with "
        "`--allow-duplicate-operation-ids`, every derived tool inherits the ID's `[auth.require]`); an "
        "operation reaching an unresolvable `$ref` is left out with its reason (`--strict-refs`: the "
        "document is refused); `search_tools`/`call_tool` refused as operation names; YAML aliases may "
        "expand a document to at most 10x its nodes (floor 100,000).",
        "- Upstream answers: at most `--max-upstream-bytes` (default 8 MiB) decoded bytes, enforced while "
        "reading (`Content-Length` first, then a bounded stream; gzip/deflate decoded under the bound, "
        "other encodings refused); a larger answer is an `upstream_too_large` result naming the bound.",
        "- One header rulebook: a body whose `_meta` names a protocol version must carry the same "
        "`MCP-Protocol-Version` header (HTTP 400, -32020), so no 2026-07-28 call takes the handshake-era "
        "route around its header rules; integer `Mcp-Param-*` values in canonical form only.",
        "- One entry per request, cheapest first: before authentication only headers are checked (Host/"
        "Origin, two `Authorization` headers → 400, a declared body over 4 MiB → 413); an authenticated "
        "caller then takes a slot (64 in flight → 503, 8 per caller → 429), a request without valid "
        "credentials one of a separate pool of 16, and it is answered 401 without its body being read; "
        "the body within 10 s (408) and 4 MiB (413); at most 50,000 JSON members and elements, counted by "
        "a linear scan that builds nothing (413); parsed at most once; `serve` closes connections whose "
        "request head takes longer than `--read-timeout`.",
        "- Tokens (`serve --openapi --auth-config`, the gateway): FastMCP's JWT verifier, then a token "
        "without `exp`, or living (`exp - iat`) or remaining (`exp - now`) longer than "
        "`max_token_lifetime_seconds` (default a day), is a 401; `accept_tokens_without_exp` opts out.",
        "- Open binds: `serve` without authentication on a non-loopback `--host` refuses to start unless "
        "`--insecure-open-bind` (then a WARNING line at start-up), as the gateway refuses it.",
        "- Shared state: a namespace's switched-off set is believed only while its initialisation marker "
        "exists (a Redis restarted empty makes every replica refuse the catalog until `agent-connector "
        "state init`); during an outage the last confirmed set serves for at most 5 s, then every tool is "
        "hidden; `/healthz` reads the store before it says `catalogSynchronized` and sits behind the Host "
        "guard; Redis calls time out after 0.5 s and a circuit breaker fails the rest of a 0.5 s window "
        "at once.",
        "- Logs at every level: other libraries' records below WARNING are dropped (FastMCP's debug lines "
        "print arguments); `serve`'s log lines and `disclose`'s output go through the one sanitizer "
        "(control bytes, ESC and bidi controls escaped).",
        "- Arguments: validated on the server against the published `inputSchema` before the tool runs; "
        "a failure is an `isError` result naming the JSON path and keyword, never the value.",
        "- Error results: the failure text first, cut to 512 characters (`ERROR_TEXT_LIMIT`), then the "
        "placeholder's JSON serialization.",
        "- Log lines: caller-chosen text (tool and argument names, caller keys) is JSON-escaped and cut to "
        "200 characters (`mcp.server._logsafe.quoted`).",
        "",
    ]
    passed = sum(case["outcome"] == "passed" for case in cases)
    lines += [f"## Tests: {passed} of {len(cases)} passed", ""]
    for module, title in MODULES.items():
        path = ROOT / module
        summary, docs, budgets = _docstrings(path)
        module_cases = [case for case in cases if case["file"].endswith(Path(module).name)]
        lines += [
            f"### {title}",
            "",
            f"`{module}` — {summary}",
            "",
            "| test | examples | outcome | s |",
            "|---|---|---|---|",
        ]
        for case in module_cases:
            base = case["name"].split("[")[0]
            what = docs.get(base, base.removeprefix("test_").replace("_", " "))
            variant = case["name"][len(base) :]
            lines.append(
                f"| {what}{' `' + variant + '`' if variant else ''} | {budgets.get(base, '1')} | "
                f"{case['outcome']} | {case['seconds']:.1f} |"
            )
        lines.append("")
    lines += [
        "## Load and soak (`bench/load.py`)",
        "",
        f"{load['clients']} concurrent clients, {load['iterations']} iterations each per round, mix: "
        f"{', '.join(load['mix'])} (GitHub connector behind search + contract lab, uvicorn on 127.0.0.1, "
        "server in its own process).",
        "",
        f"Server RSS before round 1: {load['rss_kib_before'] / 1024:.1f} MiB.",
        "",
        "| round | requests | errors | p50 ms | p99 ms | seconds | server RSS after (MiB) |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in load["rounds"]:
        kinds = ", ".join(f"{kind} × {count}" for kind, count in sorted(entry.get("error_kinds", {}).items()))
        errors = f"{entry['errors']} ({kinds})" if kinds else str(entry["errors"])
        lines.append(
            f"| {entry['round']} | {entry['requests']} | {errors} | {entry['p50_ms']} | {entry['p99_ms']} | "
            f"{entry['seconds']} | {entry['rss_kib_after'] / 1024:.1f} |"
        )
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "reliability.md")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--iterations", type=int, default=4)
    args = parser.parse_args(argv)
    cases = _run_tests()
    load = _run_load(args.clients, args.iterations)
    args.output.write_text(render(cases, load))
    print(f"wrote {args.output}")
    failed = [case for case in cases if case["outcome"] == "failed"]
    errors = sum(entry["errors"] for entry in load["rounds"])
    return 1 if failed or errors else 0


if __name__ == "__main__":
    sys.exit(main())
