"""Yield per step as `labctl stats` and the HTML report show it, computed from run records: a
run that was killed and resumed is no retry, and a report of several plans lists each plan's
steps in the order that plan ran them."""

from __future__ import annotations

import dataclasses

from labctl.analysis.summary import stats_tables
from labctl.report.population import population
from tests.unit.report.records import record, step


def _resumed(s, attempt: int, outcome: str = "PASS", message: str = "", final: bool = False):
    return dataclasses.replace(step(s, outcome, attempt=attempt, final=final, message=message), session=1)


def _step_yield(*records) -> dict[str, tuple[float, float]]:
    table = stats_tables(population(records, samples=False), by="step")["step_yield"]
    return {r.step: (r.first_pass_yield, r.final_yield) for r in table.itertuples()}


def test_a_resumed_run_of_a_board_that_never_failed_is_a_first_pass_for_every_step():
    # power_on passed, then the run was killed in soak; `labctl resume` replayed power_on
    # (attempt 2, not final) and ran soak again (attempt 2, final). Nothing ever failed.
    resumed = record(
        step("power_on", "PASS"),
        step("soak", "INTERRUPTED", final=False, message="cut off: the run was interrupted"),
        _resumed("power_on", 2, message="replayed on resume"),
        _resumed("soak", 2, final=True),
        step("rails", "FAIL", attempt=1, final=False),  # a real retry: FAIL, then PASS
        step("rails", "PASS", attempt=2),
        run_id="resumed", outcome="passed", dut="DUT-1")
    y = _step_yield(resumed)
    assert y["power_on"] == (1.0, 1.0)
    assert y["soak"] == (1.0, 1.0)
    assert y["rails"] == (0.0, 1.0)  # a retry that passed is still not a first pass


def test_a_step_skipped_on_resume_after_it_was_not_run_in_the_aborted_session_does_not_count():
    """The run was aborted before `only_x1` (recorded ABORTED, not run); `labctl resume` ran it
    where its `when:` held and skipped it where not: the run passed, the step's yield is 100 %
    (it was 0 % for both)."""
    rec = record(step("only_x1", "ABORTED", final=False, message="not run: SIGINT received"),
                 _resumed("only_x1", 2, outcome="SKIPPED", final=True, message="when: x == 1 is false"),
                 run_id="r", outcome="passed", dut="DUT-1")
    other = record(step("only_x1", "ABORTED", final=False, message="not run: SIGINT received"),
                   _resumed("only_x1", 2, final=True), run_id="r2", outcome="passed", dut="DUT-2")
    assert _step_yield(rec, other)["only_x1"] == (1.0, 1.0)  # DUT-2's run: DUT-1's does not count
    assert "only_x1" not in _step_yield(rec)


def test_a_replay_that_failed_on_resume_counts_against_the_step():
    rec = record(step("power_on", "PASS", final=False),
                 _resumed("power_on", 2, outcome="FAIL", final=True, message="replayed on resume"),
                 run_id="r", outcome="failed", dut="DUT-1")
    assert _step_yield(rec)["power_on"] == (0.0, 0.0)


def test_each_plan_lists_its_steps_in_the_order_it_ran_them():
    # power-rails runs power_on first; the EVT plan starts with a chamber soak before power_on
    rails = record(step("power_on", "PASS"), step("rails", "PASS"), step("power_off", "PASS", group="teardown"),
                   run_id="a", outcome="passed", dut="DUT-1")
    evt = dataclasses.replace(
        record(step("chamber_room", "PASS", group="setup"), step("power_on", "PASS"), step("soak", "PASS"),
               step("power_off", "PASS", group="teardown"), run_id="b", outcome="passed", dut="DUT-1"),
        plan=dataclasses.replace(rails.plan, name="accelerator-evt"))
    table = stats_tables(population([rails, evt], samples=False), by="step")["step_yield"]
    steps = {plan: list(g["step"]) for plan, g in table.groupby("plan", sort=False)}
    assert steps == {"accelerator-evt": ["chamber_room", "power_on", "soak", "power_off"],
                     "power-rails": ["power_on", "rails", "power_off"]}
