"""``labctl report``: export recorded runs as CSV, Parquet, xlsx, JUnit, JSON, OCP (and HTML)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import click

from labctl.cli._common import db_option_callback, run_filter_options
from labctl.cli.runs import DB_HELP
from labctl.report.formats import FORMATS


@click.command()
@click.argument("run_ids", nargs=-1, metavar="[RUN_ID]...")
@run_filter_options
@click.option("--limit", type=click.IntRange(min=1), help="only the newest N matching runs (default: all)")
@click.option("--format", "-F", "fmt", required=True, metavar="FORMAT", help=f"one of: {', '.join(FORMATS)}")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="the file to write (- : standard output)")
@click.option("--all-attempts", is_flag=True,
              help="tables and OCP: earlier attempts of retried steps too (column `final` tells them apart)")
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", metavar="PATH|URL", help=DB_HELP)
def report(run_ids: tuple[str, ...], filters: dict[str, Any], limit: int | None, fmt: str, output: str,
           all_attempts: bool, db: str | None) -> None:
    """Export recorded runs: those given by id (or id prefix) and/or those matching the filters.

    \b
    labctl report 6b0e3a4 -F junit -o run.xml
    labctl report --plan power-rails --since 7d -F xlsx -o power-rails.xlsx
    labctl report --dut DUT-17 --outcome failed -F csv -o failures.csv
    """
    from labctl.errors import StoreError, StoreTimeout, StoreUnreachable, UsageError
    from labctl.report.formats import ExportOptions, export, exporter
    from labctl.report.record import load_records
    from labctl.store import open_store
    from labctl.store.query import RunFilters, find_run

    exporter(fmt)  # an unknown format fails before the database is opened
    wanted = RunFilters(**filters, limit=limit)
    with open_store(db, reading=True) as store:
        try:
            ids = [find_run(store, r) for r in run_ids]
        except (StoreTimeout, StoreUnreachable):
            raise
        except StoreError as err:  # an unknown or ambiguous id: nothing to report on
            raise UsageError(err.message, hint=err.hint) from None
        records = load_records(store, ids or None, wanted)
        where = store.display_url
    if not records:
        what = " ".join(run_ids) if run_ids else "these filters" if wanted.any() else "anything"
        raise UsageError(f"no recorded run in {where} matches {what}",
                         hint="`labctl runs` lists the recorded runs (with the same filters)")
    outcomes = Counter(r.outcome for r in records)
    if output == "-":  # the report itself on standard output (a pipe, a redirect), what was written on stderr
        _to_stdout(records, fmt, ExportOptions(all_attempts=all_attempts))
        click.echo(f"wrote the {fmt} report of {len(records)} run(s) to standard output", err=True)
        return
    path = export(records, fmt, output, ExportOptions(all_attempts=all_attempts))
    click.echo(f"wrote {path}: {fmt} report of {len(records)} run(s), "
               f"{', '.join(f'{n} {o}' for o, n in outcomes.most_common())} "
               f"({', '.join(r.run_id for r in records[:3])}{', …' if len(records) > 3 else ''})")


def _to_stdout(records: Any, fmt: str, options: Any) -> None:
    """Write the report into a file of its own, then copy it to standard output."""
    import shutil
    import sys
    import tempfile
    from pathlib import Path

    from labctl.report.formats import export

    with tempfile.TemporaryDirectory(prefix="labctl-report-") as tmp:
        path = export(records, fmt, Path(tmp) / f"report.{fmt}", options)
        with path.open("rb") as f:
            shutil.copyfileobj(f, sys.stdout.buffer)
        sys.stdout.buffer.flush()
