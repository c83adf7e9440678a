"""``labctl tui`` (placeholder until the terminal UI lands)."""

from __future__ import annotations

import click

from labctl.cli._common import not_implemented


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def tui(args: tuple[str, ...]) -> None:
    """The terminal UI (not implemented yet: exits 4)."""
    not_implemented("tui", "`labctl run` shows a run's progress live on the console and "
                           "`labctl runs` / `labctl runs show RUN` show what was recorded")
