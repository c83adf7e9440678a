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
from labctl.store import open_store


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


def test_ctrl_c_before_every_slot_reached_a_shared_step_leaves_it_not_run(tmp_path):
    """Slot 1 waits at the shared soak while slot 2 is still at its own step: Ctrl-C then keeps
    the soak from running for anyone. Slot 1 records it ``not run`` (its board never soaked),
    so that a resume runs it as the first attempt; slot 2's own step, cut short, is an attempt."""
    fx = rack(tmp_path, time_scale=60)
    db = tmp_path / "r.db"
    with served_lab(fx):
        proc = subprocess.Popen([sys.executable, "-m", "labctl", "run", str(DATA / "barrier-early.yaml"), "--fixture",
                                 str(fx), "--slots", "1,2", "--json", "--db", str(db)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        waiting = in_identity = False
        events = []
        for line in proc.stdout:
            event = json.loads(line)
            events.append(event)
            waiting |= event["event"] == "LogMessage" and "slot 1 at the shared step steps/soak" in event["message"]
            in_identity |= event["event"] == "StepStarted" and event["slot"] == "2" \
                and event["step_key"] == "steps/identity#1"
            if waiting and in_identity:
                break
        time.sleep(0.5)  # slot 2 asks its console again and again (its board is not 0001)
        os.kill(proc.pid, signal.SIGINT)
        rest, err = proc.communicate(timeout=120)
        supplies = {slot: scpi(resource, "OUTP? (@1,2,3)") for slot, resource in slot_supplies(fx).items()}
    assert proc.returncode == 3, err
    events += map(json.loads, rest.splitlines())
    ended = {(e["slot"], e["step_key"]): e for e in events if e["event"] == "StepEnded"}
    soak_1 = ended[("1", "steps/soak#1")]
    assert soak_1["outcome"] == "ABORTED" and soak_1["message"].startswith("not run: SIGINT"), soak_1
    assert soak_1["duration"] > 0  # recorded for as long as it waited
    assert ended[("2", "steps/identity#1")]["message"].startswith("aborted: SIGINT")
    assert ended[("2", "steps/soak#1")]["message"].startswith("not run: SIGINT")
    store = open_store(str(db))
    try:
        info = {e["slot"]: store.resume_info(e["run_id"]) for e in events if e["event"] == "RunStarted"}
    finally:
        store.close()
    # what `labctl resume` numbers: the soak's first attempt is still to come on both slots
    assert "steps/soak" not in info["1"].attempts and "steps/soak" not in info["2"].attempts
    assert info["2"].attempts["steps/identity"] == 1
    assert supplies["1"] == supplies["2"] == "0,0,0"
