"""``labctl tui``: the terminal UI (labctl/tui/)."""

from __future__ import annotations

import sys

import click

from labctl.cli._common import db_option_callback, not_empty
from labctl.errors import ExitCode


@click.command()
@click.option("--fixture", "-f", help="station file (default: the simulated bench sim-bench.yaml)")
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB",
              help="results database: SQLite path or postgresql://… URL (default: the local SQLite file)")
@click.option("--plans", "plan_dirs", multiple=True, type=click.Path(file_okay=False),
              help="a folder of plans to offer besides the built-in testplans/ (repeatable)")
@click.option("--watch", is_flag=True, help="start in watch mode: the runs in progress, read from the database")
@click.option("--station", help="watch mode: only runs of this station (default: this fixture's station)")
@click.option("--all-stations", is_flag=True, help="watch mode: runs of every station writing to the database")
@click.option("--operator", callback=not_empty, help="operator name recorded with runs started here (default: login name)")
@click.option("--light", is_flag=True, help="light colours, for a terminal with a light background (ctrl+t toggles)")
def tui(fixture, db, plan_dirs, watch, station, all_stations, operator, light) -> None:
    """The terminal front panel: station status, plans, live runs, history.

    Keys: ? help, s station, h history, w watch, q quit (a run in progress is aborted to the
    safe state first, after asking).
    """
    from pathlib import Path

    from labctl.errors import UsageError
    from labctl.tui.app import LabctlApp
    from labctl.tui.bench import Bench
    from labctl.tui.config import TuiConfig

    for folder in plan_dirs:
        if not Path(folder).is_dir():
            raise UsageError(f"--plans {folder}: no such folder", hint="give a folder holding plan files (*.yaml)")
    if station and all_stations:
        raise UsageError("--station and --all-stations exclude each other", hint="give one of them")
    config = TuiConfig(fixture=fixture, db=db, plans=tuple(plan_dirs), watch=watch, station=station,
                       all_stations=all_stations, operator=operator, light=light)
    bench = Bench(fixture)  # a bad fixture stops here with file:line: message (exit 4), before the screen
    app = LabctlApp(config, bench=bench)
    import signal

    aborted = False
    try:
        code = app.run()
    finally:  # the app ended in a way that skipped its own shutdown: never leave a run going
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the terminal may be gone: finish regardless
        aborted = app.finish_run("labctl tui ended during the run")
        bench.close()
    # an app that ended on an internal error (Textual printed its traceback) is an error: exit 2
    crashed = code is None and bool(app.return_code)
    sys.exit(3 if aborted else int(ExitCode.ERROR) if crashed else int(code or 0))
