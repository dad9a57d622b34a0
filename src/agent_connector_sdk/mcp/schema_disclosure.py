"""Schema disclosure (the wire format, sans-I/O) -- the public face at its published path.

This path is our published contract (other code imports these names from here); the implementation is
the pure layer's :mod:`agent_connector_sdk.core.schema_disclosure`.
"""

# Exactly the implementation's public names (its ``__all__``), so the two lists cannot drift apart.
from agent_connector_sdk.core.schema_disclosure import *  # noqa: F403
from agent_connector_sdk.core.schema_disclosure import __all__ as __all__
