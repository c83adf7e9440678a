"""`labctl demo`, `labctl run --report` and `labctl stats` on runs recorded from the simulated
lab: the report paths are printed, and yield, Pareto and Cpk agree with figures computed by
hand from `labctl runs show --format json`."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from labctl.sim.testing import isolated_fixture
from tests.conftest import run_labctl


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> dict[str, Path]:
    """Three DUTs through the flagship plan (SIM-MARG-0003 fails BER on lane 3 when hot) and a
    smoke run: a small recorded population."""
    tmp = tmp_path_factory.mktemp("stats")
    bench = isolated_fixture(tmp, time_scale=1000)
    db = tmp / "results.db"
    demo = run_labctl("demo", "--fixture", str(bench), "--db", str(db), "--time-scale", "1000",
                      "--report", str(tmp / "demo.html"), cwd=tmp, timeout=300)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    smoke = run_labctl("run", "smoke.yaml", "--fixture", str(bench), "--dut", "SIM-GOLD-0001", "--db", str(db),
                       "--report", str(tmp / "smoke.html"), cwd=tmp, timeout=120)
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    return {"db": db, "tmp": tmp, "demo_out": demo.stdout, "smoke_out": smoke.stdout}


def stats(lab, *args: str):
    return run_labctl("stats", "--db", str(lab["db"]), *args)


def test_demo_and_run_write_html_reports_and_print_their_paths(lab):
    for out, name in ((lab["demo_out"], "demo.html"), (lab["smoke_out"], "smoke.html")):
        path = Path(re.search(r"^report: (.+)$", out, re.M).group(1).strip())
        assert path == (lab["tmp"] / name).resolve() and path.exists()
    demo = (lab["tmp"] / "demo.html").read_text()
    # The marginal board fails lane 3's BER when hot (45 degC). At 25 degC its lane is marginal:
    # bit errors arrive as a Poisson process (labctl.sim.physics.link.ErrorArrivals, drawn from the
    # lab's seed whatever the machine's load), and one error in the window would take that corner
    # over 1e-12 too (1.58e-12). Nothing else may fail.
    section = demo[demo.index("Failures ("):]
    section = section[:section.index("</table>")]
    rows = [re.sub(r"<[^>]+>", " ", r) for r in re.findall(r"<tr class=\"FAIL\">(.*?)</tr>", section, re.S)]
    failures = [r for r in rows if "FAIL" in r]
    assert re.match(r"Failures \(([12])\)", section) and len(failures) == int(section[10]), section[:200]
    assert all("SIM-MARG-0003" in r and "link_ber_hot" in r and "lane=3" in r for r in failures), failures
    assert any("ambient=45 degC" in r for r in failures), failures
    assert "Failures (0)" in (lab["tmp"] / "smoke.html").read_text()


def test_yield_and_pareto_match_the_recorded_outcomes(lab):
    res = stats(lab, "--format", "json")
    assert res.returncode == 0, res.stderr
    t = json.loads(res.stdout)
    y = {r["plan"]: r for r in t["yield"]}
    assert (y["accelerator-evt"]["duts"], y["accelerator-evt"]["first_pass"], y["accelerator-evt"]["final_pass"]) == (3, 2, 2)
    assert y["accelerator-evt"]["first_pass_yield"] == pytest.approx(2 / 3)
    assert (y["smoke"]["duts"], y["smoke"]["final_yield"]) == (1, 1.0)
    assert [(p["cause"], p["runs"], p["duts"], p["cumulative"]) for p in t["pareto"]] == [
        ("link_ber_hot / ber [lane=3]", 1, 1, 1.0)]
    ber_hot = [r for r in t["step_yield"] if r["step"] == "link_ber_hot"][0]
    assert ber_hot["final_yield"] == pytest.approx(2 / 3)


def test_cpk_matches_a_hand_computation_from_the_recorded_values(lab):
    runs = json.loads(run_labctl("runs", "--db", str(lab["db"]), "--plan", "accelerator-evt", "--format", "json").stdout)
    values, low, high = [], None, None
    for r in runs:
        detail = json.loads(run_labctl("runs", "show", r["id"], "--db", str(lab["db"]), "--format", "json").stdout)
        for m in detail["measurements"]:
            if m["step_id"] == "sequencing" and m["name"] == "VDD_CORE->VDD_IO":
                values.append(m["value"])
                low, high = m["low"], m["high"]
    assert len(values) == 3 and low is not None and high is not None
    mean, sd = statistics.fmean(values), statistics.stdev(values)
    expected = min(high - mean, mean - low) / (3 * sd)
    t = json.loads(stats(lab, "--plan", "accelerator-evt", "--format", "json").stdout)
    row = [c for c in t["capability"] if c["step"] == "sequencing" and c["measurement"] == "VDD_CORE->VDD_IO"][0]
    assert row["cpk"] == pytest.approx(expected)
    assert row["cp"] == pytest.approx((high - low) / (6 * sd))


def test_terminal_tables_by_field_and_comparison(lab):
    res = stats(lab, "--by", "station")
    assert res.returncode == 0, res.stderr
    assert "yield per plan" in res.stdout and "capability (worst Cpk first)" in res.stdout
    assert "not capable" in res.stdout  # the failing lane's BER
    res = stats(lab, "--plan", "accelerator-evt", "--compare", "dut=SIM-GOLD-*,SIM-MARG-*", "--format", "json")
    assert res.returncode == 0, res.stderr
    cmp = json.loads(res.stdout)["compare"]
    assert cmp and {"n_a", "n_b", "shift_sigma", "p", "differs"} <= set(cmp[0])
    assert all(r["n_a"] == 2 and r["n_b"] == 1 for r in cmp)
    for by in ("dut", "corner", "date"):
        assert stats(lab, "--by", by, "--format", "csv").returncode == 0
    # one table as CSV: the grouping asked for (the step yield for --by step), not the capability
    head = {by: stats(lab, "--by", by, "--format", "csv").stdout.splitlines()[0] for by in ("step", "station", "plan")}
    assert head["step"].startswith("plan,step,duts,") and "cpk" not in head["step"], head
    assert "shift_sigma" in head["station"] and "cpk" in head["plan"], head


def test_bad_input_is_one_line_and_exit_4(lab):
    for args, text in ((("--compare", "station=bench-1"), "expected FIELD=A,B"),
                       (("--compare", "colour=a,b"), "unknown field 'colour'"),
                       (("--plan", "no-such-plan"), "matches these filters")):
        res = stats(lab, *args)
        assert res.returncode == 4, res.stdout + res.stderr
        assert text in res.stderr and "Traceback" not in res.stderr


@pytest.mark.postgres
def test_stats_and_the_html_report_from_postgresql(tmp_path):
    from labctl.store.testing import temporary_database

    with temporary_database("postgresql", tmp_path) as url:
        bench = isolated_fixture(tmp_path, time_scale=1000)
        for dut in ("SIM-GOLD-0001", "SIM-GOLD-0001", "SIM-GOLD-0002"):
            res = run_labctl("run", "smoke.yaml", "--fixture", str(bench), "--dut", dut, "--db", url, timeout=120)
            assert res.returncode == 0, res.stdout + res.stderr
        res = run_labctl("stats", "--db", url, "--format", "json")
        assert res.returncode == 0, res.stderr
        y = json.loads(res.stdout)["yield"]
        assert [(r["plan"], r["duts"], r["runs"], r["first_pass_yield"], r["final_yield"]) for r in y] == [
            ("smoke", 2, 3, 1.0, 1.0)]
        out = tmp_path / "pg.html"
        res = run_labctl("report", "--db", url, "--format", "html", "-o", str(out))
        assert res.returncode == 0, res.stderr
        page = out.read_text()
        assert "SIM-GOLD-0001, SIM-GOLD-0002" in page and "Run " in page
