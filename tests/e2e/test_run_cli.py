"""`labctl run` as a user runs it: exit codes, output, --json, --junit, --answers, bad input.

Each test writes a private copy of the simulated bench (free ports, own ptys) and lets
`labctl run` start the simulated lab in-process, as it does for a user with no lab running.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from labctl.sim.testing import isolated_fixture

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "engine"


@pytest.fixture
def bench(tmp_path):
    return isolated_fixture(tmp_path, time_scale=600)


def test_golden_board_passes_the_flagship_plan(labctl, bench, tmp_path):
    junit = tmp_path / "evt.xml"
    db = tmp_path / "r.db"
    res = labctl("run", "accelerator-evt.yaml", "--fixture", str(bench), "--dut", "SIM-GOLD-0001",
                 "--db", str(db), "--junit", str(junit), timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "run PASSED" in res.stdout
    assert "pre-flight: 7 role(s) OK" in res.stdout
    suite = ET.parse(junit).getroot()
    assert int(suite.get("tests")) >= 30
    assert suite.get("failures") == "0" and suite.get("errors") == "0"
    runs = json.loads(labctl("runs", "--db", str(db), "--format", "json").stdout)
    assert [(r["plan_name"], r["dut_serial"], r["outcome"]) for r in runs] == [
        ("accelerator-evt", "SIM-GOLD-0001", "passed")]


def test_marginal_lane_fails_ber_at_the_hot_corner_and_names_the_lane(labctl, bench, tmp_path):
    res = labctl("run", "accelerator-evt.yaml", "--fixture", str(bench), "--dut", "SIM-MARG-0003",
                 "--db", str(tmp_path / "r.db"), timeout=300)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "run FAILED" in res.stdout
    failing = [line for line in res.stdout.splitlines() if "BER upper bound" in line]
    assert failing and all("lane 3" in line for line in failing), res.stdout


def test_json_streams_one_event_per_line(labctl, bench, tmp_path):
    res = labctl("run", "smoke.yaml", "--fixture", str(bench), "--db", str(tmp_path / "r.db"), "--json")
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    assert events[0]["event"] == "RunStarted" and events[-1]["event"] == "RunEnded"
    assert events[-1]["outcome"] == "passed"
    kinds = {e["event"] for e in events}
    assert {"StepStarted", "MeasurementRecorded", "StepEnded"} <= kinds
    core = [e for e in events if e["event"] == "MeasurementRecorded" and e["name"] == "VDD_CORE"]
    assert core and core[0]["unit"] == "V" and core[0]["verdict"] == "PASS"
    assert core[0]["limits"]["low"] == pytest.approx(0.725)


def test_prompt_answered_from_file(labctl, bench, tmp_path):
    answers = tmp_path / "answers.yaml"
    answers.write_text("fan_installed: 'yes'\n")
    res = labctl("run", str(DATA / "operator.yaml"), "--fixture", str(bench), "--db", str(tmp_path / "r.db"),
                 "--answers", str(answers))
    assert res.returncode == 0, res.stdout + res.stderr
    answers.write_text("fan_installed: 'no'\n")
    res = labctl("run", str(DATA / "operator.yaml"), "--fixture", str(bench), "--db", str(tmp_path / "r.db"),
                 "--answers", str(answers))
    assert res.returncode == 1, res.stdout + res.stderr


def test_unanswered_prompt_is_an_error_that_says_what_to_do(labctl, bench, tmp_path):
    res = labctl("run", str(DATA / "operator.yaml"), "--fixture", str(bench), "--db", str(tmp_path / "r.db"))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "--answers" in res.stdout
    assert "Traceback" not in res.stdout + res.stderr


def test_bad_plan_is_exit_4_with_location_and_starts_nothing(labctl, bench, tmp_path):
    plan = tmp_path / "bad.yaml"
    plan.write_text("name: bad\nsteps:\n  - id: a\n    check: power.rails\n    args: {rails: [VDD_CORE], via: daq}\n"
                    "    limits: {nominal: 0.75 A, tol: 3 %}\n")
    db = tmp_path / "r.db"
    res = labctl("run", str(plan), "--fixture", str(bench), "--db", str(db))
    assert res.returncode == 4
    assert f"{plan}:6:" in res.stderr
    assert "Traceback" not in res.stderr
    assert not db.exists(), "a bad plan must not start a run"


def test_a_report_path_that_is_the_database_or_unwritable_is_refused_before_the_run(labctl, bench, tmp_path):
    """``--junit results.db`` wrote the XML over the database the run had just been recorded
    in; an unwritable ``--junit`` was found only after the run. Both are refused first."""
    db = tmp_path / "r.db"
    first = labctl("run", "smoke.yaml", "--fixture", str(bench), "--db", str(db))
    assert first.returncode == 0, first.stdout + first.stderr
    before = db.read_bytes()
    for option, path, says in (("--junit", str(db), f"refusing to write the JUnit XML over {db}: it is a SQLite"),
                               ("--report", str(db), f"refusing to write the HTML report over {db}"),
                               ("--junit", "/proc/none/j.xml", "cannot write the JUnit XML to /proc/none/j.xml")):
        res = labctl("run", "smoke.yaml", "--fixture", str(bench), "--db", str(db), option, path)
        assert res.returncode == 4, res.stdout + res.stderr
        assert says in res.stderr and "Traceback" not in res.stderr
        assert "pre-flight" not in res.stdout, "refused before anything is touched"
    assert db.read_bytes() == before, "the database is as the first run left it"


def test_station_not_reachable_is_a_one_line_error(labctl, tmp_path):
    import yaml

    bench = isolated_fixture(tmp_path, time_scale=600)
    data = yaml.safe_load(bench.read_text())
    data["sim"]["enabled"] = False  # a real bench whose instruments are switched off
    bench.write_text(yaml.safe_dump(data))
    res = labctl("run", "smoke.yaml", "--fixture", str(bench), "--db", str(tmp_path / "r.db"), timeout=120)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "pre-flight failed" in res.stderr
    assert "Traceback" not in res.stdout + res.stderr


def test_unreachable_database_stops_the_run_before_anything_is_powered(labctl, bench, tmp_path):
    res = labctl("run", "smoke.yaml", "--fixture", str(bench), "--db", "postgresql://nobody@127.0.0.1:1/nowhere")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "cannot open the results database" in res.stderr
    assert "pre-flight" not in res.stdout, "nothing may be touched before the store is open"
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("plan", ["smoke.yaml", "power-rails.yaml", "thermal-soak.yaml", "link-ber.yaml"])
def test_every_example_plan_passes_on_a_golden_board(labctl, bench, tmp_path, plan):
    res = labctl("run", plan, "--fixture", str(bench), "--dut", "SIM-GOLD-0002", "--db", str(tmp_path / "r.db"),
                 timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr
    assert "run PASSED" in res.stdout


def test_example_plans_are_all_covered():
    shipped = sorted(p.name for p in (ROOT / "testplans").glob("*.yaml"))
    assert shipped == sorted(["smoke.yaml", "power-rails.yaml", "thermal-soak.yaml", "link-ber.yaml",
                              "accelerator-evt.yaml"]), "a new example plan needs its run test here"


def test_the_wrong_board_on_the_fixture_is_refused(labctl, tmp_path):
    from labctl.sim.testing import served_lab

    bench = isolated_fixture(tmp_path, time_scale=600)
    with served_lab(bench, "--dut", "SIM-GOLD-0001"):
        res = labctl("run", "smoke.yaml", "--fixture", str(bench), "--dut", "SIM-GOLD-0002",
                     "--db", str(tmp_path / "r.db"))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "reports serial SIM-GOLD-0001, not SIM-GOLD-0002" in res.stderr



def test_expired_calibration_refuses_the_run_unless_allowed_and_then_it_is_recorded(labctl, tmp_path):
    import yaml

    bench = isolated_fixture(tmp_path, time_scale=600)
    data = yaml.safe_load(bench.read_text())
    data["roles"]["daq"]["asset"]["calibration_due"] = "2020-01-31"
    bench.write_text(yaml.safe_dump(data))
    db = str(tmp_path / "r.db")
    res = labctl("run", "smoke.yaml", "--fixture", str(bench), "--db", db)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "daq: calibration expired on 2020-01-31" in res.stderr
    res = labctl("run", "smoke.yaml", "--fixture", str(bench), "--db", db, "--allow-expired", "--json")
    assert res.returncode == 0, res.stderr
    logs = [json.loads(line) for line in res.stdout.splitlines() if '"LogMessage"' in line]
    assert any("calibration expired on 2020-01-31 (allowed by --allow-expired)" in e["message"] for e in logs)
