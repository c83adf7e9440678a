"""``labctl stations``: the lab's stations, as their agents last reported."""

from __future__ import annotations

import click

from labctl.cli._common import db_option_callback
from labctl.cli.runs import DB_HELP, FORMAT, _emit_records, _iso, _table, _when


def _rows(db: str | None) -> list[dict]:
    from labctl.fleet import queue, registry
    from labctl.store import open_store

    with open_store(db, must_exist=True) as store:
        queue.reap(store)
        return registry.list_stations(store)


def _state(r: dict) -> str:
    if r["state"] in ("offline", "stopped"):
        return f"{r['state']} since {_when(r['since'])}"
    return r["state"]


def _render(rows: list[dict]):
    body = [(r["station"], _state(r), r["host"], f"{r['heartbeat_age_s']:.0f}s ago",
             (f"{r['plan']} {r['run']}" if r["run"] else "-"), r["step"] or "-",
             (r["calibration_due"] or "-") + (" OVERDUE" if r["calibration_overdue"] else ""),
             r["queued"], r["message"][:60] or "-") for r in rows]
    return _table("stations", ["station", "state", "host", "heartbeat", "run", "step", "calibration due", "queued",
                               "note"], body)


@click.command()
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", metavar="PATH|URL", help=DB_HELP)
@click.option("--format", "fmt", type=FORMAT, default="table", show_default=True)
@click.option("--watch", is_flag=True, help="refresh every --interval seconds until Ctrl-C")
@click.option("--interval", type=click.FloatRange(min=0.5), default=2.0, show_default=True)
def stations(db: str | None, fmt: str, watch: bool, interval: float) -> None:
    """Each station: idle, running JOB, offline since; last heartbeat; current run and step;
    the soonest calibration due; jobs queued for it."""
    if watch:
        import time

        from rich.live import Live

        from labctl.cli.runs import _console

        with Live(_render(_rows(db)), console=_console(), refresh_per_second=4) as live:
            try:
                while True:
                    time.sleep(interval)
                    live.update(_render(_rows(db)))
            except KeyboardInterrupt:
                return
    rows = _rows(db)
    if fmt == "table":
        from labctl.cli.runs import _console

        if not rows:
            click.echo("no station has registered (start `labctl agent --fixture F --db URL` on each)")
            return
        _console().print(_render(rows))
        return
    if fmt == "csv":  # one line per station: the instruments stay in the JSON
        rows = [{k: v for k, v in r.items() if k != "instruments"} for r in rows]
    _emit_records([{**r, "heartbeat_at": _iso(r["heartbeat_at"]), "since": _iso(r["since"])} for r in rows], fmt)
