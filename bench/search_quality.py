"""Benchmark: does the search find the right tool? Ranked search vs FastMCP's BM25 and regex searches.

    python -m bench.search_quality [--sets github,metatool] [--misses N] [--skip-cost] [--skip-semantic]

Labelled sets (``bench/data``):

* **github** — the pinned ``@octokit/openapi`` description (1,223 operations, ``bench/_github.py``) served
  as ``serve --openapi`` serves it, and ``github_requests.json``: requests written as a user says them
  (never an operation's own summary), each labelled with the operations that serve it, plus requests
  no GitHub operation serves.
* **metatool** — a real multi-source catalog: MetaTool's 199 tools (``metatool_subset.json``, MIT,
  attributed there; 3 of its labelled queries per tool and 150 of its "no tool needed" queries) and,
  as unlabelled neighbours, every tool of the real MCP servers captured under
  ``tests/core/contracts/real_servers`` (~170 tools from 14 servers, named ``server_tool``).

Engines, each the search tool of a FastMCP server over the same tools, called through an in-process
``fastmcp.Client`` (the MCP layer included; HTTP and the server gates left out):

* **ranked** — ``RankedSearchTransform`` (``core.search``), ``describe_schema_tools`` entries, the
  catalog cache: what ``serve --openapi``, the lab and the gateway run;
* **bm25** — FastMCP's ``BM25SearchTransform`` (its ``query`` argument);
* **regex** — FastMCP's ``RegexSearchTransform``, the request used as the pattern (our search before).

Rows: natural requests (**nl**) and agent-style regexes (**rx**: an alternation of the request's
content words, e.g. ``watching|repo``). Columns: top-1 and top-5 (a labelled tool first / in the first
five), answer rate (in-catalog requests answered with at least one entry), abstention (no-tool requests
answered with none) and p50/p95 latency per search, wall and CPU time (client and server share the
process, so its CPU time is the search's whole cost; wall time on a busy machine adds waiting).
``max_results`` is 50 as ``serve --openapi`` sets it; only the first five entries count.

The ranked engine is also reported by **half** of each set: its tuned numbers (the abstention margin in
``core.search._index``, the fusion constants in ``core.search._semantic``) were chosen on the
even-indexed requests (labelled and no-tool alike); the odd-indexed ones were only measured. With the
``semantic`` extra installed, the pure index with WordLlama fused in (``FusedSearchIndex``) is measured
beside the lexical index on the same requests, by half (``--skip-semantic`` leaves it out).

Then the **cost** of the pure index at 10,000 tools (GitHub's tools repeated with suffixed names): build
time (CPU and wall), traced memory of the built index, and search latency in process.

Where a target of issue 45 is not reached the report says by how much and lists the requests that
miss (the first ``--misses`` of them) with what came first instead.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import glob
import json
import os
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastmcp import Client, FastMCP
from fastmcp.server.transforms.search import BM25SearchTransform, RegexSearchTransform
from fastmcp.tools.base import Tool, ToolResult

from agent_connector_sdk.core.search import FusedSearchIndex, SearchIndex, document_from_tool
from agent_connector_sdk.core.search._words import STOP_WORDS, text_words
from agent_connector_sdk.mcp.schema_disclosure_provider import RankedSearchTransform, describe_schema_tools
from agent_connector_sdk.mcp.server import cache_tool_catalog

DATA = Path(__file__).resolve().parent / "data"
REAL_SERVERS = Path(__file__).resolve().parent.parent / "tests" / "core" / "contracts" / "real_servers"
MAX_RESULTS = 50  # as serve --openapi
ENGINES = ("ranked", "bm25", "regex")
# The held-out split: the ranking's tuned numbers (the abstention margin, in core.search._index) were
# chosen on the even-indexed requests of each set (labelled and no-tool alike); the odd-indexed ones were
# only measured. The report shows both halves of the ranked engine apart.
HALVES = (":even", ":odd")

# Issue 45's targets: (set, row) -> {metric: floor}. The metatool set stands in for its ~500-tool
# multi-server catalog (MCP-Bench was not at hand; see docs/benchmarks.md).
TARGETS: dict[tuple[str, str], dict[str, float]] = {
    ("github", "nl"): {"top1": 0.40, "top5": 0.60},
    ("metatool", "nl"): {"top1": 0.60, "top5": 0.85, "answered": 0.95, "abstained": 0.80},
    ("metatool", "rx"): {"top5": 0.60},
}

# Why a target stays short, and what would reach it (printed with the target's verdict).
WHY_SHORT: dict[tuple[str, str], str] = {
    ("metatool", "nl"): (
        "MetaTool's requests describe a need in everyday words its plugins' descriptions do not use "
        "('a furnished studio apartment' for a listings plugin), so a lexical ranking (stems, roots, a "
        "small related-words list) misses the vocabulary gap; and its no-tool requests are general "
        "questions in words its 199 broad plugins do use ('history', 'find', 'book'), so no lexical "
        "score tells 'shares words' from 'serves the request': the calibrated rule abstains on ~0.37 "
        "while answering >= 0.94. The 'semantic' extra (static word embeddings, fused by rank; its rows "
        "above) closes part of the vocabulary gap; the rest needs a sentence model (contextual "
        "embeddings or a reranker) fused the same way, and abstention needs one whose similarity "
        "separates 'no tool' (WordLlama's does not: its no-tool and in-catalog similarities overlap)."
    ),
}


@dataclass
class LabelledSet:
    name: str
    descriptors: list[dict[str, Any]]
    requests: list[tuple[str, frozenset[str]]]
    no_tool: list[str]


@dataclass
class Outcome:
    """One engine on one row of one set."""

    top1: int = 0
    top5: int = 0
    answered: int = 0
    labelled: int = 0
    abstained: int = 0
    no_tool: int = 0
    latencies: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    misses: list[tuple[str, str, list[str]]] = field(default_factory=list)

    def share(self, metric: str) -> float:
        if metric == "abstained":
            return self.abstained / self.no_tool if self.no_tool else float("nan")
        return getattr(self, metric) / self.labelled if self.labelled else float("nan")

    def percentile(self, q: float, *, cpu: bool = False) -> float:
        ordered = sorted(self.cpu if cpu else self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else float("nan")


# ---------------------------------------------------------------------------------------- the sets


def _github_set() -> LabelledSet:
    from agent_connector_sdk.connectors.openapi import build_openapi_server
    from scripts.github_openapi import load_github_description

    description = load_github_description()
    built = build_openapi_server(description.document, base_url="http://127.0.0.1:9", name="github")

    async def listed() -> list[dict[str, Any]]:
        async with Client(built.server) as client:
            return [
                t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in await client.list_tools()
            ]

    descriptors = asyncio.run(listed())
    labels = json.loads((DATA / "github_requests.json").read_text(encoding="utf-8"))
    return LabelledSet(
        "github",
        descriptors,
        [(text, frozenset(tools)) for text, tools in labels["requests"]],
        list(labels["no_tool"]),
    )


def _metatool_set() -> LabelledSet:
    data = json.loads((DATA / "metatool_subset.json").read_text(encoding="utf-8"))
    descriptors: list[dict[str, Any]] = [
        {"name": name, "description": text, "inputSchema": {"type": "object", "properties": {}}}
        for name, text in data["tools"].items()
    ]
    for path in sorted(glob.glob(str(REAL_SERVERS / "*.json"))):
        server = Path(path).stem
        for tool in json.loads(Path(path).read_text(encoding="utf-8"))["tools"]:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                descriptors.append({**tool, "name": f"{server}_{tool['name']}"})
    return LabelledSet(
        "metatool",
        descriptors,
        [(text, frozenset(tools)) for text, tools in data["requests"]],
        list(data["no_tool"]),
    )


# ------------------------------------------------------------------------------------- the servers


class _ListedTool(Tool):
    """A tool as a listing describes it (the benchmark never calls it)."""

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(content="not called by the benchmark")


def _server(descriptors: Sequence[dict[str, Any]], engine: str) -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP(f"bench-{engine}")
    for descriptor in descriptors:
        schema = descriptor.get("inputSchema")
        server.add_tool(
            _ListedTool(
                name=descriptor["name"],
                title=descriptor.get("title"),
                description=descriptor.get("description"),
                parameters=schema if isinstance(schema, dict) else {"type": "object", "properties": {}},
            )
        )
    if engine == "ranked":
        transform: Any = RankedSearchTransform(
            search_result_serializer=describe_schema_tools, max_results=MAX_RESULTS
        )
    elif engine == "bm25":
        transform = BM25SearchTransform(
            search_result_serializer=describe_schema_tools, max_results=MAX_RESULTS
        )
    else:
        transform = RegexSearchTransform(
            search_result_serializer=describe_schema_tools, max_results=MAX_RESULTS
        )
    server.add_transform(transform)
    cache_tool_catalog(server, transform)  # as serve --openapi: nothing edits these tools in place
    return server


def _names(result: Any) -> list[str]:
    structured = result.structured_content
    found = structured.get("result") if isinstance(structured, dict) else structured
    return [entry["name"] for entry in found] if isinstance(found, list) else []


def agent_regex(request: str) -> str:
    """An agent-style regex for a request: its content words as one alternation (``watching|repo``)."""
    words = [word for word in text_words(request) if word not in STOP_WORDS and len(word) > 2]
    return "|".join(dict.fromkeys(words)) or request


async def _run_engine(labelled: LabelledSet, engine: str) -> dict[str, Outcome]:
    server = _server(labelled.descriptors, engine)
    argument = "query" if engine == "bm25" else "pattern"
    outcomes = {f"{row}{half}": Outcome() for row in ("nl", "rx") for half in ("", ":even", ":odd")}
    async with Client(server) as client:
        await client.call_tool("search_tools", {argument: "warm up"})  # builds indexes and caches

        gc.collect()

        async def search(text: str) -> tuple[list[str], tuple[float, float]]:
            # Client and server share this process: its CPU time is the whole cost of the search.
            started, started_cpu = time.perf_counter(), time.process_time()
            result = await client.call_tool("search_tools", {argument: text})
            return _names(result), (time.perf_counter() - started, time.process_time() - started_cpu)

        for row, shape in (("nl", lambda text: text), ("rx", agent_regex)):
            for position, (text, tools) in enumerate(labelled.requests):
                names, (seconds, cpu) = await search(shape(text))
                for outcome in (outcomes[row], outcomes[row + HALVES[position % 2]]):
                    outcome.latencies.append(seconds)
                    outcome.cpu.append(cpu)
                    outcome.labelled += 1
                    outcome.answered += bool(names)
                    outcome.top1 += bool(names) and names[0] in tools
                    if tools & set(names[:5]):
                        outcome.top5 += 1
                    else:
                        outcome.misses.append((text, sorted(tools)[0], names[:3]))
            for position, text in enumerate(labelled.no_tool):
                names, (seconds, cpu) = await search(shape(text))
                for outcome in (outcomes[row], outcomes[row + HALVES[position % 2]]):
                    outcome.latencies.append(seconds)
                    outcome.cpu.append(cpu)
                    outcome.no_tool += 1
                    outcome.abstained += not names
    return outcomes


# ------------------------------------------------------------------------------------------ report


def _print_table(labelled: LabelledSet, results: dict[str, dict[str, Outcome]]) -> None:
    print(
        f"\n### {labelled.name}: {len(labelled.descriptors)} tools, {len(labelled.requests)} labelled "
        f"requests, {len(labelled.no_tool)} no-tool requests\n"
    )
    print(
        "| requests | engine | top-1 | top-5 | answered | abstained "
        "| p50 ms | p95 ms | p50 CPU ms | p95 CPU ms |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in ("nl", "rx"):
        for engine in ENGINES:
            outcome = results[engine][row]
            print(
                f"| {row} | {engine} | {outcome.share('top1'):.2f} | {outcome.share('top5'):.2f} | "
                f"{outcome.share('answered'):.2f} | {outcome.share('abstained'):.2f} | "
                f"{outcome.percentile(0.5):.1f} | {outcome.percentile(0.95):.1f} | "
                f"{outcome.percentile(0.5, cpu=True):.1f} | {outcome.percentile(0.95, cpu=True):.1f} |"
            )


def _print_halves(labelled: LabelledSet, results: dict[str, dict[str, Outcome]]) -> None:
    print(
        f"\nranked, by half of {labelled.name}'s requests (even-indexed: tuned on; odd-indexed: held out):\n"
    )
    print("| requests | half | labelled / no-tool | top-1 | top-5 | answered | abstained |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for row in ("nl", "rx"):
        for half, role in zip(HALVES, ("even (tuned)", "odd (held out)"), strict=True):
            outcome = results["ranked"][row + half]
            print(
                f"| {row} | {role} | {outcome.labelled} / {outcome.no_tool} | {outcome.share('top1'):.2f} | "
                f"{outcome.share('top5'):.2f} | {outcome.share('answered'):.2f} | "
                f"{outcome.share('abstained'):.2f} |"
            )


def _semantic(labelled: LabelledSet) -> None:
    """The ``semantic`` extra fused in (``core.search.FusedSearchIndex`` over WordLlama), on the pure
    index (no surface runs it by default), beside the lexical index on the same requests, by half."""
    try:
        from agent_connector_sdk.mcp.search_semantic import SemanticExtraMissing, WordLlamaModel

        model = WordLlamaModel()
    except SemanticExtraMissing:
        print(f"\n(semantic extra not installed: {labelled.name}'s fused row skipped)")
        return
    documents = [document_from_tool(descriptor) for descriptor in labelled.descriptors]
    cpu = time.process_time()
    fused = FusedSearchIndex.build(documents, model)
    cpu = time.process_time() - cpu
    print(
        f"\nsemantic extra (WordLlama, fused by weighted rank; the index and the model's embeddings built "
        f"in {cpu:.2f} s CPU), pure index, natural requests, by half (even: tuned on; odd: held out):\n"
    )
    print("| engine | half | top-1 | top-5 | answered | abstained | p95 CPU ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    engines: dict[str, Callable[[str], Sequence[Any]]] = {
        "lexical": lambda text: fused.lexical.search(text, limit=MAX_RESULTS),
        "lexical + semantic": lambda text: fused.search(text, limit=MAX_RESULTS),
    }
    for engine, search in engines.items():
        for half, role in enumerate(("even (tuned)", "odd (held out)")):
            outcome = Outcome()
            for text, tools in labelled.requests[half::2]:
                started = time.process_time()
                names = [hit.name for hit in search(text)]
                outcome.cpu.append(time.process_time() - started)
                outcome.labelled += 1
                outcome.answered += bool(names)
                outcome.top1 += bool(names) and names[0] in tools
                outcome.top5 += bool(tools & set(names[:5]))
            for text in labelled.no_tool[half::2]:
                outcome.no_tool += 1
                outcome.abstained += not search(text)
            print(
                f"| {engine} | {role} | {outcome.share('top1'):.2f} | {outcome.share('top5'):.2f} | "
                f"{outcome.share('answered'):.2f} | {outcome.share('abstained'):.2f} | "
                f"{outcome.percentile(0.95, cpu=True):.1f} |"
            )


def _print_targets(labelled: LabelledSet, results: dict[str, dict[str, Outcome]], misses: int) -> None:
    for (name, row), floors in TARGETS.items():
        if name != labelled.name:
            continue
        outcome = results["ranked"][row]
        short = {metric: floor for metric, floor in floors.items() if outcome.share(metric) < floor}
        verdict = ", ".join(
            f"{metric} {outcome.share(metric):.2f} < {floor:.2f} "
            f"(short by {floor - outcome.share(metric):.2f})"
            for metric, floor in short.items()
        )
        print(f"\ntarget {name}/{row}: " + ("met" if not short else "NOT met: " + verdict))
        if short and (name, row) in WHY_SHORT:
            print(f"  why: {WHY_SHORT[name, row]}")
        if short and misses:
            print(
                f"  first {min(misses, len(outcome.misses))} of {len(outcome.misses)} requests missing top-5:"
            )
            for text, wanted, got in outcome.misses[:misses]:
                print(f"  - {text[:90]!r}: wanted {wanted}, got {got or 'nothing'}")


# -------------------------------------------------------------------------------------------- cost


def _cost(descriptors: Sequence[dict[str, Any]], requests: Sequence[str], size: int) -> None:
    documents = [document_from_tool(d) for d in descriptors]
    catalog = [
        documents[i % len(documents)].__class__(
            name=f"{documents[i % len(documents)].name}_{i // len(documents)}",
            title=documents[i % len(documents)].title,
            description=documents[i % len(documents)].description,
            arguments=documents[i % len(documents)].arguments,
        )
        for i in range(size)
    ]
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    index = SearchIndex.build(catalog)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    del index
    gc.collect()
    tracemalloc.start()  # a second build, traced (tracing slows it: not timed)
    index = SearchIndex.build(catalog)
    traced, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    latencies, cpu_latencies = [], []
    for text in requests:
        started, started_cpu = time.perf_counter(), time.process_time()
        index.search(text, limit=5)
        latencies.append(time.perf_counter() - started)
        cpu_latencies.append(time.process_time() - started_cpu)
    latencies.sort()
    cpu_latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p95 = latencies[int(0.95 * len(latencies))] * 1000
    cpu_p95 = cpu_latencies[int(0.95 * len(cpu_latencies))] * 1000
    print(f"\n### cost of the index at {size:,} tools (in process, core.search)\n")
    print(
        "| build wall s | build CPU s | index memory MB | search p50 ms | search p95 ms | search p95 CPU ms |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {wall:.2f} | {cpu:.2f} | {traced / 1e6:.1f} | {p50:.1f} | {p95:.1f} | {cpu_p95:.1f} |")
    print(
        f"targets: build <= 1 s ({'met' if cpu <= 1 else 'NOT met'} in CPU time), memory <= 50 MB "
        f"({'met' if traced <= 50e6 else 'NOT met'}), p95 <= 20 ms "
        f"({'met' if cpu_p95 <= 20 else 'NOT met'} in CPU time); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="github,metatool")
    parser.add_argument("--misses", type=int, default=12, help="missing requests listed per unmet target")
    parser.add_argument("--skip-cost", action="store_true")
    parser.add_argument("--skip-semantic", action="store_true", help="leave out the 'semantic' extra's rows")
    options = parser.parse_args(argv)
    loaders: dict[str, Callable[[], LabelledSet]] = {"github": _github_set, "metatool": _metatool_set}
    print("# Search quality: ranked (core.search) vs FastMCP BM25 vs FastMCP regex\n")
    print(f"python {sys.version.split()[0]}; max_results {MAX_RESULTS}; top-5 counts the first five entries")
    github: LabelledSet | None = None
    for name in options.sets.split(","):
        started = time.perf_counter()
        labelled = loaders[name]()
        print(f"\n(set {name} loaded in {time.perf_counter() - started:.0f} s, untimed)")
        results = {engine: asyncio.run(_run_engine(labelled, engine)) for engine in ENGINES}
        _print_table(labelled, results)
        _print_halves(labelled, results)
        if not options.skip_semantic:
            _semantic(labelled)
        _print_targets(labelled, results, options.misses)
        if name == "github":
            github = labelled
    if not options.skip_cost:
        if github is None:
            github = _github_set()
        texts = [text for text, _ in github.requests] + github.no_tool
        _cost(github.descriptors, texts, 10_000)
    print("\nlatencies are wall time on a shared machine: compare engines within one run")


if __name__ == "__main__":
    main()
