"""One reader for the gateway's operator files (``gateway --config``, ``serve --auth-config``)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from agent_connector_sdk.gateway._errors import GatewayError

__all__ = ["read_toml"]


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML document at ``path``; unreadable or not TOML is one ``GatewayError("invalid_config")``
    naming the file (by name only: the operator knows where it is, a log line need not)."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise GatewayError("invalid_config", f"cannot read {path.name}: {error.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise GatewayError("invalid_config", f"{path.name} is not valid TOML: {error}") from None
