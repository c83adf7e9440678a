"""Generic checks on the simulated bench: measure, scpi, console, prompt, wait, set."""

from __future__ import annotations

import threading
import time

import pytest

from labctl.engine.events import PromptAnswered, PromptAsked
from tests.integration.checks.conftest import lim

pytestmark = pytest.mark.timeout(60)


def test_measure_dut_telemetry_thermocouple_and_supply_channel(bench):
    bench.power_on()
    die = bench.run("measure", {"role": "dut", "property": "die_temp", "unit": "degC", "samples": 5,
                                "interval": "1 s"}, {"value": lim("degC", hi=45.0)})
    assert die.outcome == "PASS", die.message
    assert 24 < die.value("value") < 45
    assert len(die.progress) == 5
    lid = bench.run("measure", {"role": "daq", "property": "temperature", "channel": "TC_LID", "unit": "degC"})
    assert lid.values("value") == {"TC_LID": pytest.approx(27.0, abs=5.0)}
    amps = bench.run("measure", {"role": "psu", "property": "ch1.current", "unit": "mA", "statistic": "max",
                                 "samples": 3})
    assert 500 < amps.value("value") < 2000  # read in A, recorded in the plan's unit


def test_measure_judges_against_the_limit_and_names_the_channel(bench):
    bench.power_on()
    out = bench.run("measure", {"role": "daq", "property": "voltage", "channel": "VDD_CORE", "unit": "V"},
                    {"value": lim("V", lo=0.9, hi=1.0)})
    assert out.outcome == "FAIL"
    assert out.message.startswith("VDD_CORE: value 0.75")


def test_measure_unknown_property_lists_what_exists(bench):
    out = bench.run("measure", {"role": "psu", "property": "ch1.banana"})
    assert out.outcome == "ERROR"
    assert "role psu has no property 'banana'" in out.message and "voltage" in out.message


def test_scpi_write_then_query_parsed_with_unit(bench):
    out = bench.run("scpi", {"role": "psu", "write": ["VOLT 4.25,(@2)"], "query": "VOLT? (@2)", "unit": "V"},
                    {"value": lim("V", lo=4.2, hi=4.3)})
    assert out.outcome == "PASS", out.message
    assert out.value("value") == pytest.approx(4.25)
    idn = bench.run("scpi", {"role": "dmm", "query": "*IDN?", "parse": "regex", "pattern": r",(\w+),"},
                    {"value": lim(regex="^34465A$")})
    assert idn.outcome == "PASS" and idn.value("value") == "34465A"


def test_scpi_error_from_the_instrument_names_the_command(bench):
    out = bench.run("scpi", {"role": "psu", "write": ["VOLT:BOGUS 1"]})
    assert out.outcome == "ERROR"
    assert '-113,"Undefined header"' in out.message and "'VOLT:BOGUS 1'" in out.message


def test_console_expect_and_extract(bench):
    bench.power_on()
    ident = bench.run("console", {"send": "id", "expect": r"serial (?P<serial>\S+)", "extract": {"serial": None}})
    assert ident.outcome == "PASS", ident.message
    assert ident.value("serial") == bench.lab.dut_serial == "SIM-GOLD-0001"
    temps = bench.run("console", {"send": "sensors", "expect": r"die_temp (?P<die>[\d.]+) degC",
                                  "extract": {"die": "degC"}}, {"die": lim("degC", hi=60.0)})
    assert temps.outcome == "PASS", temps.message
    assert 20 < temps.value("die") < 60


def test_console_reply_that_never_matches_fails_with_the_last_reply(bench):
    out = bench.run("console", {"send": "load", "expect": r"load 55 %", "timeout": "2 s"})
    assert out.outcome == "FAIL"
    assert out.message.startswith("console: reply to 'load' does not match /load 55 %/ within 2s")
    assert "load 0 %" in out.message


def test_prompt_answered_by_the_handler(bench):
    asked = []

    def handler(prompt_id, text, choices):
        asked.append((prompt_id, text, choices))
        return "yes", "answers-file"

    out = bench.run("prompt", {"message": "Is the heatsink fitted?"}, prompt_handler=handler)
    assert out.outcome == "PASS"
    assert asked == [("prompt", "Is the heatsink fitted?", ("yes", "no"))]
    assert out.value("answer") == "yes"
    assert [type(e) for e in out.events if isinstance(e, PromptAsked | PromptAnswered)] == [PromptAsked,
                                                                                             PromptAnswered]
    no = bench.run("prompt", {"message": "Is the heatsink fitted?"}, prompt_handler=lambda *a: ("no", "operator"))
    assert no.outcome == "FAIL" and "operator answered 'no'" in no.message


def test_prompt_headless_without_answers_is_a_clear_error(bench):
    out = bench.run("prompt", {"message": "Scan the DUT label", "kind": "input"})
    assert out.outcome == "ERROR"
    assert "nobody can answer" in out.message


def test_prompt_choice_must_be_one_of_the_choices(bench, tmp_path):
    out = bench.run("prompt", {"message": "Which heatsink?", "kind": "choice", "choices": ["A", "B"]},
                    prompt_handler=lambda *a: ("C", "answers-file"))
    assert out.outcome == "FAIL" and "'C' is not one of A, B" in out.message
    # the same from an answers file (it had been an ERROR of the file), and a confirm's "n"
    from labctl.launch import load_answers

    answers = tmp_path / "answers.yaml"
    answers.write_text("prompt: C\n")
    out = bench.run("prompt", {"message": "Which heatsink?", "kind": "choice", "choices": ["A", "B"]},
                    prompt_handler=load_answers(str(answers)))
    assert out.outcome == "FAIL" and "'C' is not one of A, B" in out.message
    answers.write_text("prompt: n\n")
    out = bench.run("prompt", {"message": "Is the heatsink fitted?"}, prompt_handler=load_answers(str(answers)))
    assert out.outcome == "FAIL" and "operator answered 'n'" in out.message


def test_wait_runs_on_the_run_clock_and_says_why(bench):
    start = bench.clock.monotonic()
    out = bench.run("wait", {"duration": "5 min", "reason": "let the board settle"})
    assert out.outcome == "PASS"
    assert bench.clock.monotonic() - start >= 300
    assert out.progress[0].startswith("let the board settle: ")
    assert out.progress[-1] == "let the board settle: done (5m)"


def test_set_role_properties_as_plans_write_them(bench):
    psu, dut, chamber = (bench.station.role(r) for r in ("psu", "dut", "chamber"))
    assert bench.run("set", {"target": "psu.ch2.voltage", "value": "4.8 V"}).outcome == "PASS"
    assert psu.voltage("2") == pytest.approx(4.8)
    assert bench.run("set", {"target": "psu.VIN.voltage", "value": "4900 mV"}).outcome == "PASS"
    assert psu.voltage("1") == pytest.approx(4.9)
    assert bench.run("set", {"target": "psu.ch1.output", "value": "on"}).outcome == "PASS"
    assert psu.output("1") is True
    assert bench.run("set", {"target": "dut.workload", "value": "stress"}).outcome == "PASS"
    assert dut.load() == 100
    assert bench.run("set", {"target": "dut.workload", "value": "idle"}).outcome == "PASS"
    assert dut.load() == 0
    assert bench.run("set", {"target": "chamber.setpoint", "value": "30 degC"}).outcome == "PASS"
    assert chamber.setpoint() == 30.0
    assert bench.run("set", {"target": "chamber.window", "value": "2 K"}).outcome == "PASS"  # a profile property
    assert bench.run("set", {"target": "psu.ch1.output", "value": "off"}).outcome == "PASS"
    assert psu.output("1") is False


def test_set_unknown_property_lists_the_settable_ones(bench):
    out = bench.run("set", {"target": "psu.ch1.colour", "value": "red"})
    assert out.outcome == "ERROR"
    assert "no settable property 'colour'" in out.message and "voltage" in out.message


class WalkedAway:
    """An operator who never comes back: the handler blocks (30 s) until cancelled."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []
        self._answered = threading.Event()

    def __call__(self, prompt_id, text, choices):
        self._answered.wait(30)
        return "yes", "operator:late"

    def cancel(self, prompt_id):
        self.cancelled.append(prompt_id)
        self._answered.set()


def test_prompt_timeout_ends_the_step_when_nobody_answers(bench):
    handler = WalkedAway()
    cancelled = handler.cancelled
    start = time.monotonic()
    out = bench.run("prompt", {"message": "Is the heatsink fitted?", "timeout": "1 s"}, prompt_handler=handler)
    waited = time.monotonic() - start
    assert out.outcome == "ERROR"
    assert "prompt prompt: nobody answered 'Is the heatsink fitted?' within 1 s" in out.message
    assert cancelled == ["prompt"]
    assert waited < 10  # ended by the timeout, not by the handler's own 30 s
    assert [e.timeout for e in out.events if isinstance(e, PromptAsked)] == [1.0]
    assert not [e for e in out.events if isinstance(e, PromptAnswered)]


def test_a_step_timeout_bounds_the_wait_for_an_answer_too(bench):
    """A prompt step with a step-level `timeout:` (and none of its own) does not wait forever."""
    handler = WalkedAway()
    cancelled = handler.cancelled
    start = time.monotonic()
    out = bench.run("prompt", {"message": "Label?", "kind": "input"}, timeout=1.0, prompt_handler=handler)
    assert time.monotonic() - start < 10
    assert out.outcome == "ERROR" and "nobody answered 'Label?' within 1 s" in out.message
    assert cancelled == ["prompt"]
    assert [e.timeout for e in out.events if isinstance(e, PromptAsked)] == [1.0]  # the TUI counts it down


def test_prompt_answered_within_its_timeout_records_who_answered(bench):
    out = bench.run("prompt", {"message": "Is the heatsink fitted?", "timeout": "5 s"},
                    prompt_handler=lambda *a: ("yes", "operator:alice"))
    assert out.outcome == "PASS"
    assert [(e.answer, e.source) for e in out.events if isinstance(e, PromptAnswered)] == [("yes", "operator:alice")]
