"""Consume (and the server's self-check): an ``InputRequiredResult`` must be one the client can act on.

MCP 2026-07-28 lets a server answer ``tools/call``, ``prompts/get`` and ``resources/read`` with an
interim ``InputRequiredResult`` (``resultType: "input_required"``, basic/patterns/mrtr): embedded
requests for the client to fulfil (``inputRequests``) and/or opaque state to echo (``requestState``),
after which the client retries the original request. It is not a final result, so
:func:`~agent_connector_sdk.core.contracts._results.validate_tool_result` refuses it; this module checks
the interim shape instead. ``result`` is the wire dict (camelCase); ``client_capabilities`` the
capabilities the client declared on the request (``_meta["io.modelcontextprotocol/clientCapabilities"]``).

Rules, in the order they are checked (the first failure is reported), each from the spec text:

1. ``request_method`` is one that may be answered this way — "Servers **MUST NOT** send
   ``InputRequiredResult`` responses on any other client requests" than ``prompts/get``,
   ``resources/read``, ``tools/call`` (``input_required_not_allowed``).
2. The result is an object with ``resultType == "input_required"`` (``malformed_result`` /
   ``invalid_result_type``).
3. "Servers **MUST** include at least one of ``inputRequests`` or ``requestState``"
   (``empty_input_required``); ``requestState``, when present, is a string — "an opaque string"
   (``invalid_request_state``).
4. ``inputRequests`` is an object whose values "**MUST** be one of ``ElicitRequest``,
   ``CreateMessageRequest``, or ``ListRootsRequest``": an object with that ``method`` and, for
   elicitation and sampling, a ``params`` object (``malformed_input_request``).
5. "Servers **MUST NOT** send an ``inputRequests`` that the client has not declared support for in its
   capabilities" (``undeclared_client_capability``): ``elicitation`` for form elicitation (an empty
   ``elicitation`` object means form only, client/elicitation), ``elicitation.url`` for URL mode,
   ``sampling`` (``sampling.tools`` when the request carries ``tools``, client/sampling), ``roots``.

Messages name members, methods and capabilities, never values (``requestState`` is never quoted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_connector_sdk.core.contracts._pointers import json_pointer
from agent_connector_sdk.core.contracts.errors import ContractViolation

__all__ = [
    "INPUT_REQUEST_METHODS",
    "INPUT_REQUIRED_REQUEST_METHODS",
    "is_input_required",
    "required_capability",
    "validate_input_required_result",
]

INPUT_REQUIRED_REQUEST_METHODS: frozenset[str] = frozenset({"prompts/get", "resources/read", "tools/call"})
"""Client requests a server may answer with an ``InputRequiredResult`` (basic/patterns/mrtr)."""

INPUT_REQUEST_METHODS: frozenset[str] = frozenset(
    {"elicitation/create", "sampling/createMessage", "roots/list"}
)
"""The request kinds an ``inputRequests`` map may embed."""

# Elicitation and sampling requests have required params in the schema; roots/list params are optional.
_PARAMS_REQUIRED = frozenset({"elicitation/create", "sampling/createMessage"})


def is_input_required(result: object) -> bool:
    """True when ``result`` is wire-shaped ``input_required`` (any other or absent ``resultType`` is not)."""
    return isinstance(result, Mapping) and result.get("resultType") == "input_required"


def required_capability(method: str, params: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The capability path (e.g. ``("elicitation", "url")``) a client must declare to receive this request."""
    params = params or {}
    if method == "elicitation/create":
        return ("elicitation", "url") if params.get("mode") == "url" else ("elicitation", "form")
    if method == "sampling/createMessage":
        return ("sampling", "tools") if params.get("tools") is not None else ("sampling",)
    return ("roots",)


def _declares(capabilities: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    top = capabilities.get(path[0])
    if not isinstance(top, Mapping):
        return False
    if path == ("elicitation", "form"):
        # client/elicitation: "an empty capabilities object is equivalent to declaring support for
        # `form` mode only".
        return not top or isinstance(top.get("form"), Mapping)
    return len(path) == 1 or isinstance(top.get(path[1]), Mapping)


def validate_input_required_result(
    result: object,
    *,
    request_method: str,
    client_capabilities: Mapping[str, Any] | None,
) -> None:
    """Check one ``InputRequiredResult`` wire dict; raise :class:`ContractViolation` or return ``None``.

    ``request_method`` is the method of the request it answers; ``client_capabilities`` what the client
    declared on that request (``{}``: nothing). ``None`` skips rule 5: for a client whose SDK dispatches
    embedded requests through the same callbacks it declared (a request it did not declare is refused
    there), so only the shape is checked here. A server always passes the declared mapping. See the
    module docstring for the rules.
    """
    if request_method not in INPUT_REQUIRED_REQUEST_METHODS:
        raise ContractViolation(
            "input_required_not_allowed",
            f"{request_method!r} may not be answered with an InputRequiredResult",
            path="/resultType",
        )
    if not isinstance(result, Mapping):
        raise ContractViolation("malformed_result", "an InputRequiredResult must be an object", path="")
    if result.get("resultType") != "input_required":
        raise ContractViolation(
            "invalid_result_type", "'resultType' must be 'input_required'", path="/resultType"
        )
    requests = result.get("inputRequests")
    if requests is None and result.get("requestState") is None:
        raise ContractViolation(
            "empty_input_required",
            "an InputRequiredResult must carry 'inputRequests' or 'requestState'",
            path="",
        )
    if "requestState" in result and not isinstance(result["requestState"], str):
        raise ContractViolation(
            "invalid_request_state", "'requestState' must be a string", path="/requestState"
        )
    if requests is None:
        return
    if not isinstance(requests, Mapping):
        raise ContractViolation(
            "malformed_input_request", "'inputRequests' must be an object", path="/inputRequests"
        )
    declared = client_capabilities
    for key, request in requests.items():
        path = json_pointer(("inputRequests", key))
        method = request.get("method") if isinstance(request, Mapping) else None
        if not isinstance(method, str) or method not in INPUT_REQUEST_METHODS:
            raise ContractViolation(
                "malformed_input_request",
                "an input request must be elicitation/create, sampling/createMessage or roots/list",
                path=path + "/method",
            )
        assert isinstance(request, Mapping)
        params = request.get("params")
        if (params is not None or method in _PARAMS_REQUIRED) and not isinstance(params, Mapping):
            raise ContractViolation(
                "malformed_input_request", f"{method} needs a 'params' object", path=path + "/params"
            )
        capability = required_capability(method, params)
        if declared is not None and not _declares(declared, capability):
            raise ContractViolation(
                "undeclared_client_capability",
                f"{method} needs the client capability {'.'.join(capability)!r}, which it did not declare",
                path=path,
            )
