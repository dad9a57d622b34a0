"""Serving gated MCP tools over Streamable HTTP: ``serve``'s assembly and the process that runs it.

- :mod:`~agent_connector_sdk.serving.assembly`: from ``serve``'s settings to the gated app (the
  contract lab or an OpenAPI document's tools, alone or as a replica) and the words announcing it.
- :mod:`~agent_connector_sdk.serving.openapi_app` with
  :mod:`~agent_connector_sdk.serving.openapi_document`: an OpenAPI document as tools behind search.
- :mod:`~agent_connector_sdk.serving.process`: the socket bound before anything is announced,
  one-line logging, uvicorn with a deadline on request heads.

- :mod:`~agent_connector_sdk.serving.errors`: its error family (:class:`ServingError`), exported
  here; the command line maps it to an exit code.

The CLI (``cli/``) parses the options and calls in here; nothing here imports from ``cli`` or
``review``. Importing this package loads only its error family.
"""

from agent_connector_sdk.serving.errors import ServingCategory, ServingError

__all__ = ["ServingCategory", "ServingError"]
