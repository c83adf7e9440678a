"""``labctl sim`` (placeholder until the simulated lab lands)."""

from __future__ import annotations

import click

from labctl.cli._common import not_implemented


@click.group()
def sim() -> None:
    """The simulated lab."""


@sim.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def serve(args: tuple[str, ...]) -> None:
    """Serve the simulated lab of a fixture (not implemented yet: exits 4)."""
    not_implemented("sim serve", "simulated-lab issue (#3)")
