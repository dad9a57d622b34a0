"""``python -m agent_connector_sdk.cli`` = ``agent-connector``."""

from agent_connector_sdk.cli.app import main_exit

main_exit()
