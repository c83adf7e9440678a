"""Station pre-flight: is every role reachable, the right model, error-free and calibrated?

``preflight(fixture)`` returns one :class:`PreflightRow` per role; ``report.ok`` is False
when any row failed. The CLI (``labctl instruments check``) prints the rows as a table, and
the engine calls the same function before a run.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from labctl.errors import InstrumentDisconnected, InstrumentError, InstrumentTimeout, LabctlError
from labctl.instruments.sessionlog import SessionLog
from labctl.instruments.station import Station, open_station

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass
class PreflightRow:
    role: str
    driver: str
    resource: str
    status: str = OK
    identity: str = ""  # the full *IDN? reply
    model: str = ""
    serial: str = ""
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    expired: str = ""  # "calibration expired on YYYY-MM-DD" (a problem, or a warning when allowed)

    def fail(self, text: str) -> None:
        self.problems.append(text)
        self.status = FAIL

    def warn(self, text: str) -> None:
        self.warnings.append(text)
        if self.status == OK:
            self.status = WARN

    @property
    def detail(self) -> str:
        return "; ".join(self.problems + self.warnings + self.notes)


@dataclass
class PreflightReport:
    station: str
    rows: list[PreflightRow]
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.status != FAIL for r in self.rows)

    def row(self, role: str) -> PreflightRow:
        return next(r for r in self.rows if r.role == role)

    def to_json(self) -> dict[str, Any]:
        return {
            "station": self.station,
            "ok": self.ok,
            "notes": self.notes,
            # (``expired`` is said in problems or warnings already: the JSON keeps its keys)
            "roles": [{k: v for k, v in r.__dict__.items() if k != "expired"} for r in self.rows],
        }


def preflight(
    fixture: Any,
    *,
    days: int = 30,
    allow_expired: bool = False,
    today: dt.date | None = None,
    session_log: SessionLog | None = None,
    station: Station | None = None,
    override: str = "--allow-expired",
) -> PreflightReport:
    """Check every role of the fixture. Never raises for an instrument problem. ``override``:
    how the user allows an expired calibration where they are (the TUI has no options)."""
    today = today or dt.date.today()
    own = station is None
    st = station or open_station(fixture, session_log=session_log)
    rows: list[PreflightRow] = []
    try:
        for name in st.names:
            entry = st.entry(name)
            row = PreflightRow(name, entry.profile.name, entry.binding.resource)
            _check_calibration(row, entry.binding.asset, today, days, allow_expired, override)
            try:
                _check_role(st, name, row)
            except InstrumentError as err:
                row.fail(_short(err))
            except LabctlError as err:
                row.fail(str(err))
            rows.append(row)
    finally:
        if own:
            st.close()
    return PreflightReport(fixture.station, rows)


def _check_role(st: Station, name: str, row: PreflightRow) -> None:
    entry = st.entry(name)
    driver = st.driver(name)  # opens: InstrumentDisconnected when nothing answers
    found = driver.identify()
    row.identity, row.model, row.serial = found.raw, found.model, found.serial
    ident = entry.profile.identity
    if not driver.identity_matches(found):
        row.fail(f"wrong model: profile {entry.profile.name} expects {ident.model}, "
                 f"the instrument says {found.manufacturer} {found.model}".rstrip())
        return
    want = entry.binding.asset.serial
    if want and found.serial != str(want):
        row.fail(f"serial {found.serial or '?'} does not match the fixture's asset serial {want}")
    errors = driver.drain_errors()
    if errors:
        shown = ", ".join(f'{e.code:+d} "{e.message}"' for e in errors[:3])
        more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
        row.fail(f"error queue not empty: {shown}{more}")
    if "dut_console" in entry.profile.roles:
        board = st.role(name, "dut_console").identify()  # type: ignore[attr-defined]
        if not board:
            row.fail("console did not answer `id`")
        else:
            row.notes.append("console id: " + " ".join(f"{k} {v}" for k, v in board.items()))


def _check_calibration(row: PreflightRow, asset: Any, today: dt.date, days: int, allow_expired: bool,
                       override: str = "--allow-expired") -> None:
    due = getattr(asset, "calibration_due", None)
    if due is None:
        return
    if due < today:
        text = row.expired = f"calibration expired on {due.isoformat()}"
        if allow_expired:
            row.warn(text + f" (allowed by {override})")
        else:
            row.fail(text + f" (recalibrate, or override with {override})")
    elif (due - today).days <= days:
        row.warn(f"calibration due in {(due - today).days} days ({due.isoformat()})")


def _short(err: InstrumentError) -> str:
    """The error without its instrument (the line names the role), with the command it
    answered, or where it was looked for when it could not even be reached."""
    text = err.message.split(" (instrument ")[0]
    if err.command:
        text += f" (command {err.command!r})"
    elif err.resource:
        text += f" (at {err.resource})"
    return text


# ------------------------------------------------------------------------------------------
# a bench left live by a dead run

#: a chamber setpoint further than this from its safe (ambient) setpoint is "away from it"
SETPOINT_TOLERANCE_C = 0.5


@dataclass
class BenchSafety:
    """What :func:`make_bench_safe` did: one line per action (empty for a bench that was
    safe), and one line per role that did not answer (its state is unknown)."""

    actions: list[str] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)


def make_bench_safe(station: Station) -> BenchSafety:
    """Read every supply output, load input and chamber setpoint through the role interfaces;
    switch off what is on and bring a chamber back to its safe (ambient) setpoint, each read
    back. Raises :class:`InstrumentError` naming the role when an instrument answers but its
    state cannot be read or made safe: a run must not start on a bench that may be live."""
    done = BenchSafety()
    for name in station.names:
        kinds = station.entry(name).profile.roles
        try:
            if "power_supply" in kinds:
                done.actions += _supply_off(name, station.role(name, "power_supply"))
            if "electronic_load" in kinds:
                done.actions += _load_off(name, station.role(name, "electronic_load"))
            if "thermal_chamber" in kinds:
                done.actions += _chamber_safe(name, station.role(name, "thermal_chamber"))
        except (InstrumentDisconnected, InstrumentTimeout) as err:
            done.unreachable.append(f"{name}: {_reason(err)}")
        except LabctlError as err:
            raise unsafe(f"{name}: {_reason(err)}", name) from None
    return done


def unsafe(detail: str, role: str | None = None) -> InstrumentError:
    """The error that refuses a run on a bench that may still be live."""
    who = role or "each instrument"
    return InstrumentError(f"cannot confirm the bench is safe: {detail}", instrument=role,
                           hint=f"check {who} by hand (outputs off, chamber at ambient) and its connection, "
                                "then start again")


def _supply_off(name: str, psu: Any) -> list[str]:
    actions = []
    for ch in psu.channels:
        if not psu.output(ch):
            continue
        psu.set_output(ch, False)
        if psu.output(ch):
            raise InstrumentError(f"output {ch} is on and stays on after switching it off")
        actions.append(f"{name}: output {ch} was on (left live by an earlier run): switched off, read back off")
    return actions


def _load_off(name: str, load: Any) -> list[str]:
    if not load.input():
        return []
    load.set_input(False)
    if load.input():
        raise InstrumentError("the load input is on and stays on after switching it off")
    return [f"{name}: load input was on (left live by an earlier run): switched off, read back off"]


def _chamber_safe(name: str, chamber: Any) -> list[str]:
    before, safe = float(chamber.setpoint()), float(chamber.ambient)
    if abs(before - safe) <= SETPOINT_TOLERANCE_C:
        return []
    chamber.set_setpoint(safe)
    after = float(chamber.setpoint())
    if abs(after - safe) > SETPOINT_TOLERANCE_C:
        raise InstrumentError(f"setpoint {before:g} degC reads {after:g} degC after setting it to {safe:g} degC")
    return [f"{name}: setpoint was {before:g} degC (left by an earlier run): set to its safe {safe:g} degC, "
            "read back"]


def _reason(err: LabctlError) -> str:
    return _short(err) if isinstance(err, InstrumentError) else str(err)
