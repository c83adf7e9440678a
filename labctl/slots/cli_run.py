"""``labctl run PLAN --slots …``: the many-slot run as the command line shows it."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import click

from labctl.launch import RunRequest
from labctl.slots.orchestrator import SlotsOutput, SlotsRequest, run_slots


def run_slots_cli(req: RunRequest, slots: str, duts: str | None, lease_timeout: float, as_json: bool,
                  junit: str | None, *, verbose: bool = False, bench_log: str | None = None) -> None:
    out = run_with_output(req, slots, duts, lease_timeout, as_json, verbose=verbose, bench_log=bench_log)
    if junit:
        write_junits(out, junit, req.db)
    finish(out, as_json)


def run_with_output(req: RunRequest, slots: str, duts: str | None, lease_timeout: float, as_json: bool,
                    *, verbose: bool = False, console: Any = None, bench_log: str | None = None) -> SlotsOutput:
    from labctl.console import make_console
    from labctl.slots.output import SlotConsoleReporter, SlotJsonReporter

    lock = threading.Lock()
    console = console or make_console()

    def subscribers(slot: str) -> list[Any]:
        if as_json:
            return [SlotJsonReporter(slot, lock)]
        return [SlotConsoleReporter(slot, console, lock, verbose=verbose)]

    def say(text: str) -> None:
        with lock:
            click.echo(text, err=as_json)

    return run_slots(SlotsRequest(req, slots, duts, lease_timeout, bench_log), subscribers, say=say)


def resume_slots_cli(run_ids: list[str], *, force: bool, db: str | None, fixture: str | None, answers: str | None,
                     preflight: bool, allow_expired: bool, lease_timeout: float, as_json: bool,
                     bench_log: str | None = None) -> None:
    """``labctl resume RUN1 RUN2 …`` of a many-slot run: one summary table, the worst exit code."""
    from labctl.console import make_console
    from labctl.slots.output import SlotConsoleReporter, SlotJsonReporter
    from labctl.slots.resume import resume_slots

    lock = threading.Lock()
    console = make_console()

    def subscribers(slot: str) -> list[Any]:
        return [SlotJsonReporter(slot, lock) if as_json else SlotConsoleReporter(slot, console, lock)]

    def say(text: str) -> None:
        with lock:
            click.echo(text, err=as_json)

    out = resume_slots(run_ids, subscribers, force=force, db=db, fixture=fixture, answers=answers,
                       preflight=preflight, allow_expired=allow_expired, lease_timeout=lease_timeout,
                       bench_log=bench_log, say=say)
    finish(out, as_json)


def write_junits(out: SlotsOutput, junit: str, db: str | None = None) -> None:
    """One JUnit file per slot (report.xml -> report-slot1.xml …), each made from its run's
    record in the store, as `labctl run --junit` makes its one. A file that cannot be made is a
    note (with the `labctl report` command that makes it later), never the end of the command:
    the table, the results line and the exit code still follow."""
    from labctl.report.formats import export_stored_run

    path = Path(junit)
    for s in out.slots:
        if s.result is not None:
            target = path.with_name(f"{path.stem}-slot{s.slot}{path.suffix}")
            _written, note = export_stored_run(s.result.run_id, "junit", target, db, f"JUnit XML of slot {s.slot}")
            if note:
                out.notes.append(note)


def finish(out: SlotsOutput, as_json: bool) -> None:
    from labctl.console import make_console
    from labctl.slots.output import slots_table

    if not as_json:
        console = make_console()
        console.print(slots_table(out))
        for note in out.notes:
            console.print(note, style="yellow", markup=False)
        if out.db:
            runs = " ".join(s.result.run_id for s in out.slots if s.result is not None)
            console.print(f"results: {sum(1 for s in out.slots if s.result is not None)} run(s) in {out.db}: {runs}")
    else:
        for note in out.notes:
            click.echo(note, err=True)
    sys.exit(int(out.exit_code))
