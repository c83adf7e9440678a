"""Promise: a bench left live by a dead run (supply output on, load input on, chamber away
from its safe setpoint) is made safe before anything else when the next `labctl run` or
`labctl resume` starts, and the run's record says so; when it cannot be made safe, the run
is refused with a message that names the instrument."""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3

from bench_support import (
    RunProcess,
    ServedLab,
    bench_state,
    chamber_write,
    run_and_kill,
    run_outcome,
)

from labctl.sim.testing import isolated_fixture, served_lab

# every step reads back what the run found at its start, before any step switched anything
PROBE = """\
name: bench-probe
requires: [psu, load, chamber]
steps:
  - id: psu_output
    check: scpi
    args: {role: psu, query: "OUTP? (@1)", parse: int}
    limits: {equals: 0}
  - id: load_input
    check: scpi
    args: {role: load, query: "INP?", parse: int}
    limits: {equals: 0}
  - id: chamber_setpoint
    check: measure
    args: {role: chamber, property: setpoint, unit: degC}
    limits: {nominal: 25 degC, tol: ±0.5 degC}
"""


def leave_live(lab: ServedLab) -> None:
    """An independent client leaves the bench as a dead run would: powered, loaded, cold."""
    lab.scpi("psu", "VOLT 5,(@1);CURR 2,(@1);OUTP 1,(@1);*OPC?")
    lab.scpi("load", "CURR 0.5;INP 1;*OPC?")
    chamber_write(lab, "SETN 0", "SETP 0.0")
    state = bench_state(lab)
    assert (state["psu.1"], state["load"], float(state["chamber.setpoint"])) == ("1", "1", 0.0), state


def run_log(db: str, run_id: str) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute("SELECT message FROM logs WHERE run_id = ?", (run_id,))]
    finally:
        conn.close()


def test_run_makes_a_live_bench_safe_first_and_records_it(tmp_path):
    fixture, db = isolated_fixture(tmp_path, time_scale=600), str(tmp_path / "r.db")
    plan = tmp_path / "probe.yaml"
    plan.write_text(PROBE)
    with served_lab(fixture) as proc:
        lab = ServedLab(fixture, proc)
        leave_live(lab)
        run = RunProcess("run", str(plan), "--fixture", str(fixture), "--db", db, "--json")
        assert run.finish(timeout=120) == 0, run.output
        after = bench_state(lab)
    printed = [line for line in run.lines if line.startswith("pre-flight: ") and "earlier run" in line]
    assert len(printed) == 3, run.output
    assert any(line.startswith("pre-flight: psu: output 1 was on") for line in printed), run.output
    assert any(line.startswith("pre-flight: load: load input was on") for line in printed), run.output
    assert any(line.startswith("pre-flight: chamber: setpoint was 0 degC") for line in printed), run.output
    # the steps (run right after the interlocks) found the bench already safe
    events = [json.loads(line) for line in run.lines if line.startswith("{")]
    ended = {e["step_key"]: e["outcome"] for e in events if e["event"] == "StepEnded"}
    assert [ended[k] for k in ("steps/psu_output#1", "steps/load_input#1", "steps/chamber_setpoint#1")] == ["PASS"] * 3
    run_id = events[0]["run_id"]
    logged = run_log(db, run_id)
    for line in printed:
        assert line in logged, (line, logged)
    assert (after["psu.1"], after["load"], float(after["chamber.setpoint"])) == ("0", "0", 25.0), after


def test_a_fresh_bench_is_not_touched(tmp_path):
    fixture, db = isolated_fixture(tmp_path, time_scale=600), str(tmp_path / "r.db")
    plan = tmp_path / "probe.yaml"
    plan.write_text(PROBE)
    with served_lab(fixture):
        run = RunProcess("run", str(plan), "--fixture", str(fixture), "--db", db)
        assert run.finish(timeout=120) == 0, run.output
    assert not [line for line in run.lines if "left live" in line or "left by an earlier run" in line], run.output


def test_a_bench_that_cannot_be_made_safe_is_refused(tmp_path):
    # the supply refuses to switch its output off (OUTP 0 puts an error in its queue instead)
    fault = {"fault": "scpi_error", "role": "psu", "match": "OUTP 0"}
    fixture, db = isolated_fixture(tmp_path, time_scale=600, faults=[fault]), str(tmp_path / "r.db")
    plan = tmp_path / "probe.yaml"
    plan.write_text(PROBE)
    with served_lab(fixture) as proc:
        lab = ServedLab(fixture, proc)
        lab.scpi("psu", "VOLT 5,(@1);OUTP 1,(@1);*OPC?")
        run = RunProcess("run", str(plan), "--fixture", str(fixture), "--db", db, "--no-preflight")
        rc = run.finish(timeout=120)
        still = lab.scpi("psu", "OUTP? (@1)")
    assert rc == 2, run.output
    assert "cannot confirm the bench is safe: psu:" in run.output, run.output
    assert "Traceback" not in run.output
    assert still == "1"  # nothing pretended otherwise: the run did not start on it


def test_resume_after_kill_makes_the_left_live_bench_safe_first(tmp_path):
    fixture, db = isolated_fixture(tmp_path, time_scale=600), str(tmp_path / "r.db")
    with contextlib.ExitStack() as stack:
        lab = ServedLab(fixture, stack.enter_context(served_lab(fixture)))
        killed = run_and_kill(fixture, db, "steps/under_load@1", random.Random(5))
        live = bench_state(lab)
        assert live["psu.1"] == "1", live  # the dead run left the board powered
        resumed = RunProcess("resume", killed.run_id, "--db", db, "--fixture", str(fixture))
        assert resumed.finish(timeout=300) == 0, resumed.output
    made_safe = [line for line in resumed.lines if line.startswith("pre-flight: psu: output 1 was on")]
    assert made_safe, resumed.output
    assert made_safe[0] in run_log(db, killed.run_id)
    assert run_outcome(db, killed.run_id) == "passed"


def test_without_preflight_an_unreachable_bench_is_refused(tmp_path):
    import yaml

    fixture = isolated_fixture(tmp_path, time_scale=600)
    data = yaml.safe_load(fixture.read_text())
    data["sim"]["enabled"] = False  # a real bench whose instruments do not answer: their state is unknown
    fixture.write_text(yaml.safe_dump(data))
    run = RunProcess("run", "smoke.yaml", "--fixture", str(fixture), "--db", str(tmp_path / "r.db"), "--no-preflight")
    assert run.finish(timeout=120) == 2, run.output
    assert "error: cannot confirm the bench is safe: " in run.output, run.output
    assert all(f"{role}: cannot open connection" in run.output for role in ("psu", "load", "chamber")), run.output
    assert "Traceback" not in run.output
