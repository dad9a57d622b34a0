"""Serving gated MCP tools over Streamable HTTP: ``serve``'s assembly and the process that runs it.

- :mod:`~agent_connector_sdk.serving.assembly`: from ``serve``'s settings to the gated app (the
  contract lab or an OpenAPI document's tools, alone or as a replica) and the words announcing it.
- :mod:`~agent_connector_sdk.serving.openapi_app` with
  :mod:`~agent_connector_sdk.serving.openapi_document`: an OpenAPI document as tools behind search.
- :mod:`~agent_connector_sdk.serving.process`: the socket bound before anything is announced,
  one-line logging, uvicorn with a deadline on request heads.

The CLI (``cli/``) parses the options and calls in here; nothing here imports from ``cli`` but its
error family (``cli.errors``). Importing this package loads nothing.
"""

__all__: list[str] = []
