"""A safe state is verified, not assumed (issue 9, point 2).

Each case runs `labctl run` against a served simulated lab, breaks an instrument the way a
bench breaks, and then asks the instruments themselves (an independent pyvisa/pyserial client)
whether what labctl reported is true.
"""

from __future__ import annotations

import signal
import sqlite3
import time

import pytest
from safe_support import control, safe_lines, served_lab_fixture, start_soaking


@pytest.fixture
def lab(tmp_path):
    yield from served_lab_fixture(tmp_path)


def test_every_safe_state_is_read_back_and_reported_pass_only_when_confirmed(lab, tmp_path):
    run = start_soaking(lab, tmp_path)
    run.proc.send_signal(signal.SIGTERM)
    assert run.finish() == 3, run.output
    assert "BENCH MAY BE UNSAFE" not in run.output
    assert lab.scpi("psu", "OUTP? (@1)") == "0"
    rows = dict(sqlite3.connect(tmp_path / "results.db").execute(
        "select step_id, message from steps where step_id like 'safe-state.%'").fetchall())
    assert "output = OFF on channels 1,2,3 (read back)" in rows["safe-state.psu"]
    assert "input = OFF (read back)" in rows["safe-state.load"]
    assert "setpoint = 25 (read back)" in rows["safe-state.chamber"]
    assert "prbs_state = stopped (read back)" in rows["safe-state.dut"]


def test_supply_not_answering_is_not_a_pass_and_it_is_really_still_on(lab, tmp_path):
    run = start_soaking(lab, tmp_path)
    control(lab, {"op": "inject", "fault": {"fault": "instrument_timeout", "role": "psu"}})
    run.proc.send_signal(signal.SIGTERM)
    rc = run.finish()
    assert rc == 2, run.output
    shown = safe_lines(run.output)
    assert shown["psu"].startswith("not confirmed: channel 1 output could not be read back (expected OFF): "
                                   "no answer within 2 s"), run.output
    assert "run ERROR  BENCH MAY BE UNSAFE: safe-state.psu" in run.output
    assert shown["load"].startswith("INP 0; input = OFF (read back)")
    outcome, message = sqlite3.connect(tmp_path / "results.db").execute("select outcome, message from runs").fetchone()
    assert (outcome, message.split(":")[0]) == ("error", "BENCH MAY BE UNSAFE")  # RunEnded as recorded
    control(lab, {"op": "clear"})
    # labctl said the supply may be on: it is
    assert lab.scpi("psu", "OUTP? (@1)") == "1"
    assert lab.scpi("load", "INP?") == "0"


def test_supply_that_ignores_output_off_is_a_fail_naming_channel_and_values(lab, tmp_path):
    run = start_soaking(lab, tmp_path)
    control(lab, {"op": "inject", "fault": {"fault": "scpi_error", "role": "psu", "match": "OUTP"}})
    run.proc.send_signal(signal.SIGTERM)
    assert run.finish() == 2, run.output
    shown = safe_lines(run.output)
    assert shown["psu"].startswith("NOT SAFE: channel 1 output reads ON, expected OFF"), run.output
    assert lab.scpi("psu", "OUTP? (@1)") == "1"


def test_chamber_not_answering_is_not_a_pass_and_its_setpoint_really_stayed(lab, tmp_path):
    run = start_soaking(lab, tmp_path)
    control(lab, {"op": "inject", "fault": {"fault": "instrument_timeout", "role": "chamber"}})
    rc = run.finish()
    assert rc == 2, run.output
    shown = safe_lines(run.output)
    assert shown["chamber"].startswith("not confirmed: setpoint could not be read back (expected 25.0)"), run.output
    assert shown["psu"].startswith("OUTP 0,(@1)") and "output = OFF on channels 1,2,3 (read back)" in shown["psu"]
    assert "BENCH MAY BE UNSAFE: safe-state.chamber" in run.output
    control(lab, {"op": "clear"})
    assert float(lab.serial_query("chamber", "SETP?")) == pytest.approx(60.0)
    assert lab.scpi("psu", "OUTP? (@1)") == "0"


def test_simulated_lab_killed_no_safe_state_says_pass(lab, tmp_path):
    run = start_soaking(lab, tmp_path)
    lab.proc.kill()
    lab.proc.wait()
    # A SIGKILLed lab cannot remove its serial device links, and the kernel hands its pty
    # numbers to the next process that opens one (another lab on this machine): remove the
    # links, as a USB adapter that goes away takes its /dev path with it.
    for role in ("chamber", "dut"):
        (tmp_path / "dev" / role).unlink(missing_ok=True)
    rc = run.finish()
    assert rc == 2, run.output
    shown = safe_lines(run.output)
    assert set(shown) == {"psu", "load", "dmm", "daq", "bert", "chamber", "dut"}, run.output
    assert {r: t for r, t in shown.items() if not t.startswith("not confirmed: ")} == {}
    assert "BENCH MAY BE UNSAFE" in run.output
    assert "Traceback" not in run.output


def test_hung_supply_does_not_delay_the_others_safe_state(lab, tmp_path):
    """The others reach their safe state within the hung one's timeout + 1 s."""
    run = start_soaking(lab, tmp_path)
    control(lab, {"op": "inject", "fault": {"fault": "instrument_timeout", "role": "psu"}})
    run.proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    while lab.scpi("load", "INP?") != "0":
        assert time.monotonic() - sent < 2.0 + 1.0, "load still on after the hung supply's timeout + 1 s"
        time.sleep(0.05)
    assert run.finish() == 2, run.output


def test_every_shipped_profile_reads_back_every_safe_state_action():
    from labctl.instruments.profile import available_profiles, load_profile

    unverified = [f"{name}: {action.send}" for name in available_profiles()
                  for action in load_profile(name).safe_state if not action.verify]
    assert unverified == []



def test_hung_chamber_during_a_step_the_others_are_safe_within_its_timeout_plus_1s(lab, tmp_path):
    """The soak and the safety monitor both read the chamber: the one that waited is told at
    once that it hung, its error queue is not asked again, and the safe state follows."""
    run = start_soaking(lab, tmp_path)
    control(lab, {"op": "inject", "fault": {"fault": "instrument_timeout", "role": "chamber"}})
    hung = time.monotonic()
    while lab.scpi("psu", "OUTP? (@1)") != "0" or lab.scpi("load", "INP?") != "0":
        assert time.monotonic() - hung < 2.0 + 1.0, "supply or load still on after the chamber's timeout + 1 s"
        time.sleep(0.05)
    assert run.finish() == 2, run.output
