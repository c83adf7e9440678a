"""A record holding every kind of thing (resumed, interrupted, errors, a cut-off step, text
values, samples, an unanswered prompt, instrument errors, logs, attachments) is exported
without loss in every format, and each output passes its consumer."""

from __future__ import annotations

import json

import jsonschema
import pandas as pd
import pytest
from junitparser import Error, JUnitXml

from labctl.plan.schema import dumps
from labctl.report.formats import FORMATS, ExportOptions, export
from labctl.report.json_export import document
from labctl.report.schema import run_record_schema
from tests.conftest import ROOT
from tests.integration.report.ocp_schema import ocp_errors
from tests.unit.report.records import failing_record, rich_record


def validator():
    return jsonschema.Draft202012Validator(run_record_schema(), format_checker=jsonschema.FormatChecker())


def test_committed_schema_is_the_generated_one_and_valid():
    committed = (ROOT / "docs" / "schema" / "run-record.v1.json").read_text(encoding="utf-8")
    assert committed == dumps(run_record_schema()), (
        "docs/schema/run-record.v1.json is stale: run `labctl schema run-record -o docs/schema/run-record.v1.json`")
    jsonschema.Draft202012Validator.check_schema(run_record_schema())


def test_json_of_every_field_validates_and_keeps_what_was_recorded():
    doc = json.loads(json.dumps(document([rich_record(), failing_record()]), allow_nan=False))
    assert [e.message for e in validator().iter_errors(doc)] == []
    run = doc["runs"][0]
    assert run["ended_at"] is None and run["duration"] is None and run["outcome"] == "interrupted"
    assert [s["index"] for s in run["sessions"]] == [0, 1] and run["sessions"][1]["plan_changed"] is True
    soak = run["steps"][2]
    assert soak["samples"][1] == {"series": "chamber_temp", "value": 45.0, "unit": "degC",
                                  "time": "2025-11-24T16:00:05.000000Z"}
    assert run["steps"][0]["measurements"][0]["value_text"] == "1.4.2"
    assert run["steps"][1]["outcome"] is None
    assert run["attachments"][0]["sha256"] == "cd" * 32 and "content" not in run["attachments"][0]
    assert run["summary"]["steps"] == {"PASS": 1, "INTERRUPTED": 1, "ERROR": 1, "SKIPPED": 1}


def test_json_file_is_the_document_written_a_step_at_a_time(tmp_path):
    """The file `report -F json` writes holds what document() holds (both runs, every field),
    a step's keys a line each and each measurement and sample on a line of its own (grep finds
    one with its limits and time; a long run is written as it is made, never whole in memory)."""
    records = [rich_record(), failing_record()]
    text = export(records, "json", tmp_path / "r.json").read_text(encoding="utf-8")
    written, made = json.loads(text), document(records)
    assert written.pop("exported_at") and made.pop("exported_at")
    assert written == json.loads(json.dumps(made, allow_nan=False))
    lines = text.splitlines()
    assert lines[0] == "{" and lines[-1] == "}" and text.endswith("}\n")
    sample = next(line for line in lines if '"series": "chamber_temp"' in line and '"value": 45.0' in line)
    assert json.loads(sample.strip().rstrip(",")) == written["runs"][0]["steps"][2]["samples"][1]
    first = written["runs"][0]["steps"][0]
    measurement = next(line for line in lines if '"value_text": "1.4.2"' in line)
    assert json.loads(measurement.strip().rstrip(",")) == first["measurements"][0]
    assert f'          "step_key": {json.dumps(first["step_key"])},' in lines


@pytest.mark.parametrize("broken", [
    lambda r: r["steps"][0].pop("final"),
    lambda r: r["steps"][0]["measurements"][0].update(verdict="OK"),
    lambda r: r.update(started_at="yesterday"),
    lambda r: r["plan"].update(extra=1),
])
def test_schema_rejects_what_it_does_not_describe(broken):
    doc = json.loads(json.dumps(document([rich_record()])))
    broken(doc["runs"][0])
    assert list(validator().iter_errors(doc))


def test_ocp_of_every_field_validates_against_the_ocp_results_schema(tmp_path):
    path = export([rich_record()], "ocp", tmp_path / "r.jsonl", ExportOptions(all_attempts=True))
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert ocp_errors(lines) == []
    kinds = {k for x in lines for k in x.get("testStepArtifact", {}) if k != "testStepId"}
    assert {"measurement", "measurementSeriesStart", "measurementSeriesElement", "measurementSeriesEnd",
            "error", "log", "file", "diagnosis", "testStepStart", "testStepEnd"} <= kinds
    ends = [x["testStepArtifact"]["testStepEnd"]["status"] for x in lines if "testStepEnd" in x.get("testStepArtifact", {})]
    assert ends == ["COMPLETE", "ERROR", "ERROR", "SKIP", "COMPLETE"]
    assert lines[-1]["testRunArtifact"]["testRunEnd"] == {"status": "ERROR", "result": "NOT_APPLICABLE"}
    errors = [x["testStepArtifact"]["error"]["symptom"] for x in lines if "error" in x.get("testStepArtifact", {})]
    assert errors == ["step-interrupted", "instrument-error-chamber", "step-error"]


def test_junit_of_every_field_parses(tmp_path):
    xml = JUnitXml.fromfile(str(export([rich_record()], "junit", tmp_path / "r.xml")))
    cases = {c.name: c for s in xml for c in s}
    assert set(cases) == {"fw", "soak", "skipped", "safe-state.psu"}  # a failed safe state is shown
    assert isinstance(cases["soak"].result[0], Error) and "chamber timeout" in cases["soak"].result[0].message


@pytest.mark.parametrize("fmt", ["csv", "parquet", "xlsx"])
def test_tables_of_every_field_load(tmp_path, fmt):
    path = export([rich_record()], fmt, tmp_path / f"r.{fmt}")
    read = {"csv": pd.read_csv, "parquet": pd.read_parquet,
            "xlsx": lambda p: pd.read_excel(p, sheet_name="Measurements")}[fmt]
    df = read(path)
    assert df["value_text"].tolist() == ["1.4.2"] and df["limits"].tolist() == ["~ /^1\\.4/"]


def test_every_registered_format_writes_a_file(tmp_path):
    for name, fmt in FORMATS.items():
        path = export([failing_record()], name, tmp_path / f"r{fmt.suffix}")
        assert path.stat().st_size > 0, name


def test_a_step_of_a_run_still_going_is_running_not_interrupted(tmp_path):
    import dataclasses

    rec = dataclasses.replace(rich_record(), outcome="running")
    cut = rec.steps[1]
    assert rec.outcome_of(cut) == "RUNNING" and rich_record().outcome_of(cut) == "INTERRUPTED"
    xml = JUnitXml.fromfile(str(export([rec], "junit", tmp_path / "r.xml")))
    soak = next(c for s in xml for c in s if c.name == "soak" and c.result and "still running" in c.result[0].message)
    assert soak.is_skipped
    lines = [json.loads(x) for x in export([rec], "ocp", tmp_path / "r.jsonl").read_text().splitlines()]
    assert ocp_errors(lines) == []
    assert lines[-1]["testRunArtifact"]["testRunEnd"] == {"status": "ERROR", "result": "NOT_APPLICABLE"}


def test_ocp_export_leaves_the_libraries_writer_and_checks_as_they_were(tmp_path):
    from ocptv.output.config import get_config

    before = get_config().writer
    export([failing_record()], "ocp", tmp_path / "r.jsonl")
    assert get_config().writer is before
    assert get_config().enable_runtime_checks  # off only during the export (the schema test checks the stream)


def test_xlsx_summary_counts_every_step_of_an_interrupted_run(tmp_path):
    """Its columns of step counts add up to the run's steps: the step a crash cut off is
    counted as interrupted (it was counted nowhere)."""
    rec = rich_record()
    summary = pd.read_excel(export([rec], "xlsx", tmp_path / "r.xlsx"), sheet_name="Summary")
    row = summary.iloc[0]
    counts = {c: int(row[c]) for c in summary.columns if c.startswith("steps_")}
    assert counts["steps_interrupted"] == 1
    assert sum(counts.values()) == len(rec.plan_steps())


def test_xlsx_headers_are_frozen_and_filterable_and_times_read_as_dates(tmp_path):
    """What docs/reports.md promises of the xlsx sheets, read back with openpyxl."""
    from datetime import UTC, datetime, timedelta

    import openpyxl

    records = [failing_record(), rich_record()]
    book = openpyxl.load_workbook(export(records, "xlsx", tmp_path / "r.xlsx"))
    assert book.sheetnames == ["Summary", "Measurements", "Instruments"]
    for sheet in book:
        assert sheet.freeze_panes == "A2", sheet.title
        assert all(cell.font.b for cell in sheet[1]), sheet.title
    sheet = book["Measurements"]
    header = [cell.value for cell in sheet[1]]
    assert sheet.auto_filter.ref == f"A1:{sheet.cell(1, len(header)).column_letter}{sheet.max_row}"
    times = [row[header.index("time")] for row in sheet.iter_rows(min_row=2)]
    assert all(c.is_date and c.number_format == "yyyy-mm-dd hh:mm:ss" for c in times)
    recorded = sorted(datetime.fromtimestamp(m.time, UTC).replace(tzinfo=None)
                      for r in records for s in r.final_steps for m in s.measurements)
    assert len(times) == len(recorded) and all(
        abs(c.value - t) < timedelta(milliseconds=1) for c, t in zip(sorted(times, key=lambda c: c.value), recorded,
                                                                       strict=True))
    limits = sheet.column_dimensions[sheet.cell(1, header.index("limits") + 1).column_letter]
    assert limits.width >= max(len(str(row[header.index("limits")].value or "")) for row in sheet.iter_rows(min_row=2))


def test_xlsx_keeps_recorded_text_as_text_never_a_formula_or_a_link(tmp_path):
    """A recorded message, operator or instrument reply is data: Excel must not run text that
    begins with "=" as a formula, nor turn an address into a link."""
    import dataclasses

    import openpyxl

    formula = '=HYPERLINK("http://evil.example","click")'
    rec = dataclasses.replace(failing_record(), message=formula, operator="http://example.com/alice")
    sheet = openpyxl.load_workbook(export([rec], "xlsx", tmp_path / "r.xlsx"))["Summary"]
    header = [cell.value for cell in sheet[1]]
    message, operator = (sheet.cell(2, header.index(col) + 1) for col in ("message", "operator"))
    assert (message.data_type, message.value) == ("s", formula)
    assert (operator.data_type, operator.value, operator.hyperlink) == ("s", "http://example.com/alice", None)
    assert pd.read_excel(tmp_path / "r.xlsx", sheet_name="Summary")["message"].tolist() == [formula]
