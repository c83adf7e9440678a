"""JUnit XML shows measured values as people read them: 3.07 ms, not 3.0700000000000003 ms."""

from __future__ import annotations

from labctl.engine.context import Recorded
from labctl.engine.events import Limits, RunOutcome, StepOutcome, Verdict
from labctl.engine.runner import RunResult, StepResult
from labctl.report.junit import junit_xml


def test_floats_have_six_significant_digits_and_counts_stay_whole():
    step = StepResult("steps/sequencing", "sequencing", "steps", "power.sequencing", StepOutcome.PASS, measurements=[
        Recorded("VDD_CORE->VDD_AUX", 3.0700000000000003, "ms", Verdict.PASS, Limits(low=0.5, high=5.0, text="0.5 ms ≤ x ≤ 5 ms")),
        Recorded("bits", 4608000000000, "", Verdict.NONE, None),
    ])
    xml = junit_xml(RunResult("r1", RunOutcome.PASSED, "", [step]))
    assert "VDD_CORE-&gt;VDD_AUX = 3.07 ms [0.5 ms ≤ x ≤ 5 ms] PASS" in xml
    assert "bits = 4608000000000  NONE" in xml
    assert "3.0700000000000003" not in xml
