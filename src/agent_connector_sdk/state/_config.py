"""Choosing a state backend from one URL (a ``--state`` option or the ``AGENT_CONNECTOR_STATE`` variable).

``None``, ``""`` or ``memory://`` → the embedded :class:`MemoryStateBackend`; ``redis://``,
``rediss://`` or ``unix://`` → :class:`RedisStateBackend` (needs the ``redis`` extra). Errors never
echo the URL: it may carry a password.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final
from urllib.parse import urlsplit

from agent_connector_sdk.state._base import StateBackend, StateConfigError
from agent_connector_sdk.state._memory import MemoryStateBackend

__all__ = ["STATE_URL_ENV", "describe_state_url", "open_state_backend", "state_url_from_env"]

STATE_URL_ENV: Final = "AGENT_CONNECTOR_STATE"
"""Environment variable a replica reads its state URL from when no option is given."""

_REDIS_SCHEMES: Final = frozenset({"redis", "rediss", "unix"})


def state_url_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The state URL from ``AGENT_CONNECTOR_STATE`` (``None`` when unset or empty)."""
    value = (os.environ if environ is None else environ).get(STATE_URL_ENV, "").strip()
    return value or None


def describe_state_url(url: str | None) -> str:
    """A loggable description: scheme, host and port only (no user, password, path or query)."""
    if not url:
        return "memory"
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return "unix socket"
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}"


def open_state_backend(url: str | None, *, prefix: str | None = None) -> StateBackend:
    """The backend ``url`` names (see the module docstring); raises :class:`StateConfigError`."""
    if url is None or url.strip() == "" or url.strip() == "memory://":
        return MemoryStateBackend()
    scheme = urlsplit(url.strip()).scheme.lower()
    if scheme not in _REDIS_SCHEMES:
        raise StateConfigError(
            "invalid_state_url", "state URL must be memory://, redis://, rediss:// or unix://"
        )
    try:
        from agent_connector_sdk.state._redis_backend import DEFAULT_PREFIX, RedisStateBackend
    except ImportError:
        raise StateConfigError(
            # Not a public-index name (this project is installed from a checkout or a wheel).
            "backend_not_installed",
            "the Redis backend needs the redis package: pip install 'redis>=5' "
            "(or install this project with its [redis] extra)",
        ) from None
    return RedisStateBackend.from_url(url.strip(), prefix=prefix if prefix is not None else DEFAULT_PREFIX)
