"""``labctl run``, ``labctl demo`` and ``labctl resume``: headless runs."""

from __future__ import annotations

import sys

import click

from labctl.cli._common import db_option_callback, not_empty
from labctl.errors import ExitCode

_PLAN_HELP = "test plan file (a path, or the name of a built-in plan such as accelerator-evt.yaml)"


def _run_options(f):
    for opt in reversed([
        click.option("--fixture", "-f", help="station file (default: the simulated bench sim-bench.yaml)"),
        click.option("--dut", callback=not_empty,
                     help="DUT serial (default: what the DUT console reports); with --slots, one per slot: SN1,SN2,…"),
        click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="override a plan parameter"),
        click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", help="results database: SQLite path or postgresql://… URL"),
        click.option("--json", "as_json", is_flag=True, help="stream one JSON event per line instead of progress"),
        click.option("--answers", type=click.Path(dir_okay=False), help="YAML file answering prompts: STEP_ID: answer"),
        click.option("--junit", type=click.Path(dir_okay=False), help="also write a JUnit XML report here"),
        click.option("--report", "report_path", type=click.Path(dir_okay=False),
                     help="also write the HTML report of the run here (docs/reports.md)"),
        click.option("--no-preflight", is_flag=True, help="skip the station pre-flight (a bench left live is still made safe first)"),
        click.option("--allow-expired", is_flag=True,
                     help="run on instruments whose calibration expired (recorded in the run's log)"),
        click.option("--operator", callback=not_empty, help="operator name recorded with the run (default: login name)"),
    ]):
        f = opt(f)
    return f


def _subscribers(as_json: bool, console=None):
    from labctl.console import ConsoleReporter, JsonLinesReporter

    return [JsonLinesReporter()] if as_json else [ConsoleReporter(console)]


def _say(as_json: bool):
    def say(text: str) -> None:
        click.echo(text, err=as_json)

    return say


@click.command()
@click.argument("plan")
@_run_options
@click.option("--slots", callback=not_empty, help="run every one of these slots of the fixture at once: 1-4, 1,3,5 or all "
                              "(then --dut takes one serial per slot: SN1,SN2,…)")
@click.option("--lease-timeout", type=click.FloatRange(min=0.1, max=3600), default=60.0, show_default=True,
              help="with --slots: seconds a slot waits for a shared instrument before its step errors")
@click.option("--bench-log", type=click.Path(dir_okay=False),
              help="with --slots: write the shared instruments' session log here (JSON lines)")
def run(plan, fixture, dut, sets, db, as_json, answers, junit, report_path, no_preflight, allow_expired,
        operator, slots, lease_timeout, bench_log) -> None:
    """Run PLAN on a station, headless.

    Exit codes: 0 passed, 1 failed (a limit was missed), 2 error (plan or instrument broke),
    3 aborted (operator, signal or safety interlock), 4 bad plan or invocation. With --slots,
    the worst outcome of the slots.
    """
    from labctl.launch import RunRequest, execute
    from labctl.plan.loader import parse_overrides
    from labctl.terminal_prompt import terminal_prompter

    for path, what, option in ((junit, "JUnit XML", "--junit"), (report_path, "HTML report", "--report")):
        if path is not None:  # refused now, not found unwritable (or over the results) after the run
            # (imported only then: a run's start-up stays lean)
            from labctl.report.formats import check_output

            check_output(path, what, option, try_folder=True)
    # on a terminal, without --answers, prompts are asked there (the plan's timeout: applies)
    asker = terminal_prompter(operator) if answers is None and not as_json else None
    req = RunRequest(plan=plan, fixture=fixture, dut=None if slots else dut, overrides=parse_overrides(sets), db=db,
                     answers=answers, preflight=not no_preflight, operator=operator, allow_expired=allow_expired,
                     prompt_handler=asker)
    if slots and report_path:
        from labctl.errors import UsageError

        raise UsageError("--report goes with a single-board run",
                         hint="after a run with --slots, `labctl report --since 1h --format html -o FILE` "
                              "makes one report of every slot's run")
    if slots:
        from labctl.slots.cli_run import run_slots_cli

        run_slots_cli(req, slots, dut, lease_timeout, as_json, junit, bench_log=bench_log)
        return
    if bench_log:
        from labctl.errors import UsageError

        raise UsageError("--bench-log goes with --slots", hint="a single-board run keeps its I/O in the run's record")
    out = execute(req, _subscribers(as_json), say=_say(as_json))
    _finish(out, as_json, junit, db, report_path)


_WHAT = {"junit": "JUnit XML", "html": "HTML report"}


def _export_stored(out, fmt: str, path: str, db: str | None) -> tuple[str | None, str | None]:
    """Write the run as report format ``fmt``, built from what the store recorded (the run
    record): (the file's path, None), or (None, a note) when the results were spooled instead
    (then `labctl sync` and `labctl report` make it)."""
    run_id = out.result.run_id
    if out.db is None or not out.saved:
        return None, (f"{_WHAT[fmt]} not written: the results of run {run_id} are not in the database yet; "
                      f"after `labctl sync`, run `labctl report {run_id} --format {fmt} -o {path}`")
    from labctl.report.formats import export_stored_run

    return export_stored_run(run_id, fmt, path, db, _WHAT[fmt])


def _write_junit(out, junit: str, db: str | None) -> str | None:
    """The run's JUnit XML from the store: None when written, else the note saying why not."""
    return _export_stored(out, "junit", junit, db)[1]


def _finish(out, as_json: bool, junit: str | None, db: str | None = None, report_path: str | None = None) -> None:
    from labctl.console import make_console, summary_table

    written = None
    for fmt, path in (("junit", junit), ("html", report_path)):
        if path:
            done, note = _export_stored(out, fmt, path, db)
            if note:
                out.notes.append(note)
            if fmt == "html":
                written = done
    if not as_json:
        console = make_console()
        console.print(summary_table(out.result))
        for note in out.notes:
            console.print(note, style="yellow", markup=False)
        if out.db:
            kept = "results (incomplete)" if getattr(out, "lost", False) else "results"
            console.print(f"{kept}: run [bold]{out.result.run_id}[/] in {out.db}  (labctl runs show {out.result.run_id})")
        if written:
            console.print(f"report: {written}", markup=False, soft_wrap=True)
    else:
        for note in out.notes:
            click.echo(note, err=True)
        if written:
            click.echo(f"report: {written}", err=True)
    sys.exit(int(out.exit_code))


@click.command()
@click.argument("run_ids", nargs=-1, required=True, metavar="RUN_ID...")
@click.option("--force", is_flag=True, help="resume even though the plan file changed since (recorded)")
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", help="results database (default: the local SQLite file)")
@click.option("--fixture", "-f", help="station file (default: the simulated bench)")
@click.option("--json", "as_json", is_flag=True, help="stream one JSON event per line")
@click.option("--answers", type=click.Path(dir_okay=False), help="YAML file answering prompts")
@click.option("--no-preflight", is_flag=True, help="skip the station pre-flight (a bench left live is still made safe first)")
@click.option("--allow-expired", is_flag=True, help="run on instruments whose calibration expired (recorded)")
@click.option("--rack", is_flag=True,
              help="with a slot's run: resume every interrupted run of the same many-slot run with it")
@click.option("--lease-timeout", type=click.FloatRange(min=0.1, max=3600), default=60.0, show_default=True,
              help="slots' runs: seconds a slot waits for a shared instrument before its step errors")
@click.option("--bench-log", type=click.Path(dir_okay=False),
              help="slots' runs: write the shared instruments' session log here (JSON lines)")
def resume(run_ids, force, db, fixture, as_json, answers, no_preflight, allow_expired, rack, lease_timeout,
           bench_log) -> None:
    """Continue an interrupted run: replay the finished steps that establish state, keep the other
    finished steps, re-run the cut-off one and the rest (docs/running.md, "Resuming a run").

    The runs of a many-slot run (`labctl run --slots`) resume together, each on its slot
    of the rack: `labctl resume RUN1 RUN2 … --fixture RACK`, or `labctl resume --rack RUN1 --fixture
    RACK` for every interrupted run of RUN1's many-slot run (docs/slots.md)."""
    from labctl.resume import prepare_resume, resume_run
    from labctl.store import open_store
    from labctl.store.query import find_run

    store = open_store(db)  # marks runs of dead processes interrupted; read once for all the checks
    try:
        run_ids = tuple(dict.fromkeys(find_run(store, run_id) for run_id in run_ids))  # a unique prefix will do
        if rack:
            run_ids = tuple(dict.fromkeys(r for run_id in run_ids for r in store.rack_runs(run_id)))
        prepared = (prepare_resume(run_ids[0], force=force, db=db, fixture=fixture, store=store)
                    if len(run_ids) == 1 else None)
    finally:
        store.close()

    if prepared is None or prepared.info.slot is not None:
        from labctl.slots.cli_run import resume_slots_cli

        resume_slots_cli(list(run_ids), force=force, db=db, fixture=fixture, answers=answers,
                         preflight=not no_preflight, allow_expired=allow_expired, lease_timeout=lease_timeout,
                         as_json=as_json, bench_log=bench_log)
        return
    if bench_log:
        from labctl.errors import UsageError

        raise UsageError("--bench-log goes with the runs of a many-slot run",
                         hint="a single-board run keeps its I/O in the run's record")
    run_id = run_ids[0]
    out = resume_run(run_id, force=force, db=db, fixture=fixture, answers=answers,
                     preflight=not no_preflight, allow_expired=allow_expired,
                     subscribers=_subscribers(as_json), say=_say(as_json), prepared=prepared)
    _finish(out, as_json, None)


@click.command()
@click.argument("run_id")
@click.option("--step", "steps", multiple=True, metavar="STEP",
              help="a step to re-run: its id (every corner) or group/id@corner (default: the failed steps)")
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", help="results database (default: the local SQLite file)")
@click.option("--fixture", "-f", help="station file (default: the simulated bench)")
@click.option("--json", "as_json", is_flag=True, help="stream one JSON event per line")
@click.option("--answers", type=click.Path(dir_okay=False), help="YAML file answering prompts")
@click.option("--no-preflight", is_flag=True, help="skip the station pre-flight (a bench left live is still made safe first)")
def rerun(run_id, steps, db, fixture, as_json, answers, no_preflight) -> None:
    """Re-run steps of a finished run (default: the failed ones) on the board now on the fixture,
    as a new run that references it (docs/running.md, "Re-running steps")."""
    from labctl.launch import execute
    from labctl.rerun import plan_rerun

    planned = plan_rerun(run_id, steps or None, db=db, fixture=fixture, answers=answers)
    planned.request.preflight = not no_preflight
    say = _say(as_json)
    say(planned.notes[0])
    for note in planned.notes[1:]:
        say(note)
    out = execute(planned.request, _subscribers(as_json), say=say)
    _finish(out, as_json, None)


@click.command()
@click.option("--plan", default="accelerator-evt.yaml", show_default=True, help=_PLAN_HELP)
@click.option("--fixture", "-f", default="sim-bench.yaml", show_default=True, help="station file with a sim: section")
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", help="results database (default: the local SQLite file)")
@click.option("--dut", "duts", multiple=True, help="DUT serials to run (default: every DUT of the fixture's sim: section)")
@click.option("--time-scale", type=float, default=300.0, show_default=True,
              help="simulated seconds per wall second (the plan's ~50 simulated minutes per DUT)")
@click.option("--verbose", "-v", is_flag=True, help="print every measurement, not only failures")
@click.option("--report", "report_path", type=click.Path(dir_okay=False),
              help="the HTML report of the demo's runs (default: reports/demo-DATE.html in the results file's folder)")
@click.option("--slots", type=click.IntRange(min=1, max=16), default=None,
              help="run N boards at once in the simulated rack (sim-rack4.yaml up to 4, sim-rack.yaml up to 16)")
def demo(plan, fixture, db, duts, time_scale, verbose, report_path, slots) -> None:
    """Run the flagship plan on the simulated lab for a small population of DUTs (or, with
    --slots N, on N boards at once in one chamber)."""
    from labctl.demo import run_demo

    if slots is not None:
        from labctl.slots.demo import run_slots_demo

        given = click.get_current_context().get_parameter_source("fixture").name != "DEFAULT"
        code = run_slots_demo(plan=plan, fixture=fixture if given else None, db=db, slots=slots, verbose=verbose,
                              time_scale=time_scale)
        sys.exit(int(code))
    code = run_demo(plan=plan, fixture=fixture, db=db, duts=list(duts), verbose=verbose, time_scale=time_scale,
                    report=report_path)
    sys.exit(int(code if code is not None else ExitCode.ERROR))
