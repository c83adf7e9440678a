"""``labctl report`` (placeholder until the reports land)."""

from __future__ import annotations

import click

from labctl.cli._common import not_implemented


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def report(args: tuple[str, ...]) -> None:
    """Export reports (not implemented yet: exits 4)."""
    not_implemented("report", "`labctl run --junit FILE` writes JUnit XML, and `labctl runs --format csv|json` "
                              "and `labctl runs show RUN --format json` export what was recorded")
