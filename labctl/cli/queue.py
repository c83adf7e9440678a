"""``labctl queue``: submit plans for the lab's stations, list and cancel jobs."""

from __future__ import annotations

import click

from labctl.cli._common import db_option_callback, not_empty
from labctl.cli.runs import DB_HELP, FORMAT, _emit_records, _iso, _styled, _table, _when

STATES = ("queued", "running", "interrupted", "cancelling", "passed", "failed", "error", "aborted", "cancelled")


@click.group()
def queue() -> None:
    """Jobs for the lab's stations (run by `labctl agent` on each station).

    \b
    labctl queue submit smoke.yaml --station bench-07 --dut SN123
    labctl queue submit power-rails.yaml --station-class power --set vin=11.4V --priority 5
    labctl queue list [--state queued,running]
    labctl queue show JOB [--plan]
    labctl queue cancel JOB
    """


@queue.command()
@click.argument("plan")
@click.option("--station", help="run on this station (its id, as `labctl stations` lists it)")
@click.option("--station-class", "station_class", help="run on any station of this class (agents' --class)")
@click.option("--dut", callback=not_empty, help="DUT serial (checked against what the board reports)")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="override a plan parameter")
@click.option("--priority", type=int, default=0, show_default=True, help="higher runs first; same priority: oldest first")
@click.option("--portable", is_flag=True, help="an interrupted run may be restarted on another station of the class")
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", metavar="URL", help=DB_HELP)
@click.option("--json", "as_json", is_flag=True, help="print the job as JSON")
def submit(plan, station, station_class, dut, sets, priority, portable, db, as_json) -> None:
    """Queue PLAN for a station (or a class of stations). The plan is checked against each
    target station's fixture first: a plan that does not fit is refused (exit 4) and nothing
    is queued. The plan's text (and its includes) is stored with the job."""
    import getpass
    import json

    from labctl.errors import UsageError
    from labctl.fleet import queue as q
    from labctl.plan.loader import parse_overrides
    from labctl.store import open_store

    if (station is None) == (station_class is None):
        raise UsageError("give exactly one of --station S or --station-class C",
                         hint="`labctl stations` lists the stations and their classes")
    overrides = parse_overrides(sets)
    with open_store(db) as store:
        targets = q.target_fixtures(store, station, station_class)
        bundle = q.bundle_plan(plan, overrides, targets)
        try:
            user = getpass.getuser()
        except Exception:  # noqa: BLE001
            user = None
        job_id = q.submit(store, bundle, station=station, station_class=station_class, dut=dut, overrides=overrides,
                          priority=priority, portable=portable, user=user)
    if as_json:
        click.echo(json.dumps({"job": job_id, "plan": bundle.name, "plan_sha256": bundle.sha256,
                               "stations": [s for s, _ in targets]}))
    else:
        target = f"station {station}" if station else f"class {station_class} ({len(targets)} station(s))"
        click.echo(f"job {job_id} queued: {bundle.name} for {target}, priority {priority} (plan {bundle.sha256[:12]})")


@queue.command(name="list")
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", metavar="URL", help=DB_HELP)
@click.option("--state", "states", help="only these states, comma-separated (" + ",".join(STATES) + ")")
@click.option("--station", help="only jobs for or run by this station")
@click.option("--limit", type=click.IntRange(min=1), default=200, show_default=True)
@click.option("--format", "fmt", type=FORMAT, default="table", show_default=True)
def list_(db, states, station, limit, fmt) -> None:
    """List jobs, newest first."""
    from labctl.errors import UsageError
    from labctl.fleet import queue as q
    from labctl.store import open_store

    wanted = tuple(s.strip() for s in states.split(",")) if states else None
    for s in wanted or ():
        if s not in STATES:
            raise UsageError(f"--state {s!r}: not a job state", hint="states: " + ", ".join(STATES))
    with open_store(db, must_exist=True) as store:
        q.reap(store)
        rows = q.list_jobs(store, wanted, station, limit)
    records = [{
        "job": r.id, "state": r.state, "priority": r.priority, "plan": r.plan_name, "dut": r.dut_serial,
        "target": r.station or f"class:{r.station_class}", "station": r.claimed_by, "run": r.run_id,
        "exit_code": r.exit_code, "submitted_at": _iso(r.submitted_at), "submitted_by": r.submitted_by,
        "ended_at": _iso(r.ended_at), "claims": r.claims, "plan_sha256": r.plan_sha256,
        "parameters": r.parameters or {}, "message": r.message,
    } for r in rows]
    if fmt != "table":
        _emit_records(records, fmt)
        return
    from labctl.cli.runs import _console

    if not rows:
        click.echo("no jobs")
        return
    body = [(r.id, _styled(r.state), r.priority, r.plan_name, r.dut_serial or "-",
             r.station or f"class {r.station_class}", r.claimed_by or "-", r.run_id or "-",
             "-" if r.exit_code is None else r.exit_code, _when(r.submitted_at), r.message[:60] or "") for r in rows]
    _console().print(_table(None, ["job", "state", "prio", "plan", "dut", "target", "station", "run", "exit",
                                   "submitted", "message"], body))


@queue.command()
@click.argument("job", type=int)
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", metavar="URL", help=DB_HELP)
def cancel(job, db) -> None:
    """Cancel JOB: a queued one at once; a running one is aborted to the safe state by its station."""
    import getpass

    from labctl.fleet import queue as q
    from labctl.store import open_store

    with open_store(db, must_exist=True) as store:
        state = q.cancel(store, job, getpass.getuser())
    click.echo(f"job {job} cancelled" if state == "cancelled" else
               f"job {job}: its station is aborting it to the safe state (cancelling)")


@queue.command()
@click.argument("job", type=int)
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", metavar="URL", help=DB_HELP)
@click.option("--plan", "with_plan", is_flag=True, help="also print the stored plan text and its included files")
def show(job, db, with_plan) -> None:
    """Show JOB: target, state, station, run, exit code, and the plan exactly as it was stored."""
    from labctl.fleet import queue as q
    from labctl.store import open_store

    with open_store(db, must_exist=True) as store:
        q.reap(store)
        r = q.get(store, job)
    lines = [
        ("job", r.id), ("state", r.state), ("plan", f"{r.plan_name} ({r.plan_file}, sha256 {r.plan_sha256})"),
        ("target", r.station or f"class {r.station_class}" + (" (portable)" if r.portable else "")),
        ("dut", r.dut_serial or "-"), ("parameters", ", ".join(f"{k}={v}" for k, v in (r.parameters or {}).items()) or "-"),
        ("priority", r.priority), ("submitted", f"{_when(r.submitted_at)} by {r.submitted_by or '-'}"),
        ("station", r.claimed_by or "-"), ("claimed", f"{_when(r.claimed_at)} ({r.claims} claim(s))"),
        ("run", r.run_id or "-"), ("ended", _when(r.ended_at)),
        ("exit code", "-" if r.exit_code is None else r.exit_code), ("message", r.message or "-"),
    ]
    for key, value in lines:
        click.echo(f"{key + ':':<11} {value}")
    if with_plan:
        click.echo(f"\n# ---- {r.plan_file} ----\n{r.plan_text}", nl=False)
        for rel, text in (r.plan_files or {}).items():
            click.echo(f"\n# ---- included: {rel} ----\n{text}", nl=False)
        click.echo("")
