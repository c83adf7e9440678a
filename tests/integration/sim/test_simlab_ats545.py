"""The simulated ATS-545 answers as the real ThermoStream does, to the string, over its pty: the
registers, ranges and replies of PyMeasure's Temptronic driver (``pymeasure/instruments/temptronic/``,
from the ATS Interface & Applications Manuals: ATS-545 Rev B, ATS-5x5 Rev E).

A ``send`` returns before the chamber has acted on it: a query comes first whenever the test
then moves the manual clock."""

from __future__ import annotations

import pytest

from tests.integration.sim.test_simlab_serial import Chamber

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def ts(manual_lab):
    c = Chamber(manual_lab.addresses["chamber"])
    yield c
    c.close()


def replies(ts: Chamber, expected: dict[str, str]) -> None:
    """Each query of ``expected``, in order, answers exactly its reply."""
    assert {query: ts.ask(query) for query in expected} == expected


def test_auxc_reports_head_flow_compressor_sense_mode_ready_and_manual(ts):
    # bits: 2 head up, 3 compressor off, 4 DUT sense mode, 5 flow on, 6 ready, 8 manual mode
    assert ts.ask("AUXC?") == str(32 + 64 + 256)
    ts.send("FLOW 0")
    assert ts.ask("AUXC?") == str(64 + 256)
    ts.send("HEAD 0")
    ts.send("COOL 0")
    ts.send("DUTM 1")
    assert ts.ask("AUXC?") == str(4 + 8 + 16 + 64 + 256)
    ts.send("FLOW 1")
    ts.send("HEAD 1")
    ts.send("COOL 1")
    ts.send("DUTM 0")
    assert ts.ask("AUXC?") == str(32 + 64 + 256)


def test_tesr_latches_the_temperature_events_until_read(ts, clock):
    assert ts.ask("TECR?") == "2"
    assert ts.ask("TESR?") == "2"  # power-on: "not at temperature" came on
    assert ts.ask("TESR?") == "0"  # reading cleared it; the condition did not come on again
    assert ts.ask("*OPC?") == "1"
    clock.advance(31)  # inside the window for the soak time (30 s)
    assert ts.ask("TECR?") == "1"
    assert ts.ask("TESR?") == "1"
    assert ts.ask("TESR?") == "0"
    ts.send("SETP 40")
    assert ts.ask("TECR?") == "2"
    assert ts.ask("TESR?") == "2"


def test_temp_reads_the_dut_in_dut_mode_and_the_air_otherwise(ts, clock):
    ts.send("SETP 60")
    assert ts.ask("*OPC?") == "1"
    clock.advance(40)  # the air is nearly there; the board (unpowered) lags behind it
    air, dut = float(ts.ask("TMPA?")), float(ts.ask("TMPD?"))
    assert air - dut > 5.0
    assert float(ts.ask("TEMP?")) == pytest.approx(air, abs=0.3)
    ts.send("DUTM 1")
    assert float(ts.ask("TEMP?")) == pytest.approx(dut, abs=0.3)
    ts.send("DUTM 0")
    assert float(ts.ask("TEMP?")) == pytest.approx(air, abs=0.3)


def test_what_answers_the_ats545_manual_mode_code(ts):
    assert ts.ask("WHAT?") == "10"


def test_air_limits_bound_the_setpoint_and_their_own_ranges(ts):
    replies(ts, {"LLIM?": "-80.0", "ULIM?": "225.0", "*ESR?": "0"})
    ts.send("ULIM 80")
    ts.send("SETP 100")  # above the upper air limit: out of range, ignored
    replies(ts, {"*ESR?": "16", "SETP?": "25.0", "ULIM?": "80.0"})
    ts.send("LLIM -20")
    ts.send("SETP -30")
    replies(ts, {"*ESR?": "16", "SETP?": "25.0"})
    ts.send("SETP 80")
    ts.send("SETP -20")
    replies(ts, {"*ESR?": "0", "SETP?": "-20.0"})
    for bad in ("LLIM 30", "LLIM -90", "ULIM 20", "ULIM 230"):
        ts.send(bad)
        assert ts.ask("*ESR?") == "16", bad
    replies(ts, {"LLIM?": "-20.0", "ULIM?": "80.0"})


def test_ramp_takes_the_manuals_whole_range_and_zero_holds_the_dynamic_setpoint(ts, clock):
    # the manual's range is 0-99.9 K/min in 0.1 steps and 100-9999 in steps of 1 (9999: as fast
    # as the air can); 0 is a rate too, the slowest: the dynamic setpoint does not move
    ts.send("RAMP 0")
    replies(ts, {"*ESR?": "0", "RAMP?": "0.0"})
    ts.send("SETP 40")
    assert ts.ask("*OPC?") == "1"
    clock.advance(60)
    replies(ts, {"SETD?": "25.0", "TECR?": "2", "*ESR?": "0"})
    ts.send("RAMP 60")  # 1 K/s from where it stood
    assert ts.ask("*OPC?") == "1"
    clock.advance(10)
    replies(ts, {"SETD?": "35.0", "RAMP?": "60.0"})
    for bad in ("RAMP -0.1", "RAMP 10000"):
        ts.send(bad)
        assert ts.ask("*ESR?") == "16", bad
    replies(ts, {"RAMP?": "60.0"})


def test_llim_takes_its_own_edge_and_refuses_the_ats5x5_floor(ts):
    # the ATS-545's lower air limit runs -80..25 (-99..25 is the ATS-5x5's): its edge is taken,
    # -99 is out of range (EXE, ignored), and a setpoint may sit on the limit
    ts.send("LLIM -99")
    replies(ts, {"*ESR?": "16", "LLIM?": "-80.0"})
    ts.send("LLIM -80")
    ts.send("SETP -80")
    replies(ts, {"*ESR?": "0", "LLIM?": "-80.0", "SETP?": "-80.0"})
    ts.send("SETP -80.1")
    replies(ts, {"*ESR?": "16", "SETP?": "-80.0"})
