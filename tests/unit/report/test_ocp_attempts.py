"""OCP with --all-attempts: a step that does not count says why, so a pipeline reading the
stream of a resumed run does not take a replay, or a step cut off by a crash, for a retry."""

from __future__ import annotations

import dataclasses
import json

from labctl.report.formats import ExportOptions, export
from tests.integration.report.ocp_schema import ocp_errors
from tests.unit.report.records import record, step


def test_attempts_that_do_not_count_are_named_for_why(tmp_path):
    resumed = record(
        step("power_on", "PASS"),
        step("soak", "INTERRUPTED", final=False, message="cut off: the run was interrupted"),
        dataclasses.replace(step("power_on", "PASS", attempt=2, final=False, message="replayed on resume"),
                            session=1, tags=("resume-replay",)),
        dataclasses.replace(step("soak", "PASS", attempt=2), session=1),
        dataclasses.replace(step("rails", "FAIL", final=False), session=1),
        dataclasses.replace(step("rails", "PASS", attempt=2), session=1),
        outcome="passed")
    path = export([resumed], "ocp", tmp_path / "r.jsonl", ExportOptions(all_attempts=True))
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert ocp_errors(lines) == []
    names = [x["testStepArtifact"]["testStepStart"]["name"] for x in lines
             if "testStepStart" in x.get("testStepArtifact", {})]
    assert names == ["steps/power_on", "steps/soak (attempt 1, cut off)",
                     "steps/power_on (attempt 2, replayed on resume)", "steps/soak",
                     "steps/rails (attempt 1, retried)", "steps/rails"]
