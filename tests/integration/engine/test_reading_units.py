"""A reading whose unit the plan did not name (``measure`` without ``unit:`` records the
property's own unit) is judged against limits converted to that unit, and a limit that cannot
be is an ERROR at its place in the plan; a ``power.on`` the supply would refuse changes
nothing on the bench (validate refuses it outright where it can see the value: at the first
corner). Run as a user runs them: ``labctl run`` against the served lab."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_labctl

pytestmark = pytest.mark.timeout(180)

PLAN = """\
name: reading-units
requires: [psu, chamber]
corners:
  ilim: [2 A, 50 A]
steps:
  - id: setv
    per_corner: false
    check: set
    args: {target: psu.ch1.voltage, value: 5 V}
  - id: below_mV
    per_corner: false
    check: measure
    args: {role: psu, property: ch1.voltage_setpoint}
    limits: {max: 1000 mV}
  - id: above_mV
    per_corner: false
    check: measure
    args: {role: psu, property: ch1.voltage_setpoint}
    limits: {min: 4000 mV}
  - id: edge_mV
    per_corner: false
    check: measure
    args: {role: psu, property: ch1.voltage_setpoint}
    limits: {min: 4000 mV, marginal: 1 V}
  - id: equals_mV
    per_corner: false
    check: measure
    args: {role: psu, property: ch1.voltage_setpoint}
    limits: {equals: 5000 mV}
  - id: degF
    per_corner: false
    check: measure
    args: {role: chamber, property: temperature}
    limits: {max: 50 degF}
  - id: amps
    per_corner: false
    check: measure
    args: {role: psu, property: ch1.voltage_setpoint}
    limits: {max: 2 A}
  - id: refused_on
    check: power.on
    args: {voltage: 5 V, current_limit: "${ilim}"}
  - id: still_on
    check: measure
    args: {role: psu, property: ch1.output}
    limits: {equals: true}
setup:
  - id: on
    check: power.on
    args: {voltage: 5 V, current_limit: 2 A}
"""


def test_limits_follow_the_unit_the_reading_came_in(served_lab, tmp_path):
    plan = tmp_path / "units.yaml"
    plan.write_text(PLAN)
    db = tmp_path / "r.db"
    ok = run_labctl("validate", str(plan), "--fixture", str(served_lab.fixture))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    out = run_labctl("run", str(plan), "--fixture", str(served_lab.fixture), "--db", str(db), "--json",
                     "--no-preflight")
    assert out.returncode == 2, out.stdout[-3000:] + out.stderr[-3000:]
    run_id = json.loads(out.stdout.strip().splitlines()[-1])["run_id"]
    shown = json.loads(run_labctl("runs", "show", run_id, "--db", str(db), "--format", "json").stdout)
    steps = {s["step_id"]: s for s in shown["steps"]}
    got = {k: steps[k]["outcome"] for k in ("below_mV", "above_mV", "edge_mV", "equals_mV", "degF", "amps")}
    # 5 V against 1000 mV had passed and against 4000 mV failed (the numbers compared bare)
    assert got == {"below_mV": "FAIL", "above_mV": "PASS", "edge_mV": "PASS", "equals_mV": "PASS",
                   "degF": "ERROR", "amps": "ERROR"}
    values = {m["step_key"].split("#")[0].split("/")[-1]: m for m in shown["measurements"]}
    assert values["edge_mV"]["verdict"] == "MARGINAL"  # 5 V is the band's inner edge (4 V + 1 V)
    assert values["below_mV"]["unit"] == "V" and values["below_mV"]["value"] == pytest.approx(5.0)
    assert steps["degF"]["message"].startswith(f"{plan}:34:19: max: 50 degF is in degF, but value is measured in degC")
    assert "the temperature 50 degF is 10 degC" in steps["degF"]["message"]
    assert steps["amps"]["message"].startswith(f"{plan}:39:19: max: 2 A is a current, but value is measured as a voltage")
    # the refused power.on (50 A past the supply's range, the second corner) sent nothing: the
    # output stayed on
    on = [(st["outcome"], st["message"]) for st in shown["steps"] if st["step_id"] == "refused_on"]
    assert on[0][0] == "PASS" and on[1][0] == "ERROR" and "current_limit 50 A is outside 0..5.15 A" in on[1][1], on
    assert [st["outcome"] for st in shown["steps"] if st["step_id"] == "still_on"] == ["PASS", "PASS"]


def test_validate_refuses_a_supply_setting_out_of_the_supplys_range(served_lab, tmp_path):
    plan = tmp_path / "on.yaml"
    plan.write_text("name: on\nrequires: [psu]\nsteps:\n  - id: on\n    check: power.on\n"
                    "    args: {voltage: 5 V, current_limit: 50 A, ovp: 90 V}\n")
    res = run_labctl("validate", str(plan), "--fixture", str(served_lab.fixture))
    assert res.returncode == 4
    out = res.stdout + res.stderr
    assert "step 'on': current_limit 50 A is outside 0..5.15 A, what psu (keysight-e36312a) takes on channel 1" in out
    assert "step 'on': ovp 90 V is outside 0..6.6 V" in out
