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
``{prefix}:init:{namespace}``       the namespace's initialisation marker (when, in µs): the     never
                                    switched-off set is trusted only while it exists
``{prefix}:audit``                  stream of audit events, capped with ``XADD MAXLEN ~ N``      capped
==================================  ===========================================================  ==========

(*) A generation must never repeat: a cache keyed by it would otherwise serve an older catalog.
``bump`` sets the generation to ``max(generation + 1, server time in µs)``, so even after Redis loses
its data (a restart without persistence) the next generation is larger than any issued before — as long
as the Redis host's clock does not go back.

A Redis that restarts without persistence loses the initialisation marker with everything else, so the
empty switched-off set it would report is never believed: reads raise
:class:`~agent_connector_sdk.state._base.StateNotInitialized` until an operator initialises the
namespace again (``agent-connector state init``; docs/deploy.md, "Recovering a store that lost its data").

Atomicity: a rate-limit window is checked and charged by one Lua script using the Redis server's clock
(replica clocks never disagree); switching a tool and bumping its namespace is one script; reading the
generation with the switched-off set (and the marker) is one script; initialising is one script. Every
failure to reach Redis (refused, reset, timeout) becomes
:class:`~agent_connector_sdk.state._base.StateUnavailable`: rate limiters therefore refuse, never admit
unlimited.

Outage latency: connect and operation timeouts are short (default 0.5 s), a broken pooled connection
is retried once (a timeout is not), and after any failure a *circuit breaker* answers
``StateUnavailable`` at once for ``outage_retry_seconds`` (default 0.5 s) without touching the
network. So a hung or unreachable Redis costs one request per backend per retry window at most one
timeout; every other request in the window fails over in microseconds.

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
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import redis.asyncio as redis_asyncio
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError

from agent_connector_sdk.state._base import (
    MAX_DISABLED_TOOLS,
    StateConfigError,
    StateNotInitialized,
    StateUnavailable,
    validate_namespace,
    validate_tool_name,
)

__all__ = [
    "DEFAULT_AUDIT_MAXLEN",
    "DEFAULT_OUTAGE_RETRY_SECONDS",
    "DEFAULT_PREFIX",
    "DEFAULT_TIMEOUT_SECONDS",
    "RedisAuditSink",
    "RedisCatalogSignals",
    "RedisRateLimiter",
    "RedisStateBackend",
]

# Named as before the file moved: operators filter logs on this name.
logger = logging.getLogger("agent_connector_sdk.state.redis_backend")

DEFAULT_PREFIX: Final = "agent-connector"
DEFAULT_AUDIT_MAXLEN: Final = 10_000
"""Approximate cap on the shared audit stream's length (``XADD MAXLEN ~``)."""
DEFAULT_TIMEOUT_SECONDS: Final = 0.5
"""Connect and operation timeout of every Redis call (Redis answers in well under a millisecond)."""
DEFAULT_OUTAGE_RETRY_SECONDS: Final = 0.5
"""How long the circuit breaker answers ``StateUnavailable`` at once after a failure (module doc)."""

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
_NOT_INITIALIZED: Final = "state_not_initialized"
_REQUIRE_MARKER_LUA: Final = f"""
if redis.call('EXISTS', KEYS[3]) == 0 then
  return redis.error_reply('{_NOT_INITIALIZED}')
end
"""
# KEYS[1] generation, KEYS[2] switched-off set, KEYS[3] marker; ARGV: name, "1" enable / "0" disable, limit.
_SET_ENABLED_LUA: Final = (
    _GENERATION_LUA
    + _REQUIRE_MARKER_LUA
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
_DISABLED_LUA: Final = (
    _GENERATION_LUA + _REQUIRE_MARKER_LUA + "return {current(KEYS[1]), redis.call('SMEMBERS', KEYS[2])}\n"
)
# KEYS as above; ARGV: "1" replace / "0" refuse an initialised namespace, then the names to keep off.
_INITIALIZE_LUA: Final = (
    _GENERATION_LUA
    + """
if ARGV[1] ~= '1' and redis.call('EXISTS', KEYS[3]) == 1 then
  return redis.error_reply('already_initialized')
end
redis.call('DEL', KEYS[2])
for i = 2, #ARGV do
  redis.call('SADD', KEYS[2], ARGV[i])
end
redis.call('SET', KEYS[3], now_us())
return bump(KEYS[1])
"""
)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class _Breaker:
    """After a failure to reach the store, refuse at once for ``retry_seconds`` (module doc)."""

    def __init__(self, retry_seconds: float) -> None:
        self.retry_seconds = retry_seconds
        self._open_until = 0.0

    @property
    def is_open(self) -> bool:
        return time.monotonic() < self._open_until

    async def call(self, operation: str, call: Callable[[], Awaitable[Any]]) -> Any:
        """``await call()``, or :class:`StateUnavailable` (at once while open; after a store error)."""
        if self.is_open:
            raise StateUnavailable(operation)
        try:
            return await call()
        except ResponseError as error:
            if _script_refusal(error) is not None:
                raise  # the script's own answer: the store is reachable
            self._open_until = time.monotonic() + self.retry_seconds
            raise StateUnavailable(operation) from error
        except _STORE_ERRORS as error:
            self._open_until = time.monotonic() + self.retry_seconds
            raise StateUnavailable(operation) from error


_SCRIPT_REFUSALS: Final = (_NOT_INITIALIZED, "already_initialized", "too_many_disabled")


def _script_refusal(error: ResponseError) -> str | None:
    """Which of our scripts' own refusals ``error`` is (``None``: a real store error)."""
    text = str(error)
    return next((code for code in _SCRIPT_REFUSALS if code in text), None)


class RedisRateLimiter:
    """:class:`AsyncRateLimiter`: at most ``max_requests`` per ``window_seconds`` per caller, all replicas."""

    def __init__(
        self,
        client: redis_asyncio.Redis,
        key_prefix: str,
        *,
        max_requests: int,
        window_seconds: float,
        breaker: _Breaker | None = None,
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
        self._breaker = breaker if breaker is not None else _Breaker(0.0)

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
        verdict = await self._breaker.call(
            "rate limit check",
            lambda: self._script(
                keys=[self.key_for(key)], args=[self._window_us, self._max_requests, member]
            ),
        )
        wait = int(verdict)
        return None if wait < 0 else wait


class RedisCatalogSignals:
    """:class:`CatalogSignals` in Redis: generations and switched-off tools shared by every replica."""

    def __init__(self, client: redis_asyncio.Redis, prefix: str, *, breaker: _Breaker | None = None) -> None:
        self._prefix = prefix
        self._breaker = breaker if breaker is not None else _Breaker(0.0)
        self._current = client.register_script(_CURRENT_LUA)
        self._bump = client.register_script(_BUMP_LUA)
        self._set_enabled = client.register_script(_SET_ENABLED_LUA)
        self._disabled = client.register_script(_DISABLED_LUA)
        self._initialize = client.register_script(_INITIALIZE_LUA)

    def _keys(self, namespace: str) -> list[str]:
        validate_namespace(namespace)
        return [
            f"{self._prefix}:gen:{namespace}",
            f"{self._prefix}:off:{namespace}",
            f"{self._prefix}:init:{namespace}",
        ]

    async def _run(self, operation: str, namespace: str, call: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return await self._breaker.call(operation, call)
        except ResponseError as refusal:
            code = _script_refusal(refusal)
            if code == _NOT_INITIALIZED:
                raise StateNotInitialized(namespace) from None
            if code == "already_initialized":
                raise StateConfigError(
                    "already_initialized",
                    f"catalog namespace {namespace} is already initialised (replace it explicitly)",
                ) from None
            raise StateConfigError(
                "too_many_disabled", f"at most {MAX_DISABLED_TOOLS} tools may be switched off"
            ) from None

    async def current(self, namespace: str) -> int:
        keys = self._keys(namespace)
        return int(
            _text(await self._run("catalog generation read", namespace, lambda: self._current(keys=keys[:1])))
        )

    async def bump(self, namespace: str) -> int:
        keys = self._keys(namespace)
        return int(
            _text(await self._run("catalog generation bump", namespace, lambda: self._bump(keys=keys[:1])))
        )

    async def disabled_tools(self, namespace: str) -> tuple[int, frozenset[str]]:
        keys = self._keys(namespace)
        generation, members = await self._run("catalog read", namespace, lambda: self._disabled(keys=keys))
        return int(_text(generation)), frozenset(_text(member) for member in members)

    async def set_tool_enabled(self, namespace: str, name: str, enabled: bool) -> int:
        keys = self._keys(namespace)
        validate_tool_name(name)
        args = [name, "1" if enabled else "0", MAX_DISABLED_TOOLS]
        return int(
            _text(
                await self._run("catalog update", namespace, lambda: self._set_enabled(keys=keys, args=args))
            )
        )

    async def initialize(self, namespace: str, disabled: frozenset[str], *, replace: bool = False) -> int:
        keys = self._keys(namespace)
        names = sorted({validate_tool_name(name) for name in disabled})
        if len(names) > MAX_DISABLED_TOOLS:
            raise StateConfigError(
                "too_many_disabled", f"at most {MAX_DISABLED_TOOLS} tools may be switched off"
            )
        args = ["1" if replace else "0", *names]
        return int(
            _text(
                await self._run(
                    "catalog initialisation", namespace, lambda: self._initialize(keys=keys, args=args)
                )
            )
        )


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
    """The Redis :class:`StateBackend`. Build it with :meth:`from_url` (``redis://``, ``rediss://``,
    ``unix://``)."""

    kind = "redis"

    def __init__(
        self,
        client: redis_asyncio.Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        audit_maxlen: int = DEFAULT_AUDIT_MAXLEN,
        outage_retry_seconds: float = DEFAULT_OUTAGE_RETRY_SECONDS,
    ) -> None:
        validate_namespace(prefix)
        self.client = client
        self.prefix = prefix
        self.breaker = _Breaker(outage_retry_seconds)
        self._catalog = RedisCatalogSignals(client, prefix, breaker=self.breaker)
        self._audit = RedisAuditSink(client, f"{prefix}:audit", maxlen=audit_maxlen)
        self._limiters: dict[str, RedisRateLimiter] = {}

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        audit_maxlen: int = DEFAULT_AUDIT_MAXLEN,
        outage_retry_seconds: float = DEFAULT_OUTAGE_RETRY_SECONDS,
    ) -> RedisStateBackend:
        """Connect lazily (nothing is sent until the first request) with short timeouts (module doc).

        One retry absorbs a pooled connection that Redis closed (e.g. after a restart); a timeout is not
        retried, so a hung Redis costs one ``timeout_seconds`` per retry window, not two.
        """
        try:
            client = redis_asyncio.Redis.from_url(
                url,
                socket_timeout=timeout_seconds,
                socket_connect_timeout=timeout_seconds,
                retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
                health_check_interval=0,
            )
        except ValueError as error:
            raise StateConfigError("invalid_state_url", "not a usable Redis URL") from error
        return cls(
            client, prefix=prefix, audit_maxlen=audit_maxlen, outage_retry_seconds=outage_retry_seconds
        )

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
            self.client,
            f"{self.prefix}:rl:{name}",
            max_requests=max_requests,
            window_seconds=window_seconds,
            breaker=self.breaker,
        )
        self._limiters[name] = limiter
        return limiter

    async def ping(self) -> bool:
        """Whether Redis answers now (``False`` at once while the breaker is open)."""
        try:
            return bool(await self.breaker.call("ping", self.client.ping))
        except StateUnavailable:
            return False

    async def aclose(self) -> None:
        await self._audit.aclose()
        with contextlib.suppress(*_STORE_ERRORS):
            await self.client.aclose()
