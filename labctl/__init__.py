"""labctl: lab automation for hardware bring-up and validation."""

__version__ = "0.1.0"
