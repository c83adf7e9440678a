"""The simulated EL34143A's slew-rate settings and its over-voltage, over-current and over-power
protection, as a client written from the manual drives them: exact command/reply pairs over
pyvisa-py on the lab's TCP socket, the load on the board's 3.3 V VDD_AUX header."""

from __future__ import annotations

import pytest

from tests.integration.sim.conftest import power_on, scpi_errors

pytestmark = pytest.mark.timeout(60)


def replies(res, expected: list[tuple[str, str]]) -> None:
    """Each query of ``expected``, in order, answers exactly its reply."""
    assert [(query, res.query(query)) for query, _ in expected] == expected


@pytest.fixture
def aux_load(mvisa, clock):
    """The board powered, the load in constant current at 1 A, input off."""
    psu, load = mvisa("psu"), mvisa("load")
    power_on(psu, clock=clock)
    load.write("MODE CURR;CURR 1")
    return load


def test_slew_rates_are_kept_per_edge_with_their_limits(mvisa):
    load = mvisa("load")
    replies(load, [("CURR:SLEW?", "+2.50000000E+06"), ("VOLT:SLEW:NEG?", "+1.00000000E+06")])
    load.write("CURR:SLEW 1000")  # [:BOTH]: rising and falling
    load.write("SOUR:CURR:SLEW:NEG 500")
    load.write("VOLT:SLEW:POS:IMM 2E3,(@1)")
    replies(load, [
        ("CURR:SLEW:POS?", "+1.00000000E+03"),
        ("CURR:SLEW:NEG?", "+5.00000000E+02"),
        ("VOLT:SLEW:POS?", "+2.00000000E+03"),
        ("VOLT:SLEW:NEG?", "+1.00000000E+06"),
        ("CURR:SLEW? MAX", "+2.50000000E+06"),
        ("CURR:SLEW? MIN", "+1.00000000E+00"),
    ])
    load.write("CURR:SLEW 1E9")
    assert [e.split(",")[0] for e in scpi_errors(load)] == ["-222"]
    load.write("*RST")
    replies(load, [("CURR:SLEW:NEG?", "+2.50000000E+06")])


def test_ocp_trips_after_its_delay_turns_the_input_off_and_clears(aux_load, clock):
    load = aux_load
    replies(load, [("CURR:PROT:STAT?", "0"), ("CURR:PROT?", "+6.12000000E+01"), ("CURR:PROT:DEL?", "+0.00000000E+00")])
    load.write("CURR:PROT 0.5;PROT:DEL 2;STAT ON")  # (SCPI: each header relative to the one before)
    load.write("STAT:QUES:ENAB 2")
    load.write("INP ON")
    assert float(load.query("MEAS:CURR?")) == pytest.approx(1.0, abs=0.01)
    clock.advance(1.0)  # beyond the level for half the delay: still sinking
    replies(load, [("INP?", "1"), ("CURR:PROT:TRIP?", "0"), ("STAT:QUES:COND?", "0")])
    clock.advance(1.5)
    replies(load, [
        ("INP?", "0"), ("CURR:PROT:TRIP?", "1"), ("STAT:QUES:COND?", "2"), ("*STB?", "8"),
        ("STAT:QUES?", "2"), ("STAT:QUES?", "0"),
    ])
    assert float(load.query("MEAS:CURR?")) == pytest.approx(0.0, abs=0.005)
    load.write("INP ON")  # tripped: the input stays off
    replies(load, [("INP?", "0")])
    load.write("INP:PROT:CLE")
    replies(load, [("CURR:PROT:TRIP?", "0"), ("STAT:QUES:COND?", "0"), ("INP?", "0")])  # off until switched on
    load.write("CURR 0.4;:INP ON")
    clock.advance(5.0)
    replies(load, [("INP?", "1"), ("CURR:PROT:TRIP?", "0")])


def test_opp_trips_on_the_power_it_sinks(aux_load):
    load = aux_load
    load.write("POW:PROT 2;POW:PROT:STAT ON;:INP ON")  # 1 A at 3.3 V is 3.3 W
    replies(load, [("INP?", "0"), ("POW:PROT:TRIP?", "1"), ("CURR:PROT:TRIP?", "0"), ("STAT:QUES:COND?", "8")])
    load.write("OUTP:PROT:CLE;:POW:PROT:STAT OFF;:INP ON")
    replies(load, [("INP?", "1"), ("POW:PROT:STAT?", "0"), ("STAT:QUES:COND?", "0")])


def test_ovp_is_always_armed_and_stays_tripped_while_the_voltage_is_above_it(aux_load):
    load = aux_load
    replies(load, [("VOLT:PROT?", "+1.53000000E+02")])
    load.write("VOLT:PROT 3;:INP ON")  # the rail is at 3.3 V
    replies(load, [("INP?", "0"), ("VOLT:PROT:TRIP?", "1"), ("STAT:QUES:COND?", "1")])
    load.write("INP:PROT:CLE")  # the cause is still there
    replies(load, [("VOLT:PROT:TRIP?", "1")])
    load.write("VOLT:PROT 5;:INP:PROT:CLE;:INP ON")
    replies(load, [("VOLT:PROT:TRIP?", "0"), ("INP?", "1"), ("STAT:QUES:COND?", "0")])
