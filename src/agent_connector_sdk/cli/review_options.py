"""``review``'s command line into its one option type: :func:`review_options` checks every argument
and reads every file the options name (each refusal one :class:`CliError` line, exit 2), in a fixed
order, before anything connects or the host, server and report stacks load, and builds the one frozen
:class:`~agent_connector_sdk.review.options.ReviewOptions` that goes down to the host as it is.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agent_connector_sdk.cli._options import ReviewArguments
from agent_connector_sdk.cli.errors import CliError
from agent_connector_sdk.cli.operator_files import read_operator_file, require_readable_file

if TYPE_CHECKING:
    from agent_connector_sdk.core.contracts import Profile, SourcePins
    from agent_connector_sdk.review.options import ReviewOptions, ServerAddress

__all__ = ["review_options"]


def review_options(target: Sequence[str], given: ReviewArguments) -> ReviewOptions:
    """Every argument and file error of ``review``, each one line (exit 2), in this order; then the
    options, built once."""
    if given.timeout <= 0:
        raise CliError("--timeout must be a positive number of seconds")
    if not given.deadline > 0:  # also refuses NaN
        raise CliError("--deadline must be a positive number of seconds")
    stdio, config = given.stdio is not None, given.mcp_config is not None
    if sum([bool(target), stdio, bool(given.descriptor), given.demo, config]) != 1:
        raise CliError(
            "review needs exactly one of: URL, --stdio COMMAND (or -- COMMAND), --mcp-config FILE, "
            "--descriptor FILE, --demo"
        )
    _check_config_options(given.mcp_config, given.server, given.concurrency, call=given.call, pin=given.pin)
    if given.emit_tests is not None and not given.descriptor:
        raise CliError("--emit-tests needs --descriptor FILE")
    if given.arguments is not None and given.call is None:
        raise CliError("--arguments needs --call NAME")
    arguments = _parse_arguments(given.arguments)
    stdio_target = given.stdio is not None or _is_command(target) or given.mcp_config is not None
    server_env = _server_environment(given.env, given.env_pass, stdio_target=stdio_target)
    # The host profile: spec MUST rules reject in both; project rules (the README's rule table) are
    # findings by default and rejections with --strict.
    profile: Profile = "strict" if given.strict else "default"
    headers = _parse_headers(given.header or [])
    if (given.approve or given.fail_on_any_drift or given.allow_compatible) and given.lock is None:
        raise CliError("--approve, --fail-on-any-drift and --allow-compatible need --lock FILE")
    if given.fail_on_any_drift and given.allow_compatible:
        raise CliError("--fail-on-any-drift and --allow-compatible ask for opposite gates: choose one")
    if given.approve and given.write_lock is not None:
        raise CliError("--approve updates the --lock file: it does not go with --write-lock")
    if (given.approve or given.fail_on_any_drift) and given.mcp_config is not None:
        raise CliError("--approve and --fail-on-any-drift review one server: not with --mcp-config")
    lock = _read_lock(given.lock) if given.lock is not None else None
    # Read and parsed now: a bad pin file is refused before anything connects (it loads the contract
    # models, not the MCP stack).
    pins = _read_pins(given.pins) if given.pins is not None else None
    # The server's address is checked before the host stack loads: a mistyped URL answers at once.
    server = _reviewed_server(target, given.stdio) if target or given.stdio is not None else None
    from agent_connector_sdk.review.options import ReviewOptions

    return ReviewOptions(
        profile=profile,
        timeout=given.timeout,
        deadline=given.deadline,
        headers=headers,
        token=given.token,
        search_patterns=tuple(given.search or (".*",)),
        call=given.call,
        arguments=arguments,
        source_pins=pins,
        env=server_env,
        server=server,
        descriptor_files=tuple(given.descriptor or ()),
        demo=given.demo,
        mcp_config=given.mcp_config,
        servers=tuple(given.server or ()),
        concurrency=given.concurrency,
        json_output=given.json_output,
        descriptors=given.descriptors,
        # Descriptor files disclose nothing: there is no source to pin.
        pin=None if given.descriptor else given.pin,
        emit_tests=given.emit_tests,
        lock=lock,
        lock_file=given.lock,
        write_lock=given.write_lock,
        sarif=given.sarif,
        approve=tuple(given.approve or ()),
        fail_on_any_drift=given.fail_on_any_drift,
        allow_compatible=given.allow_compatible,
    )


def _parse_headers(values: Sequence[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition(":")
        if not sep or not name.strip() or any(c in name for c in " \t\r\n"):
            raise CliError(f"--header must look like 'Name: value' (got {json.dumps(value)[:60]})")
        headers[name.strip()] = text.strip()
    return headers


def _parse_arguments(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise CliError(f"--arguments is not valid JSON (column {error.colno})") from None
    if not isinstance(value, dict):
        raise CliError('--arguments must be a JSON object, e.g. \'{"query": "audit"}\'')
    return value


def _reviewed_server(target: Sequence[str], stdio: str | None) -> ServerAddress:
    """The server to review: ``--stdio``, a URL, or the words after ``--`` as a stdio command."""
    if stdio is not None:
        return _address("stdio", stdio)
    if len(target) == 1 and "://" in target[0]:
        return _http_server(target[0])
    if len(target) == 1 and _looks_like_an_address(target[0]):
        # `localhost:8000`, `127.0.0.1:8000/mcp` or `example.com`: a server address without its
        # scheme (the parser swallows `--`, so a bare program name is run as the stdio command it
        # most likely is).
        path = "" if "/" in target[0] else "/mcp"
        raise CliError(
            f"{json.dumps(target[0])[:80]} is neither a URL nor a program on PATH; "
            f"for an HTTP server write http://{target[0]}{path}"
        )
    import shlex

    return _address("stdio", shlex.join(target))


def _address(kind: Literal["http", "stdio"], address: str) -> ServerAddress:
    # Imported once the address is known to be usable: a refused one answers with the parser's modules.
    from agent_connector_sdk.review.options import ServerAddress

    return ServerAddress(kind, address)


_SCHEMELESS_ADDRESS = re.compile(
    r"(localhost|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?(/\S*)?"
)


_SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".pl", ".jar", ".exe")


def _looks_like_an_address(word: str) -> bool:
    """``host[:port][/path]`` that is not a program on PATH nor a file here (``python``, ``./srv.py``,
    ``server.py`` stay stdio commands)."""
    if word.startswith(("http:", "https:")) or _SCHEMELESS_ADDRESS.fullmatch(word) is None:
        return False
    if word.endswith(_SCRIPT_SUFFIXES):
        return False  # `server.py`: a script named without its interpreter, not a host
    host = word.split("/", 1)[0]
    has_port = re.search(r":\d{1,5}$", host) is not None
    if "/" in word and not has_port and not host.startswith("localhost"):
        return False  # `dir.v2/server`: a relative path to a program, most likely
    return shutil.which(word) is None and not Path(word).exists()


def _check_config_options(
    config: Path | None, servers: list[str] | None, concurrency: int, *, call: str | None, pin: Path | None
) -> None:
    if config is None:
        if servers:
            raise CliError("--server picks servers of --mcp-config FILE")
        return
    if not 1 <= concurrency <= 16:
        raise CliError(f"--concurrency must be between 1 and 16 (got {concurrency})")
    if call is not None:
        raise CliError("--call names one tool of one server: review that server by its URL or command")
    if pin is not None:
        raise CliError("--pin writes one server's pins: review that server by its URL or command")
    # Read now: a missing or malformed file answers before the host stack loads.
    require_readable_file(config)


def _is_command(target: Sequence[str]) -> bool:
    return bool(target) and not (len(target) == 1 and "://" in target[0])


def _server_environment(
    pairs: list[str] | None, passed: list[str] | None, *, stdio_target: bool
) -> dict[str, str]:
    if not pairs and not passed:
        return {}
    if not stdio_target:
        raise CliError("--env and --env-pass set a stdio server's environment: give its command after --")
    from agent_connector_sdk.review.stdio_server import server_environment

    return server_environment(pairs or (), passed or ())


def _http_server(url: str) -> ServerAddress:
    from agent_connector_sdk.mcp import check_url

    wrong = check_url(url)
    if wrong is None:
        return _address("http", url)
    if wrong == "not an http(s) URL":
        raise CliError(
            f"{json.dumps(url)[:80]} is not an http(s) URL; for a local server use --stdio 'COMMAND' "
            "or `review -- COMMAND ARGS`"
        )
    raise CliError(f"{json.dumps(url)[:80]} is {wrong}")


def _read_lock(path: Path) -> Any:
    from agent_connector_sdk.cli.lockfile import read_lock

    return read_lock(path)


def _read_pins(path: Path) -> SourcePins:
    """A pin file written by ``--pin`` (the ``SourcePins`` format); unreadable or malformed: exit 2."""
    from agent_connector_sdk.core.contracts import SourcePins

    return read_operator_file(path, "pin file", SourcePins.from_json)
