"""``labctl runs`` (list, show, compare recorded runs) and ``labctl sync`` (push the spool)."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from labctl.cli._common import db_option_callback, echo_json, run_filter_options
from labctl.cli._table import CliTable
from labctl.units import format_span

DB_HELP = ("results database: a SQLite file or postgresql://… URL (default: $LABCTL_DB, else results.db in "
           "$LABCTL_HOME, else ~/.local/share/labctl)")
OUTCOME_STYLE = {"passed": "green", "failed": "red", "error": "magenta", "aborted": "yellow",
                 "interrupted": "yellow", "running": "cyan", "PASS": "green", "FAIL": "red",
                 "MARGINAL": "yellow", "ERROR": "magenta", "INTERRUPTED": "yellow", "SKIPPED": "dim"}
FORMAT = click.Choice(["table", "json", "csv"])


def _open(db: str | None):
    """The store to read from (a read-only SQLite file too)."""
    from labctl.store import open_store

    return open_store(db, reading=True)


def _when(t: float | None) -> str:
    """Local time with its zone (``2026-12-02 15:23:09 JST``): the zone says how to read it."""
    return datetime.fromtimestamp(t).astimezone().strftime("%Y-%m-%d %H:%M:%S %Z") if t is not None else "-"


def _iso(t: float | None) -> str | None:
    return datetime.fromtimestamp(t).astimezone().isoformat(timespec="seconds") if t is not None else None


def _dur(seconds: float | None) -> str:
    return "-" if seconds is None else format_span(seconds)


def _step_dur(step: dict[str, Any]) -> str:
    """A step's wall-clock duration, and its simulated one when the bench ran time-scaled."""
    sim = step.get("duration_sim")
    return _dur(step["duration"]) + (f" (simulated {_dur(sim)})" if sim is not None else "")


def _num(v: Any) -> str:
    from labctl.console import format_value

    return "-" if v is None else format_value(v)


class Markup(str):
    """Rich markup written here, printed as markup; every other cell of a table is data, shown
    as it is (a stored reply's ``[/x]`` or ESC is neither markup nor a terminal command)."""


def _data(value: Any) -> str:
    """A stored value for a markup line or cell: brackets escaped, control characters shown."""
    from labctl.console import _fmt

    return value if isinstance(value, Markup) else _fmt(value)


def _styled(text: str) -> Markup:
    style = OUTCOME_STYLE.get(text)
    return Markup(f"[{style}]{_data(text)}[/{style}]" if style else _data(text))


def _limits(m: dict[str, Any]) -> str:
    if m.get("limit_text"):
        return m["limit_text"]
    low, high = m.get("low"), m.get("high")
    if low is None and high is None:
        return "-"
    return f"{_num(low) if low is not None else ''}..{_num(high) if high is not None else ''}"


def _labels(labels: dict[str, str] | None) -> str:
    return ",".join(f"{k}={v}" for k, v in (labels or {}).items())


def _console():
    from labctl.console import make_console

    return make_console()  # piped output (scripts, CI logs) is never wrapped


def _table(title: str | None, columns: Iterable[str], rows: Iterable[Iterable[Any]]) -> CliTable:
    return CliTable(title, columns, ([_data(x) for x in r] for r in rows))


def _emit_records(records: list[dict[str, Any]], fmt: str) -> None:
    if fmt == "json":
        echo_json(records)
        return
    buf = io.StringIO()
    if records:
        writer = csv.DictWriter(buf, fieldnames=list(records[0]), lineterminator="\n")
        writer.writeheader()
        for r in records:
            writer.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v for k, v in r.items()})
    sys.stdout.write(buf.getvalue())


@click.group(invoke_without_command=True)
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", metavar="PATH|URL", help=DB_HELP)
@run_filter_options
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="at most this many runs")
@click.option("--format", "fmt", type=FORMAT, default="table", show_default=True)
@click.pass_context
def runs(ctx: click.Context, db: str | None, filters: dict[str, Any], limit: int, fmt: str) -> None:
    """List recorded runs, newest first.

    \b
    labctl runs --dut DUT-17 --since 7d
    labctl runs show RUN_ID          steps and measurements vs limits, failures first
    labctl runs compare RUN_A RUN_B  measurement deltas between two runs
    """
    ctx.obj = {"db": db}
    if ctx.invoked_subcommand:
        return
    from labctl.store import query

    wanted = query.RunFilters(**filters, limit=limit)
    with _open(db) as store:
        rows = query.list_runs(store, wanted)
    if fmt != "table":
        for r in rows:
            r["started"], r["ended"] = _iso(r["started_at"]), _iso(r["ended_at"])
        _emit_records(rows, fmt)
        return
    if not rows:
        click.echo(f"no runs recorded in {store.display_url}" + (" match these filters" if wanted.any() else ""))
    else:
        _console().print(_table(
            None, ["run", "started", "plan", "dut", "station", "outcome", "duration", "steps pass/fail/err"],
            (_run_row(r) for r in rows),
        ))
    from labctl.store.spool import waiting_runs

    waiting = waiting_runs(store.display_url)
    if waiting:  # (a run that started during an outage is not in the list at all until then)
        click.echo(f"{waiting} run(s) of this database wait in this machine's spool (the database failed "
                   "during them): `labctl sync --all` pushes them", err=True)


def _run_row(r: dict[str, Any]) -> list[str]:
    outcome = Markup(_styled(r["outcome"]) + (f" (resumed ×{r['sessions'] - 1})" if r["sessions"] > 1 else ""))
    return [
        r["id"], _when(r["started_at"]), f"{r['plan_name']} {r['plan_version']}".strip(), r["dut_serial"] or "-",
        r["station"] + (f"/{r['slot']}" if r["slot"] else ""), outcome, _dur(r["duration"]),
        f"{r['steps_passed']}/{r['steps_failed']}/{r['steps_error']}",
    ]


def _db_of(ctx: click.Context, db: str | None) -> str | None:
    return db or (ctx.obj or {}).get("db")


#: ``runs show`` prints this many passing steps and measurements unless ``--all``
SHOWN = 200


@runs.command("show")
@click.argument("run_id")
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", metavar="PATH|URL", help=DB_HELP)
@click.option("--all", "show_all", is_flag=True,
              help=f"print every step and measurement (default: those that did not pass + the first {SHOWN})")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.pass_context
def show(ctx: click.Context, run_id: str, db: str | None, show_all: bool, fmt: str) -> None:
    """One run: context, steps, and measurements against their limits (failures first)."""
    from labctl.console import visible
    from labctl.store import query

    with _open(_db_of(ctx, db)) as store:  # the table reads only what it prints of a long run
        d = query.run_detail(store, run_id, shown=None if show_all or fmt == "json" else SHOWN)
    if fmt == "json":
        echo_json(d, default=lambda v: v.decode(errors="replace") if isinstance(v, bytes) else str(v))
        return
    run = d["run"]
    console = _console()
    dur = run["duration"]  # (of a resumed run: its sessions together, as `labctl runs` says)
    console.print(f"[bold]run {_data(run['id'])}[/bold]  {_styled(run['outcome'])}"
                  + (f"  {_data(run['message'])}" if run["message"] else ""))
    for label, value in (
        ("plan", f"{run['plan_name']} {run['plan_version']}  ({run['plan_path']}, sha256 {run['plan_hash'][:12]})"),
        ("station", run["station"] + (f" slot {run['slot']}" if run["slot"] else "")),
        ("dut", run["dut_serial"] or "-"), ("operator", run["operator"] or "-"),
        ("time", f"{_when(run['started_at'])} → {_when(run['ended_at'])}  ({_dur(dur)})"),
        ("host", f"{run['host']} pid {run['pid']}, labctl {run['labctl_version']}"),
        ("parameters", json.dumps(run["parameters"] or {}, ensure_ascii=False)),
    ):
        console.print(f"  {label:<11}{visible(value)}", markup=False)
    if len(d["sessions"]) > 1:
        console.print(_table("sessions (resumes)", ["#", "started", "host", "pid", "outcome", "plan"], (
            [s["session"], _when(s["started_at"]), s["host"], s["pid"], s["outcome"] or "-",
             "CHANGED (--force)" if s["plan_changed"] else "same"] for s in d["sessions"])))
    if d["instruments"]:
        console.print(_table("instruments", ["role", "driver", "identity", "asset", "cal. due"], (
            [i["role"], i["driver"], i["idn"], i["asset_serial"] or "-", i["calibration_due"] or "-"]
            for i in d["instruments"] if i["session"] == d["instruments"][-1]["session"])))
    ms = d["measurements"]
    bad = [m for m in ms if m["verdict"] in ("FAIL", "MARGINAL")]
    columns = ["step", "measurement", "labels", "value", "unit", "limits", "verdict"]

    def rows(items: list[dict[str, Any]]):
        for m in items:
            value = m["value"] if m["value"] is not None else m["value_text"]
            yield [m["step_key"], m["name"], _labels(m["labels"]), _num(value), m["unit"], _limits(m), _styled(m["verdict"])]

    if bad:
        console.print(_table(f"failures ({len(bad)})", columns, rows(bad)))
    steps = d["steps"]  # (without --all: every step that did not pass, and the first SHOWN)
    console.print(_table("steps", ["step", "corner", "attempt", "outcome", "duration", "message"], (
        [s["step_key"] + (f" (session {s['session']})" if s["session"] else ""),
         _labels(s["corner"]) or "-", s["attempt"], _styled(s["outcome"] or "running"), _step_dur(s),
         s["message"]] for s in steps)))
    step_count = d.get("step_count", len(steps))
    if len(steps) < step_count:
        console.print(f"… {step_count - len(steps)} more steps (passed or skipped): use --all or --format json",
                      markup=False)
    shown = [m for m in ms if m["verdict"] not in ("FAIL", "MARGINAL")]  # (without --all: the first SHOWN)
    passing = d.get("passing_count", len(shown))
    if shown:
        console.print(_table(f"measurements ({passing} passing or without limits)", columns, rows(shown)))
    if len(shown) < passing:
        console.print(f"… {passing - len(shown)} more measurements: use --all or --format json", markup=False)
    for title, items, cols, get in (
        ("prompts", d["prompts"], ["step", "prompt", "answer", "by"],
         lambda p: [p["step_key"] or "-", p["text"], p["answer"] or "(unanswered)", p["answer_source"] or "-"]),
        ("instrument errors", d["instrument_errors"], ["step", "role", "code", "message"],
         lambda e: [e["step_key"] or "-", e["role"], e["code"], e["message"]]),
        ("attachments", d["attachments"], ["step", "name", "type", "bytes", "path"],
         lambda a: [a["step_key"] or "-", a["name"], a["media_type"], _num(a["size"]), a["path"]]),
    ):
        if items:
            console.print(_table(title, cols, (get(x) for x in items)))


@runs.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", metavar="PATH|URL", help=DB_HELP)
@click.option("--all", "show_all", is_flag=True,
              help=f"print every measurement (default: those whose verdict changed or that one run lacks, "
                   f"+ the first {SHOWN} others)")
@click.option("--format", "fmt", type=FORMAT, default="table", show_default=True)
@click.pass_context
def compare(ctx: click.Context, run_a: str, run_b: str, db: str | None, show_all: bool, fmt: str) -> None:
    """Measurement deltas between two runs (B − A); changed verdicts first."""
    from labctl.store import query

    with _open(_db_of(ctx, db)) as store:
        a, b = query.find_run(store, run_a), query.find_run(store, run_b)
        rows = query.compare_runs(store, a, b)
    if fmt != "table":
        _emit_records(rows, fmt)
        return
    title = f"A = {a}   B = {b}   ({sum(r['changed'] for r in rows)} verdict changes, {len(rows)} measurements)"
    # (in order: the changed verdicts, then those one run lacks, then the largest changes)
    shown = len(rows) if show_all else min(len(rows), SHOWN + sum(
        1 for r in rows if r["changed"] or r["verdict_a"] is None or r["verdict_b"] is None))
    console = _console()
    console.print(_table(title, ["step", "measurement", "labels", "A", "B", "Δ", "Δ %", "unit", "verdict (A→B)"], (
        [r["step"], r["name"], _labels(r["labels"]), _num(r["value_a"]), _num(r["value_b"]), _num(r["delta"]),
         f"{r['delta_pct']:+.2f}" if r["delta_pct"] is not None else "-", r["unit"],
         _styled(r["verdict_b"] or "-") if not r["changed"] else
         Markup(f"{_styled(r['verdict_a'] or '-')}→{_styled(r['verdict_b'] or '-')}")] for r in rows[:shown])))
    if shown < len(rows):
        console.print(f"… {len(rows) - shown} more measurements (the same verdict in both, smaller changes): "
                      "use --all or --format json", markup=False)


@click.command()
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", metavar="PATH|URL",
              help="push to this database (default: the database each spooled run was meant for)")
@click.option("--spool", "spool_path", metavar="PATH", help="the spool journal (default: $LABCTL_HOME/spool.db)")
@click.option("--all", "all_targets", is_flag=True, help="with --db: push every spooled run there, whatever its target")
def sync(db: str | None, spool_path: str | None, all_targets: bool) -> None:
    """Push runs spooled locally (while the central database was unreachable) to it.

    Safe to repeat: every row has an idempotent key, nothing is duplicated.
    """
    import sqlite3

    from sqlalchemy.exc import SQLAlchemyError

    from labctl.errors import StoreTimeout, StoreUnreachable
    from labctl.store.bounded import BoundedCaller
    from labctl.store.location import display_url, resolve_db
    from labctl.store.sink import DbSink
    from labctl.store.spool import Spool
    from labctl.store.store import DEFAULT_HEARTBEAT_INTERVAL, open_store

    if spool_path is not None and not Path(spool_path).is_file():  # a typo must not read as "nothing to sync"
        from labctl.errors import UsageError

        raise UsageError(f"--spool {spool_path}: there is no such file",
                         hint="leave --spool out for the default journal ($LABCTL_HOME/spool.db), or `ls` the folder")
    spool = Spool(spool_path)
    try:
        targets = spool.targets()
        if not targets:
            click.echo(f"nothing to sync: the spool {spool.path} is empty")
            return
        if db is not None:
            url = resolve_db(db)
            plan = [(url, None if all_targets else display_url(url))]
        else:
            plan = [(t, t) for t in targets]
        total = 0
        for url, target in plan:
            if target is not None and target not in targets:
                continue
            with open_store(url) as store:
                # every database call bounded ($LABCTL_DB_TIMEOUT): a stalled server stops the sync
                bounded = BoundedCaller(what="the database", hint="")
                try:
                    report = spool.replay(DbSink(store, heartbeat_interval=DEFAULT_HEARTBEAT_INTERVAL), target,
                                          call=bounded.call)
                    bounded.call(store.mark_interrupted)
                    still = {run for _t, run, _n in spool.pending()}  # (runs with records for other targets)
                    bounded.call(store.close_synced, report.runs - still)  # their records are all in it now
                except (SQLAlchemyError, sqlite3.Error, StoreTimeout) as exc:  # failed half-way: what went stays
                    left = sum(n for t, _run, n in spool.pending() if target is None or t == target)
                    raise StoreUnreachable(
                        f"sync to {store.display_url} stopped: {str(exc).splitlines()[0]}",
                        hint=f"{left} spooled batch(es) wait, nothing lost or written twice: run `labctl sync` "
                             "again when the database answers") from None
            total += report.events
            click.echo(f"synced {report.events} events of {len(report.runs)} run(s) "
                       f"({', '.join(sorted(report.runs))}) to {store.display_url}")
        left = spool.pending()
        if left:
            click.echo(f"{sum(n for *_, n in left)} events stay spooled for: "
                       f"{', '.join(sorted({t for t, *_ in left}))} (use --db URL [--all])")
        elif not total:
            click.echo("nothing to sync for that database")
    finally:
        spool.close()
