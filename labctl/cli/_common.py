"""Helpers shared by the command modules."""

from __future__ import annotations

from typing import NoReturn

from labctl.errors import NotImplementedYet


def not_implemented(command: str, issue: str) -> NoReturn:
    """Placeholder for a documented command that a later issue implements (exit 4)."""
    raise NotImplementedYet(
        f"`labctl {command}` is not implemented yet",
        hint=f"it lands with the {issue}; see README.md for what works today",
    )
