"""The HTML report's content, read as text: failures first with margins, MARGINAL flagged,
every hostile string escaped, per-run pages, and the aggregation of large reports."""

from __future__ import annotations

import dataclasses
import re

from labctl.report import html
from labctl.report.formats import export
from labctl.report.population import population
from labctl.report.record import Limits
from labctl.report.testing import synthetic_records
from tests.unit.report.records import failing_record, measurement, record, step

LIMITS = Limits(low=0.725, high=0.775, marginal_low=0.73, marginal_high=0.77, text="0.75 V ± 3 %")


def test_failures_come_first_with_their_margin_and_marginal_values_are_flagged(tmp_path):
    marginal = record(step("rails", "PASS", measurement("VDD_IO", 0.7715, "V", "MARGINAL", LIMITS, rail="VDD_IO")),
                      run_id="run-2", outcome="passed", dut="DUT-8")
    page = export([marginal, failing_record()], "html", tmp_path / "r.html").read_text()
    assert page.index('id="failures"') < page.index('id="yield"') < page.index('id="capability"')
    failures = page[page.index('id="failures"'):page.index('id="yield"')]
    # 0.71 V against 0.725…0.775 V: 0.015 V below the low limit = −30 % of the 0.05 V span
    assert "0.71" in failures and "-30.0 %" in failures and "Failures (1)" in failures
    assert '<tr class="MARGINAL">' in page and "0.7715" in page and "7.0 %" in page  # (0.775−0.7715)/0.05
    # failing runs get their page first
    assert page.index('id="run-run-1"') < page.index('id="run-run-2"')


def test_every_recorded_string_is_escaped(tmp_path):
    evil = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    rec = dataclasses.replace(
        record(step("console", "FAIL", dataclasses.replace(measurement("reply", None, "", "FAIL", sensor=evil),
                                                           value_text=evil), message=evil), dut=evil),
        operator=evil, message=evil)
    page = export([rec], "html", tmp_path / "r.html").read_text()
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&#34;&gt;&lt;img src=x onerror=alert(2)&gt;" in page


def test_a_run_without_measurements_or_end_still_reports(tmp_path):
    cut = dataclasses.replace(record(step("power_on", "ERROR", message="psu did not answer"), run_id="r-err",
                                     outcome="interrupted"), ended_at=None)
    page = export([cut], "html", tmp_path / "r.html").read_text()
    assert "psu did not answer" in page and "No measurement missed its limits" in page and "INTERRUPTED" in page


def test_large_reports_list_only_failing_and_marginal_values_per_run(monkeypatch):
    records = synthetic_records(6, 300)
    monkeypatch.setattr(html, "MAX_LISTED", 100)
    page = html.render_html(population(records))
    assert "run details list failing and marginal measurements only" in page
    listed = len(re.findall(r'<tr class="(?:PASS|MARGINAL|FAIL)"><td>', page))
    assert listed < 300
    assert page.count("passing measurements not listed") == 6


def test_text_limits_are_shown_as_the_record_words_them(tmp_path):
    reply = dataclasses.replace(measurement("reply", None, "", "FAIL", Limits(regex=r"serial \S+")), value_text="garbage")
    page = export([record(step("console", "FAIL", reply))], "html", tmp_path / "r.html").read_text()
    failures = page[page.index('id="failures"'):page.index('id="yield"')]
    assert "garbage" in failures and r"~ /serial \S+/" in failures


def test_the_totals_count_each_steps_final_attempt_as_the_failures_do():
    """failing_record: VDD_CORE at two corners, the second retried (0.70 V, then 0.71 V: both
    FAIL). Two measurements stand, one PASS and one FAIL, as the failures section lists them;
    the totals counted the retried attempt too (3 measurements, 2 FAIL)."""
    context = html.build_context(population([failing_record()]))
    assert context["scope"]["measurements"] == 2
    assert context["summary"]["verdicts"] == [("PASS", 1), ("FAIL", 1)]
    assert context["n_failures"] == 1


def test_a_runs_page_lists_the_measurements_of_a_retried_attempt_too(tmp_path):
    # rails at vin=5 V: attempt 1 read 0.70 V and was retried; attempt 2 (0.71 V) counts
    page = export([failing_record()], "html", tmp_path / "r.html").read_text()
    summary = page[:page.index('id="run-run-1"')]
    assert "Failures (1)" in summary and ">0.7<" not in summary  # the totals count the final attempt only
    run_page = page[page.index('id="run-run-1"'):]
    first = re.search(r"<td>rails</td><td>vin=5 V</td><td>VDD_CORE</td>.*?</tr>", run_page)
    assert first and '<td class="num">0.7</td>' in first.group(0)
    final = re.search(r"rails <span class=\"muted\">\(attempt 2\)</span></td><td>vin=5 V</td><td>VDD_CORE</td>.*?</tr>",
                      run_page)
    assert final and '<td class="num">0.71</td>' in final.group(0)
    assert "passing measurements not listed" not in run_page


def test_a_step_that_failed_or_errored_without_a_failing_measurement_is_listed_under_failures():
    a = record(step("console_bad", "FAIL", message="console: reply to 'id' does not match"),
               step("power_on", "ERROR", message="psu: no answer within 2 s"),
               step("core", "FAIL", measurement("VDD_CORE", 0.9, "V", "FAIL")), run_id="a1", outcome="failed")
    page = html.render_html(population([a]))
    failures = page.split('<section id="failures">', 1)[1].split("</section>", 1)[0]
    assert "Steps that failed without a measurement out of its limits (2)" in failures
    assert "console: reply to &#39;id&#39; does not match" in failures and "psu: no answer within 2 s" in failures
    assert failures.count("<td>core</td>") == 1  # the step with its failing measurement is listed once, above


def test_a_run_of_many_steps_lists_the_lowest_yields_the_worst_cpk_and_the_steps_that_did_not_pass(monkeypatch):
    """A run of 40 steps, each its own characteristic, two of them failing, with the tables
    held to 5 rows and the run details to 20 steps: the yield table lists the failing steps
    first and says how many it leaves out; the capability table the worst Cpk and how many more
    there are; the run's section the two steps that did not pass and how many passed."""
    monkeypatch.setattr(html, "MAX_TABLE_ROWS", 5)
    monkeypatch.setattr(html, "MAX_LISTED", 20)
    steps = []
    for i in range(40):
        bad = i in (17, 33)
        values = [measurement("VDD", v, "V", "FAIL" if bad and k == 2 else "PASS", LIMITS)
                  for k, v in enumerate((0.75, 0.751 + i * 1e-4, 0.70 if bad else 0.749))]
        steps.append(step(f"s{i}", "FAIL" if bad else "PASS", *values))
    page = html.render_html(population([record(*steps)]))
    yields = page[page.index('id="yield"'):page.index('id="pareto"')]
    assert re.findall(r"<td>(s\d+)</td>", yields)[:2] == ["s17", "s33"] and yields.count("<tr class=") == 5
    assert "35 more steps, none of a lower yield, are not" in yields
    capability = page[page.index('id="capability"'):page.index('id="trends"')]
    assert capability.count("<td>s") == 5 and "35 more, none of a lower Cpk, are not" in capability
    run = page[page.index('id="run-run-1"'):]
    shown = re.findall(r'<tr class="(?:PASS|FAIL)"><td>(s\d+)', run[:run.index("passed or skipped steps not listed")])
    assert shown == ["s17", "s33"] and "38 passed or skipped steps not listed" in run
    assert "More than 20 steps: run details list the steps that did not pass only" in page
