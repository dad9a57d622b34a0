"""Verified schema disclosures shared by every replica of a gateway, in Redis (bounded, LRU).

A gateway verifies a search-first child's hidden tool by reading its disclosure and checking the bytes
against the digests the child's navigation entry states. What it verified is worth sharing: a second
replica (or the same gateway after a restart) needs no read for a contract already verified. The value
kept is the tool's *canonical schema document* (the bytes the disclosure digest ``schema_sha256`` is
computed over), under the tool's contract key. The reader never trusts it: it re-computes the digests
of what it reads and takes the value only when they equal what the child's entry states now, so a
corrupt, truncated or foreign value (another tool's, another gateway's, an attacker's with write access
to Redis) is a miss, read again from the child.

Keys (``prefix`` is the state backend's, ``ns`` the gateway's namespace: a digest of its configuration):

=======================================  ================================================  ==========
key                                      holds                                             expires
=======================================  ================================================  ==========
``{prefix}:vd:{ns}:e:{sha256}``          one schema document; ``sha256`` of child name     ``ttl``
                                         and contract key
``{prefix}:vd:{ns}:lru``                 sorted set: every entry, scored by last use (µs)  never
``{prefix}:vd:{ns}:size``                hash: every entry's size in bytes                 never
``{prefix}:vd:{ns}:bytes``               the sum of those sizes                            never
=======================================  ================================================  ==========

Bounded: at most ``max_entries`` entries and ``max_bytes`` bytes per namespace (defaults 50,000 and
128 MiB), least recently used evicted first by the same script that writes (atomic: replicas writing at
once cannot overshoot), each entry at most ``max_value_bytes`` (1 MiB) and expiring ``ttl_seconds``
(7 days) after its last write. Failure to reach Redis is a miss (the child is read), never an error:
the shared tier only saves work.
"""

from __future__ import annotations

import hashlib
from typing import Final

import redis.asyncio as redis_asyncio

from agent_connector_sdk.state._base import StateUnavailable, validate_namespace
from agent_connector_sdk.state._redis_backend import RedisStateBackend

__all__ = [
    "DEFAULT_SHARED_BYTES",
    "DEFAULT_SHARED_ENTRIES",
    "DEFAULT_SHARED_TTL_SECONDS",
    "DEFAULT_SHARED_VALUE_BYTES",
    "RedisDisclosureStore",
]

DEFAULT_SHARED_ENTRIES: Final = 50_000
"""Schema documents kept per gateway namespace in Redis (a 12,000-tool child fits four times)."""
DEFAULT_SHARED_BYTES: Final = 128 * 1024 * 1024
"""Bytes of schema documents kept per gateway namespace in Redis: 128 MiB."""
DEFAULT_SHARED_VALUE_BYTES: Final = 1024 * 1024
"""A larger document is not shared (it is verified again by each replica)."""
DEFAULT_SHARED_TTL_SECONDS: Final = 7 * 24 * 3600
"""An entry not written again for this long expires (its index slot is evicted in LRU order)."""

# KEYS[1] lru, KEYS[2] sizes, KEYS[3] byte total; ARGV: entry key prefix, member, value, max entries,
# max bytes, ttl seconds. Writes, then evicts least recently used until both bounds hold.
_PUT_LUA: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local old = redis.call('HGET', KEYS[2], ARGV[2])
if old then redis.call('DECRBY', KEYS[3], old) end
redis.call('SET', ARGV[1] .. ARGV[2], ARGV[3], 'EX', tonumber(ARGV[6]))
redis.call('HSET', KEYS[2], ARGV[2], string.len(ARGV[3]))
redis.call('INCRBY', KEYS[3], string.len(ARGV[3]))
redis.call('ZADD', KEYS[1], now, ARGV[2])
while redis.call('ZCARD', KEYS[1]) > tonumber(ARGV[4])
    or tonumber(redis.call('GET', KEYS[3]) or '0') > tonumber(ARGV[5]) do
  local victim = redis.call('ZPOPMIN', KEYS[1])
  if #victim == 0 then break end
  local size = redis.call('HGET', KEYS[2], victim[1])
  if size then
    redis.call('DECRBY', KEYS[3], size)
    redis.call('HDEL', KEYS[2], victim[1])
  end
  redis.call('DEL', ARGV[1] .. victim[1])
end
return 1
"""
# KEYS[1] lru; ARGV: entry key prefix, member. A hit is marked recently used.
_GET_LUA: Final = """
local value = redis.call('GET', ARGV[1] .. ARGV[2])
if value then
  local t = redis.call('TIME')
  redis.call('ZADD', KEYS[1], 'XX', tonumber(t[1]) * 1000000 + tonumber(t[2]), ARGV[2])
end
return value
"""


class RedisDisclosureStore:
    """The shared tier of :class:`~agent_connector_sdk.gateway._verified.VerifiedCache` (module doc).

    ``get`` and ``put`` never raise for an unreachable store: a miss, a write skipped (counted in
    ``unavailable``). They share the backend's circuit breaker, so a lost Redis costs one timeout per
    retry window."""

    def __init__(
        self,
        backend: RedisStateBackend,
        namespace: str,
        *,
        max_entries: int = DEFAULT_SHARED_ENTRIES,
        max_bytes: int = DEFAULT_SHARED_BYTES,
        max_value_bytes: int = DEFAULT_SHARED_VALUE_BYTES,
        ttl_seconds: int = DEFAULT_SHARED_TTL_SECONDS,
    ) -> None:
        validate_namespace(namespace)
        if min(max_entries, max_bytes, max_value_bytes, ttl_seconds) < 1:
            raise ValueError("bounds must be positive")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.max_value_bytes = min(max_value_bytes, max_bytes)
        self.ttl_seconds = ttl_seconds
        self.unavailable = 0
        base = f"{backend.prefix}:vd:{namespace}"
        self.keys = [f"{base}:lru", f"{base}:size", f"{base}:bytes"]
        self.entry_prefix = f"{base}:e:"
        self._breaker = backend.breaker
        client: redis_asyncio.Redis = backend.client
        self._put = client.register_script(_PUT_LUA)
        self._get = client.register_script(_GET_LUA)

    @staticmethod
    def member(child: str, key: str) -> str:
        """The entry's name in the store: a digest, so child names never appear in key names."""
        return hashlib.sha256(f"{child}\0{key}".encode("utf-8", "surrogatepass")).hexdigest()

    async def get(self, child: str, key: str) -> bytes | None:
        args = [self.entry_prefix, self.member(child, key)]
        try:
            value = await self._breaker.call(
                "verified disclosure read", lambda: self._get(keys=self.keys[:1], args=args)
            )
        except StateUnavailable:
            self.unavailable += 1
            return None
        return value if isinstance(value, bytes) and len(value) <= self.max_value_bytes else None

    async def put(self, child: str, key: str, document: bytes) -> None:
        if len(document) > self.max_value_bytes:
            return
        args: list[bytes | str | int] = [
            self.entry_prefix,
            self.member(child, key),
            document,
            self.max_entries,
            self.max_bytes,
            self.ttl_seconds,
        ]
        try:
            await self._breaker.call(
                "verified disclosure write", lambda: self._put(keys=self.keys, args=args)
            )
        except StateUnavailable:
            self.unavailable += 1
