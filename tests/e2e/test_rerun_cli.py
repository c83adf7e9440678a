"""`labctl rerun`: re-run the failed steps (or chosen ones) of a finished run on the board now
on the fixture, as a new run that references the old one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labctl.sim.testing import isolated_fixture

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tight_plan(tmp_path) -> Path:
    """The smoke plan with a core-rail limit the golden board misses (0.80 V ± 25 mV)."""
    text = (ROOT / "testplans" / "smoke.yaml").read_text()
    plan = tmp_path / "tight.yaml"
    plan.write_text(text.replace("limits: {nominal: 0.75 V, tol: ±25 mV}", "limits: {nominal: 0.80 V, tol: ±25 mV}"))
    return plan


def _steps(labctl, db, run_id):
    shown = json.loads(labctl("runs", "show", run_id, "--db", str(db), "--format", "json").stdout)
    return shown, [s["step_id"] for s in shown["steps"] if s["group"] != "teardown"]


def test_the_failed_step_is_re_run_after_what_establishes_the_board_state(labctl, tmp_path, tight_plan):
    bench, db = isolated_fixture(tmp_path, time_scale=600), tmp_path / "r.db"
    first = labctl("run", str(tight_plan), "--fixture", str(bench), "--db", str(db))
    assert first.returncode == 1, first.stdout + first.stderr
    old = json.loads(labctl("runs", "--db", str(db), "--format", "json").stdout)[0]["id"]

    again = labctl("rerun", old, "--fixture", str(bench), "--db", str(db))
    assert again.returncode == 1, again.stdout + again.stderr  # the board was not reworked: fails again
    assert f"re-run of run {old} (steps steps/core_rail)" in again.stdout
    runs = json.loads(labctl("runs", "--db", str(db), "--format", "json").stdout)
    new = runs[0]
    assert new["rerun_of"] == old and new["id"] != old and new["dut_serial"] == runs[1]["dut_serial"]
    _, steps = _steps(labctl, db, new["id"])
    assert steps == ["power_on", "core_rail"]  # power_on establishes the state; dut_identity is not re-run

    chosen = labctl("rerun", old, "--step", "dut_identity", "--fixture", str(bench), "--db", str(db))
    assert chosen.returncode == 0, chosen.stdout + chosen.stderr
    newest = json.loads(labctl("runs", "--db", str(db), "--format", "json").stdout)[0]
    assert _steps(labctl, db, newest["id"])[1] == ["dut_identity"]


def test_an_unknown_step_is_one_clear_error_before_anything_is_powered(labctl, tmp_path):
    bench, db = isolated_fixture(tmp_path, time_scale=600), tmp_path / "r.db"
    assert labctl("run", "smoke.yaml", "--fixture", str(bench), "--db", str(db)).returncode == 0
    old = json.loads(labctl("runs", "--db", str(db), "--format", "json").stdout)[0]["id"]
    res = labctl("rerun", old, "--fixture", str(bench), "--db", str(db))
    assert res.returncode == 4 and "has no failed step to re-run" in res.stdout + res.stderr
    res = labctl("rerun", old, "--step", "no_such", "--fixture", str(bench), "--db", str(db))
    assert res.returncode == 4, res.stdout + res.stderr
    out = res.stdout + res.stderr
    assert "no step no_such in plan smoke" in out and "dut_identity, power_on, core_rail" in out
    assert "Traceback" not in out
    assert len(json.loads(labctl("runs", "--db", str(db), "--format", "json").stdout)) == 1
