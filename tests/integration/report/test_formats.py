"""`labctl report` as a quality engineer uses it, each format checked by a real consumer:
pandas reads CSV/Parquet/xlsx with the documented columns, junitparser reads the JUnit XML,
jsonschema validates the JSON against the committed schema and the OCP lines against the
OCP results specification's own schema."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import jsonschema
import pandas as pd
import pyarrow.parquet as pq
import pytest
from junitparser import Error, Failure, JUnitXml

from labctl.report.json_export import iso_utc
from labctl.report.record import FRAME_COLUMNS, load_records
from tests.conftest import ROOT
from tests.integration.report.ocp_schema import ocp_errors


def documented_columns() -> list[str]:
    """The column list of docs/reports.md ("Measurement columns")."""
    text = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    section = text.split("## Measurement columns", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.M)


def report(labctl, lab, fmt, *args, name=None):
    out = lab.folder / (name or f"report.{fmt}")
    res = labctl("report", *args, "--db", str(lab.db), "--format", fmt, "-o", str(out))
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"wrote {out}" in res.stdout
    return out


def test_documented_columns_are_the_frame_columns():
    assert documented_columns() == list(FRAME_COLUMNS)


@pytest.mark.parametrize("fmt", ["csv", "parquet", "xlsx"])
def test_tables_load_in_pandas_with_the_documented_columns(labctl, lab, fmt):
    out = report(labctl, lab, fmt)
    if fmt == "csv":
        df = pd.read_csv(out, parse_dates=["run_started", "time"])
    elif fmt == "parquet":
        df = pd.read_parquet(out)
        meta = json.loads(pq.read_schema(out).metadata[b"labctl"])
        assert len(meta["runs"]) == 2 and meta["schema_version"] == "1"
    else:
        sheets = pd.read_excel(out, sheet_name=None)
        assert list(sheets) == ["Summary", "Measurements", "Instruments"]
        df = sheets["Measurements"]
    assert list(df.columns) == documented_columns()
    expected = sum(len(s.measurements) for r in load_records(str(lab.db)) for s in r.final_steps)
    assert len(df) == expected
    fail = df[df["verdict"] == "FAIL"].iloc[0]
    assert (fail["plan"], fail["plan_version"], fail["dut"], fail["step"], fail["corner"], fail["attempt"]) == (
        "signoff-sample", 2.1 if fmt != "parquet" else "2.1", "SIM-GOLD-0001", "input_voltage", "vin=4.75 V", 2)
    assert fail["value"] < fail["low"] == pytest.approx(4.9) and fail["unit"] == "V"
    assert fail["limits"] == "4.9 V ≤ x ≤ 5.1 V"
    assert df["time"].notna().all() and df["station"].eq("sim-bench-1").all()
    if fmt == "xlsx":
        summary = sheets["Summary"].set_index("plan")
        assert summary.loc["signoff-sample", "outcome"] == "failed"
        assert summary.loc["signoff-sample", "steps_failed"] == 1
        assert summary.loc["signoff-sample", "first_failure"].startswith("input_voltage [vin=4.75 V]: FAIL")
        assert summary.loc["smoke", "outcome"] == "passed"
        cal = sheets["Instruments"]
        assert cal["calibration_due"].notna().any() and set(cal["run_id"]) == set(summary["run_id"])
        assert cal[cal["calibration_due"].notna()]["calibrated_at_run"].all()  # the simulated lab's are in date


def test_all_attempts_adds_the_retried_attempt(labctl, lab):
    df = pd.read_csv(report(labctl, lab, "csv", "--all-attempts", name="all.csv"))
    retried = df[(df["step"] == "input_voltage") & (df["corner_index"] == 0)]
    assert sorted(zip(retried["attempt"], retried["final"], strict=True)) == [(1, False), (2, True)]


def test_junit_parses_with_junitparser_a_suite_per_run_and_corner(labctl, lab):
    xml = JUnitXml.fromfile(str(report(labctl, lab, "junit", name="all.xml")))
    suites = {s.name: s for s in xml}
    signoff = [n for n in suites if n.startswith("signoff-sample 2.1 SIM-GOLD-0001")]
    assert len(signoff) == 3 and any(n.endswith("[vin=4.75 V]") for n in signoff)
    low = suites[next(n for n in signoff if n.endswith("[vin=4.75 V]"))]
    assert (low.tests, low.failures, low.errors) == (3, 1, 0)
    case = next(c for c in low if c.name == "input_voltage")
    [failure] = case.result
    assert isinstance(failure, Failure)
    assert "4.9 V ≤ x ≤ 5.1 V" in failure.message
    assert "value = 4.7" in failure.text and "attempt 2" in failure.text
    smoke = next(s for n, s in suites.items() if n.startswith("smoke"))
    assert smoke.failures == 0 and smoke.tests == 4  # 3 steps and the teardown's power_off
    assert not [c for s in xml for c in s if any(isinstance(r, Error) for r in c.result)]
    props = {p.name: p.value for p in low.properties()}
    assert props["dut"] == "SIM-GOLD-0001" and props["run_outcome"] == "failed" and len(props["plan_hash"]) == 64
    assert "calibration due 20" in props["instrument.psu"] and "E36312A" in props["instrument.psu"]


def test_run_junit_is_the_report_of_the_stored_run(labctl, lab):
    run_id = next(r.run_id for r in load_records(str(lab.db)) if r.plan.name == "signoff-sample")
    out = report(labctl, lab, "junit", run_id[:12], name="one.xml")
    assert lab.signoff_junit.read_text(encoding="utf-8") == out.read_text(encoding="utf-8")


def test_json_validates_against_the_committed_schema(labctl, lab):
    doc = json.loads(report(labctl, lab, "json").read_text(encoding="utf-8"))
    schema = json.loads((ROOT / "docs" / "schema" / "run-record.v1.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    assert [e.message for e in validator.iter_errors(doc)] == []
    assert doc["schema_version"] == "1" and len(doc["runs"]) == 2
    run = next(r for r in doc["runs"] if r["plan"]["name"] == "signoff-sample")
    assert run["summary"] == {"steps": {"PASS": 8, "FAIL": 1}, "measurements": run["summary"]["measurements"]}
    assert run["prompts"][0]["answer"] == "yes"
    # the schema is strict: what it does not describe is rejected
    run["surprise"] = 1
    assert any("surprise" in e.message for e in validator.iter_errors(doc))


def test_ocp_output_validates_against_the_ocp_results_schema(labctl, lab):
    lines = [json.loads(x) for x in report(labctl, lab, "ocp").read_text(encoding="utf-8").splitlines()]
    assert ocp_errors(lines) == []
    starts = [n for n, x in enumerate(lines) if "schemaVersion" in x]
    assert len(starts) == 2 and starts[0] == 0  # one OCP test run per labctl run
    records = load_records(str(lab.db))
    first = lines[: starts[1]]
    run_start = first[1]["testRunArtifact"]["testRunStart"]
    assert run_start["name"] == records[0].plan.name and run_start["dutInfo"]["dutInfoId"] == "SIM-GOLD-0001"
    assert first[1]["timestamp"] == iso_utc(records[0].started_at)  # recorded time, not export time
    assert first[-1]["testRunArtifact"]["testRunEnd"] == {"status": "COMPLETE", "result": "FAIL"}
    assert lines[-1]["testRunArtifact"]["testRunEnd"] == {"status": "COMPLETE", "result": "PASS"}
    diagnoses = [x["testStepArtifact"]["diagnosis"] for x in first if "diagnosis" in x.get("testStepArtifact", {})]
    assert [d["verdict"] for d in diagnoses if d["type"] == "FAIL"] == ["input_voltage-fail"]
    limited = [x["testStepArtifact"]["measurement"] for x in first
               if x.get("testStepArtifact", {}).get("measurement", {}).get("name") == "VDD_CORE"]
    assert {v["type"] for v in limited[0]["validators"]} == {"GREATER_THAN_OR_EQUAL", "LESS_THAN_OR_EQUAL"}
    assert limited[0]["subcomponent"]["name"] == "rail=VDD_CORE"


def test_ocp_lines_of_each_step_are_in_time_order(labctl, lab):
    """Read back, each test step's lines (start, measurements, series, logs, diagnosis, end)
    have non-decreasing timestamps; the power-on step logs its protection before measuring."""
    lines = [json.loads(x) for x in report(labctl, lab, "ocp", name="ordered.jsonl").read_text(
        encoding="utf-8").splitlines()]
    steps: dict[tuple[int, str], list[tuple[datetime, list[str]]]] = {}
    run = -1
    for x in lines:
        run += "schemaVersion" in x
        if "testStepArtifact" in x:
            art = x["testStepArtifact"]
            at = datetime.fromisoformat(x["timestamp"].replace("Z", "+00:00"))
            steps.setdefault((run, art["testStepId"]), []).append((at, [k for k in art if k != "testStepId"]))
    assert len(steps) > 10
    disorder = {key: [k for (t0, _), (t1, k) in zip(got, got[1:], strict=False) if t1 < t0]
                for key, got in steps.items()}
    assert {key: bad for key, bad in disorder.items() if bad} == {}
    power_on = next(got for got in steps.values() if got[0][1] == ["testStepStart"]
                    and any(k == ["measurementSeriesStart"] for _, k in got))
    kinds = [k[0] for _, k in power_on]
    assert kinds.index("log") < kinds.index("measurement") < kinds.index("testStepEnd")


def test_bad_invocations_say_what_to_do_and_exit_4(labctl, lab):
    out = str(lab.folder / "x.csv")
    cases = [
        (["--format", "pdf"], "unknown report format 'pdf'", "csv, parquet, xlsx, junit, json, ocp"),
        (["--plan", "nope", "-F", "csv"], "no recorded run", "`labctl runs` lists"),
        (["zzzz", "-F", "csv"], "no run 'zzzz'", "`labctl runs` lists"),
        (["--since", "last tuesday", "-F", "csv"], "cannot read --since", "7d"),
        (["--until", "soon", "-F", "csv"], "cannot read --until", "2026-11-30"),
        # a typo is not "no run failed"
        (["--outcome", "fail", "-F", "csv"], "'fail' is not a run outcome", "passed, failed, error"),
    ]
    cases.append((["-F", "csv", "-o", "/proc/no/such.csv"], "cannot write the csv report to /proc/no/such.csv",
                  "a folder you can write to"))
    # the results themselves as the output: refused, the database untouched
    cases.append((["-F", "csv", "-o", str(lab.db)], f"refusing to write the csv report over {lab.db}: it is a SQLite",
                  "another path"))
    before = lab.db.read_bytes()
    for args, what, hint in cases:
        res = labctl("report", *args, "--db", str(lab.db), "-o", out) if "-o" not in args else \
            labctl("report", *args, "--db", str(lab.db))
        assert res.returncode == 4, (args, res.stderr)
        assert what in res.stderr and hint in res.stderr, res.stderr
        assert "Traceback" not in res.stdout + res.stderr
    assert not (lab.folder / "x.csv").exists()
    assert lab.db.read_bytes() == before


def test_a_pipe_or_a_device_is_refused_at_once_and_dash_writes_to_standard_output(labctl, lab):
    """`-o /dev/stdout` or a named pipe had hung for ever (the check for a SQLite file read from
    it); `-o -` writes the report itself to standard output."""
    import os

    fifo = lab.folder / "fifo"
    os.mkfifo(fifo)
    for target in (str(fifo), "/dev/null"):
        res = labctl("report", "-F", "csv", "--db", str(lab.db), "-o", target, timeout=60)
        assert res.returncode == 4, res.stderr
        assert f"-o {target} is not a regular file" in res.stderr and "-o -" in res.stderr, res.stderr
    assert Path("/dev/null").is_char_device()  # untouched
    res = labctl("report", "-F", "csv", "--db", str(lab.db), "-o", "-")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0].startswith("run_id,") and "wrote the csv report of 2 run(s)" in res.stderr


def test_a_report_that_cannot_be_written_whole_keeps_the_one_that_was_there(labctl, lab, monkeypatch):
    """A full disk (here: a writer that fails half-way) leaves the earlier report, not a
    truncated one, and nothing beside it."""
    from labctl.report import formats
    from labctl.report.record import load_records

    out = report(labctl, lab, "csv", name="kept.csv")
    before = out.read_bytes()

    def half_then_full(records, path, options):
        path.write_bytes(before[: len(before) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(formats, "exporter", lambda name: half_then_full)
    with pytest.raises(Exception, match="No space left on device"):
        formats.export(load_records(str(lab.db), None), "csv", out)
    assert out.read_bytes() == before
    assert sorted(p.name for p in lab.folder.iterdir() if p.name.startswith(".kept")) == []


def test_runs_and_report_share_the_filters(labctl, lab):
    listed = json.loads(labctl("runs", "--db", str(lab.db), "--plan-version", "2.*", "--until", "1s",
                               "--format", "json").stdout)
    assert [r["plan_name"] for r in listed] == ["signoff-sample"]
    out = report(labctl, lab, "json", "--plan-version", "2.*", "--until", "1s", name="filtered.json")
    assert [r["run_id"] for r in json.loads(out.read_text(encoding="utf-8"))["runs"]] == [listed[0]["id"]]
    res = labctl("runs", "--db", str(lab.db), "--since", "1s", "--until", "2s")
    assert res.returncode == 0 and "match these filters" in res.stdout
