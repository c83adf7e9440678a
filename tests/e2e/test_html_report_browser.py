"""The HTML report in headless Chromium (the system's, driven by playwright): it loads with no
request beyond the file, no console error, its charts render, it prints, and hostile strings
from DUTs, consoles and operators render as text without running anything."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from labctl.report.formats import export
from labctl.report.record import InstrumentError, Limits, Prompt, Sample
from tests.unit.report.records import T0, measurement, record, step

SCRIPT = "<script>window.__xss = 1</script>"
IMG = '"><img src=x onerror="window.__xss = 2">'
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        message = "chromium is not installed (scripts/test.sh installs it: apt-get install -y chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def hostile_records():
    limits = Limits(low=0.7275, high=0.7725, text="0.75 V ± 3 %")
    recs = []
    for i in range(8):
        dut = f"EVT-{i}{SCRIPT}" if i == 0 else f"EVT-{i}"
        soak = dataclasses.replace(
            step("soak", "PASS", measurement("temperature", 70.0 + i, "degC", "PASS", Limits(high=95.0), sensor="die")),
            samples=tuple(Sample("die", 25 + 4 * k, "degC", T0 + 10 * k) for k in range(12)))
        value = 0.75 + 0.004 * (i - 4) if i != 5 else 0.80
        console = dataclasses.replace(measurement("reply", None, "", "FAIL", rail=IMG),
                                      value_text=f"login: {SCRIPT}{IMG}")
        rec = record(
            step("rails", "PASS" if i != 5 else "FAIL", measurement("VDD_CORE", value, "V",
                 "PASS" if i != 5 else "FAIL", limits, rail="VDD_CORE"), message=f"console said {IMG}"),
            soak,
            step("console", "FAIL", console, check="generic.console", message=SCRIPT),
            run_id=f"run-{i}", outcome="failed", dut=dut)
        recs.append(dataclasses.replace(
            rec, operator=f"op {IMG}", message=f"aborted by {SCRIPT}", started_at=T0 + 3600 * i,
            ended_at=T0 + 3600 * i + 60,
            prompts=(Prompt("p1", f"Fit the heatsink {SCRIPT}", (), f"done {IMG}", "operator", T0, T0 + 1, None, 0),),
            instrument_errors=(InstrumentError("psu", -222, f"Data out of range {SCRIPT}", T0, None, 0),)))
    return recs


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    return export(hostile_records(), "html", tmp_path_factory.mktemp("html") / "report.html")


def open_page(browser, path: Path):
    """The report with every network request blocked; returns the page, the requests made and
    the console errors."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    requests, errors = [], []
    context.route("**/*", lambda route: route.continue_() if route.request.url == path.as_uri() else route.abort())
    page = context.new_page()
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    page.goto(path.as_uri(), wait_until="load")
    return page, requests, errors


def test_report_loads_offline_without_console_errors_and_charts_render(browser, report, tmp_path):
    page, requests, errors = open_page(browser, report)
    assert requests == [report.as_uri()]  # nothing but the file itself
    assert errors == []
    sizes = page.eval_on_selector_all("svg.chart", "els => els.map(e => e.getBoundingClientRect().width * "
                                                   "e.getBoundingClientRect().height)")
    assert len(sizes) >= 4 and all(s > 10_000 for s in sizes)  # distribution, trend, Pareto, thermal…
    text = page.inner_text("body")
    assert "Failures (9)" in text and "Process capability" in text and "Run run-5" in text
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    page.emulate_media(media="print")  # printed: a new page per run, the navigation hidden
    breaks = page.eval_on_selector_all("section.run", "els => els.map(e => getComputedStyle(e).breakBefore)")
    assert breaks == ["page"] * 8
    assert page.eval_on_selector("nav.toc", "e => getComputedStyle(e).display") == "none"
    for fmt in ("A4", "Letter"):
        pdf = tmp_path / f"report-{fmt}.pdf"
        page.pdf(path=str(pdf), format=fmt)
        assert pdf.read_bytes()[:4] == b"%PDF"
    page.context.close()


def test_hostile_strings_render_as_text_and_run_nothing(browser, report):
    page, _, errors = open_page(browser, report)
    assert page.evaluate("window.__xss") is None
    assert errors == []
    assert page.evaluate("document.querySelectorAll('script, img').length") == 0
    text = page.inner_text("body")
    assert f"EVT-0{SCRIPT}" in text  # the DUT serial, shown as typed
    assert f"op {IMG}" in text  # the operator
    assert f"login: {SCRIPT}{IMG}" in text  # the console reply
    assert f"console said {IMG}" in text  # a step message
    assert f"done {IMG}" in text and f"Data out of range {SCRIPT}" in text  # a prompt answer, an instrument error
    page.context.close()
