"""When an instrument misbehaves during a check, the step is an ERROR that names the
instrument, never a FAIL of the DUT and never a hang."""

from __future__ import annotations

import threading

import pytest

from labctl.engine.abort import AbortController

pytestmark = pytest.mark.timeout(60)


def test_a_multimeter_that_stops_answering_errors_the_ripple_step(bench):
    bench.power_on()
    bench.lab.inject({"fault": "instrument_timeout", "role": "dmm"})
    out = bench.run("power.ripple", {"rails": ["VDD_CORE"], "via": "dmm"})
    assert out.outcome == "ERROR"
    assert "dmm" in out.message
    assert out.measurements == []


def test_a_garbage_reply_errors_the_rails_step_naming_the_scanner(bench):
    bench.power_on()
    bench.lab.inject({"fault": "garbage_reply", "role": "daq", "count": -1})
    out = bench.run("power.rails", {"rails": ["VDD_CORE"], "via": "daq"})
    assert out.outcome == "ERROR"
    assert "daq" in out.message


def test_a_console_timeout_while_waiting_for_throttling_is_not_reported_as_no_throttling(bench):
    bench.power_on()
    bench.lab.inject({"fault": "instrument_timeout", "role": "dut", "after": 6})
    out = bench.run("thermal.throttle", {"threshold": "105 degC"})
    assert out.outcome == "ERROR", out.message
    assert "dut" in out.message and "throttling never asserted" not in out.message
    # the clean-up still put the chamber back, though the DUT no longer answers
    assert bench.station.role("chamber").setpoint() == 25.0


def test_an_abort_during_a_power_budget_still_puts_the_workload_back(bench):
    bench.power_on()
    abort = AbortController()
    timer = threading.Timer(0.15, abort.request, ("operator", "operator pressed abort"))
    timer.start()
    try:
        out = bench.run("power.budget", {"workload": "stress", "duration": "30 min"}, abort=abort)
    finally:
        timer.cancel()
    assert out.outcome == "ABORTED"
    assert bench.station.role("dut").load() == 0
