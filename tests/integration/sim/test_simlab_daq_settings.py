"""The simulated DAQ970A's per-channel settings read back, its resistance measurements and its
absolute reading times, through pyvisa (each answered -113, or another time format, before)."""

from __future__ import annotations

import re

import pytest

from tests.integration.sim.conftest import scpi_errors as errors

pytestmark = pytest.mark.timeout(60)


def test_daq_settings_read_back_as_they_were_set(mvisa):
    daq = mvisa("daq")
    daq.write("CONF:VOLT:DC (@111,112)")
    assert daq.query("VOLT:RANG:AUTO? (@111)") == "1"
    daq.write("VOLT:RANG 1,(@111)")
    assert daq.query("VOLT:RANG:AUTO? (@111,112)") == "0,1"  # a fixed range turns it off
    daq.write("SENS:ZERO:AUTO ONCE,(@111);:INP:IMP:AUTO ON,(@112);:ROUT:CHAN:DEL 0.25,(@111)")
    assert daq.query("SENS:ZERO:AUTO? (@111,112)") == "0,1"  # ONCE zeroes, then leaves it off
    assert daq.query("INP:IMP:AUTO? (@111,112)") == "0,1"
    assert daq.query("ROUT:CHAN:DEL? (@111,112)") == "+2.50000000E-01,+0.00000000E+00"
    daq.write("SENS:TEMP:TRAN:TYPE TC,(@101)")
    assert daq.query("SENS:TEMP:TRAN:TYPE? (@101)") == "TC"
    daq.write("ROUT:MON (@103);:ROUT:MON:STAT ON")
    assert daq.query("ROUT:MON?") == "#16(@103)"  # a definite-length block, as ROUT:SCAN?
    assert errors(daq) == []


def test_daq_measures_resistance_and_stamps_absolute_times(mvisa):
    daq = mvisa("daq")
    assert daq.query("MEAS:RES? (@105)") == "+9.90000000E+37"  # nothing wired there: open
    assert daq.query("MEAS:FRES? (@105)") == "+9.90000000E+37"
    daq.write("CONF:TEMP TC,K,(@101);:FORM:READ:TIME ON;:FORM:READ:TIME:TYPE ABS")
    value, *stamp = daq.query("READ?").split(",")
    assert float(value) == pytest.approx(25.0, abs=1.0)
    assert re.fullmatch(r"\d{4},\d\d,\d\d,\d\d,\d\d,\d\d\.\d{3}", ",".join(stamp))  # date, time of day
    daq.write("FORM:READ:TIME:TYPE REL")
    assert re.fullmatch(r"\d{9}\.\d{3}", daq.query("READ?").split(",")[1])
    assert errors(daq) == []


def test_thermocouple_type_defaults_to_j_and_a_k_wire_read_as_j_reads_low_when_hot(mvisa, mconsole, clock):
    """The DAQ970A reads a thermocouple as type J after *RST and with ``DEF``; the board's
    thermocouples are type K, so read as J their voltage gives (T - room) x 40.7/52 above room."""
    from tests.integration.sim.conftest import power_on

    daq, psu = mvisa("daq"), mvisa("psu")
    daq.write("*RST")
    assert daq.query("SENS:TEMP:TRAN:TC:TYPE? (@101,102)") == "J,J"
    daq.write("CONF:TEMP TC,K,(@101)")
    assert daq.query("SENS:TEMP:TRAN:TC:TYPE? (@101)") == "K"
    daq.write("CONF:TEMP TC,DEF,(@101)")
    assert daq.query("SENS:TEMP:TRAN:TC:TYPE? (@101)") == "J"
    power_on(psu, clock=clock)
    mconsole.cmd("load stress 100")
    clock.advance(1800)
    hot_k = float(daq.query("MEAS:TEMP? TC,K,(@101)"))
    hot_j = float(daq.query("MEAS:TEMP? TC,J,(@101)"))
    assert hot_k > 33.0, hot_k  # the loaded board is ~10 degC above the room
    assert (hot_j - 25.0) / (hot_k - 25.0) == pytest.approx(40.7 / 52.0, abs=0.02)
