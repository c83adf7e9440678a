"""Helpers shared by the command modules."""

from __future__ import annotations

from typing import Any, NoReturn

from labctl import __version__
from labctl.errors import NotImplementedYet


def not_implemented(command: str, meanwhile: str) -> NoReturn:
    """Placeholder for a documented command that is still to come (exit 4); ``meanwhile``
    says what a user can do today instead."""
    raise NotImplementedYet(
        f"`labctl {command}` is not implemented yet in labctl {__version__}",
        hint=f"meanwhile {meanwhile}",
    )


def db_option_callback(ctx: Any, param: Any, value: str | None) -> str | None:
    """``--db`` of every command: an explicit SQLite file's folder must exist (exit 4 otherwise)."""
    if value:
        from labctl.store.location import check_db_folder

        check_db_folder(value)
    return value
