"""Demo servers built on the SDK (the contract lab)."""
