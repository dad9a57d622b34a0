"""The hostile matrix: every case of the third hostile-server round, on every surface a person meets it.

Surfaces (each a real process, measured by :mod:`tests.support.measured_run`):

* ``review`` — ``agent-connector review URL`` (an HTTP case) or ``review -- CMD`` (a stdio case);
* ``library`` — a ``ContractClient`` script as ``docs/host.md`` writes it, logging on at INFO
  (:mod:`tests.support.hostile_users`): exit 3 is an SDK error, printed with its class;
* ``gateway`` — a gateway whose one child ``odd`` is the hostile server, logging as the CLI's does, and
  a caller searching and calling through it (directly and through its ``call_tool`` proxy, which must
  answer alike): what the operator sees is the gateway's stderr, never an "Error calling tool" line.

Every cell asserts the exit code, what is said (substrings of stdout+stderr), the CPU time of the process
under test (under :data:`CPU_S`: what the cell costs, whatever the machine's load), the wall time only as
a hang guard (under :data:`HANG_S`, far above any quiet cell), the peak RSS (under 3× the same surface
against the clean mode) and zero raw control bytes in everything printed (stdout and stderr bytes,
strictly UTF-8). :data:`CASES` is the one list of cases with the surfaces each applies to; a surface left
out of a case is not applicable (or covered where named in its ``note``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.hostile_server import hostile_app
from tests.support.http_server import serve_asgi
from tests.support.measured_run import Measured, control_characters, run_measured

CPU_S = 10.0
"""CPU seconds (user + system) the process under test may spend in a cell."""
HANG_S = 120.0
"""A hang guard, not a speed claim: busy 2-core machines measured cells at up to 18 s of wall time."""
CLI = "agent_connector_sdk.cli"
USERS = "tests.support.hostile_users"
STDIO_SERVER = (sys.executable, "-m", "tests.support.hostile_server")
CALL = ("--call", "clean", "--arguments", '{"q": "x"}')
EVIL_SHOWN = "\\x1b[2J\\x1b]0;pwned\\x07\\x1b[31m\\u202eevil\\x9b1m\\x7f"
"""The fixture's escape payload as the sanitizer shows it."""


@dataclass(frozen=True)
class Expect:
    code: int
    says: tuple[str, ...] = ()
    never: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    """One hostile behaviour: the server's ``mode``, over ``http`` or ``stdio``; ``review_args`` and
    ``user_args`` are the extra arguments for the review and for the library/gateway programs;
    ``expect`` says what each applicable surface must do."""

    name: str
    mode: str
    transport: str
    expect: dict[str, Expect]
    review_args: tuple[str, ...] = ()
    user_args: tuple[str, ...] = ()
    gateway_mode: str | None = None
    note: str = ""
    surfaces: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "surfaces", tuple(self.expect))


def _case(name: str, mode: str, transport: str, **kwargs: object) -> Case:
    return Case(name, mode, transport, **kwargs)  # type: ignore[arg-type]


CASES: tuple[Case, ...] = (
    # -- raw bytes on the operator's terminal, outside review
    _case(
        "stdio stderr with escapes on every request",
        "noisy",
        "stdio",
        review_args=("--json", *CALL),
        user_args=("--call",),
        expect={
            "review": Expect(0, ('"outcome": "validated"',)),
            "library": Expect(
                0, ("called: ok", f"[python] noise{EVIL_SHOWN}", "Received EMERGENCY from server")
            ),
            "gateway": Expect(0, ("call result: ok", f"[child odd] noise{EVIL_SHOWN}")),
        },
    ),
    _case(
        "log notification at level emergency (fastmcp's default handler)",
        "noisy",
        "http",
        review_args=("--json", *CALL),
        user_args=("--call",),
        expect={
            "review": Expect(0, ('"outcome": "validated"',)),
            "library": Expect(0, ("called: ok", "Received EMERGENCY from server (log\\x1b[2J")),
            "gateway": Expect(0, ("call result: ok",)),
        },
    ),
    # -- unbounded memory
    _case(
        "300 MB of stderr, then death",
        "stderr_flood-300",
        "stdio",
        gateway_mode="stderr_flood-150",  # the gateway relays line by line: half the volume keeps 10 s
        expect={
            "review": Expect(2, (f"(server stderr: fatal: out of luck{EVIL_SHOWN})",)),
            "library": Expect(
                3, ("error: TransportFailure", "more than 1,048,576 bytes of stderr: the rest is dropped")
            ),
            "gateway": Expect(
                0,
                (
                    "child odd down",
                    f"its last stderr line: fatal: out of luck{EVIL_SHOWN}",
                    "more than 1,048,576 bytes of stderr: the rest is dropped",
                ),
            ),
        },
    ),
    _case(
        "prompts/list that never ends",
        "endless_prompts-2000",
        "http",
        review_args=("--json",),
        user_args=("--prompts",),
        note="the gateway relays no prompts",
        expect={
            "review": Expect(0, ("max_list_items (10,000)",)),
            "library": Expect(3, ("error: BoundExceeded (bound_exceeded)", "max_list_items (10,000)")),
        },
    ),
    # -- error pages of any size
    *(
        _case(
            f"{size // 1000} KB error page on the listing",
            f"error_page-{size}",
            "http",
            expect={
                "review": Expect(2, (f"answered HTTP 502: backend exploded{EVIL_SHOWN}",)),
                "library": Expect(
                    3,
                    (
                        "error: HttpStatusError (http_error): HTTP 502",
                        f"the server said: backend exploded{EVIL_SHOWN}",
                    ),
                ),
                "gateway": Expect(0, ("child odd down", "HttpStatusError (http_error)")),
            },
        )
        for size in (10_000, 20_000)
    ),
    *(
        _case(
            f"{size // 1000} KB error page on a call",
            f"call_error_page-{size}",
            "http",
            review_args=("--json", *CALL),
            user_args=("--call",),
            expect={
                "review": Expect(0, ('"category": "http_error"', "backend exploded\\\\x1b[2J")),
                "library": Expect(
                    3,
                    (
                        "error: HttpStatusError (http_error): HTTP 500",
                        f"the server said: backend exploded{EVIL_SHOWN}",
                    ),
                ),
                "gateway": Expect(0, ("call error: -32014", '"category": "http_error"')),
            },
        )
        for size in (10_000, 20_000)
    ),
    # -- the server's words kept, ours not blamed on it
    _case(
        'JSON-RPC -32000 "backend on fire" on tools/list',
        "rpc_error",
        "http",
        expect={
            "review": Expect(2, (f"JSON-RPC error -32000: backend on fire{EVIL_SHOWN}",), ("closed",)),
            "library": Expect(3, ("error: JsonRpcError", f"the server said: backend on fire{EVIL_SHOWN}")),
            "gateway": Expect(0, ("child odd down", "JSON-RPC error -32000 (json_rpc_error)")),
        },
    ),
    _case(
        "JSON-RPC error at HTTP 500 on a call, padded to 20 KB",
        "json_error_page-20000",
        "http",
        review_args=("--json", *CALL),
        user_args=("--call",),
        expect={
            "review": Expect(0, ("backend on fire\\\\x1b[2J",)),
            "library": Expect(3, ("error: JsonRpcError", f"the server said: backend on fire{EVIL_SHOWN}")),
            "gateway": Expect(0, ("call error: -32013", '"childCode": -32050')),
        },
    ),
    _case(
        "text/plain 500",
        "http_error-500",
        "http",
        expect={
            "review": Expect(2, (f"answered HTTP 500: upstream said no{EVIL_SHOWN}",)),
            "library": Expect(
                3, ("error: HttpStatusError (http_error): HTTP 500", "the server said: upstream said no")
            ),
            "gateway": Expect(0, ("child odd down", "HttpStatusError (http_error)")),
        },
    ),
    _case(
        "a result holding a 5,000-digit integer",
        "huge_int",
        "http",
        review_args=("--json", *CALL),
        user_args=("--call",),
        expect={
            "review": Expect(0, ("number out of range",), ("-32700",)),
            "library": Expect(
                3,
                (
                    "error: MalformedResponse",
                    "the answer is not JSON-RPC this host parses (number out of range",
                ),
            ),
            "gateway": Expect(0, ("call error: -32014", '"category": "malformed_response"')),
        },
    ),
    _case(
        "a 200-byte gzip body",
        "gzip",
        "http",
        expect={
            "review": Expect(2, ("the answer came with Content-Encoding gzip",), ("max_message_bytes",)),
            "library": Expect(3, ("error: MalformedResponse", "Content-Encoding gzip")),
            "gateway": Expect(0, ("child odd down", "MalformedResponse (malformed_response)")),
        },
    ),
    _case(
        "a 2 MB SSE event (under the message bound: read, not a transport failure)",
        "sse_big-2000000",
        "http",
        review_args=("--json", *CALL),
        user_args=("--call",),
        expect={
            "review": Expect(0, ('"outcome": "validated"',), ("-32000",)),
            "library": Expect(0, ("called: ok",)),
            "gateway": Expect(0, ("call result: ok",)),
        },
    ),
    # -- one bad descriptor is rejected alone
    *(
        _case(
            f"default 1e400 with --write-lock/--lock ({transport})",
            "nonfinite",
            transport,
            review_args=("--lock-cycle",),
            expect={
                "review": Expect(0, ('"nonfinite"', '"category": "malformed"')),
                "library": Expect(
                    0,
                    ("admitted: 'clean' 'clean_too'", "rejected: 'nonfinite' malformed a non-finite number"),
                ),
                "gateway": Expect(0, ("published: 'odd_clean' 'odd_clean_too'", "nonfinite (malformed)")),
            },
        )
        for transport in ("http", "stdio")
    ),
    *(
        _case(
            f"a schema nested 150 levels ({transport})",
            "deep_schema-150",
            transport,
            review_args=("--json",),
            expect={
                "review": Expect(0, ("max_schema_depth (64)",)),
                "library": Expect(0, ("admitted: 'clean' 'clean_too'", "rejected: 'deep' invalid_schema")),
                "gateway": Expect(0, ("published: 'odd_clean' 'odd_clean_too'", "deep (invalid_schema)")),
            },
        )
        for transport in ("http", "stdio")
    ),
    *(
        _case(
            f"a lone surrogate ({transport})",
            "surrogate",
            transport,
            review_args=("--json",),
            expect={
                "review": Expect(0, ("lone surrogate",)),
                "library": Expect(0, ("admitted: 'clean' 'clean_too'", "a string holding a lone surrogate")),
                "gateway": Expect(0, ("published: 'odd_clean' 'odd_clean_too'", "surrogate (malformed)")),
            },
        )
        for transport in ("http", "stdio")
    ),
    # -- poisoning over the whole descriptor, look-alike names
    *(
        _case(
            f"poisoning beyond three fields; Cyrillic, Hangul-filler and case-twin names ({transport})",
            "poisoned",
            transport,
            review_args=("--strict",),
            user_args=("--strict",),
            note="the gateway's default profile publishes with findings (not rejections)",
            expect={
                "review": Expect(
                    1,
                    ("instruction-markup", "confusable-name", "name-charset", "r\\u0435ad_file"),
                    ("\u0435",),
                ),
                "library": Expect(
                    0,
                    (
                        "rejected: 'nested' tool_poisoning",
                        "rejected: 'comment' tool_poisoning",
                        "rejected: 'image' tool_poisoning",
                        "rejected: 'selectors' tool_poisoning",
                        "rejected: 'shy' tool_poisoning",
                        "rejected: 'fullwidth' tool_poisoning",
                        "rejected: 'split' tool_poisoning",
                        "rejected: 'r\\u0435ad_file' tool_poisoning",
                        "rejected: 'read\\u3164file' tool_poisoning",
                        "rejected: 'Delete' tool_poisoning",
                    ),
                ),
                "gateway": Expect(0, ("odd_r\\u0435ad_file", "odd_clean")),
            },
        )
        for transport in ("http", "stdio")
    ),
    # -- rendering shows what the server sent and nothing else
    *(
        _case(
            f":white_check_mark: and a destructive tool titled read_file (safe, read-only) ({transport})",
            "deceptive",
            transport,
            review_args=("--descriptors",),
            note="rendering is the review's; the library and the gateway hand data on, not a rendering",
            expect={
                "review": Expect(
                    0, (":white_check_mark:", "read_file (safe, read-only)", "destructive"), ("\u2705",)
                )
            },
        )
        for transport in ("http", "stdio")
    ),
    # -- left from round two (stdio)
    _case(
        "JSON values per message over stdio",
        "tool_flood-1000",
        "stdio",
        user_args=("--max-values=1000",),
        note="review has no option to lower the value bound; its max_tools refusal is the next case",
        expect={
            "library": Expect(3, ("error: BoundExceeded (bound_exceeded)", "max_message_values (1,000)"))
        },
    ),
    _case(
        "too many tools over stdio",
        "tool_flood-20000",
        "stdio",
        expect={
            "review": Expect(
                2, ("refused by this host: the tools/list listing has too many tools", "max_tools (10,000)")
            ),
            "library": Expect(3, ("error: BoundExceeded (bound_exceeded)", "max_tools (10,000)")),
            "gateway": Expect(0, ("child odd down", "BoundExceeded (bound_exceeded)")),
        },
    ),
    _case(
        "a schema nested past the parser over stdio (named at once, not after --timeout)",
        "deep_schema-10000",
        "stdio",
        expect={
            "review": Expect(2, ("refused by this host: an answer nests deeper than this host parses",)),
            "library": Expect(3, ("error: BoundExceeded (bound_exceeded)", "max_schema_depth (64)")),
            "gateway": Expect(0, ("child odd down", "BoundExceeded (bound_exceeded)")),
        },
    ),
    _case(
        "a stdio server that writes escapes and dies",
        "dying",
        "stdio",
        expect={
            "review": Expect(2, ("(server stderr: fatal: cannot open database\\x1b[31m\\x07",)),
            "library": Expect(
                3, ("error: TransportFailure", "[python] fatal: cannot open database\\x1b[31m")
            ),
            "gateway": Expect(
                0, ("child odd down", "its last stderr line: fatal: cannot open database\\x1b[31m")
            ),
        },
    ),
)
"""The case the issue's "Why" names but this matrix does not run: a cap hit inside a schema-disclosure
fragment read needs a disclosure server (``tests/mcp/host/test_consumer_http.py``,
``test_a_byte_cap_hit_inside_a_fragment_read_is_that_bound_named``)."""

CELLS = [
    pytest.param(case, surface, id=f"{surface}-{case.transport}-{case.mode}-{index}")
    for index, case in enumerate(CASES)
    for surface in case.surfaces
]


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_asgi(hostile_app(), path="") as url:
        yield url


@pytest.fixture(scope="module")
def budgets_mb(base: str) -> dict[str, float]:
    """3× each surface's peak RSS against the clean mode, with a call (the issue's bound)."""
    clean = f"{base}/clean/mcp"
    runs = {
        "review": run_measured(CLI, ["review", clean, *CALL]),
        "library": run_measured(USERS, ["library", clean, "--call"]),
        "gateway": run_measured(USERS, ["gateway", clean, "--call"]),
    }
    for surface, run in runs.items():
        assert run.code == 0, (surface, run.err[-2000:])
    return {surface: 3 * run.peak_mb for surface, run in runs.items()}


def _target(case: Case, base: str, mode: str) -> str:
    return f"{base}/{mode}/mcp" if case.transport == "http" else mode


def _run(case: Case, surface: str, base: str, tmp_path: Path) -> Measured:
    if surface == "review":
        source = [f"{base}/{case.mode}/mcp"] if case.transport == "http" else ["--", *STDIO_SERVER, case.mode]
        if case.review_args == ("--lock-cycle",):
            # --write-lock approves the rest; --lock then reviews against it (both exit 0).
            lock = tmp_path / "lock.json"
            written = run_measured(CLI, ["review", "--write-lock", str(lock), *source])
            assert written.code == 0, written.err[-2000:]
            approved = [tool["name"] for tool in json.loads(lock.read_text())["servers"][0]["tools"]]
            assert approved == ["clean", "clean_too"]
            assert not control_characters(written.out) and not control_characters(written.err)
            return run_measured(CLI, ["review", "--json", "--lock", str(lock), *source], timeout=HANG_S + 30)
        options = list(case.review_args)
        return run_measured(CLI, ["review", *options, *source], timeout=HANG_S + 30)
    mode = case.gateway_mode if surface == "gateway" and case.gateway_mode else case.mode
    return run_measured(USERS, [surface, _target(case, base, mode), *case.user_args], timeout=HANG_S + 30)


@pytest.mark.parametrize(("case", "surface"), CELLS)
def test_hostile_cell(
    case: Case, surface: str, base: str, budgets_mb: dict[str, float], tmp_path: Path
) -> None:
    run = _run(case, surface, base, tmp_path)
    expect = case.expect[surface]
    seen = run.text  # strict UTF-8
    assert run.code == expect.code, (run.code, seen[-3000:])
    for words in expect.says:
        assert words in seen, (words, seen[-3000:])
    for words in expect.never:
        assert words not in seen, (words, seen[-3000:])
    if surface == "gateway":
        # A refusal is an expected outcome: never an error line (with a traceback) for the operator.
        assert "Error calling tool" not in seen and "Traceback" not in seen, seen[-3000:]
        if "--call" in case.user_args:  # the proxy answers as the direct call does
            direct = [line.split(":", 1)[1] for line in seen.splitlines() if line.startswith("call ")]
            proxied = [line.split(":", 1)[1] for line in seen.splitlines() if line.startswith("proxy call ")]
            assert direct and direct == proxied, seen[-3000:]
    assert not control_characters(run.out) and not control_characters(run.err)
    assert run.cpu < CPU_S, run.cpu
    assert run.wall < HANG_S, run.wall
    assert run.peak_mb < budgets_mb[surface], (run.peak_mb, budgets_mb[surface])


def test_every_case_is_on_at_least_one_surface_and_the_matrix_is_whole() -> None:
    """The matrix as the issue lists it: each case names its surfaces; the library and the gateway
    meet every case that reaches them (a case left out of one says why in its note)."""
    assert all(case.surfaces for case in CASES)
    for case in CASES:
        missing = {"review", "library", "gateway"} - set(case.surfaces)
        assert not missing or case.note, (case.name, missing)
