"""OCP lines follow their recorded times: within a test step whatever the kind of line
(measurement, series point, log, instrument error, file), and a run's own log lines among
the steps rather than all at the top."""

from __future__ import annotations

import dataclasses
import json

from labctl.report.formats import ExportOptions, export
from labctl.report.record import Attachment, InstrumentError, LogEntry, Sample
from tests.integration.report.ocp_schema import ocp_errors
from tests.unit.report.records import T0, measurement, record, rich_record, step


def lines_of(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def kinds(lines):
    return [next(k for k in x.get("testStepArtifact", x.get("testRunArtifact", {"schemaVersion": 0})) if k != "testStepId")
            for x in lines]


def test_a_steps_lines_are_in_the_order_they_happened(tmp_path):
    soak = dataclasses.replace(
        step("soak", "PASS", measurement("die", 70.0, "degC", "PASS", t=T0 + 7.5)),
        ended_at=T0 + 8, samples=(Sample("die", 40.0, "degC", T0 + 1), Sample("die", 60.0, "degC", T0 + 5)))
    rec = dataclasses.replace(
        record(soak, outcome="passed"),
        logs=(LogEntry("info", "soaking at 70 degC", T0 + 3, soak.step_key, 0),
              LogEntry("info", "operator left the bench", T0 + 9, None, 0)),
        instrument_errors=(InstrumentError("chamber", -222, "Data out of range", T0 + 7, soak.step_key, 0),),
        attachments=(Attachment("eye.png", "image/png", "/tmp/eye.png", 1, None, T0 + 0.5, soak.step_key, 0),))
    lines = lines_of(export([rec], "ocp", tmp_path / "r.jsonl", ExportOptions()))
    assert ocp_errors(lines) == []
    assert kinds(lines) == ["schemaVersion", "testRunStart", "testStepStart", "file", "measurementSeriesStart",
                            "measurementSeriesElement", "log", "measurementSeriesElement", "measurementSeriesEnd",
                            "error", "measurement", "diagnosis", "testStepEnd", "log", "testRunEnd"]
    stamps = [x["timestamp"] for x in lines]
    assert stamps == sorted(stamps)


def test_times_recorded_out_of_step_never_go_back_within_a_step(tmp_path):
    """The rich record's resumed soak ends (T0+2) before its samples, log, error and file
    (T0+4 … T0+26): its end is stamped no earlier than its last line."""
    lines = lines_of(export([rich_record()], "ocp", tmp_path / "r.jsonl", ExportOptions(all_attempts=True)))
    assert ocp_errors(lines) == []
    by_step: dict[str, list[str]] = {}
    for x in lines:
        if "testStepArtifact" in x:
            by_step.setdefault(x["testStepArtifact"]["testStepId"], []).append(x["timestamp"])
    assert len(by_step) == 5
    assert all(got == sorted(got) for got in by_step.values()), by_step
