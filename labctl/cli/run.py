"""``labctl run``, ``labctl demo`` and ``labctl resume`` (placeholders until the engine lands)."""

from __future__ import annotations

import click

from labctl.cli._common import not_implemented


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(args: tuple[str, ...]) -> None:
    """Run a test plan on a station (not implemented yet: exits 4)."""
    not_implemented("run", "engine issue (#5)")


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def demo(args: tuple[str, ...]) -> None:
    """Run the flagship plan on the simulated lab (not implemented yet: exits 4)."""
    not_implemented("demo", "engine issue (#5)")


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def resume(args: tuple[str, ...]) -> None:
    """Continue an interrupted run (not implemented yet: exits 4)."""
    not_implemented("resume", "results-store issue (#6)")
