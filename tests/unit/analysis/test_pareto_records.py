"""The failure Pareto as `labctl stats` and the HTML report show it, computed from run records."""

from __future__ import annotations

from labctl.analysis.summary import stats_tables
from labctl.report.population import population
from tests.unit.report.records import measurement, record, step


def test_the_pareto_counts_the_duts_of_runs_that_errored_before_measuring_anything():
    # the supply did not answer at power-on on two boards; only one of them had measured anything
    a = record(step("power_on", "ERROR", message="psu: timeout"), run_id="a", outcome="error", dut="DUT-1")
    b = record(step("dut_identity", "PASS", measurement("serial", 1.0, "", "NONE")),
               step("power_on", "ERROR", message="psu: timeout"), run_id="b", outcome="error", dut="DUT-2")
    p = stats_tables(population([a, b], samples=False))["pareto"]
    assert p[["cause", "runs", "duts"]].to_dict("records") == [{"cause": "power_on / (error)", "runs": 2, "duts": 2}]


def test_a_step_that_failed_without_a_measurement_out_of_limits_is_a_cause():
    """A console step whose reply did not match FAILs with no failing measurement: it is a
    failure reviewers must see in the Pareto, beside a measurement that missed its limits."""
    a = record(step("console_bad", "FAIL", message="console: reply to 'id' does not match"),
               step("core", "FAIL", measurement("VDD_CORE", 0.9, "V", "FAIL")), run_id="a", outcome="failed", dut="D-1")
    b = record(step("console_bad", "FAIL", measurement("reply", 1.0, "", "PASS"), message="no match"),
               run_id="b", outcome="failed", dut="D-2")
    p = stats_tables(population([a, b], samples=False))["pareto"]
    assert p[["cause", "runs", "duts"]].to_dict("records") == [
        {"cause": "console_bad / (failed)", "runs": 2, "duts": 2}, {"cause": "core / VDD_CORE", "runs": 1, "duts": 1}]
