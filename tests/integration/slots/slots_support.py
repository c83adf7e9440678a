"""Helpers of the many-slot tests: a rack fixture with free ports, the orchestrator run in
process, and the bench read back as a technician would (SCPI on each slot's supply)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pyvisa
import serial
import yaml

from labctl.fixture import load_fixture
from labctl.launch import RunRequest
from labctl.sim.control import control_request, default_control_path
from labctl.sim.testing import isolated_fixture
from labctl.slots.orchestrator import SlotsOutput, SlotsRequest, run_slots

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "slots"


def rack(tmp_path: Path, source: str = "sim-rack4.yaml", **sim: Any) -> Path:
    return isolated_fixture(tmp_path, source, **{"time_scale": 600, **sim})


def run(fixture: Path, plan: str, db: Path, *, slots: str = "all", duts: str | None = None,
        sets: dict[str, str] | None = None, lease_timeout: float = 30.0, events: list | None = None,
        lab_hook: Any = None, subscriber: Any = None, bench_log: Path | None = None) -> SlotsOutput:
    """``labctl run PLAN --slots …`` in this process (the orchestrator with its own abort control)."""
    def subscribers(slot: str) -> list:
        subs = [lambda e, s=slot: events.append((s, e))] if events is not None else []
        return subs + ([lambda e, s=slot: subscriber(s, e)] if subscriber is not None else [])

    req = RunRequest(plan=plan, fixture=str(fixture), db=str(db), overrides=dict(sets or {}))
    return run_slots(SlotsRequest(req, slots, duts, lease_timeout, str(bench_log) if bench_log else None), subscribers,
                     say=lambda _t: None,
                     handle_signals=False, lab_hook=lab_hook)


def slot_supplies(fixture: Path) -> dict[str, str]:
    """slot id -> the resource of its supply."""
    data = yaml.safe_load(Path(fixture).read_text())
    return {s["id"]: s["roles"]["psu"]["resource"] for s in data["slots"]}


def scpi(resource: str, command: str) -> str:
    rm = pyvisa.ResourceManager("@py")
    inst = rm.open_resource(resource, read_termination="\n", write_termination="\n", timeout=3000)
    try:
        return inst.query(command).strip()
    finally:
        inst.close()


def chamber_setpoint(fixture: Path) -> float:
    """The shared chamber's setpoint, read over its serial line."""
    resource = yaml.safe_load(Path(fixture).read_text())["roles"]["chamber"]["resource"]
    with serial.Serial(resource, 9600, timeout=3) as port:
        port.reset_input_buffer()
        port.write(b"SETP?\n")
        return float(port.readline().decode().strip())


def chamber_writes(db: Path, prefix: str = "SETP ") -> list[tuple[str, str, str]]:
    """(slot, step key, command) of every chamber command starting with ``prefix`` in the
    stored session logs (queries, ``SETP?``, left out)."""
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT r.slot, i.step_key, i.text FROM io_log i JOIN runs r ON r.id = i.run_id "
                         "WHERE i.instrument = 'chamber' AND i.kind = 'write' ORDER BY i.t").fetchall()
    return [r for r in rows if r[2].startswith(prefix)]


def stored_runs(db: Path) -> list[tuple[str, str, str, int]]:
    """(run id, slot, outcome, measurements) of every stored run."""
    with sqlite3.connect(db) as c:
        return c.execute("SELECT r.id, r.slot, r.outcome, (SELECT COUNT(*) FROM measurements m WHERE m.run_id = r.id) "
                         "FROM runs r ORDER BY r.slot").fetchall()


def inject(fixture: Path, fault: dict, slot: str | None = None) -> None:
    """A fault injected into the served lab through its control socket (``labctl sim inject
    [--slot SLOT]``)."""
    control_request(default_control_path(load_fixture(str(fixture))), {"op": "inject", "fault": fault, "slot": slot})
