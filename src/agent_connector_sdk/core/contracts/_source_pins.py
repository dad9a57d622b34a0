"""Discover: source compatibility — a host may pin which sources a disclosed tool may come from (pure).

A disclosure manifest names the immutable document its tool was generated from (``source_sha256``,
e.g. the SHA-256 of an OpenAPI description). The disclosure contract keeps *source compatibility*
mandatory for consumers: a schema that verifies perfectly may still come from an API version the host
never reviewed. :class:`SourcePins` is the host's list of reviewed sources — per server, optionally per
alias — and :meth:`SourcePins.require` refuses a manifest whose source is not pinned **before any
fragment is read**. The refusal names the pinned and offered digests: digests are not secrets, and a
CI job that sees them knows at once that the upstream API changed.

The pin file (``agent-connector review --pin FILE`` writes one) is JSON, shape
``{"version": 1, "servers": {SERVER: {"*": [DIGEST, ...], ALIAS: [DIGEST, ...]}}}``: ``"*"`` applies to
every alias of that server that has no entry of its own. A server with no entry is unpinned (every
source accepted) unless the pins are ``strict``, in which case an unknown server is refused too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from agent_connector_sdk.core.contracts.errors import ContractError

__all__ = [
    "ANY_ALIAS",
    "PinFileError",
    "SourceNotPinned",
    "SourcePins",
]

ANY_ALIAS: Final = "*"

_Sha256Hex = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$", strict=True)]
_AliasKey = Annotated[str, StringConstraints(pattern=r"^(\*|[A-Za-z0-9_.-]{1,128})$", strict=True)]
_ServerKey = Annotated[str, StringConstraints(min_length=1, max_length=2048, strict=True)]

PinCategory = Literal["source_not_pinned", "server_not_pinned"]


class SourceNotPinned(ContractError):
    """Discover: a manifest's ``source_sha256`` is not among the host's pinned sources.

    Categories: ``source_not_pinned`` (the server or alias has pins and this digest is not one of them),
    ``server_not_pinned`` (strict pins and the server has none). ``pinned`` and ``offered`` are the
    digests (not secrets), so the error says exactly what changed.
    """

    gate = "discover"
    category: PinCategory

    def __init__(
        self,
        category: PinCategory,
        message: str,
        *,
        server: str,
        alias: str,
        pinned: tuple[str, ...],
        offered: str,
    ) -> None:
        super().__init__(category, message)
        self.server = server
        self.alias = alias
        self.pinned = pinned
        self.offered = offered


class PinFileError(ContractError, ValueError):
    """Discover: a pin file is not valid JSON of the documented shape (category ``malformed_pins``)."""

    gate = "discover"
    category: Literal["malformed_pins"]

    def __init__(self, category: Literal["malformed_pins"], message: str) -> None:
        super().__init__(category, message)


class _PinFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    version: Literal[1]
    servers: dict[_ServerKey, dict[_AliasKey, Annotated[list[_Sha256Hex], Field(min_length=1)]]]


class SourcePins:
    """The host's accepted ``source_sha256`` values, per server and alias. Immutable once built."""

    def __init__(
        self, servers: Mapping[str, Mapping[str, Iterable[str]]] | None = None, *, strict: bool = False
    ):
        parsed = _parse(
            {
                "version": 1,
                "servers": {s: {a: list(d) for a, d in m.items()} for s, m in (servers or {}).items()},
            }
        )
        self._servers: dict[str, dict[str, frozenset[str]]] = parsed
        self.strict = strict

    @classmethod
    def from_json(cls, text: str | bytes, *, strict: bool = False) -> SourcePins:
        """Parse a pin file's text; raises :class:`PinFileError` on anything but the documented shape."""
        try:
            raw = json.loads(text)
        except (ValueError, UnicodeDecodeError):
            raise PinFileError("malformed_pins", "the pin file is not JSON") from None
        pins = cls(strict=strict)
        pins._servers = _parse(raw)
        return pins

    def to_json(self) -> str:
        """The pin file text: sorted keys and digests, so a reviewed file diffs cleanly."""
        body = {
            "version": 1,
            "servers": {
                server: {alias: sorted(digests) for alias, digests in sorted(aliases.items())}
                for server, aliases in sorted(self._servers.items())
            },
        }
        return json.dumps(body, indent=2, sort_keys=True) + "\n"

    def with_source(self, server: str, alias: str, digest: str) -> SourcePins:
        """A copy that also accepts ``digest`` for ``alias`` (``"*"``: every alias) of ``server``."""
        servers = {s: {a: set(d) for a, d in m.items()} for s, m in self._servers.items()}
        servers.setdefault(server, {}).setdefault(alias, set()).add(digest)
        return SourcePins(servers, strict=self.strict)

    def pinned_for(self, server: str, alias: str) -> frozenset[str] | None:
        """The digests accepted for ``alias`` of ``server``, or ``None`` when nothing is pinned there."""
        aliases = self._servers.get(server)
        if aliases is None:
            return None
        if alias in aliases:
            return aliases[alias]
        return aliases.get(ANY_ALIAS)

    def require(self, *, server: str, alias: str, source_sha256: str) -> None:
        """Accept the manifest's source, or raise :class:`SourceNotPinned`. Call before reading fragments."""
        pinned = self.pinned_for(server, alias)
        if pinned is None:
            if self.strict:
                raise SourceNotPinned(
                    "server_not_pinned",
                    f"no sources are pinned for this server (offered {source_sha256})",
                    server=server,
                    alias=alias,
                    pinned=(),
                    offered=source_sha256,
                )
            return
        if source_sha256 not in pinned:
            listed = tuple(sorted(pinned))
            raise SourceNotPinned(
                "source_not_pinned",
                f"tool {alias!r} comes from source {source_sha256}, pinned: {', '.join(listed)}",
                server=server,
                alias=alias,
                pinned=listed,
                offered=source_sha256,
            )


def _parse(raw: Any) -> dict[str, dict[str, frozenset[str]]]:
    try:
        model = _PinFile.model_validate(raw)
    except ValidationError as error:
        where = sorted({"/".join(str(part) for part in item["loc"]) for item in error.errors()})
        raise PinFileError("malformed_pins", f"invalid pin file at {', '.join(where) or '/'}") from None
    return {
        server: {alias: frozenset(d) for alias, d in aliases.items()}
        for server, aliases in model.servers.items()
    }
