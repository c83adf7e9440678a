"""The simulated board obeys its supply, seen the way a lab sees it: a served lab (`labctl sim
serve`) read over real SCPI sockets and the DUT console's pty, and plans run by `labctl run`.

- output off: the DAQ reads the rails at ~0 V and the console says power-good off, powered 0;
- a power-down check (output off, wait, rails below 20 mV, console `powered` 0) passes on a
  golden board;
- an inrush limit passes on a golden board and fails on one without soft start."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
import pyvisa
import serial
import yaml

from labctl.sim.testing import isolated_fixture, served_lab

pytestmark = pytest.mark.timeout(180)

RAILS = ("VDD_CORE", "VDD_IO", "VDD_HBM", "VDD_AUX")
NOMINAL = {"VDD_CORE": 0.75, "VDD_IO": 0.9, "VDD_HBM": 1.2, "VDD_AUX": 3.3}
DAQ_CHANNEL = {"VDD_CORE": 111, "VDD_HBM": 112, "VDD_IO": 113, "VDD_AUX": 114}
INRUSH_DUT = "SIM-INRUSH-0009"


def console(port: serial.Serial, command: str) -> dict[str, str]:
    port.write((command + "\n").encode())
    out: dict[str, str] = {}
    while (line := port.readline().decode().strip()) != "OK":
        assert line and not line.startswith("ERR"), (command, line)
        name, value, *_ = line.split()
        out[name] = value
    return out


def poll(what, predicate, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_output_off_reads_zero_on_the_daq_and_power_good_off_on_the_console(tmp_path):
    fixture = isolated_fixture(tmp_path, time_scale=60)
    roles = yaml.safe_load(fixture.read_text())["roles"]
    with served_lab(fixture):
        rm = pyvisa.ResourceManager("@py")
        opts = {"read_termination": "\n", "write_termination": "\n", "timeout": 3000}
        psu, daq = (rm.open_resource(roles[r]["resource"], **opts) for r in ("psu", "daq"))
        port = serial.Serial(roles["dut"]["resource"], 115200, timeout=3)
        try:
            psu.write("VOLT 5,(@1);CURR 5,(@1);:OUTP ON,(@1)")
            poll("power-good", lambda: console(port, "power-good")["VDD_HBM"] not in ("off", "never"))
            for rail, ch in DAQ_CHANNEL.items():
                assert float(daq.query(f"MEAS:VOLT:DC? (@{ch})")) == pytest.approx(NOMINAL[rail], rel=0.02)
            assert psu.query("OUTP OFF,(@1);*OPC?") == "1"
            time.sleep(0.05)  # 3 s simulated: > 100 decay time constants of every rail
            for rail, ch in DAQ_CHANNEL.items():
                assert abs(float(daq.query(f"MEAS:VOLT:DC? (@{ch})"))) < 0.005, rail
            assert set(console(port, "power-good").values()) == {"off"}
            sensors = console(port, "sensors")
            assert sensors["powered"] == "0" and float(sensors["VIN_V"]) == 0.0
            state = json.loads(subprocess.run(
                [sys.executable, "-m", "labctl", "sim", "state", "--fixture", str(fixture), "--json"],
                capture_output=True, text=True, timeout=60).stdout)
            assert state["powered"] is False and all(abs(r["V"]) < 0.005 for r in state["rails"].values())
        finally:
            port.close()
            psu.close()
            daq.close()
            rm.close()


def _plan(tmp_path, name: str, steps: list[dict]) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "version": "1.0", "requires": ["psu", "daq", "dut"],
                                    "steps": steps}, sort_keys=False), encoding="utf-8")
    return str(path)


POWER_ON = {"id": "power_on", "check": "power.on",
            "args": {"channel": "VIN", "voltage": "5 V", "current_limit": "5 A",
                     "inrush_window": "30 ms", "settle": "100 ms"},
            "limits": {"inrush_peak": {"max": "3 A"}}}


def _run(labctl, tmp_path, plan: str, fixture, dut: str):
    res = labctl("run", plan, "--fixture", str(fixture), "--dut", dut, "--db", str(tmp_path / "r.db"), "--json",
                 timeout=150)
    events = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    started = {e["step_key"]: e["step_id"] for e in events if e["event"] == "StepStarted"}
    ended = {started[e["step_key"]]: (e["outcome"], e["message"]) for e in events if e["event"] == "StepEnded"}
    return res, ended


def test_a_power_down_check_passes_on_a_golden_board(labctl, tmp_path):
    fixture = isolated_fixture(tmp_path, time_scale=60)
    plan = _plan(tmp_path, "power-down", [
        POWER_ON,
        {"id": "rails_up", "check": "power.rails", "args": {"rails": list(RAILS), "via": "daq", "samples": 2},
         "limits": {r: {"nominal": f"{v} V", "tol": "3 %"} for r, v in NOMINAL.items()}},
        {"id": "output_off", "check": "set", "args": {"target": "psu.ch1.output", "value": "off"}},
        {"id": "discharge", "check": "wait", "args": {"duration": "1 s", "reason": "rails discharge"}},
        {"id": "rails_down", "check": "power.rails", "args": {"rails": list(RAILS), "via": "daq", "samples": 2},
         "limits": {r: {"max": "20 mV"} for r in RAILS}},
        {"id": "board_off", "check": "measure", "args": {"role": "dut", "property": "powered"},
         "limits": {"value": {"max": 0}}},
        {"id": "core_draws_nothing", "check": "measure", "args": {"role": "dut", "property": "VDD_CORE_I"},
         "limits": {"value": {"max": 0.01}}},
    ])
    with served_lab(fixture):
        res, ended = _run(labctl, tmp_path, plan, fixture, "SIM-GOLD-0001")
    assert res.returncode == 0, res.stdout + res.stderr
    for step in ("power_on", "rails_up", "rails_down", "board_off", "core_draws_nothing"):
        assert ended[step][0] == "PASS", (step, ended[step])


def test_an_inrush_limit_passes_golden_and_fails_a_board_without_soft_start(labctl, tmp_path):
    # simulated time runs 30x slower than the wall: the 7 ms inrush of a board without soft start
    # lasts ≈ 0.2 s of wall time, so the supply's readings (one per round trip) see it as a real
    # bench's fast current probe would, even on a busy machine
    fixture = isolated_fixture(tmp_path, time_scale=1 / 30, duts={INRUSH_DUT: {"faults": ["no_soft_start"]}})
    # OCP off to see the inrush itself (with it on, the supply protects the board: asserted below)
    plan = _plan(tmp_path, "inrush", [{**POWER_ON, "args": {**POWER_ON["args"], "settle": "40 ms", "ocp": False}}])
    protected = _plan(tmp_path, "inrush-ocp", [{**POWER_ON, "args": {**POWER_ON["args"], "settle": "40 ms"}}])
    with served_lab(fixture):
        res, ended = _run(labctl, tmp_path, plan, fixture, "SIM-GOLD-0001")
        assert res.returncode == 0, res.stdout + res.stderr
        assert ended["power_on"][0] == "PASS", ended
        state = subprocess.run([sys.executable, "-m", "labctl", "sim", "dut", "--fixture", str(fixture), INRUSH_DUT],
                               capture_output=True, text=True, timeout=60)
        assert "no_soft_start" in state.stdout, state.stdout + state.stderr
        time.sleep(0.5)  # the safe state switched the output off: let VIN at the board fall (15 ms simulated)
        res, ended = _run(labctl, tmp_path, plan, fixture, INRUSH_DUT)
        assert res.returncode == 1, res.stdout + res.stderr
        outcome, message = ended["power_on"]
        assert outcome == "FAIL" and "inrush_peak 5" in message, message
        time.sleep(0.5)
        res, ended = _run(labctl, tmp_path, protected, fixture, INRUSH_DUT)
    assert res.returncode == 1, res.stdout + res.stderr
    outcome, message = ended["power_on"]
    assert outcome == "FAIL" and "protection tripped" in message, message
