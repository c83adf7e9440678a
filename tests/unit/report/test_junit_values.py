"""JUnit XML of run records: values as people read them, a suite per run and corner, failures
with the failing measurement against its limits and the attempt that counted."""

from __future__ import annotations

import pytest
from junitparser import Failure, JUnitXml

from labctl.report.junit import junit_xml
from labctl.report.record import Limits
from tests.unit.report.records import failing_record, measurement, record, step


def test_floats_have_six_significant_digits_and_counts_stay_whole():
    xml = junit_xml([record(step("sequencing", "PASS",
        measurement("VDD_CORE->VDD_AUX", 3.0700000000000003, "ms", "PASS", Limits(low=0.5, high=5.0, text="0.5 ms ≤ x ≤ 5 ms")),
        measurement("bits", 4608000000000, "", "NONE")))])
    assert "VDD_CORE-&gt;VDD_AUX = 3.07 ms [0.5 ms ≤ x ≤ 5 ms] PASS" in xml
    assert "bits = 4608000000000  NONE" in xml
    assert "3.0700000000000003" not in xml


def test_a_suite_per_corner_and_the_failure_names_value_limits_and_attempt(tmp_path):
    path = tmp_path / "r.xml"
    path.write_text(junit_xml([failing_record()]), encoding="utf-8")
    suites = list(JUnitXml.fromfile(str(path)))
    assert [s.name for s in suites] == ["power-rails 1.2 DUT-7 run-1 [vin=4.75 V]", "power-rails 1.2 DUT-7 run-1 [vin=5 V]"]
    assert [(s.tests, s.failures) for s in suites] == [(1, 0), (1, 1)]
    [case] = list(suites[1])
    [failure] = case.result
    assert isinstance(failure, Failure)
    assert failure.message == "VDD_CORE out of limits"
    assert "VDD_CORE (rail=VDD_CORE) = 0.71 V [0.75 V ± 3 %] FAIL" in failure.text
    assert "attempt 2" in failure.text
    props = {p.name: p.value for p in suites[1].properties()}
    assert props["dut"] == "DUT-7" and props["corner"] == "vin=5 V" and props["plan_hash"] == "ab" * 32


def test_a_run_without_steps_still_has_its_suite_and_properties(tmp_path):
    """A plan with no steps (or a run stopped before its first): its suite says which run,
    DUT and station, with no test case (the file held an empty <testsuites/>)."""
    path = tmp_path / "r.xml"
    path.write_text(junit_xml([record(outcome="passed")]), encoding="utf-8")
    xml = JUnitXml.fromfile(str(path))
    [suite] = list(xml)
    props = {p.name: p.value for p in suite.properties()}
    assert (props["run_id"], props["dut"], props["station"], props["run_outcome"]) == (
        "run-1", "DUT-7", "bench-3", "passed")
    assert suite.tests == 0 and list(suite) == []


def test_an_abort_between_steps_still_shows_an_error_on_the_first_step_it_left_unrun(tmp_path):
    """SIGTERM as a step passed: no step was cut short, so the first step never run carries
    the <error> (an aborted run never reads as passed); the others are <skipped>."""
    why = "not run: SIGTERM received: aborting to the safe state"
    path = tmp_path / "r.xml"
    path.write_text(junit_xml([record(step("rails", "PASS"), step("ripple", "ABORTED", message=why),
                                      step("soak", "ABORTED", message=why), outcome="aborted")]), encoding="utf-8")
    xml = JUnitXml.fromfile(str(path))
    assert (xml.tests, xml.errors, xml.skipped) == (3, 1, 1)
    kinds = {c.name: [type(r).__name__ for r in c.result] for s in xml for c in s}
    assert kinds == {"rails": [], "ripple": ["Error"], "soak": ["Skipped"]}


def test_a_run_that_did_not_pass_with_every_step_passed_has_a_run_case_with_the_error(tmp_path):
    """Aborted as its last step passed (or ended error with nothing left to show it): CI
    must not read it as green; a run that passed gets no such case."""
    path = tmp_path / "r.xml"
    path.write_text(junit_xml([record(step("rails", "PASS"), outcome="aborted",
                                      message="SIGTERM received: aborting to the safe state")]), encoding="utf-8")
    xml = JUnitXml.fromfile(str(path))
    assert (xml.tests, xml.errors, xml.failures) == (2, 1, 0)
    cases = {c.name: [(type(r).__name__, r.message) for r in c.result] for s in xml for c in s}
    assert cases == {"rails": [], "run": [("Error", "run aborted: SIGTERM received: aborting to the safe state")]}
    path.write_text(junit_xml([record(step("rails", "PASS"), outcome="passed")]), encoding="utf-8")
    assert JUnitXml.fromfile(str(path)).tests == 1  # no run case for a passed run
    path.write_text(junit_xml([failing_record()]), encoding="utf-8")
    assert "run" not in {c.name for s in JUnitXml.fromfile(str(path)) for c in s}  # its failure says it already


def test_a_run_still_running_never_reads_as_passed(tmp_path):
    """A report made while the run goes on: its steps so far passed, the one under way is
    skipped, and a `run` test case says it has not passed (the file read green in CI)."""
    import dataclasses

    from junitparser import Error

    rec = record(step("power_on", "PASS"), step("soak", "RUNNING"), outcome="running")
    path = tmp_path / "r.xml"
    path.write_text(junit_xml([rec]), encoding="utf-8")
    [suite] = list(JUnitXml.fromfile(str(path)))
    assert (suite.tests, suite.errors, suite.skipped) == (3, 1, 1)
    [run_case] = [c for c in suite if c.name == "run"]
    [error] = run_case.result
    assert isinstance(error, Error) and "still running" in error.message
    # an instrument with nothing recorded about it has no (empty) property
    bare = dataclasses.replace(rec.instruments[0], idn="", asset_serial="", calibration_due=None)
    xml = junit_xml([dataclasses.replace(rec, instruments=(bare,), outcome="passed")])
    assert 'name="instrument.psu"' not in xml


def test_a_steps_name_in_the_plan_is_its_title_in_the_reports():
    """`name: Rails under load` (docs/plans.md: the step's title in reports): read from the plan
    as run, its included files too; a test case property in JUnit, beside the id in HTML."""
    import dataclasses

    from labctl.report.html import render_html
    from labctl.report.population import population

    text = ("name: power-rails\nsteps:\n  - id: rails\n    name: Rails under load <5%>\n    check: power.rails\n"
            "\n# ---- included: lib.yaml ----\nsteps:\n  - {id: fan, name: Fan spins, check: wait}\n")
    rec = record(step("rails", "PASS"), step("fan", "PASS"), outcome="passed")
    rec = dataclasses.replace(rec, plan=dataclasses.replace(rec.plan, text=text))
    assert rec.plan.step_titles() == {"rails": "Rails under load <5%>", "fan": "Fan spins"}
    xml = junit_xml([rec])
    assert '<property name="title" value="Rails under load &lt;5%&gt;" />' in xml
    assert '<property name="title" value="Fan spins" />' in xml
    html = render_html(population([rec]))
    assert "Rails under load &lt;5%&gt;" in html and "Fan spins" in html


def test_the_html_steps_table_gives_a_simulated_steps_simulated_duration_too():
    """On a time-scaled bench a soak of 5.25 s wall held 5m15.0s simulated (its settle_time said
    324.8 s): both are shown."""
    import dataclasses

    from labctl.report.html import render_html
    from labctl.report.population import population

    soak = dataclasses.replace(step("soak", "PASS"), duration=5.25, duration_sim=315.0)
    html = render_html(population([record(soak, outcome="passed")]))
    assert "(simulated 5m15.0s)" in html


def test_the_titles_of_a_plan_run_many_times_are_read_once():
    """A report or `labctl stats` of many runs of one plan reads the step titles of that plan's
    text once, not once a run (500 runs of a 200-step plan: 25 s of YAML of a 28 s report)."""
    import dataclasses

    text = "name: p\nsteps:\n  - {id: a, name: Alpha, check: wait}\n  - {id: b, check: wait}\n"
    runs = [dataclasses.replace(record(step("a", "PASS")), run_id=f"run-{i}") for i in range(3)]
    plans = [dataclasses.replace(r.plan, text="".join(text)) for r in runs]  # equal texts, not one object
    titles = [p.step_titles() for p in plans]
    assert titles[0] == {"a": "Alpha"} and all(t is titles[0] for t in titles)
    with pytest.raises(TypeError):
        titles[0]["b"] = "changed"  # shared by every run of the plan: read-only
    other = dataclasses.replace(plans[0], text=text.replace("Alpha", "Beta")).step_titles()
    assert other == {"a": "Beta"}
