"""``labctl demo``: the flagship plan on the simulated lab, for a small population of DUTs.

Each DUT of the fixture's ``sim:`` section is "placed on the bench" in turn (the simulated
lab serves it), the plan runs headless and is recorded in the results store, and a summary
per DUT says what happened and where the results are.
"""

from __future__ import annotations

from typing import Any

from labctl.errors import ExitCode, LabctlError, UsageError


def run_demo(*, plan: str, fixture: str, db: str | None, duts: list[str], verbose: bool,
             time_scale: float | None = None, report: str | None = None) -> ExitCode:
    from rich.markup import escape
    from rich.table import Table

    from labctl.console import ConsoleReporter, make_console
    from labctl.engine.abort import AbortController, abort_on_signals
    from labctl.fixture import load_fixture
    from labctl.launch import RunRequest, execute, ignore_late_interrupts

    console = make_console()
    fx = load_fixture(fixture)
    scale = time_scale or (fx.sim.time_scale if fx.sim else 1.0)
    if fx.sim is None or not fx.sim.enabled:
        raise UsageError(f"fixture {fixture} has no enabled sim: section; the demo runs on the simulated lab",
                         hint="use fixtures/sim-bench.yaml")
    serials = duts or list(fx.sim.duts) or [fx.sim.dut or "SIM-GOLD-0001"]
    console.print(f"[bold]labctl demo[/]: plan [cyan]{plan}[/] on the simulated bench [cyan]{fx.station}[/] "
                  f"(time ×{scale:g}), {len(serials)} DUT(s): {', '.join(serials)}")
    rows: list[tuple[str, Any]] = []
    db_shown = None
    crashed = False
    # One abort controller and one signal policy for the whole demo: Ctrl-C (or SIGTERM,
    # SIGHUP…) aborts the DUT in progress to the safe state and stops the demo there.
    abort = AbortController()
    with abort_on_signals(abort):
        for serial in serials:
            if abort.requested:
                rows.append((serial, "aborted"))
                continue
            variant = fx.sim.duts.get(serial)
            faults = ", ".join(str(f if isinstance(f, str) else f.fault) for f in variant.faults) if variant else ""
            console.rule(f"DUT {serial}" + (f" (faults: {faults})" if faults else ""))
            reporter = ConsoleReporter(console, compact=not verbose)
            try:
                out = execute(RunRequest(plan=plan, fixture=fixture, dut=serial, db=db, time_scale=time_scale),
                              [reporter], say=lambda text: console.print(f"[dim]{escape(text)}[/]"),
                              abort=abort, handle_signals=False)
            except LabctlError as err:
                console.print(f"[bold red]{escape(err.format())}[/]")
                rows.append((serial, None))
                crashed = True
                continue
            db_shown = out.db or db_shown
            rows.append((serial, out))
    ignore_late_interrupts()
    table = Table(title="labctl demo: results per DUT")
    table.add_column("DUT")
    table.add_column("run")
    table.add_column("verdict")
    table.add_column("failing steps (value vs limit)", overflow="fold")
    styles = {"passed": "bold green", "failed": "bold red", "error": "bold magenta", "aborted": "bold yellow"}
    for serial, out in rows:
        if out is None or out == "aborted":
            why = "see the error above" if out is None else "the demo was aborted before this DUT"
            table.add_row(serial, "-", "[bold red]not run[/]", why)
            continue
        r = out.result
        failing = escape("\n".join(f"{s.step_id}{_corner(s)}: {s.message}" for s in r.failures) or "-")
        table.add_row(serial, r.run_id, f"[{styles.get(r.outcome.value, '')}]{r.outcome.value}[/]", failing)
    console.print(table)
    saved = [out.result.run_id for _, out in rows if out not in (None, "aborted") and out.saved]
    if saved:
        from labctl.report.html import write_runs_report

        path = report or default_report_path(db)
        console.print(f"report: {write_runs_report(db, saved, path)}", markup=False, soft_wrap=True)
    if db_shown:
        cmd, activate = labctl_command()
        console.print(f"results are in {db_shown}: `{cmd} runs` lists them, `{cmd} runs show RUN` shows one",
                      markup=False)
        if activate:
            console.print(f"(`labctl` is not on your PATH: `source {activate}` puts it there for this shell)",
                          markup=False)
    if abort.requested:
        return ExitCode.ABORTED
    return ExitCode.ERROR if crashed else ExitCode.PASSED


def default_report_path(db: str | None) -> str:
    """Where the demo writes its HTML report unless told: ``reports/demo-DATE.html`` in the folder
    of the SQLite results file (the default one: ``$LABCTL_HOME``), or in ``$LABCTL_HOME`` for a
    database server."""
    from datetime import datetime
    from pathlib import Path

    from sqlalchemy.engine import make_url

    from labctl.store.location import labctl_home, resolve_db

    url = make_url(resolve_db(db))
    sqlite_file = url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:")
    folder = Path(url.database).parent if sqlite_file else labctl_home()
    return str(folder / "reports" / f"demo-{datetime.now().strftime('%Y%m%d-%H%M%S')}.html")


def labctl_command() -> tuple[str, str | None]:
    """How the user can call this labctl from their shell: ``("labctl", None)`` when it is
    on the PATH, else the script's path (relative to the current folder when inside it) and
    the virtual environment's ``activate`` script to source, when there is one."""
    import os
    import shutil
    import sys
    from pathlib import Path

    here = Path(sys.executable).parent
    script = here / ("labctl.exe" if os.name == "nt" else "labctl")
    found = shutil.which("labctl")
    if found and (not script.exists() or Path(found).resolve() == script.resolve()):
        return "labctl", None
    if not script.exists():
        return f"{sys.executable} -m labctl", None

    def shown(path: Path) -> str:
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)

    activate = here / "activate"
    return shown(script), shown(activate) if activate.exists() else None


def _corner(step: Any) -> str:
    return f" [{', '.join(f'{k}={v}' for k, v in step.corner.items())}]" if step.corner else ""
