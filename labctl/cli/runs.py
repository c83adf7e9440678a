"""``labctl runs`` and ``labctl sync`` (placeholders until the results store lands)."""

from __future__ import annotations

import click

from labctl.cli._common import not_implemented


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def runs(args: tuple[str, ...]) -> None:
    """List and inspect recorded runs (not implemented yet: exits 4)."""
    not_implemented("runs", "results-store issue (#6)")


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def sync(args: tuple[str, ...]) -> None:
    """Push locally spooled runs to the central database (not implemented yet: exits 4)."""
    not_implemented("sync", "results-store issue (#6)")
