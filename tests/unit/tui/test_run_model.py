"""The run screen's model (labctl.tui.model): events in, what the screen shows out."""

from __future__ import annotations

import pytest

from labctl.engine import events as ev
from labctl.tui.model import RunModel, margin
from tests.e2e.tui_fixed import run_events


def test_margin_is_the_distance_to_the_nearest_limit_and_its_share_of_the_half_band():
    limits = ev.Limits(low=0.7, high=0.8)
    text, share = margin(0.79, limits)
    assert text == "+0.01 (20 %)" and share == pytest.approx(0.2)
    assert margin(0.81, limits)[1] == pytest.approx(-0.2)  # outside: negative
    assert margin(3.0, ev.Limits(high=5.0)) == ("+2", None)  # one-sided: no band to share
    assert margin("yes", ev.Limits(equals="yes")) == ("", None)
    assert margin(1.0, None) == ("", None)


def test_the_margin_is_said_in_the_measurement_s_unit():
    assert margin(0.750905, ev.Limits(low=0.725, high=0.775), "V")[0] == "+0.02409 V (96 %)"
    assert margin(0.881751, ev.Limits(high=3.0), "A")[0] == "+2.118 A"
    assert margin(0.81, ev.Limits(low=0.7, high=0.8), "V")[0] == "-0.01 V (-20 %)"  # outside


def test_a_burst_of_events_is_one_set_of_changes():
    m = RunModel()
    for e in run_events():
        m.apply(e)
    steps, measurements, logs, prompts = m.take_changes()
    assert m.current == "steps/soak[1]"
    assert m.steps["steps/ber[0]"].attempt == 2 and m.steps["steps/ber[0]"].status == "FAIL"
    assert {m.steps[k].group for k in steps} == {"setup", "steps"}
    assert len(measurements) == 11 and m.counts == {"PASS": 9, "MARGINAL": 1, "FAIL": 1}
    assert any("ber (lane 5)" in text for _level, text in logs)
    assert prompts == []
    assert m.progress_text == "chamber 24.6 → 25.0 degC, stable 20s of 2m" and m.progress_fraction == 0.17
    assert m.corner_label(1) == "corner 2 [ambient=25 degC]"
    assert [lane for lane, _ in m.ber_by_lane()] == [str(i) for i in range(8)]
    assert m.take_changes() == (set(), [], [], [])  # nothing new since


def test_safe_state_steps_get_their_own_group():
    m = RunModel()
    m.apply(ev.StepStarted(run_id="r", time=1.0, step_key="teardown/safe-state.psu#1", step_id="safe-state.psu",
                           group="teardown", check="safe_state"))
    m.apply(ev.StepEnded(run_id="r", time=2.0, step_key="teardown/safe-state.psu#1", outcome=ev.StepOutcome.PASS,
                         message="output = OFF (read back)"))
    row = m.steps["teardown/safe-state.psu"]
    assert row.group == "safe-state" and row.status == "PASS"
