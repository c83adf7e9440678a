"""The demo's run of the marginal board (the flagship plan, lane 3 fails BER at the hot
corner) exported in every format, each read by its consumer."""

from __future__ import annotations

import json

import jsonschema
import pandas as pd
from junitparser import Failure, JUnitXml

from labctl.report.formats import export
from labctl.report.record import load_records
from labctl.report.schema import run_record_schema
from labctl.sim.testing import isolated_fixture
from labctl.store.query import RunFilters
from tests.integration.report.ocp_schema import ocp_errors


def test_demo_run_of_the_marginal_board_in_every_format(labctl, tmp_path):
    bench = isolated_fixture(tmp_path, time_scale=600)
    db = str(tmp_path / "demo.db")
    res = labctl("demo", "--fixture", str(bench), "--dut", "SIM-MARG-0003", "--db", db, "--time-scale", "600",
                 timeout=300)
    assert res.returncode == 0 and "link_ber_hot" in res.stdout, res.stdout + res.stderr  # the demo itself ran

    records = load_records(db, filters=RunFilters(plan="accelerator-evt", dut="SIM-MARG-0003"))

    def report(fmt):  # the command line is tested in test_formats; here the demo's data
        return export(records, fmt, tmp_path / f"demo.{fmt}")

    tables = {"csv": pd.read_csv(report("csv")), "parquet": pd.read_parquet(report("parquet")),
              "xlsx": pd.read_excel(report("xlsx"), sheet_name="Measurements")}
    for fmt, df in tables.items():
        fail = df[df["verdict"] == "FAIL"]
        assert fail[["step", "corner", "measurement", "labels"]].values.tolist() == [
            ["link_ber_hot", "ambient=45 degC", "ber", "lane=3"]], fmt
        assert (fail["value"] > fail["high"]).all(), fmt
    assert len(tables["csv"]) == len(tables["parquet"]) == len(tables["xlsx"]) > 100

    xml = JUnitXml.fromfile(str(report("junit")))
    failed = [(s.name, c.name, r) for s in xml for c in s for r in c.result if isinstance(r, Failure)]
    assert [(name.endswith("[ambient=45 degC]"), case) for name, case, _ in failed] == [(True, "link_ber_hot")]
    assert "lane 3" in failed[0][2].message and "ber (lane=3)" in failed[0][2].text

    doc = json.loads(report("json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(run_record_schema(), format_checker=jsonschema.FormatChecker())
    assert [e.message for e in validator.iter_errors(doc)] == []
    assert [r["outcome"] for r in doc["runs"]] == ["failed"]

    lines = [json.loads(x) for x in report("ocp").read_text(encoding="utf-8").splitlines()]
    assert ocp_errors(lines) == []
    assert lines[-1]["testRunArtifact"]["testRunEnd"] == {"status": "COMPLETE", "result": "FAIL"}
    series = [x for x in lines if "measurementSeriesElement" in x.get("testStepArtifact", {})]
    assert series  # the chamber and die temperatures recorded while soaking
