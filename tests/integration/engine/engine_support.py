"""Helpers: a `labctl sim serve` in its own process, `labctl run` as a user starts it, and
direct queries to the simulated instruments (what a technician would check on the bench)."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyvisa
import serial
import yaml

from labctl.sim.testing import isolated_fixture, served_lab

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "engine"


class ServedLab:
    def __init__(self, fixture: Path, proc: subprocess.Popen) -> None:
        self.fixture = fixture
        self.proc = proc
        self.roles = yaml.safe_load(fixture.read_text())["roles"]

    def scpi(self, role: str, command: str) -> str:
        # pyvisa shares one ResourceManager per backend in a process: close only the instrument
        rm = pyvisa.ResourceManager("@py")
        inst = rm.open_resource(self.roles[role]["resource"], read_termination="\n",
                                write_termination="\n", timeout=3000)
        try:
            return inst.query(command).strip()
        finally:
            inst.close()

    def serial_query(self, role: str, command: str) -> str:
        with serial.Serial(self.roles[role]["resource"], 9600, timeout=3) as port:
            port.reset_input_buffer()
            port.write(command.encode() + b"\n")
            return port.readline().decode().strip()


def assert_bench_safe(lab: ServedLab, ambient: float = 25.0) -> None:
    """The bench read back as a technician would: supply output off, load input off, chamber
    back at its safe (ambient) setpoint."""
    assert lab.scpi("psu", "OUTP? (@1)") == "0", "supply output still on"
    assert lab.scpi("load", "INP?") == "0", "load input still on"
    assert abs(float(lab.serial_query("chamber", "SETP?")) - ambient) < 1e-6, "chamber not back at ambient"


def served_lab_fixture(tmp_path):
    fx = isolated_fixture(tmp_path, time_scale=60)
    with served_lab(fx) as proc:
        yield ServedLab(fx, proc)


class RunProcess:
    """`labctl run …` in a subprocess, its output read line by line without blocking."""

    def __init__(self, *args: str, cwd: Path | None = None, env: dict | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "labctl", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, cwd=cwd,
                                     env={**os.environ, "COLUMNS": "200", **(env or {})})
        self.lines: list[str] = []
        self._q: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._q.put(line.rstrip("\n"))
        self._q.put(None)

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._q.get(timeout=0.2)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"process ended before {text!r}:\n" + "\n".join(self.lines))
            self.lines.append(line)
            if text in line:
                return line
        raise AssertionError(f"{text!r} not seen within {timeout} s:\n" + "\n".join(self.lines))

    def finish(self, timeout: float = 120) -> int:
        rc = self.proc.wait(timeout=timeout)
        while True:
            try:
                line = self._q.get(timeout=5)
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
        return rc

    @property
    def output(self) -> str:
        return "\n".join(self.lines)


def stored_measurements(db: str, run_id: str, *, final_only: bool = False) -> list[tuple[str, str, str]]:
    """(step key, name, labels) of every stored measurement of the run (every attempt, or the
    final attempt of each step), via the query API."""
    import json

    from labctl.store import open_store, query

    store = open_store(db, mark_interrupted=False)
    try:
        df = query.measurements(store, run_id, final_only=final_only)
    finally:
        store.close()
    return [(r.step_key, r.name, json.dumps(r.labels or {}, sort_keys=True)) for r in df.itertuples()]
