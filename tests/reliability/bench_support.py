"""Helpers of the resume and live-bench reliability tests: the flagship run killed with
``kill -9`` at a chosen step, and a technician's independent clients on the bench (pyvisa
for the SCPI instruments, pyserial for the chamber's pty)."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import serial

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration" / "engine"))  # RunProcess, ServedLab

from engine_support import RunProcess, ServedLab, stored_measurements  # noqa: E402, F401 (used by the tests)

FLAGSHIP = "accelerator-evt.yaml"
GOLDEN = "SIM-GOLD-0001"
FULL = os.environ.get("LABCTL_FULL") == "1"
SEED = int(os.environ.get("LABCTL_SEED", "9"))


def flagship_keys() -> list[str]:
    """Every setup and main step of the flagship plan, in run order ("steps/soak@1")."""
    from labctl.plan.loader import load_plan

    loaded = load_plan(FLAGSHIP)
    return [f"{ps.group}/{ps.key}" for ps in loaded.expand() if ps.group in ("setup", "steps")]


@dataclass
class Killed:
    run_id: str
    committed: list[tuple[str, str, str]] = field(default_factory=list)  # (step key, name, labels)
    output: str = ""


def run_and_kill(fixture: Path, db: str, step: str, rng: random.Random, dut: str = GOLDEN) -> Killed:
    """`labctl run` of the flagship on a golden board, SIGKILLed a random moment after
    ``step`` started (so it is the cut-off). Measurements of steps whose end was printed
    are reported committed (the recorder commits a step before the line is printed)."""
    run = RunProcess("run", FLAGSHIP, "--fixture", str(fixture), "--dut", dut, "--db", db, "--json")
    pending: dict[str, list[tuple[str, str, str]]] = {}
    killed = Killed("")
    while True:
        event = json.loads(run.wait_for('"event"', timeout=240))
        killed.run_id = event["run_id"]
        if event["event"] == "MeasurementRecorded":
            pending.setdefault(event["step_key"], []).append(
                (event["step_key"], event["name"], json.dumps(event["labels"], sort_keys=True)))
        elif event["event"] == "StepEnded":
            killed.committed.extend(pending.pop(event["step_key"], []))
        elif event["event"] == "StepStarted" and event["step_key"] == f"{step}#1":
            break
        assert event["event"] != "RunEnded", f"the run ended before {step} started:\n{run.output}"
    # up to 12 s of simulated time into the step (the last step, teardown and the safe state
    # take about 30 s: the kill lands before the run ends)
    time.sleep(rng.uniform(0.0, 0.02))
    run.proc.send_signal(signal.SIGKILL)
    run.proc.wait(timeout=30)
    killed.output = run.output
    return killed


def make_safe_by_hand(lab: ServedLab) -> None:
    """What a technician does after a crash: supply outputs off, load off, chamber to 25 degC."""
    for ch in (1, 2, 3):
        lab.scpi("psu", f"OUTP 0,(@{ch});*OPC?")
    lab.scpi("load", "INP 0;*OPC?")
    chamber_write(lab, "SETN 0", "SETP 25.0")


def chamber_write(lab: ServedLab, *lines: str) -> None:
    with serial.Serial(lab.roles["chamber"]["resource"], 9600, timeout=3) as port:
        for line in lines:
            port.write(line.encode() + b"\n")
        port.flush()


def bench_state(lab: ServedLab) -> dict[str, str]:
    """The bench as an independent client reads it back."""
    state = {f"psu.{ch}": lab.scpi("psu", f"OUTP? (@{ch})") for ch in (1, 2, 3)}
    state["load"] = lab.scpi("load", "INP?")
    state["chamber.setpoint"] = lab.serial_query("chamber", "SETP?")
    return state


def step_rows(db: str, run_id: str) -> list[sqlite3.Row]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(
            "SELECT s.session, s.step_key, s.step_group, s.outcome, s.message, s.tags, "
            "(SELECT COUNT(*) FROM measurements m WHERE m.step_ref = s.id) AS n "
            "FROM steps s WHERE s.run_id = ? ORDER BY s.session, s.seq", (run_id,)).fetchall()
    finally:
        conn.close()


def run_outcome(db: str, run_id: str) -> str:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT outcome FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
    finally:
        conn.close()
