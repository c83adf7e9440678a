"""An interlock trips while the running step is blocked in a long read of another instrument:
the bench is made safe at once, not when the read returns."""

from __future__ import annotations

import time

import pytest
import yaml
from engine_support import RunProcess, ServedLab
from rel_support import RELIABILITY_DATA

from labctl.fixture import load_fixture
from labctl.sim.control import control_request, default_control_path
from labctl.sim.testing import isolated_fixture, served_lab
from tests.conftest import run_labctl

PLAN = str(RELIABILITY_DATA / "blocked-read.yaml")
READ_SECONDS = 15  # the DAQ holds its reply back this long (wall seconds; the supply goes off ~2 s in)


@pytest.fixture
def slow_daq_lab(tmp_path):
    fx = isolated_fixture(tmp_path, time_scale=60)
    data = yaml.safe_load(fx.read_text())
    data["roles"]["daq"]["timeout"] = f"{READ_SECONDS * 2} s"  # a long read is legitimate here
    fx.write_text(yaml.safe_dump(data, sort_keys=False))
    with served_lab(fx) as proc:
        yield ServedLab(fx, proc)


def test_interlock_trip_during_a_long_read_makes_the_bench_safe_at_once(slow_daq_lab, tmp_path):
    lab = slow_daq_lab
    run = RunProcess("run", PLAN, "--fixture", str(lab.fixture), "--db", str(tmp_path / "results.db"), "--json")
    run.wait_for('"step_id": "settle"', timeout=90)
    res = run_labctl("sim", "inject", "slow_reply", "role=daq", f"delay={READ_SECONDS}", "count=1", "--fixture", str(lab.fixture))
    assert res.returncode == 0, res.stdout + res.stderr
    run.wait_for('"step_id": "rails"', timeout=60)  # now blocked in the DAQ read
    started = time.monotonic()
    while lab.scpi("psu", "OUTP? (@1)") != "0":
        assert time.monotonic() - started < READ_SECONDS - 5, "the supply stayed on while the step was blocked"
        time.sleep(0.2)
    print(f"\nsupply off {time.monotonic() - started:.1f} s into a {READ_SECONDS} s blocked read")
    assert run.proc.poll() is None  # the step is still blocked in its read: the watchdog acted
    assert lab.scpi("load", "INP?") == "0"
    state = control_request(default_control_path(load_fixture(str(lab.fixture))), {"op": "state"})
    assert state["chamber"]["setpoint"] == pytest.approx(25.0)  # (the run still holds the chamber's pty)
    rc = run.finish(timeout=READ_SECONDS * 3)
    assert rc == 3, run.output
    assert "safety interlock tripped" in run.output
    assert "safe-state watchdog" in run.output
