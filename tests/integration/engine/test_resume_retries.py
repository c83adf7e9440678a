"""A run killed between the attempts of a step with retries resumes that step with the
attempts it had left: the verdict an uninterrupted run would have given (the step had been
taken as finished on the ERROR of its first attempt, and the run ended error)."""

from __future__ import annotations

import json
import signal
import time

import pytest
from engine_support import RunProcess

from tests.conftest import run_labctl

pytestmark = pytest.mark.timeout(240)

PLAN = """\
name: retried
requires: [psu, daq, dut]
setup:
  - id: power_on
    check: power.on
    args: {voltage: 5 V, current_limit: 5 A}
steps:
  - id: core
    check: power.rails
    args: {rails: [VDD_CORE], via: daq}
    limits: {nominal: 0.75 V, tol: ±25 mV}
    retries: 2
  - id: io
    check: power.rails
    args: {rails: [VDD_IO], via: daq}
    limits: {nominal: 0.9 V, tol: 3 %}
teardown:
  - id: power_off
    check: set
    args: {target: psu.ch1.output, value: "off"}
"""


@pytest.mark.parametrize(("lost", "outcome", "attempts"), [
    (2, "passed", [("1", "ERROR"), ("2", "PASS")]),
    (9, "error", [("1", "ERROR"), ("2", "ERROR"), ("3", "ERROR")]),  # 3 attempts in all, not 1 + 3
], ids=["passes-on-a-retry", "retries-run-out"])
def test_a_kill_between_retries_resumes_the_step_with_the_attempts_it_had_left(served_lab, tmp_path, lost, outcome,
                                                                                attempts):
    plan = tmp_path / "retried.yaml"
    plan.write_text(PLAN)
    db = str(tmp_path / "r.db")
    fx = str(served_lab.fixture)
    # the DAQ loses `lost` commands: attempt 1 of core times out, and attempt 2 was under way
    res = run_labctl("sim", "inject", "--fixture", fx, "instrument_timeout", "role=daq", f"count={lost}", "after=0")
    assert res.returncode == 0, res.stdout + res.stderr
    run = RunProcess("run", str(plan), "--fixture", fx, "--db", db, "--json", "--no-preflight")
    started = json.loads(run.wait_for('"RunStarted"', timeout=60))
    run.wait_for('"steps/core#2"', timeout=90)  # attempt 1 ended ERROR; attempt 2 waits on the DAQ
    time.sleep(0.5)  # attempt 1 committed
    run.proc.send_signal(signal.SIGKILL)
    run.finish()
    if lost == 2:
        assert run_labctl("sim", "clear", "--fixture", fx).returncode == 0
    run_id = started["run_id"]
    out = run_labctl("resume", run_id, "--fixture", fx, "--db", db, "--no-preflight")
    assert "1 cut off and re-run" in out.stdout, out.stdout + out.stderr
    assert out.returncode == (0 if outcome == "passed" else 2), out.stdout[-3000:] + out.stderr[-3000:]
    shown = json.loads(run_labctl("runs", "show", run_id, "--db", db, "--format", "json").stdout)
    assert shown["run"]["outcome"] == outcome, shown["run"]
    core = [s for s in shown["steps"] if s["step_id"] == "core"]
    # attempt 1 (ERROR) of the first session, then the resumed session's
    assert [(s["step_key"].split("#")[1], s["outcome"]) for s in core] == attempts, core
