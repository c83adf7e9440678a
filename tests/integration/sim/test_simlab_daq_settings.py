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


def test_daq_relays_closed_by_hand_auto_delay_and_the_module_of_each_slot(mvisa):
    daq = mvisa("daq")
    daq.write("SYST:REL:CYCL:CLE (@105,106)")
    daq.write("ROUT:CLOS (@105,106)")
    assert daq.query("ROUT:CLOS? (@105,106,107)") == "1,1,0"
    assert daq.query("ROUT:OPEN? (@105,107)") == "0,1"
    assert daq.query("SYST:REL:CYCL? (@105,106)") == "+1,+1"  # one closing each
    daq.write("ROUT:OPEN (@105)")
    assert daq.query("ROUT:CLOS? (@105,106)") == "0,1"
    daq.query("CONF:TEMP TC,K,(@101);:READ?")  # a scan opens the relays closed by hand
    assert daq.query("ROUT:CLOS? (@106)") == "0"
    assert daq.query("ROUT:CHAN:DEL:AUTO? (@101,102)") == "1,1"
    daq.write("ROUT:CHAN:DEL 0.5,(@101);:ROUT:CHAN:DEL:AUTO OFF,(@102)")
    assert daq.query("ROUT:CHAN:DEL:AUTO? (@101,102,103)") == "0,0,1"  # a delay set turns it off
    assert daq.query("SYST:CTYP? 100").startswith("Keysight Technologies,DAQM901A,")
    assert daq.query("SYST:CTYP? 200") == "Keysight Technologies,0,0,0"
    assert errors(daq) == []


def test_daq_ctype_names_the_module_the_fixture_put_in_each_slot(fixture_path):
    from labctl.fixture import load_fixture
    from labctl.sim.lab import SimulatedLab

    fixture = load_fixture(fixture_path)
    fixture.roles["daq"].options = {**fixture.roles["daq"].options, "modules": ["DAQM908A", "DAQM901A"]}
    with SimulatedLab(fixture) as lab:
        daq = lab.instrument("daq")
        assert daq.process("SYST:CTYP? 100").startswith("Keysight Technologies,DAQM908A,")
        assert daq.process("SYST:CTYP? 200").startswith("Keysight Technologies,DAQM901A,")
