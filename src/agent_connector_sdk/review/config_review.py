"""Every server of an MCP client's configuration reviewed at once (the I/O-driving part).

Each server gets its own review (:func:`~agent_connector_sdk.review.live.review_server`: its own
session, ``--timeout`` and ``--deadline``), at most ``concurrency`` of them at a time. A server that
cannot be reviewed (its entry is unusable, it is down, it dies) is its row with the one-line reason;
the others go on. The rows make one :class:`~agent_connector_sdk.review.config_report.ConfigReviewReport`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import anyio

from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.review.config_report import ServerRow
from agent_connector_sdk.review.configured import ConfiguredServer
from agent_connector_sdk.review.live import ReviewOptions, review_server
from agent_connector_sdk.review.report import Target
from agent_connector_sdk.sanitize import sanitize_text

__all__ = ["review_configured"]


def review_configured(
    servers: Sequence[ConfiguredServer],
    options: ReviewOptions,
    *,
    extra_env: Mapping[str, str],
    concurrency: int,
) -> list[ServerRow]:
    """Review every server (at most ``concurrency`` at once); rows in the configuration's order."""
    return anyio.run(_review_all, list(servers), options, dict(extra_env), concurrency)


async def _review_all(
    servers: list[ConfiguredServer],
    options: ReviewOptions,
    extra_env: dict[str, str],
    concurrency: int,
) -> list[ServerRow]:
    rows: list[ServerRow | None] = [None] * len(servers)
    limit = anyio.CapacityLimiter(concurrency)

    async def one(index: int, server: ConfiguredServer) -> None:
        async with limit:
            rows[index] = await _review_one(server, options, extra_env)

    async with anyio.create_task_group() as group:
        for index, server in enumerate(servers):
            group.start_soon(one, index, server)
    return [row for row in rows if row is not None]


async def _review_one(
    server: ConfiguredServer, options: ReviewOptions, extra_env: dict[str, str]
) -> ServerRow:
    target = Target(kind=server.kind, address=server.shown)
    if server.error is not None:
        return ServerRow(name=server.name, target=target, status="failed", error=server.error)
    if server.kind == "stdio":
        own = replace(
            options,
            command=server.command,
            env={**server.env, **extra_env},
            cwd=server.cwd,
        )
    else:
        headers = {**server.headers, **options.headers}
        own = replace(options, url=server.url, headers=headers, token=options.token or server.token)
    try:
        report = await review_server(target, own)
    except (AgentConnectorError, OSError) as failure:
        words = failure.message if isinstance(failure, AgentConnectorError) else type(failure).__name__
        return ServerRow(name=server.name, target=target, status="failed", error=sanitize_text(words, 1_000))
    return ServerRow(name=server.name, target=target, status="reviewed", report=report)
