"""The JUnit XML of a run stopped by SIGTERM mid-soak, as `labctl run --junit` writes it and
`labctl report` makes it again: one `<error>`, the soak the abort cut short; the five steps
it never ran are `<skipped>` with the reason (before: six errors for one abort). The OCP
stream says the same: one step ends ERROR, the five end SKIP with the reason logged."""

from __future__ import annotations

import json
import signal
import time

from engine_support import DATA, RunProcess, assert_bench_safe
from junitparser import Error, JUnitXml, Skipped

from labctl.sim.testing import isolated_fixture
from tests.conftest import run_labctl

PLAN = str(DATA / "abortable-then-steps.yaml")


def cases(path):
    xml = JUnitXml.fromfile(str(path))
    return xml, [(s.name.rsplit("[", 1)[-1].rstrip("]") if "[" in s.name else "", c) for s in xml for c in s]


def test_sigterm_gives_one_error_and_skips_what_never_ran(served_lab, tmp_path):
    db, junit = tmp_path / "results.db", tmp_path / "run.xml"
    run = RunProcess("run", PLAN, "--fixture", str(served_lab.fixture), "--db", str(db), "--junit", str(junit),
                     "--json")
    run.wait_for('"step_id": "soak"', timeout=90)
    time.sleep(1.0)
    run.proc.send_signal(signal.SIGTERM)
    assert run.finish() == 3, run.output
    assert_bench_safe(served_lab)

    again = tmp_path / "report.xml"
    res = run_labctl("report", "--db", str(db), "--format", "junit", "-o", str(again))
    assert res.returncode == 0, res.stdout + res.stderr
    for path in (junit, again):
        xml, got = cases(path)
        assert (xml.tests, xml.errors, xml.failures, xml.skipped) == (8, 1, 0, 5)
        errors = [(corner, c.name) for corner, c in got if any(isinstance(r, Error) for r in c.result)]
        assert errors == [("vin=4.75 V", "soak")]
        error = next(r for _, c in got for r in c.result if isinstance(r, Error))
        assert error.message == "aborted: SIGTERM received: aborting to the safe state"
        skipped = [(corner, c.name, r.message) for corner, c in got for r in c.result if isinstance(r, Skipped)]
        assert [(corner, name) for corner, name, _ in skipped] == [
            ("vin=4.75 V", "core_rail"), ("vin=4.75 V", "io_rail"),
            ("vin=5 V", "soak"), ("vin=5 V", "core_rail"), ("vin=5 V", "io_rail")]
        assert {m for _, _, m in skipped} == {"not run: SIGTERM received: aborting to the safe state"}
        per_suite = {s.name: (s.errors, s.skipped) for s in xml}
        assert sorted(per_suite.values()) == [(0, 0), (0, 3), (1, 2)]


def test_ocp_of_an_aborted_run_ends_unrun_steps_skip(tmp_path):
    bench = isolated_fixture(tmp_path, time_scale=60)
    db, out = tmp_path / "results.db", tmp_path / "run.jsonl"
    run = RunProcess("run", PLAN, "--fixture", str(bench), "--db", str(db), "--json")
    run.wait_for('"step_id": "soak"', timeout=90)
    time.sleep(1.0)
    run.proc.send_signal(signal.SIGTERM)
    assert run.finish() == 3, run.output
    res = run_labctl("report", "--db", str(db), "--format", "ocp", "-o", str(out))
    assert res.returncode == 0, res.stdout + res.stderr
    steps: dict[str, dict] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        art = json.loads(line).get("testStepArtifact")
        if art:
            step = steps.setdefault(art["testStepId"], {"logs": []})
            step.update(art.get("testStepStart", {}))
            step.update(art.get("testStepEnd", {}))
            step["logs"] += [art["log"]["message"]] if "log" in art else []
    ended = {s["name"]: s["status"] for s in steps.values() if not s["name"].startswith("teardown/")}
    assert ended == {"setup/power": "COMPLETE", "steps/soak [vin=4.75 V]": "ERROR",
                     "steps/core_rail [vin=4.75 V]": "SKIP", "steps/io_rail [vin=4.75 V]": "SKIP",
                     "steps/soak [vin=5 V]": "SKIP", "steps/core_rail [vin=5 V]": "SKIP",
                     "steps/io_rail [vin=5 V]": "SKIP"}
    unrun = [s for s in steps.values() if s["status"] == "SKIP"]
    assert all(s["logs"] == ["not run: SIGTERM received: aborting to the safe state"] for s in unrun), unrun
