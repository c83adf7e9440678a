"""The headless console is paced for a person: passing steps fold, failures always print.

Driven with events and a fake clock (no run, no instruments): what the operator reads.
"""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from labctl.console import ConsoleReporter, summary_table
from labctl.engine import events as ev


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _reporter() -> tuple[ConsoleReporter, io.StringIO, Clock]:
    out, clock = io.StringIO(), Clock()
    console = Console(file=out, width=300, color_system=None, soft_wrap=True)
    return ConsoleReporter(console, lines_per_second=10.0, burst=40.0, clock=clock), out, clock


def _step(rep: ConsoleReporter, clock: Clock, i: int, value: float, *, attempt: int = 1) -> None:
    key = f"steps/m{i}#{attempt}"
    limits = ev.Limits(low=4.85, high=5.15, text="4.85 V ≤ x ≤ 5.15 V")
    verdict = ev.Verdict.PASS if 4.85 <= value <= 5.15 else ev.Verdict.FAIL
    outcome = ev.StepOutcome.PASS if verdict is ev.Verdict.PASS else ev.StepOutcome.FAIL
    message = "" if outcome is ev.StepOutcome.PASS else f"value {value:g} V outside 4.85 V ≤ x ≤ 5.15 V"
    rep(ev.StepStarted(run_id="r", time=clock.t, step_key=key, step_id=f"m{i}", group="steps", check="measure",
                       attempt=attempt))
    rep(ev.MeasurementRecorded(run_id="r", time=clock.t, step_key=key, name="value", value=value, unit="V",
                               limits=limits, verdict=verdict))
    rep(ev.StepEnded(run_id="r", time=clock.t, step_key=key, outcome=outcome, message=message))
    clock.t += 0.0002  # a fast instrument: 5,000 steps a second


def test_fast_passing_steps_print_in_full_then_fold_into_a_line_a_second():
    rep, out, clock = _reporter()
    for i in range(5000):
        _step(rep, clock, i, 5.0)
    lines = out.getvalue().splitlines()
    assert lines[:3] == ["▶ m0 measure", "    value = 5 V  4.85 V ≤ x ≤ 5.15 V  PASS", "  PASS"]
    folded = [ln for ln in lines if "step(s) passed" in ln]
    assert folded and folded[0].startswith("  … ") and "(m" in folded[0]
    # one second of steps: the 40-line burst and 10 lines a second (a folded line among them)
    assert len(lines) <= 40 + 10 * 1.0 + 1, lines[-5:]


def test_a_folded_line_counts_skipped_steps_apart_from_passed_ones():
    """`when:`-skipped steps folded with passing ones are counted as skipped, not as passed."""
    rep, out, clock = _reporter()
    for i in range(100):
        _step(rep, clock, i, 5.0)  # uses up the burst
    for i in range(100, 104):
        key = f"steps/s{i}#1"
        rep(ev.StepStarted(run_id="r", time=clock.t, step_key=key, step_id=f"s{i}", group="steps", check="wait"))
        rep(ev.StepEnded(run_id="r", time=clock.t, step_key=key, outcome=ev.StepOutcome.SKIPPED,
                         message="when: x == 1 is false"))
    clock.t += 2.0
    _step(rep, clock, 200, 5.0)
    folded = [ln for ln in out.getvalue().splitlines() if "… " in ln]
    [line] = [ln for ln in folded if "s103" in ln]
    assert ", 4 skipped (" in line or line.startswith("  … 4 skipped ("), line


def test_every_failure_prints_past_the_budget_one_line_each_in_order():
    rep, out, clock = _reporter()
    for i in range(20):
        _step(rep, clock, i, 5.0)  # uses up the burst
    for i in range(20, 2020):
        _step(rep, clock, i, 0.001 if i % 2 else 5.0)
    text = out.getvalue()
    failed = [ln for ln in text.splitlines() if ln.lstrip().startswith("FAIL")]
    assert len(failed) == 1000  # every failure, one line each once the lines are spent
    assert failed[-1] == "  FAIL m2019  value 0.001 V outside 4.85 V ≤ x ≤ 5.15 V"
    ids = [int(ln.split()[1][1:]) for ln in failed]
    assert ids == sorted(ids) and ids[0] < 40 < ids[-1]
    # the passing steps between them are counted, not lost
    assert "step(s) passed" in text


def test_a_retried_failure_names_its_attempt_when_brief():
    rep, out, clock = _reporter()
    for i in range(30):
        _step(rep, clock, i, 5.0)
    _step(rep, clock, 99, 0.5, attempt=2)
    assert out.getvalue().splitlines()[-1] == "  FAIL m99 (attempt 2)  value 0.5 V outside 4.85 V ≤ x ≤ 5.15 V"


def test_the_summary_lists_at_most_max_rows_failures_and_counts_the_rest():
    steps = [SimpleNamespace(step_id=f"m{i}", check="measure", corner={}, attempts=1,
                             outcome=ev.StepOutcome.FAIL if i % 3 else ev.StepOutcome.PASS,
                             message=f"value {i} V outside" if i % 3 else "") for i in range(3000)]
    steps.append(SimpleNamespace(step_id="x", check="measure", corner={}, attempts=1,
                                 outcome=ev.StepOutcome.ERROR, message="instrument error"))
    result = SimpleNamespace(run_id="r", outcome=ev.RunOutcome.FAILED, steps=steps)
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(summary_table(result, max_rows=60))
    text = out.getvalue()
    assert "│ m1 " in text and "│ m89 " in text and "│ m91 " not in text  # the first 60 that did not pass
    assert "… 1940 more │        │ FAIL" in text
    assert "… 1 more    │        │ ERROR" in text
    assert "… 1000 more │        │ PASS" in text


def test_control_characters_in_a_reply_are_shown_never_sent_to_the_terminal():
    """A DUT console's coloured reply or a noisy serial line (ESC sequences, a bell, a carriage
    return) recorded as a text value or an instrument error is printed as visible escapes: it
    cannot clear the operator's screen, retitle the terminal or overwrite the line."""
    rep, out, clock = _reporter()
    key = "steps/fw#1"
    rep(ev.StepStarted(run_id="r", time=clock.t, step_key=key, step_id="fw", group="steps", check="console.read"))
    rep(ev.MeasurementRecorded(run_id="r", time=clock.t, step_key=key, name="version",
                               value="\x1b[32m1.4.2\x1b[0m", unit="", limits=None, verdict=ev.Verdict.NONE))
    rep(ev.InstrumentErrorReported(run_id="r", time=clock.t, step_key=key, role="dut", code=-100,
                                   message="\x1b[2J\x1b]0;owned\x07\rerror"))
    rep(ev.StepEnded(run_id="r", time=clock.t, step_key=key, outcome=ev.StepOutcome.ERROR, message="bad \x9b1m"))
    text = out.getvalue()
    assert not any(ch in text for ch in "\x1b\x07\r\x9b"), repr(text)
    assert "version = \\x1b[32m1.4.2\\x1b[0m" in text
    assert "\\x1b[2J\\x1b]0;owned\\x07\\x0derror" in text and "bad \\x9b1m" in text
