"""Safety on a rack: a slot's interlock stops that slot only; a shared signal, or Ctrl-C,
stops every slot; each slot's outputs go off and the shared chamber to its safe temperature."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from slots_support import (
    DATA,
    chamber_setpoint,
    chamber_writes,
    inject,
    rack,
    run,
    scpi,
    slot_supplies,
)

from labctl.engine.events import StepEnded
from labctl.errors import ExitCode
from labctl.fixture import load_fixture
from labctl.sim.control import control_request, default_control_path
from labctl.sim.testing import served_lab


def test_a_slot_interlock_stops_that_slot_only(tmp_path):
    fx = rack(tmp_path)
    db = tmp_path / "r.db"
    silenced = threading.Event()

    def silence_console_of_slot_2(slot, event):
        if slot == "2" and isinstance(event, StepEnded) and event.step_key.startswith("steps/power_on"):
            silenced.set()
            inject(fx, {"fault": "instrument_timeout", "role": "2/dut", "count": 1})

    with served_lab(fx):
        out = run(fx, str(DATA / "interlocks.yaml"), db, subscriber=silence_console_of_slot_2)
        supplies = {slot: scpi(resource, "OUTP? (@1,2,3)") for slot, resource in slot_supplies(fx).items()}
    assert silenced.is_set()
    assert [s.outcome for s in out.slots] == ["passed", "aborted", "passed", "passed"]
    assert "die over-temperature" in out.slots[1].message
    assert out.exit_code is ExitCode.ABORTED
    # the aborted slot left the barrier: the others soaked, the chamber moved once
    assert [text for _s, _k, text in chamber_writes(db)] == ["SETP 45.0"]
    assert supplies == {slot: "0,0,0" for slot in "1234"}


def test_a_shared_interlock_stops_every_slot(tmp_path):
    fx = rack(tmp_path, time_scale=120)
    db = tmp_path / "r.db"
    with served_lab(fx):
        out = run(fx, str(DATA / "interlocks.yaml"), db, sets={"chamber_max": "35 degC"})
        supplies = {slot: scpi(resource, "OUTP? (@1,2,3)") for slot, resource in slot_supplies(fx).items()}
        setpoint = chamber_setpoint(fx)
    assert [s.outcome for s in out.slots] == ["aborted"] * 4
    assert all("chamber over-temperature" in s.message for s in out.slots), [s.message for s in out.slots]
    assert supplies == {slot: "0,0,0" for slot in "1234"}
    assert setpoint == 25.0
    assert out.bench_safe_state["chamber"].ok


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_during_a_four_slot_soak(tmp_path, sig):
    fx = rack(tmp_path, time_scale=60)
    with served_lab(fx):
        proc = subprocess.Popen([sys.executable, "-m", "labctl", "run", str(DATA / "soak-forever.yaml"), "--fixture",
                                 str(fx), "--slots", "all", "--json", "--db", str(tmp_path / "r.db")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started: set[str] = set()
        assert proc.stdout is not None
        for line in proc.stdout:  # every slot has reached the soak (one leads it, three wait at the barrier)
            event = json.loads(line)
            if event["event"] == "StepStarted" and event.get("step_id") == "soak" or \
                    event["event"] == "LogMessage" and "shared step steps/soak" in event.get("message", ""):
                started.add(event["slot"])
            if len(started) == 4:
                break
        state = control_request(default_control_path(load_fixture(str(fx))), {"op": "state"})
        deadline = time.monotonic() + 30
        while state["chamber"]["setpoint"] != 45.0 and time.monotonic() < deadline:
            time.sleep(0.1)
            state = control_request(default_control_path(load_fixture(str(fx))), {"op": "state"})
        assert state["chamber"]["setpoint"] == 45.0
        os.kill(proc.pid, sig)
        rest, err = proc.communicate(timeout=120)
        supplies = {slot: scpi(resource, "OUTP? (@1,2,3)") for slot, resource in slot_supplies(fx).items()}
        setpoint = chamber_setpoint(fx)
    assert proc.returncode == 3, err
    ended = [e for e in map(json.loads, rest.splitlines()) if e["event"] == "RunEnded"]
    assert sorted(e["slot"] for e in ended) == ["1", "2", "3", "4"]
    assert {e["outcome"] for e in ended} == {"aborted"}
    # every slot's soak is recorded for as long as its board was in it: the leader's, running,
    # and the others', waiting at the barrier from their arrival on (not 0 s at the abort)
    soaks = [e for e in map(json.loads, rest.splitlines())
             if e["event"] == "StepEnded" and e["step_key"].startswith("steps/soak")]
    assert sorted(e["slot"] for e in soaks) == ["1", "2", "3", "4"]
    assert all(e["outcome"] == "ABORTED" and e["duration"] > 0 for e in soaks), soaks
    assert supplies == {slot: "0,0,0" for slot in "1234"}
    assert setpoint == 25.0
    assert "bench safe state chamber: PASS" in err
