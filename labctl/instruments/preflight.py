"""Station pre-flight: is every role reachable, the right model, error-free and calibrated?

``preflight(fixture)`` returns one :class:`PreflightRow` per role; ``report.ok`` is False
when any row failed. The CLI (``labctl instruments check``) prints the rows as a table, and
the engine calls the same function before a run.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from labctl.errors import InstrumentError, LabctlError
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
            "roles": [r.__dict__ for r in self.rows],
        }


def preflight(
    fixture: Any,
    *,
    days: int = 30,
    allow_expired: bool = False,
    today: dt.date | None = None,
    session_log: SessionLog | None = None,
    station: Station | None = None,
) -> PreflightReport:
    """Check every role of the fixture. Never raises for an instrument problem."""
    today = today or dt.date.today()
    own = station is None
    st = station or open_station(fixture, session_log=session_log)
    rows: list[PreflightRow] = []
    try:
        for name in st.names:
            entry = st.entry(name)
            row = PreflightRow(name, entry.profile.name, entry.binding.resource)
            _check_calibration(row, entry.binding.asset, today, days, allow_expired)
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


def _check_calibration(row: PreflightRow, asset: Any, today: dt.date, days: int, allow_expired: bool) -> None:
    due = getattr(asset, "calibration_due", None)
    if due is None:
        return
    if due < today:
        text = f"calibration expired on {due.isoformat()}"
        if allow_expired:
            row.warn(text + " (allowed by --allow-expired)")
        else:
            row.fail(text + " (recalibrate, or override with --allow-expired)")
    elif (due - today).days <= days:
        row.warn(f"calibration due in {(due - today).days} days ({due.isoformat()})")


def _short(err: InstrumentError) -> str:
    text = err.message.split(" (instrument ")[0]
    if err.command:
        text += f" (command {err.command!r})"
    return text
