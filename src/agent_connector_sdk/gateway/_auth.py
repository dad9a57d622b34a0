"""Real authentication for ``gateway`` and ``serve --openapi``: FastMCP's JWT verifier and scopes per
child or tool (parsing and building only; FastMCP enforces).

Configuration (TOML, the ``[auth]`` table of ``gateway --config`` or of ``serve --auth-config``)::

    [auth]
    issuer = "https://login.example.com/"
    audience = "agent-connector"
    jwks_url = "https://login.example.com/.well-known/jwks.json"   # or:
    # public_key_file = "issuer-public.pem"
    algorithm = "RS256"                  # default
    required_scopes = ["mcp"]            # every request needs these
    max_token_lifetime_seconds = 86400   # default: a day; exp - iat and exp - now may not exceed it
    # accept_tokens_without_exp = true   # off by default: a token without exp never expires

    [auth.require]                       # name -> scopes a caller must all hold
    weather = ["weather:read"]           # gateway: every tool of child `weather`
    bad_ok = ["bad:ok"]                  # gateway: one tool by its gateway name (added to its child's)
                                         # serve --openapi: a tool (operation) name

Tokens are verified by FastMCP's ``JWTVerifier`` (signature, issuer, audience, ``exp``, ``nbf``,
required scopes), then bounded in time here (:func:`bounded_lifetime_verifier`): a token without a
numeric ``exp`` is refused unless ``accept_tokens_without_exp`` says otherwise (a signed token without it
would be valid forever), and one whose lifetime (``exp - iat``) or remaining lifetime (``exp - now``)
exceeds ``max_token_lifetime_seconds`` is refused (``exp: 1e300`` is not "valid for a day"), and so is
one issued (``iat``) more than 30 s (:data:`CLOCK_LEEWAY_SECONDS`) in the future.

Each requirement becomes FastMCP's own ``require_scopes(...)`` on the tool, so search results,
disclosure reads and calls agree per caller (one component-auth rule serves all three, and the exact
catalog cache knows it). A name that matches nothing is refused at start-up (``invalid_config``): a typo
must not leave a tool open.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from agent_connector_sdk.gateway._errors import GatewayError
from agent_connector_sdk.gateway._toml import read_toml

__all__ = [
    "CLOCK_LEEWAY_SECONDS",
    "DEFAULT_MAX_TOKEN_LIFETIME_SECONDS",
    "AuthSettings",
    "auth_from_table",
    "bounded_lifetime_verifier",
    "lifetime_refusal",
    "load_auth_file",
]

# Named as before the file moved: operators filter logs on this name.
_logger = logging.getLogger("agent_connector_sdk.gateway.auth")

DEFAULT_MAX_TOKEN_LIFETIME_SECONDS: Final = 86_400
"""Longest token lifetime accepted unless ``[auth] max_token_lifetime_seconds`` says otherwise (a day)."""

CLOCK_LEEWAY_SECONDS: Final = 30
"""How far ahead of this machine's clock a token's ``iat`` may be (issuer clocks drift); FastMCP allows
``nbf`` the same."""

_SCOPE: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,128}")  # RFC 6749 scope-token
_ALGORITHMS: Final = frozenset(
    {"RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "EdDSA"}
)


def _scopes(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(s, str) and _SCOPE.fullmatch(s) for s in value):
        raise GatewayError("invalid_config", f"{where} must be a list of scope tokens")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class AuthSettings:
    """A JWT verifier's settings and the scope requirements per name. Exactly one of ``jwks_url`` and
    ``public_key_pem`` (the file's contents, read once). Symmetric algorithms are not offered: the
    gateway never holds an issuer's signing secret."""

    issuer: str
    audience: str
    jwks_url: str | None = None
    public_key_pem: str | None = field(default=None, repr=False)
    algorithm: str = "RS256"
    required_scopes: tuple[str, ...] = ()
    require: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    max_token_lifetime_seconds: int = DEFAULT_MAX_TOKEN_LIFETIME_SECONDS
    accept_tokens_without_exp: bool = False

    def __post_init__(self) -> None:
        lifetime = self.max_token_lifetime_seconds
        if isinstance(lifetime, bool) or not isinstance(lifetime, int) or lifetime < 1:
            raise GatewayError(
                "invalid_config", "[auth] max_token_lifetime_seconds must be a positive integer"
            )
        if not isinstance(self.accept_tokens_without_exp, bool):
            raise GatewayError("invalid_config", "[auth] accept_tokens_without_exp must be true or false")
        for name in ("issuer", "audience"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise GatewayError("invalid_config", f"[auth] {name} is required")
        if (self.jwks_url is None) == (self.public_key_pem is None):
            raise GatewayError("invalid_config", "[auth] needs exactly one of jwks_url and public_key_file")
        if self.jwks_url is not None and not re.match(r"https?://\S+\Z", self.jwks_url):
            raise GatewayError("invalid_config", "[auth] jwks_url must be an http(s) URL")
        if self.public_key_pem is not None and "-----BEGIN PUBLIC KEY-----" not in self.public_key_pem:
            raise GatewayError("invalid_config", "[auth] public_key_file is not a PEM public key")
        if self.algorithm not in _ALGORITHMS:
            raise GatewayError("invalid_config", f"[auth] algorithm must be one of {sorted(_ALGORITHMS)}")

    def verifier(self) -> Any:
        """FastMCP's ``JWTVerifier`` for these settings, with the lifetime bounds (module docstring)."""
        return bounded_lifetime_verifier(
            max_lifetime_seconds=self.max_token_lifetime_seconds,
            accept_tokens_without_exp=self.accept_tokens_without_exp,
            public_key=self.public_key_pem,
            jwks_uri=self.jwks_url,
            issuer=self.issuer,
            audience=self.audience,
            algorithm=self.algorithm,
            required_scopes=list(self.required_scopes) or None,
        )

    def scopes_for(self, *names: str) -> tuple[str, ...]:
        """Every scope the requirements of ``names`` ask for, in order, once each."""
        found: dict[str, None] = {}
        for name in names:
            for scope in self.require.get(name, ()):
                found[scope] = None
        return tuple(found)

    def check_names(
        self, known: Iterable[str], *, prefixes: Iterable[str] = (), reserved: Iterable[str] = ()
    ) -> None:
        """Refuse a requirement naming nothing ``known`` (or under none of ``prefixes``), or naming one
        of the ``reserved`` names (the server's own tools, which no requirement may reach)."""
        names = set(known)
        starts = tuple(prefixes)
        own = set(reserved)
        for name in self.require:
            if name in own:
                raise GatewayError(
                    "invalid_config", f"[auth.require] {name} is the server's own tool, not a child's"
                )
            if name not in names and not (starts and name.startswith(starts)):
                raise GatewayError("invalid_config", f"[auth.require] {name} names no child or tool")


def _bounded_verifier_class() -> Any:
    from fastmcp.server.auth.providers.jwt import JWTVerifier

    class _Bounded(JWTVerifier):
        """FastMCP's ``JWTVerifier``, then the lifetime rule (module docstring) on the verified claims."""

        def __init__(self, *, max_lifetime_seconds: int, accept_tokens_without_exp: bool, **options: Any):
            super().__init__(**options)
            self.max_lifetime_seconds = max_lifetime_seconds
            self.accept_tokens_without_exp = accept_tokens_without_exp

        async def load_access_token(self, token: str) -> Any:
            verified = await super().load_access_token(token)
            if verified is None:
                return None
            refusal = lifetime_refusal(
                verified.claims, self.max_lifetime_seconds, self.accept_tokens_without_exp, time.time()
            )
            if refusal is not None:
                # The category only: a claim's value is the caller's, and logs never carry values.
                _logger.info("bearer token refused: %s", refusal)
                return None
            return verified

    return _Bounded


def bounded_lifetime_verifier(
    *, max_lifetime_seconds: int, accept_tokens_without_exp: bool = False, **jwt_verifier_options: Any
) -> Any:
    """FastMCP's ``JWTVerifier(**jwt_verifier_options)`` that also refuses tokens breaking the lifetime
    rule (:func:`lifetime_refusal`). The subclass is made on first use: importing this module loads no
    FastMCP (the CLI parses its configuration before anything is served)."""
    return _bounded_verifier_class()(
        max_lifetime_seconds=max_lifetime_seconds,
        accept_tokens_without_exp=accept_tokens_without_exp,
        **jwt_verifier_options,
    )


def lifetime_refusal(
    claims: Mapping[str, Any], max_lifetime_seconds: int, accept_tokens_without_exp: bool, now: float
) -> str | None:
    """Why verified ``claims`` break the lifetime rule, or ``None``: ``exp`` missing (unless accepted)
    or not a finite number; ``exp - iat`` or ``exp - now`` beyond ``max_lifetime_seconds``; ``iat``
    more than :data:`CLOCK_LEEWAY_SECONDS` in the future."""
    expires = claims.get("exp")
    if expires is None:
        return None if accept_tokens_without_exp else "no exp claim"
    if not _finite_number(expires):
        return "exp is not a finite number"
    if expires - now > max_lifetime_seconds:
        return "remaining lifetime exceeds max_token_lifetime_seconds"
    issued = claims.get("iat")
    if issued is not None:
        if not _finite_number(issued):
            return "iat is not a finite number"
        if issued > now + CLOCK_LEEWAY_SECONDS:
            # Issued "later" than now: the issuer's clock is off, or the token was minted to outlive
            # max_token_lifetime_seconds (a lifetime measured from a future iat starts late).
            return "iat is in the future"
        if expires - issued > max_lifetime_seconds:
            return "lifetime exceeds max_token_lifetime_seconds"
    return None


def _finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def auth_from_table(table: Mapping[str, Any], base: Path) -> AuthSettings:
    """The ``[auth]`` table → settings; ``public_key_file`` is read relative to ``base``."""
    allowed = {
        "issuer",
        "audience",
        "jwks_url",
        "public_key_file",
        "algorithm",
        "required_scopes",
        "require",
        "max_token_lifetime_seconds",
        "accept_tokens_without_exp",
    }
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise GatewayError("invalid_config", f"[auth] has an unknown key {unknown[0]}")
    pem = None
    key_file = table.get("public_key_file")
    if key_file is not None:
        if not isinstance(key_file, str):
            raise GatewayError("invalid_config", "[auth] public_key_file must be a path")
        path = base / key_file
        try:
            pem = path.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError):
            raise GatewayError("invalid_config", f"[auth] cannot read public_key_file {path.name}") from None
    require_table = table.get("require", {})
    if not isinstance(require_table, dict):
        raise GatewayError("invalid_config", "[auth.require] must be a table")
    require = {str(name): _scopes(value, f"[auth.require] {name}") for name, value in require_table.items()}
    for text_key in ("issuer", "audience", "jwks_url", "algorithm"):
        if text_key in table and not isinstance(table[text_key], str):
            raise GatewayError("invalid_config", f"[auth] {text_key} must be a string")
    return AuthSettings(
        issuer=table.get("issuer", ""),
        audience=table.get("audience", ""),
        jwks_url=table.get("jwks_url"),
        public_key_pem=pem,
        algorithm=table.get("algorithm", "RS256"),
        required_scopes=_scopes(table.get("required_scopes", []), "[auth] required_scopes"),
        require=require,
        max_token_lifetime_seconds=table.get(
            "max_token_lifetime_seconds", DEFAULT_MAX_TOKEN_LIFETIME_SECONDS
        ),
        accept_tokens_without_exp=table.get("accept_tokens_without_exp", False),
    )


def load_auth_file(path: Path) -> AuthSettings:
    """A TOML file whose ``[auth]`` table configures authentication (``serve --auth-config``)."""
    table = read_toml(path).get("auth")
    if not isinstance(table, dict):
        raise GatewayError("invalid_config", f"{path.name} has no [auth] table")
    return auth_from_table(table, path.parent)
