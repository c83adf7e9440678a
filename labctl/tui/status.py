"""The station's live status, read off the UI thread: every instrument's reachability,
``*IDN?`` identity, asset serial, calibration due date and error queue (the station
pre-flight), the DUT console's serial, and the current values of a plan's interlock signals.

:func:`poll_station` opens the station, reads everything, and closes it again (serial
consoles are exclusive: a run opens them next). It never raises for an instrument problem.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from labctl.errors import LabctlError


@dataclass(frozen=True)
class InstrumentStatus:
    role: str
    driver: str
    resource: str
    status: str  # ok | warn | fail
    model: str = ""
    serial: str = ""  # as *IDN? reports it
    asset_serial: str = ""  # as the fixture records it
    calibration_due: str = ""
    errors: str = ""  # the error queue ("" = empty) or the problem found
    detail: str = ""
    expired: str = ""  # "calibration expired on …" when that is one of its problems
    only_expired: bool = False  # … and the only one: the start form may allow it


@dataclass(frozen=True)
class InterlockValue:
    name: str
    signal: str
    value: str  # "41.2 degC" or "?" when it could not be read
    limit: str  # "≤ 105 degC"
    ok: bool | None  # None: not read


@dataclass(frozen=True)
class StationStatus:
    station: str
    instruments: tuple[InstrumentStatus, ...] = ()
    dut_serial: str = ""
    dut_detail: str = ""
    interlocks: tuple[InterlockValue, ...] = ()
    plan: str = ""  # whose interlocks are shown
    problems: tuple[str, ...] = field(default_factory=tuple)
    busy: str = ""  # another process runs a plan on this bench: not polled (also a problem: it blocks a start)

    @property
    def blocking(self) -> list[str]:
        """What would stop a run from starting (the same rules as the run's pre-flight)."""
        return self.blocking_with(allow_expired=False)

    def blocking_with(self, *, allow_expired: bool) -> list[str]:
        """:attr:`blocking`, with instruments whose only problem is an expired calibration
        left out when ``allow_expired`` (the start form's allow-expired box)."""
        return [f"{i.role}: {i.errors or i.detail}" for i in self.instruments
                if i.status == "fail" and not (allow_expired and i.only_expired)]

    @property
    def expired(self) -> list[str]:
        """``role: calibration expired on …`` for each instrument whose calibration expired."""
        return [f"{i.role}: {i.expired}" for i in self.instruments if i.expired]


def _bench_in_use(fixture: Any) -> str | None:
    """Another process runs a plan on this bench: not polled (reading its error queues would
    take the run's errors away from it). Only a probe: the lock is let go at once, so a run
    started in another terminal is never refused because of the TUI."""
    from labctl.errors import BenchBusy
    from labctl.instruments.benchlock import bench_lock

    try:
        with bench_lock(fixture, slots=()):
            return None
    except BenchBusy as err:
        return f"bench in use, not polled: {err.message.split(': ', 1)[-1]}"


def poll_station(fixture: Any, loaded_plan: Any = None, *, today: dt.date | None = None) -> StationStatus:
    from labctl.instruments.preflight import preflight
    from labctl.instruments.station import open_station
    from labctl.launch import ALLOW_EXPIRED

    busy = _bench_in_use(fixture)
    if busy:
        return StationStatus(fixture.station, problems=(busy,), busy=busy)
    try:
        station = open_station(fixture)
    except LabctlError as err:
        return StationStatus(fixture.station, problems=(str(err),))
    try:
        report = preflight(fixture, station=station, today=today, override=ALLOW_EXPIRED["tui"])
        rows = []
        dut_serial, dut_detail = "", ""
        for r in report.rows:
            binding = fixture.roles[r.role]
            asset = binding.asset
            due = getattr(asset, "calibration_due", None)
            errors = "; ".join(r.problems) if r.problems else "empty"
            rows.append(InstrumentStatus(
                role=r.role, driver=r.driver, resource=r.resource, status=r.status, model=r.model,
                serial=r.serial, asset_serial=str(getattr(asset, "serial", "") or ""),
                calibration_due=due.isoformat() if due else "", errors=errors,
                detail="; ".join(r.warnings + r.notes), expired=r.expired,
                only_expired=bool(r.expired) and len(r.problems) == 1))
            for note in r.notes:
                if note.startswith("console id:"):
                    dut_detail = note.removeprefix("console id:").strip()
                    words = dut_detail.split()
                    if "serial" in words and words.index("serial") + 1 < len(words):
                        dut_serial = words[words.index("serial") + 1]
        locks = _read_interlocks(loaded_plan, station, fixture) if loaded_plan is not None else ()
        return StationStatus(fixture.station, tuple(rows), dut_serial, dut_detail, locks,
                             plan=loaded_plan.plan.name if loaded_plan is not None else "")
    finally:
        station.close()


def _read_interlocks(loaded: Any, station: Any, fixture: Any) -> tuple[InterlockValue, ...]:
    from labctl.engine.interlocks import build_interlocks

    try:
        locks, _ = build_interlocks(loaded, station, fixture)
    except LabctlError as err:
        return (InterlockValue("interlocks", "", "?", str(err), None),)
    signals = [lock.signal for lock in loaded.plan.safety.interlocks] if loaded.plan.safety else []
    out = []
    for lock, signal in zip(locks, signals, strict=False):
        limit = " ".join(x for x in (f"≥ {lock.low:g} {lock.unit}" if lock.low is not None else "",
                                      f"≤ {lock.high:g} {lock.unit}" if lock.high is not None else "") if x)
        try:
            value = lock.read()
        except Exception as err:  # noqa: BLE001 - a signal that cannot be read is shown as such
            out.append(InterlockValue(lock.name, signal, "?", limit, None))
            del err
            continue
        out.append(InterlockValue(lock.name, signal, f"{value:.4g} {lock.unit}", limit, lock.violation(value) is None))
    return tuple(out)
