"""What `labctl run` prints when piped (a CI log, a file): plan steps counted as the plan and
JUnit count them, the safe state reported apart, and no line cut at 80 columns."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import yaml

from labctl.sim.testing import isolated_fixture


def test_piped_run_counts_plan_steps_reports_the_safe_state_apart_and_wraps_nothing(labctl, tmp_path):
    bench = isolated_fixture(tmp_path, time_scale=600)
    db = tmp_path / "a-results-folder-with-a-name-long-enough-to-pass-eighty-columns" / "r.db"
    db.parent.mkdir()
    junit = tmp_path / "smoke.xml"
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    res = labctl("run", "smoke.yaml", "--fixture", str(bench), "--db", str(db), "--junit", str(junit), env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    tests = int(ET.parse(junit).getroot().get("tests"))
    roles = len(yaml.safe_load(bench.read_text())["roles"])
    assert f"run PASSED  {tests} step(s) passed; safe state: {roles} role(s) OK" in res.stdout, res.stdout
    listed = json.loads(labctl("runs", "--db", str(db), "--format", "json").stdout)
    assert listed[0]["steps_passed"] == tests
    run_id = listed[0]["id"]
    # one line each, however long: nothing is folded at 80 columns when piped
    assert f"results: run {run_id} in sqlite:///{db}  (labctl runs show {run_id})" in res.stdout.splitlines(), \
        res.stdout
    show = labctl("runs", "show", run_id, "--db", str(db), env=env).stdout
    safe = next(line for line in show.splitlines() if "teardown/safe-state.psu" in line)
    assert "OUTP 0,(@1); OUTP 0,(@2); OUTP 0,(@3)" in safe, show
