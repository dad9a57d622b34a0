"""Execute (completion): the pure policy behind an authorized, bounded, rate-limited ``completion/complete``.

Three pieces, each usable alone; the server adapter wires them around FastMCP:

- :func:`parse_completion_params` validates the request params and returns a :class:`CompletionRequest`
  (``ref`` is ``{type: "ref/prompt", name}`` or ``{type: "ref/resource", uri}``; ``argument`` is
  ``{name, value}`` strings; ``context.arguments`` an optional string→string map), with length bounds
  so a caller cannot make the server scan with megabyte prefixes;
- :func:`filter_completions` keeps the candidates the caller is *allowed* to see that match the typed
  prefix, and :func:`completion_result` shapes them as ``{values, total, hasMore}`` with at most 100
  values. Authorization is applied before counting, so ``total`` never reveals how many suggestions
  exist that the caller cannot see;
- :class:`RateLimiter` is a sliding-window limiter per caller key with an injectable clock, which
  tells a refused caller how long to wait (``retry_after_ms``); :class:`AsyncRateLimiter` is the shape
  of a limiter shared by several processes (the ``state`` backends implement it).

Errors are :class:`CompletionError` (``invalid_request``) and :class:`CompletionRateLimited`
(``rate_limited``, with ``retry_after_ms``). Messages name fields, never values.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from agent_connector_sdk.core.contracts.errors import CompletionError

__all__ = [
    "MAX_ARGUMENT_NAME_LENGTH",
    "MAX_ARGUMENT_VALUE_LENGTH",
    "MAX_COMPLETION_VALUES",
    "MAX_CONTEXT_ARGUMENTS",
    "MAX_REF_URI_LENGTH",
    "AsyncRateLimiter",
    "CompletionRateLimited",
    "CompletionRequest",
    "RateLimiter",
    "completion_result",
    "filter_completions",
    "parse_completion_params",
]

MAX_COMPLETION_VALUES = 100
"""The spec's cap on ``completion.values``."""
MAX_ARGUMENT_NAME_LENGTH = 256
"""Bound on ``argument.name``, ``ref.name`` and context argument names (characters)."""
MAX_REF_URI_LENGTH = 2048
"""Bound on ``ref.uri`` (characters)."""
MAX_ARGUMENT_VALUE_LENGTH = 1024
"""Bound on ``argument.value`` and each context argument value (characters)."""
MAX_CONTEXT_ARGUMENTS = 64
"""Bound on the number of ``context.arguments`` entries."""

RefType = Literal["ref/prompt", "ref/resource"]


class CompletionRateLimited(CompletionError):
    """``rate_limited``: the caller exceeded its window; retry after ``retry_after_ms`` milliseconds."""

    def __init__(self, message: str, *, retry_after_ms: int) -> None:
        super().__init__("rate_limited", message)
        self.retry_after_ms = retry_after_ms


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """A validated ``completion/complete`` request. ``ref_key`` is the prompt name or resource URI."""

    ref_type: RefType
    ref_key: str
    argument_name: str
    argument_value: str
    context_arguments: Mapping[str, str] = field(default_factory=dict)


def _invalid(message: str) -> CompletionError:
    return CompletionError("invalid_request", message)


def _bounded_str(value: object, what: str, limit: int, *, allow_empty: bool = True) -> str:
    if not isinstance(value, str):
        raise _invalid(f"{what} must be a string")
    if len(value) > limit:
        raise _invalid(f"{what} is longer than {limit} characters")
    if not allow_empty and not value:
        raise _invalid(f"{what} must not be empty")
    return value


def parse_completion_params(params: object) -> CompletionRequest:
    """Validate ``completion/complete`` params (wire dict) or raise ``CompletionError("invalid_request")``.

    Members the spec does not define (``_meta`` included) are ignored, not refused.
    """
    if not isinstance(params, Mapping):
        raise _invalid("params must be an object")
    ref = params.get("ref")
    if not isinstance(ref, Mapping):
        raise _invalid("'ref' must be an object")
    ref_type = ref.get("type")
    ref_key: str
    if ref_type == "ref/prompt":
        ref_key = _bounded_str(ref.get("name"), "'ref.name'", MAX_ARGUMENT_NAME_LENGTH, allow_empty=False)
    elif ref_type == "ref/resource":
        ref_key = _bounded_str(ref.get("uri"), "'ref.uri'", MAX_REF_URI_LENGTH, allow_empty=False)
    else:
        raise _invalid("'ref.type' must be 'ref/prompt' or 'ref/resource'")
    argument = params.get("argument")
    if not isinstance(argument, Mapping):
        raise _invalid("'argument' must be an object")
    name = _bounded_str(argument.get("name"), "'argument.name'", MAX_ARGUMENT_NAME_LENGTH, allow_empty=False)
    value = _bounded_str(argument.get("value"), "'argument.value'", MAX_ARGUMENT_VALUE_LENGTH)
    context_arguments: dict[str, str] = {}
    context = params.get("context")
    if context is not None:
        if not isinstance(context, Mapping):
            raise _invalid("'context' must be an object")
        given = context.get("arguments")
        if given is not None:
            if not isinstance(given, Mapping):
                raise _invalid("'context.arguments' must be an object")
            if len(given) > MAX_CONTEXT_ARGUMENTS:
                raise _invalid(f"'context.arguments' has more than {MAX_CONTEXT_ARGUMENTS} entries")
            for key, item in given.items():
                _bounded_str(key, "a 'context.arguments' name", MAX_ARGUMENT_NAME_LENGTH)
                context_arguments[key] = _bounded_str(
                    item, "a 'context.arguments' value", MAX_ARGUMENT_VALUE_LENGTH
                )
    return CompletionRequest(ref_type, ref_key, name, value, context_arguments)


def filter_completions(
    candidates: Iterable[str],
    value: str,
    allowed: Callable[[str], bool] | Collection[str],
) -> list[str]:
    """Candidates the caller may see that start with ``value`` (case-insensitively), in order, deduplicated.

    ``allowed`` is the caller's authorization: a predicate, or the collection of values it may see.
    It is applied to every candidate before anything is counted, so an unauthorized suggestion never
    influences the result — not even its ``total``. Matching uses ``str.casefold`` so ``Pro`` finds
    ``production``; the returned values keep their original spelling.
    """
    permits: Callable[[str], bool] = allowed if callable(allowed) else allowed.__contains__
    prefix = value.casefold()
    seen: set[str] = set()
    matches: list[str] = []
    for candidate in candidates:
        if not isinstance(candidate, str) or candidate in seen:
            continue
        if candidate.casefold().startswith(prefix) and permits(candidate):
            seen.add(candidate)
            matches.append(candidate)
    return matches


def completion_result(matches: list[str], *, limit: int = MAX_COMPLETION_VALUES) -> dict[str, Any]:
    """The ``completion`` member of the result: ``{values, total, hasMore}`` with at most ``limit`` values.

    ``total`` is the number of (authorized) matches, ``hasMore`` whether values were cut off. ``limit``
    may be lowered, never raised above the spec's 100.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= MAX_COMPLETION_VALUES:
        raise ValueError(f"limit must be an integer in 0..{MAX_COMPLETION_VALUES}")
    return {"values": list(matches[:limit]), "total": len(matches), "hasMore": len(matches) > limit}


class RateLimiter:
    """Sliding-window log limiter: at most ``max_requests`` admitted per ``window_seconds`` per caller key.

    ``clock`` returns seconds (default ``time.monotonic``; inject a fake in tests). Refused attempts are
    not recorded, so a caller that waits ``retry_after_ms`` is admitted. Memory is bounded: at most
    ``max_keys`` callers are tracked; beyond that the least recently seen caller is forgotten (its next
    request starts a fresh window) — keys come from authenticated identities, so forgetting one costs
    at most one extra window of requests for it. Thread-safe.
    """

    def __init__(
        self,
        max_requests: int,
        window_seconds: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 10_000,
    ) -> None:
        if isinstance(max_requests, bool) or not isinstance(max_requests, int) or max_requests < 1:
            raise ValueError("max_requests must be a positive integer")
        if not (
            isinstance(window_seconds, int | float)
            and not isinstance(window_seconds, bool)
            and 0 < window_seconds < 10**9  # also keeps math.isfinite/float() away from huge ints
            and math.isfinite(window_seconds)
        ):
            raise ValueError("window_seconds must be a positive finite number")
        if max_keys < 1:
            raise ValueError("max_keys must be a positive integer")
        self.max_requests = max_requests
        self.window_seconds = float(window_seconds)
        self.max_keys = max_keys
        self._clock = clock
        self._log: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Number of caller keys currently tracked."""
        return len(self._log)

    def acquire(self, key: str) -> int | None:
        """Admit and record one request for ``key`` (``None``), or refuse: milliseconds until a slot frees."""
        with self._lock:
            now = self._clock()
            stamps = self._log.get(key)
            if stamps is None:
                stamps = deque()
                self._log[key] = stamps
                while len(self._log) > self.max_keys:
                    self._log.popitem(last=False)
            self._log.move_to_end(key)
            horizon = now - self.window_seconds
            while stamps and stamps[0] <= horizon:
                stamps.popleft()
            if len(stamps) < self.max_requests:
                stamps.append(now)
                return None
            wait = stamps[0] + self.window_seconds - now
            return max(1, math.ceil(wait * 1000))

    def check(self, key: str) -> None:
        """:meth:`acquire`, raising :class:`CompletionRateLimited` on refusal."""
        retry_after_ms = self.acquire(key)
        if retry_after_ms is not None:
            raise CompletionRateLimited(
                f"too many completion requests; retry after {retry_after_ms} ms",
                retry_after_ms=retry_after_ms,
            )


@runtime_checkable
class AsyncRateLimiter(Protocol):
    """A per-caller window shared by everything that holds the same limiter (e.g. every replica).

    Defined here, beside :class:`RateLimiter`, so the server adapter takes one without knowing who
    implements it (the ``state`` backends do).
    """

    @property
    def max_requests(self) -> int: ...

    @property
    def window_seconds(self) -> float: ...

    async def acquire(self, key: str) -> int | None:
        """Admit and record one request for ``key`` (``None``), or refuse: milliseconds until a slot frees.

        Raises an :class:`~agent_connector_sdk.errors.AgentConnectorError` when the window cannot be read
        or charged (e.g. the state backends' ``StateUnavailable``): the caller then refuses (fail closed).
        """
        ...
