"""The Redis state backend: what replicas behind a load balancer share.

Needs the ``redis`` package: the project's ``[redis]`` extra (``pip install '/path/to/checkout[redis]'``)
or ``pip install 'redis>=5'``.

Keys (``prefix`` defaults to ``agent-connector``; nothing else is written):

==================================  ===========================================================  ==========
key                                 holds                                                        expires
==================================  ===========================================================  ==========
``{prefix}:rl:{limiter}:{sha256}``  sorted set: one member per admitted request, scored by the   after one
                                    Redis server clock (µs); ``sha256`` of the caller key, so    window
                                    identities never appear in key names
``{prefix}:gen:{namespace}``        the namespace's catalog generation                           never (*)
``{prefix}:off:{namespace}``        set of switched-off tool names                               never
``{prefix}:audit``                  stream of audit events, capped with ``XADD MAXLEN ~ N``      capped
==================================  ===========================================================  ==========

(*) A generation must never repeat: a cache keyed by it would otherwise serve an older catalog.
``bump`` sets the generation to ``max(generation + 1, server time in µs)``, so even after Redis loses
its data (a restart without persistence) the next generation is larger than any issued before — as long
as the Redis host's clock does not go back.

Atomicity: a rate-limit window is checked and charged by one Lua script using the Redis server's clock
(replica clocks never disagree); switching a tool and bumping its namespace is one script; reading the
generation with the switched-off set is one script. Every failure to reach Redis (refused, reset,
timeout) becomes :class:`~agent_connector_sdk.state.base.StateUnavailable`: rate limiters therefore
refuse, never admit unlimited. Timeouts are short (default 0.5 s) so an outage costs milliseconds, not
a hung request.

The audit sink's ``emit`` is synchronous (the gates call it inline): events go into a bounded buffer
that a background task drains with pipelined ``XADD``; while Redis is away the oldest buffered events
are dropped and counted (``dropped``), never accumulated without bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
import time
from collections import deque
from collections.abc import Mapping
from typing import Any, Final

import redis.asyncio as redis_asyncio
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from agent_connector_sdk.state.base import (
    MAX_DISABLED_TOOLS,
    StateConfigError,
    StateUnavailable,
    validate_namespace,
    validate_tool_name,
)

__all__ = [
    "DEFAULT_AUDIT_MAXLEN",
    "DEFAULT_PREFIX",
    "RedisAuditSink",
    "RedisCatalogSignals",
    "RedisRateLimiter",
    "RedisStateBackend",
]

logger = logging.getLogger(__name__)

DEFAULT_PREFIX: Final = "agent-connector"
DEFAULT_AUDIT_MAXLEN: Final = 10_000
"""Approximate cap on the shared audit stream's length (``XADD MAXLEN ~``)."""

# Errors that mean "the store is not reachable or answered garbage": all fail closed as StateUnavailable.
_STORE_ERRORS: Final = (RedisError, OSError, TimeoutError)

# Sliding-window log, the same rule as contracts.completion.RateLimiter, on the Redis server's clock.
# KEYS[1] window; ARGV: window (µs), limit, unique member. Returns -1 (admitted) or ms to wait.
_RATE_LIMIT_LUA: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
  return -1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, math.ceil((tonumber(oldest[2]) + window - now) / 1000))
"""

# Generation helpers shared by the scripts below: the server time in µs as an exact decimal string
# (string concatenation, because Lua numbers are doubles), and "bump to max(g + 1, now)".
_GENERATION_LUA: Final = """
local function now_us()
  local t = redis.call('TIME')
  return t[1] .. string.format('%06d', tonumber(t[2]))
end
local function current(key)
  local g = redis.call('GET', key)
  if g then return g end
  redis.call('SET', key, now_us(), 'NX')
  return redis.call('GET', key)
end
local function bump(key)
  local now = now_us()
  local g = redis.call('INCR', key)
  if tonumber(now) > g then
    redis.call('SET', key, now)
    return now
  end
  return tostring(g)
end
"""
_CURRENT_LUA: Final = _GENERATION_LUA + "return current(KEYS[1])\n"
_BUMP_LUA: Final = _GENERATION_LUA + "return bump(KEYS[1])\n"
# KEYS[1] generation, KEYS[2] switched-off set; ARGV: name, "1" enable / "0" disable, limit.
_SET_ENABLED_LUA: Final = (
    _GENERATION_LUA
    + """
if ARGV[2] == '1' then
  redis.call('SREM', KEYS[2], ARGV[1])
else
  local full = redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[3])
  if full and redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 0 then
    return redis.error_reply('too_many_disabled')
  end
  redis.call('SADD', KEYS[2], ARGV[1])
end
return bump(KEYS[1])
"""
)
_DISABLED_LUA: Final = _GENERATION_LUA + "return {current(KEYS[1]), redis.call('SMEMBERS', KEYS[2])}\n"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisRateLimiter:
    """:class:`AsyncRateLimiter`: at most ``max_requests`` per ``window_seconds`` per caller, all replicas."""

    def __init__(
        self, client: redis_asyncio.Redis, key_prefix: str, *, max_requests: int, window_seconds: float
    ) -> None:
        if isinstance(max_requests, bool) or not isinstance(max_requests, int) or max_requests < 1:
            raise ValueError("max_requests must be a positive integer")
        if isinstance(window_seconds, bool) or not 0 < float(window_seconds) < 10**9:
            raise ValueError("window_seconds must be a positive finite number")
        self._max_requests = max_requests
        self._window_seconds = float(window_seconds)
        self._window_us = max(1, round(self._window_seconds * 1_000_000))
        self._key_prefix = key_prefix
        self._script = client.register_script(_RATE_LIMIT_LUA)

    @property
    def max_requests(self) -> int:
        return self._max_requests

    @property
    def window_seconds(self) -> float:
        return self._window_seconds

    def key_for(self, caller: str) -> str:
        """The Redis key of ``caller``'s window (a digest: caller identities never appear in key names)."""
        return f"{self._key_prefix}:{hashlib.sha256(caller.encode('utf-8', 'surrogatepass')).hexdigest()}"

    async def acquire(self, key: str) -> int | None:
        member = secrets.token_hex(8)
        try:
            verdict = await self._script(
                keys=[self.key_for(key)], args=[self._window_us, self._max_requests, member]
            )
        except _STORE_ERRORS as error:
            raise StateUnavailable("rate limit check") from error
        wait = int(verdict)
        return None if wait < 0 else wait


class RedisCatalogSignals:
    """:class:`CatalogSignals` in Redis: generations and switched-off tools shared by every replica."""

    def __init__(self, client: redis_asyncio.Redis, prefix: str) -> None:
        self._prefix = prefix
        self._current = client.register_script(_CURRENT_LUA)
        self._bump = client.register_script(_BUMP_LUA)
        self._set_enabled = client.register_script(_SET_ENABLED_LUA)
        self._disabled = client.register_script(_DISABLED_LUA)

    def _keys(self, namespace: str) -> list[str]:
        validate_namespace(namespace)
        return [f"{self._prefix}:gen:{namespace}", f"{self._prefix}:off:{namespace}"]

    async def current(self, namespace: str) -> int:
        keys = self._keys(namespace)
        try:
            return int(_text(await self._current(keys=keys[:1])))
        except _STORE_ERRORS as error:
            raise StateUnavailable("catalog generation read") from error

    async def bump(self, namespace: str) -> int:
        keys = self._keys(namespace)
        try:
            return int(_text(await self._bump(keys=keys[:1])))
        except _STORE_ERRORS as error:
            raise StateUnavailable("catalog generation bump") from error

    async def disabled_tools(self, namespace: str) -> tuple[int, frozenset[str]]:
        keys = self._keys(namespace)
        try:
            generation, members = await self._disabled(keys=keys)
        except _STORE_ERRORS as error:
            raise StateUnavailable("catalog read") from error
        return int(_text(generation)), frozenset(_text(member) for member in members)

    async def set_tool_enabled(self, namespace: str, name: str, enabled: bool) -> int:
        keys = self._keys(namespace)
        validate_tool_name(name)
        try:
            generation = await self._set_enabled(
                keys=keys, args=[name, "1" if enabled else "0", MAX_DISABLED_TOOLS]
            )
        except RedisError as error:
            if "too_many_disabled" in str(error):
                raise StateConfigError(
                    "too_many_disabled", f"at most {MAX_DISABLED_TOOLS} tools may be switched off"
                ) from None
            raise StateUnavailable("catalog update") from error
        except (OSError, TimeoutError) as error:
            raise StateUnavailable("catalog update") from error
        return int(_text(generation))


class RedisAuditSink:
    """:class:`AuditSink` writing to a capped Redis stream (``XADD MAXLEN ~ maxlen``), never blocking.

    ``emit`` serializes the event (sorted-key JSON in the stream entry's ``event`` field) into a bounded
    buffer of ``buffer_size`` events and makes sure a drain task runs on the current event loop; the
    task sends batches with one pipelined round trip. When Redis cannot be reached the events stay
    buffered, the drain pauses for ``retry_seconds``, and once the buffer is full the oldest events are
    dropped and counted in ``dropped`` (one warning per outage, no event content in it).
    """

    def __init__(
        self,
        client: redis_asyncio.Redis,
        key: str,
        *,
        maxlen: int = DEFAULT_AUDIT_MAXLEN,
        buffer_size: int = 1_000,
        batch_size: int = 100,
        retry_seconds: float = 1.0,
    ) -> None:
        if maxlen < 1 or buffer_size < 1 or batch_size < 1:
            raise ValueError("maxlen, buffer_size and batch_size must be positive")
        self.key = key
        self.maxlen = maxlen
        self.buffer_size = buffer_size
        self.batch_size = batch_size
        self.retry_seconds = retry_seconds
        self.dropped = 0
        self.sent = 0
        self._client = client
        self._buffer: deque[tuple[int, str]] = deque()
        self._sequence = 0
        self._task: asyncio.Task[None] | None = None
        self._retry_at = 0.0
        self._warned = False

    def __len__(self) -> int:
        """Events buffered and not yet written."""
        return len(self._buffer)

    def __call__(self, event: Mapping[str, Any], /) -> None:
        payload = json.dumps(dict(event), sort_keys=True, ensure_ascii=True, default=str)
        if len(self._buffer) >= self.buffer_size:
            self._buffer.popleft()
            self.dropped += 1
            if not self._warned:
                self._warned = True
                logger.warning("audit stream unreachable; dropping the oldest buffered audit events")
        self._sequence += 1
        self._buffer.append((self._sequence, payload))
        self._schedule()

    def _schedule(self) -> None:
        if self._task is not None and not self._task.done():
            return
        if time.monotonic() < self._retry_at:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (sync caller): the next emit or flush() inside a loop drains the buffer
        self._task = loop.create_task(self._drain())

    async def _drain(self) -> None:
        while self._buffer:
            batch = list(self._buffer)[: self.batch_size]
            try:
                async with self._client.pipeline(transaction=False) as pipe:
                    for _, payload in batch:
                        pipe.xadd(self.key, {"event": payload}, maxlen=self.maxlen, approximate=True)
                    await pipe.execute()
            except _STORE_ERRORS:
                self._retry_at = time.monotonic() + self.retry_seconds
                return
            last = batch[-1][0]
            # Sequence numbers, not positions: emits (and drops) may have happened during the round trip.
            while self._buffer and self._buffer[0][0] <= last:
                self._buffer.popleft()
            self.sent += len(batch)
            self._warned = False

    async def flush(self) -> bool:
        """Write everything buffered now; ``True`` when the buffer is empty afterwards."""
        if self._task is not None and not self._task.done():
            await self._task
        self._retry_at = 0.0
        await self._drain()
        return not self._buffer

    async def aclose(self) -> None:
        """Best-effort final flush, then stop the drain task."""
        try:
            await asyncio.wait_for(self.flush(), timeout=1.0)
        except (*_STORE_ERRORS, asyncio.CancelledError):
            pass
        if self._task is not None and not self._task.done():
            self._task.cancel()


class RedisStateBackend:
    """The Redis :class:`StateBackend`. Build it with :meth:`from_url` (``redis://``, ``rediss://``, ``unix://``)."""

    kind = "redis"

    def __init__(
        self,
        client: redis_asyncio.Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        audit_maxlen: int = DEFAULT_AUDIT_MAXLEN,
    ) -> None:
        validate_namespace(prefix)
        self.client = client
        self.prefix = prefix
        self._catalog = RedisCatalogSignals(client, prefix)
        self._audit = RedisAuditSink(client, f"{prefix}:audit", maxlen=audit_maxlen)
        self._limiters: dict[str, RedisRateLimiter] = {}

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        timeout_seconds: float = 0.5,
        audit_maxlen: int = DEFAULT_AUDIT_MAXLEN,
    ) -> RedisStateBackend:
        """Connect lazily (nothing is sent until the first request) with short timeouts and one retry.

        The single retry absorbs a pooled connection that Redis closed (e.g. after a restart); a Redis
        that stays away fails the request after at most two short attempts.
        """
        try:
            client = redis_asyncio.Redis.from_url(
                url,
                socket_timeout=timeout_seconds,
                socket_connect_timeout=timeout_seconds,
                retry=Retry(NoBackoff(), 1),
                health_check_interval=0,
            )
        except ValueError as error:
            raise StateConfigError("invalid_state_url", "not a usable Redis URL") from error
        return cls(client, prefix=prefix, audit_maxlen=audit_maxlen)

    @property
    def catalog(self) -> RedisCatalogSignals:
        return self._catalog

    @property
    def audit(self) -> RedisAuditSink:
        return self._audit

    def rate_limiter(self, name: str, *, max_requests: int, window_seconds: float) -> RedisRateLimiter:
        """The limiter ``name``: every replica asking for the same name charges the same windows."""
        validate_namespace(name)
        existing = self._limiters.get(name)
        if existing is not None:
            if (existing.max_requests, existing.window_seconds) != (max_requests, float(window_seconds)):
                raise StateConfigError("invalid_namespace", f"limiter {name!r} exists with other limits")
            return existing
        limiter = RedisRateLimiter(
            self.client, f"{self.prefix}:rl:{name}", max_requests=max_requests, window_seconds=window_seconds
        )
        self._limiters[name] = limiter
        return limiter

    async def ping(self) -> bool:
        try:
            return bool(await self.client.ping())
        except _STORE_ERRORS:
            return False

    async def aclose(self) -> None:
        await self._audit.aclose()
        with contextlib.suppress(*_STORE_ERRORS):
            await self.client.aclose()
