"""``labctl instruments`` (placeholder until the instrument layer lands)."""

from __future__ import annotations

import click

from labctl.cli._common import not_implemented


@click.group()
def instruments() -> None:
    """Station pre-flight, scan and identify."""


@instruments.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def check(args: tuple[str, ...]) -> None:
    """Pre-flight a station (not implemented yet: exits 4)."""
    not_implemented("instruments check", "instrument-layer issue (#4)")
