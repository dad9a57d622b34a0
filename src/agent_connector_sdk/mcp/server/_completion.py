"""Authorized completion: suggestions a caller may use, bounded, rate limited, logged without values.

``AuthorizedCompletions`` is a FastMCP completion handler (``install(server)`` registers it; a FastMCP
server has exactly one). For each ``completion/complete`` it:

1. identifies the caller (``caller_key``: the verified access token's ``client_id`` and subject, else
   the HTTP peer address; proxy headers count only from ``trusted_proxies``) and charges the caller's
   sliding window (``contracts._completion.RateLimiter``);
   a refusal is JSON-RPC error ``rate_limit_code`` (default ``-32010``, inside the implementation range
   -32000..-32019) with ``data.retryAfterMs``. The limiter may also be a shared ``state`` backend's
   async limiter; when its store is unreachable the request is refused with the same code and
   ``data: {category: "state_unavailable", retryAfterMs}`` — never admitted unlimited;
2. validates the params (``contracts._completion.parse_completion_params``; refusal → ``-32602``);
3. resolves the referenced prompt or resource template *as this caller sees it* — through FastMCP's
   visibility and component ``auth`` — and answers an empty completion when the caller cannot see it
   (FastMCP already does this before calling a handler; it is repeated here so the rule does not hang on
   that detail);
4. keeps only suggestions the caller is authorized for: a ``Suggestion`` may carry FastMCP ``AuthCheck``
   callables (``require_scopes(...)`` etc.) that are run with ``fastmcp.utilities.authorization``'s
   ``run_auth_checks`` against the caller's token and the referenced component — the same machinery
   that guards the component itself. Authorization runs before counting, so ``total`` never reveals
   hidden values;
5. shapes ``{values ≤ 100, total, hasMore}`` with ``contracts._completion.completion_result``.

Log records carry the caller key, reference type, argument name and counts — never the typed prefix,
context values or suggestions; caller-chosen text (key, argument name) is escaped (``_logsafe.quoted``).
"""

from __future__ import annotations

import inspect
import ipaddress
import logging
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import mcp_types
from fastmcp import FastMCP
from fastmcp.prompts.base import Prompt
from fastmcp.resources.template import ResourceTemplate
from fastmcp.server.auth import AccessToken
from fastmcp.server.dependencies import get_access_token, get_http_request
from fastmcp.utilities.authorization import AuthCheck, AuthContext, run_auth_checks

from agent_connector_sdk.core.contracts import (
    AsyncRateLimiter,
    RateLimiter,
    completion_result,
    filter_completions,
    parse_completion_params,
)
from agent_connector_sdk.core.contracts.errors import CompletionError
from agent_connector_sdk.errors import AgentConnectorError
from agent_connector_sdk.mcp.server._logsafe import quoted
from agent_connector_sdk.mcp.server._refusals import CODES, invalid_params, rate_limited

__all__ = [
    "DEFAULT_RATE_LIMIT_CODE",
    "STATE_UNAVAILABLE_RETRY_MS",
    "AuthorizedCompletions",
    "CandidateSource",
    "Suggestion",
    "caller_key",
]

# Named as before the file moved: operators filter logs on this name.
logger = logging.getLogger("agent_connector_sdk.mcp.server.completion")

DEFAULT_RATE_LIMIT_CODE = CODES["rate_limited"]
"""Implementation-defined JSON-RPC code (range -32000..-32019) for a rate-limited completion."""
STATE_UNAVAILABLE_RETRY_MS = 1000
"""``data.retryAfterMs`` of the refusal sent when a shared limiter's store is unreachable
(same code as a rate limit, ``data.category == "state_unavailable"``)."""


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A candidate value; ``auth`` (FastMCP ``AuthCheck``s, AND-ed) must pass for the caller to see it."""

    value: str
    auth: AuthCheck | list[AuthCheck] | None = None


Candidate: TypeAlias = str | Suggestion
CandidateSource: TypeAlias = (
    Iterable[Candidate] | Callable[[Mapping[str, str]], Iterable[Candidate] | Awaitable[Iterable[Candidate]]]
)
"""Fixed candidates, or a function of ``context.arguments`` returning them (sync or async)."""

_Component: TypeAlias = Prompt | ResourceTemplate


_FORWARDED_HEADERS = ("x-forwarded-for", "forwarded")
UNVERIFIED_FORWARDED_KEY = "forwarded:unverified"
"""The identity of a request whose peer address may itself come from a caller's proxy header (see
:func:`caller_key`): shared, so a forged header cannot mint identities."""

_Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network
TrustedProxies: TypeAlias = Collection[str] | Collection[_Network]


def trusted_networks(proxies: Collection[str]) -> frozenset[_Network]:
    """``proxies`` (addresses or CIDR blocks, e.g. ``10.0.0.0/8``) as networks; raises ``ValueError``."""
    return frozenset(ipaddress.ip_network(proxy.strip(), strict=False) for proxy in proxies)


def _address_in(text: str, networks: frozenset[_Network]) -> bool:
    try:
        address = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return False
    return any(address in network for network in networks)


def caller_key(token: AccessToken | None, *, trusted_proxies: TrustedProxies = ()) -> str:
    """The rate-limit identity of the current caller.

    The verified token's client (and subject) when there is one. Otherwise the HTTP peer address; proxy
    headers (``X-Forwarded-For``, ``Forwarded``) count only when the peer is in ``trusted_proxies``
    (addresses or CIDR blocks): then the identity is the rightmost ``X-Forwarded-For`` address that is
    not itself a trusted proxy. From any other peer the headers are ignored and the peer is the identity,
    so alternating plain and forwarded requests gets a caller no second window. One exception: when the
    peer address appears among the ``X-Forwarded-For`` hops, an ASGI server has probably rewritten the
    peer *from* that header (uvicorn does for loopback unless ``proxy_headers=False``; ``serve`` turns it
    off), so the address is the caller's own choice: :data:`UNVERIFIED_FORWARDED_KEY`. No HTTP request:
    ``anonymous``.
    """
    if token is not None:
        subject = token.subject or token.claims.get("sub")
        return f"client:{token.client_id}" + (f"/sub:{subject}" if isinstance(subject, str) else "")
    try:
        request = get_http_request()
    except RuntimeError:
        return "anonymous"
    peer = request.client.host if request.client is not None else None
    forwarded = any(request.headers.getlist(name) for name in _FORWARDED_HEADERS)
    return network_caller_key(peer, forwarded, request.headers.getlist("x-forwarded-for"), trusted_proxies)


def network_caller_key(
    peer: str | None, forwarded: bool, x_forwarded_for: Iterable[str], trusted_proxies: TrustedProxies
) -> str:
    """:func:`caller_key` without a token, from the peer address and the request's proxy headers
    (``forwarded``: any ``X-Forwarded-For``/``Forwarded`` header present). Pure, so the ASGI in-flight
    caps key callers by exactly the same rule."""
    if not forwarded:
        return f"peer:{peer}" if peer is not None else "anonymous"
    networks = frozenset(
        proxy if not isinstance(proxy, str) else ipaddress.ip_network(proxy.strip(), strict=False)
        for proxy in trusted_proxies
    )
    chain = [hop.strip() for value in x_forwarded_for for hop in value.split(",")]
    if peer is None:
        return UNVERIFIED_FORWARDED_KEY
    if not _address_in(peer, networks):
        return UNVERIFIED_FORWARDED_KEY if peer in chain else f"peer:{peer}"
    for hop in reversed(chain):
        if not hop:
            continue
        try:
            address = ipaddress.ip_address(hop.strip("[]"))
        except ValueError:
            # Not an address ("unknown", a name, junk): no proxy of ours wrote it, so everything from
            # here on is the caller's own choice and cannot mint identities. One shared key.
            return UNVERIFIED_FORWARDED_KEY
        if not any(address in network for network in networks):
            return f"forwarded:{address}"  # normalized: one address, one identity, however it is spelt
    return UNVERIFIED_FORWARDED_KEY  # only a `Forwarded` header, or every hop a proxy: no usable client


class AuthorizedCompletions:
    """A completion provider with per-value authorization and a per-caller rate limit (see module doc)."""

    def __init__(
        self,
        *,
        rate_limiter: RateLimiter | AsyncRateLimiter | None = None,
        rate_limit_code: int = DEFAULT_RATE_LIMIT_CODE,
        trusted_proxies: Collection[str] = (),
    ) -> None:
        """``trusted_proxies``: addresses or CIDR blocks whose ``X-Forwarded-For`` is believed."""
        if not -32019 <= rate_limit_code <= -32000:
            raise ValueError("rate_limit_code must be in the implementation range -32000..-32019")
        self.rate_limiter: RateLimiter | AsyncRateLimiter = (
            rate_limiter if rate_limiter is not None else RateLimiter(30, 10.0)
        )
        self.rate_limit_code = rate_limit_code
        self.trusted_proxies = trusted_networks(trusted_proxies)  # ValueError for a bad address or block
        self._sources: dict[tuple[str, str, str], CandidateSource] = {}
        self._server: FastMCP[Any] | None = None

    # -- configuration -----------------------------------------------------------------------------
    def prompt(self, name: str, argument: str, candidates: CandidateSource) -> None:
        """Suggest ``candidates`` for ``argument`` of prompt ``name``."""
        self._sources[("ref/prompt", name, argument)] = candidates

    def resource(self, uri_template: str, argument: str, candidates: CandidateSource) -> None:
        """Suggest ``candidates`` for the ``{argument}`` variable of resource template ``uri_template``."""
        self._sources[("ref/resource", uri_template, argument)] = candidates

    def install(self, server: FastMCP[Any]) -> None:
        """Register as ``server``'s completion handler (this declares the completions capability)."""
        self._server = server
        server.add_completion_handler(self._handle)

    # -- the handler -------------------------------------------------------------------------------
    async def _handle(
        self,
        ref: mcp_types.PromptReference | mcp_types.ResourceTemplateReference,
        argument: mcp_types.CompletionArgument,
        context: mcp_types.CompletionContext | None,
    ) -> mcp_types.Completion:
        token = get_access_token()
        key = caller_key(token, trusted_proxies=self.trusted_proxies)
        verdict = self.rate_limiter.acquire(key)
        try:
            # A shared (async) limiter may be unreachable: refuse rather than admit unlimited.
            retry_after_ms = await verdict if inspect.isawaitable(verdict) else verdict
        except AgentConnectorError as unavailable:
            # Any typed failure of the limiter (the state backends' `state_unavailable`: the store is
            # away) refuses the request with its category; an untyped one propagates (-32603).
            logger.warning("completion refused: rate limit %s caller=%s", unavailable.category, quoted(key))
            raise rate_limited(
                self.rate_limit_code,
                "completion rate limit unavailable",
                {"category": unavailable.category, "retryAfterMs": STATE_UNAVAILABLE_RETRY_MS},
            ) from None
        if retry_after_ms is not None:
            logger.info("completion refused: rate_limited caller=%s", quoted(key))
            raise rate_limited(
                self.rate_limit_code, "completion rate limit exceeded", {"retryAfterMs": retry_after_ms}
            )
        try:
            request = parse_completion_params(
                {
                    "ref": ref.model_dump(by_alias=True, mode="json", exclude_none=True),
                    "argument": argument.model_dump(by_alias=True, mode="json", exclude_none=True),
                    "context": (
                        context.model_dump(by_alias=True, mode="json", exclude_none=True)
                        if context is not None
                        else None
                    ),
                }
            )
        except CompletionError as refusal:
            raise invalid_params(refusal.message) from refusal
        source = self._sources.get((request.ref_type, request.ref_key, request.argument_name))
        component = await self._visible_component(request.ref_type, request.ref_key)
        if source is None or component is None:
            logger.info(
                "completion answered: caller=%s ref=%s argument=%s values=0 (%s)",
                quoted(key),
                request.ref_type,
                quoted(request.argument_name),
                "no source" if source is None else "reference not visible",
            )
            return mcp_types.Completion(values=[], total=0, has_more=False)
        candidates = await _resolve(source, request.context_arguments)
        auth_context = AuthContext(token=token, component=component)
        allowed: set[str] = set()
        values: list[str] = []
        for candidate in candidates:
            suggestion = candidate if isinstance(candidate, Suggestion) else Suggestion(candidate)
            values.append(suggestion.value)
            if suggestion.auth is None or await run_auth_checks(suggestion.auth, auth_context):
                allowed.add(suggestion.value)
        shaped = completion_result(filter_completions(values, request.argument_value, allowed))
        logger.info(
            "completion answered: caller=%s ref=%s argument=%s values=%d total=%d",
            quoted(key),
            request.ref_type,
            quoted(request.argument_name),
            len(shaped["values"]),
            shaped["total"],
        )
        return mcp_types.Completion(
            values=shaped["values"], total=shaped["total"], has_more=shaped["hasMore"]
        )

    async def _visible_component(
        self, ref_type: Literal["ref/prompt", "ref/resource"], key: str
    ) -> _Component | None:
        """The prompt or template ``key`` as the current caller sees it (visibility + component auth)."""
        server = self._server
        if server is None:
            return None
        if ref_type == "ref/prompt":
            return await server.get_prompt(key)
        for template in await server.list_resource_templates(run_middleware=False):
            if template.uri_template == key:
                return template
        return None


async def _resolve(source: CandidateSource, context_arguments: Mapping[str, str]) -> list[Candidate]:
    if callable(source):
        produced = source(context_arguments)
        if inspect.isawaitable(produced):
            produced = await produced
        return list(produced)
    return list(source)
