"""``labctl instruments``: station pre-flight (check), scan, identify, profiles.

Heavy imports (pyvisa, pydantic, yaml, rich) stay inside the command functions.
"""

from __future__ import annotations

import sys

import click

EXIT_INSTRUMENT = 2
EXIT_BAD_INPUT = 4


@click.group()
def instruments() -> None:
    """Station pre-flight, scan and identify."""


@instruments.command()
@click.option("--fixture", "-f", "fixture_path", required=True, help="station file, e.g. fixtures/sim-bench.yaml")
@click.option("--days", default=30, show_default=True, type=click.IntRange(0, None),
              help="warn when a calibration falls due within this many days")
@click.option("--allow-expired", is_flag=True, help="only warn (do not fail) on an expired calibration")
@click.option("--no-sim", is_flag=True, help="never start the simulated lab, even if the fixture enables it")
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
@click.option("--log", "log_path", type=click.Path(dir_okay=False), help="write the session log (JSONL) here")
@click.option("--slot", default=None, help="check the roles of this DUT slot of the fixture")
def check(fixture_path: str, days: int, allow_expired: bool, no_sim: bool, as_json: bool, log_path: str | None,
          slot: str | None) -> None:
    """Pre-flight a station: reachable, right model and serial, no errors, calibrated.

    Exit 0 when every role passes (warnings allowed), 2 on an instrument problem,
    4 on a bad fixture or driver profile.
    """
    import json

    from labctl.fixture.loader import load_fixture_file
    from labctl.instruments.benchlock import bench_lock
    from labctl.instruments.preflight import preflight
    from labctl.instruments.sessionlog import SessionLog
    from labctl.instruments.simstart import simulated_lab_if_needed
    from labctl.instruments.station import open_station

    fixture = load_fixture_file(fixture_path)
    log = SessionLog(log_path)
    station = open_station(fixture, session_log=log, slot=slot)  # validates profiles before anything opens
    # a check reads every error queue: never while a run drives the bench (they are its errors)
    with bench_lock(fixture, slots=[slot] if slot else ()), log, \
            simulated_lab_if_needed(fixture, allow=not no_sim) as note:
        try:
            report = preflight(station.fixture, days=days, allow_expired=allow_expired, station=station)
        finally:
            station.close()
    if note:
        report.notes.append(note)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2, default=str))
    else:
        _print_report(report)
    sys.exit(0 if report.ok else EXIT_INSTRUMENT)


def _print_report(report) -> None:
    from rich.table import Table

    from labctl.console import _fmt, make_console

    console = make_console()  # what instruments answered is data: shown as text, never as markup
    for note in report.notes:
        console.print(f"[cyan]note:[/] {_fmt(note)}")
    table = Table(title=f"Pre-flight of station {report.station}")
    for col in ("role", "driver", "resource", "status", "model", "serial", "detail"):
        table.add_column(col, overflow="fold")
    style = {"ok": "green", "warn": "yellow", "fail": "bold red"}
    for r in report.rows:
        table.add_row(_fmt(r.role), _fmt(r.driver), _fmt(r.resource), f"[{style[r.status]}]{r.status.upper()}[/]",
                      _fmt(r.model), _fmt(r.serial), _fmt(r.detail))
    console.print(table)
    failed = [r.role for r in report.rows if r.status == "fail"]
    if failed:
        console.print(f"[bold red]pre-flight failed[/] for {', '.join(failed)}")
        for r in report.rows:
            if r.status == "fail":
                console.print(f"  {_fmt(r.role)}: {_fmt('; '.join(r.problems))}", soft_wrap=True)
    else:
        console.print("[green]pre-flight passed[/]")


def _probe(resource: str, backend: str, timeout: float, baud: int | None) -> tuple[str, list[str]]:
    """(*IDN? reply or error text, matching profile names)."""
    from labctl.errors import InstrumentError
    from labctl.instruments.transports import make_transport

    opts = {"baud_rate": baud} if baud else {}
    transport = make_transport(resource, backend=backend, name=resource, timeout=timeout,
                               reconnect_attempts=0, options=opts)
    try:
        with transport:
            reply = transport.query("*IDN?")
    except InstrumentError as err:
        return f"no answer: {err.message.split(' (instrument ')[0]}", []
    return reply, matching_profiles(reply)


def matching_profiles(idn: str) -> list[str]:
    import re

    from labctl.errors import LabctlError
    from labctl.instruments.profile import available_profiles, load_profile

    parts = [p.strip() for p in idn.split(",")] + ["", ""]
    found = []
    for name in available_profiles():
        try:
            ident = load_profile(name).identity
        except LabctlError:
            continue
        if ident.pattern:
            continue
        if re.fullmatch(ident.model, parts[1], re.IGNORECASE) and (
            ident.manufacturer is None or re.fullmatch(ident.manufacturer, parts[0], re.IGNORECASE)
        ):
            found.append(name)
    return found


@instruments.command()
@click.option("--resource", "-r", "resources", multiple=True, help="also probe this resource (repeatable)")
@click.option("--backend", default="@py", show_default=True, help="pyvisa backend (@py, @ivi, file.yaml@sim)")
@click.option("--timeout", default=1.0, show_default=True, type=click.FloatRange(0.01, 60), help="seconds per probe")
@click.option("--baud", type=int, default=None, help="baud rate for serial resources")
@click.option("--no-list", is_flag=True, help="probe only --resource, do not ask VISA for its resource list")
def scan(resources: tuple[str, ...], backend: str, timeout: float, baud: int | None, no_list: bool) -> None:
    """List VISA resources and identify what answers *IDN?."""
    from rich.table import Table

    from labctl.console import _fmt, make_console

    found: list[str] = []
    if not no_list:
        import warnings

        from labctl.instruments.transports.visa import resource_manager

        try:
            with warnings.catch_warnings():  # pyvisa-py warns about optional discovery packages
                warnings.simplefilter("ignore")
                found = list(resource_manager(backend).list_resources())
        except Exception as err:  # a VISA library problem is reported, not raised
            click.echo(f"warning: cannot list VISA resources with backend {backend}: {err}", err=True)
    targets = list(dict.fromkeys([*found, *resources]))
    table = Table(title=f"{len(targets)} resource(s)")
    for col in ("resource", "*IDN?", "profile"):
        table.add_column(col, overflow="fold")
    answered = 0
    for res in targets:
        reply, profiles = _probe(res, backend, timeout, baud)
        answered += not reply.startswith("no answer")
        table.add_row(_fmt(res), _fmt(reply), _fmt(", ".join(profiles) or "-"))  # answers are data, not markup
    make_console().print(table)
    if not targets:
        click.echo("no resources found; pass --resource TCPIP0::host::5025::SOCKET to probe LAN instruments")


@instruments.command()
@click.argument("resource")
@click.option("--backend", default="@py", show_default=True, help="pyvisa backend")
@click.option("--timeout", default=2.0, show_default=True, type=click.FloatRange(0.01, 60), help="seconds")
@click.option("--baud", type=int, default=None, help="baud rate for serial resources")
def identify(resource: str, backend: str, timeout: float, baud: int | None) -> None:
    """Ask one RESOURCE for *IDN? and name the matching driver profile(s)."""
    from labctl.console import visible

    reply, profiles = _probe(resource, backend, timeout, baud)
    reply = visible(reply)  # what the instrument sent is shown, never run by the terminal
    if reply.startswith("no answer"):
        click.echo(f"{resource}: {reply}", err=True)
        sys.exit(EXIT_INSTRUMENT)
    parts = [p.strip() for p in reply.split(",")] + ["", "", "", ""]
    click.echo(f"resource:     {resource}")
    click.echo(f"manufacturer: {parts[0]}")
    click.echo(f"model:        {parts[1]}")
    click.echo(f"serial:       {parts[2]}")
    click.echo(f"firmware:     {parts[3]}")
    click.echo(f"profile:      {', '.join(profiles) if profiles else 'none matches (write one: docs/drivers.md)'}")


@instruments.command()
@click.argument("paths", nargs=-1, type=click.Path())
def profiles(paths: tuple[str, ...]) -> None:
    """List (and validate) driver profiles; with PATHS, validate those files. Exit 4 on a bad one."""
    from labctl.errors import LabctlError
    from labctl.instruments.profile import available_profiles, load_profile, load_profile_file

    bad = 0
    loaders = [lambda p=p: load_profile_file(p) for p in paths] or [
        lambda n=n: load_profile(n) for n in available_profiles()]
    for load in loaders:
        try:
            prof = load()
        except LabctlError as err:
            bad += 1
            click.echo(f"error: {err}", err=True)
            continue
        click.echo(f"{prof.name:22} {', '.join(prof.roles):22} {prof.manufacturer} {prof.model}")
    sys.exit(EXIT_BAD_INPUT if bad else 0)
