"""Demo servers built on the SDK (the contract lab)."""

__all__: list[str] = []
