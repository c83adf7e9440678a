"""34465A DMM and DAQ970A scanner through pyvisa."""

from __future__ import annotations

import pytest

from tests.integration.sim.conftest import power_on

pytestmark = pytest.mark.timeout(60)

# What QCoDeS' Keysight 34465A driver asks at connect and snapshot time (its sim YAML).
QCODES_CONNECT_QUERIES = [
    "*IDN?", "*OPT?", "SYST:LIC:CAT?", "SYSTem:LFRequency?", "SENSe:FUNCtion?", "SAMPle:COUNt?",
    "TRIGger:COUNt?", "SAMPle:COUNt:PRETrigger?", "SAMPle:SOURce?", "TRIGger:SOURce?",
    "TRIGger:DELay?", "TRIGger:DELay:AUTO?", "TRIGger:LEVel?", "SAMPle:TIMer?", "SAMPle:TIMer? MIN",
    "SENSe:VOLTage:DC:RANGe?", "SENSe:VOLTage:DC:RESolution?", "SENSe:VOLT:RANGe:AUTO?",
    "SENSe:VOLT:AC:RANGe:AUTO?", "SENSe:CURR:RANGe:AUTO?", "SENSe:CURR:AC:RANGe:AUTO?",
    "SENSe:RES:RANGe:AUTO?", "SENSe:FRES:RANGe:AUTO?", "SENSe:VOLT:ZERO:AUTO?", "SENSe:CURR:ZERO:AUTO?",
    "SENSe:VOLT:AC:ZERO:AUTO?", "SENSe:RES:ZERO:AUTO?", "SENSe:FRES:ZERO:AUTO?", "SENSe:VOLT:NPLC?",
    "SENSe:VOLT:AC:NPLC?", "SENSe:CURR:NPLC?", "SENSe:CURR:AC:NPLC?", "SENSe:RES:NPLC?", "SENSe:FRES:NPLC?",
    "SENSe:VOLT:APERture:ENABled?", "SENSe:VOLT:APERture?", "SENSe:CURR:APERture?",
    "SENSe:RES:APERture:ENABled?", "DISPlay:STATe?", "DISPLAY:TEXT?",
]


def test_dmm_answers_every_connect_and_snapshot_query(visa):
    dmm = visa("dmm")
    for q in QCODES_CONNECT_QUERIES:
        assert dmm.query(q) != "", q
    assert dmm.query("*OPT?") == "0,0,DIG,MEM,0"
    assert dmm.query("SYSTem:LFRequency?") == "+50"
    assert dmm.query("SENSe:FUNCtion?") == '"VOLT"'
    assert dmm.query("SYST:ERR?") == '+0,"No error"'
    for cmd in ("DISPlay:TEXT:CLEar", "TRIGger:DELay MIN", "TRIGger:DELay MAX", "TRIGger:DELay DEF",
                "TRIGger:LEVel MIN", "TRIGger:LEVel MAX", "TRIGger:LEVel DEF", "*RST"):
        dmm.write(cmd)
    assert dmm.query("SYST:ERR?") == '+0,"No error"'


def test_dmm_reads_the_core_rail_and_its_ripple(mvisa, clock):
    psu, dmm = mvisa("psu"), mvisa("dmm")
    assert abs(float(dmm.query("MEAS:VOLT:DC? DEF,DEF"))) < 0.001
    power_on(psu, clock=clock)
    v = float(dmm.query("MEAS:VOLT:DC? DEF,DEF"))
    assert v == pytest.approx(0.75, rel=0.01)
    ac = float(dmm.query("MEAS:VOLT:AC?"))
    assert 0.0003 < ac < 0.003  # ~1 mV rms of a golden VRM
    assert dmm.query("SENS:FUNC?") == '"VOLT:AC"'
    assert float(dmm.query("MEAS:RES?")) == 9.9e37  # open circuit reads overload


def test_dmm_configure_trigger_and_fetch(mvisa, clock):
    psu, dmm = mvisa("psu"), mvisa("dmm")
    power_on(psu, clock=clock)
    dmm.write("CONF:VOLT:DC 1;:SAMP:COUN 5;:TRIG:SOUR BUS;:INIT")
    dmm.write("FETC?")
    dmm.write("*TRG")  # the FETC? above failed: nothing triggered yet
    dmm.query("SYST:ERR?")
    values = [float(x) for x in dmm.query("FETC?").split(",")]
    assert len(values) == 5 and all(0.74 < x < 0.76 for x in values)
    assert float(dmm.query("VOLT:RANG?")) == 1.0
    dmm.write("SENSe:VOLTage:DC:APERture 0.001")
    assert dmm.query("SENSe:VOLTage:DC:APERture:ENABled?") == "1"
    dmm.write("VOLT:NPLC 0.2;:TRIG:SOUR IMM;:SAMP:COUN 2")
    assert float(dmm.query("SENS:VOLT:DC:NPLC?")) == 0.2
    assert dmm.query("SENSe:VOLTage:DC:APERture:ENABled?") == "0"  # NPLC switches aperture mode off
    assert len(dmm.query("READ?").split(",")) == 2


def test_dmm_r_query_returns_a_definite_length_block_and_erases(mvisa, clock):
    """``R? [max]`` as the 3446xA manual has it: the oldest readings, erased, in a block
    ``#<digits><length><readings>``; asking for more than memory holds is no error."""
    psu, dmm = mvisa("psu"), mvisa("dmm")
    power_on(psu, clock=clock)
    dmm.write("CONF:VOLT:DC 1;:SAMP:COUN 3;:INIT")
    assert dmm.query("DATA:POIN?") == "+3"
    block = dmm.query("R? 2")
    digits = int(block[1])
    length = int(block[2:2 + digits])
    body = block[2 + digits:]
    assert block[0] == "#" and len(body) == length
    assert len(body.split(",")) == 2 and all(0.74 < float(x) < 0.76 for x in body.split(","))
    assert dmm.query("DATA:POIN?") == "+1"
    assert dmm.query("R? 5").count(",") == 0  # the one left
    assert dmm.query("R?") == "#10"
    assert dmm.query("SYST:ERR?") == '+0,"No error"'


def test_dmm_fixed_range_overloads(mvisa, clock):
    psu, dmm = mvisa("psu"), mvisa("dmm")
    power_on(psu, clock=clock)
    dmm.write("CONF:VOLT:DC 0.1")
    assert float(dmm.query("READ?")) == 9.9e37


def test_dmm_measure_and_configure_start_from_the_defaults(mvisa, clock):
    """MEASure? and CONFigure set every measurement and trigger setting to its default (the
    34465A manual): a range, NPLC, trigger delay or autozero left from earlier must not stay."""
    psu, dmm = mvisa("psu"), mvisa("dmm")
    power_on(psu, clock=clock)
    dmm.write("VOLT:RANG 0.1;:VOLT:NPLC 0.02;:TRIG:DEL 0.5;:VOLT:ZERO:AUTO OFF")
    assert float(dmm.query("MEAS:VOLT:DC?")) == pytest.approx(0.75, rel=0.01)  # not overload: autorange
    assert dmm.query("VOLT:RANG:AUTO?") == "1"
    assert float(dmm.query("VOLT:NPLC?")) == 10.0
    assert dmm.query("TRIG:DEL:AUTO?") == "1" and dmm.query("VOLT:ZERO:AUTO?") == "1"
    dmm.write("VOLT:NPLC 0.02;:VOLT:ZERO:AUTO OFF;:CONF:VOLT:DC 10")
    assert dmm.query("VOLT:RANG:AUTO?") == "0" and float(dmm.query("VOLT:RANG?")) == 10.0
    assert float(dmm.query("VOLT:NPLC?")) == 10.0 and dmm.query("VOLT:ZERO:AUTO?") == "1"
    assert dmm.query("SYST:ERR?") == '+0,"No error"'


def test_daq_scans_its_channel_list_ascending_each_channel_once(mvisa, clock):
    """The 34970A family scans in ascending channel order and drops duplicates, however the
    list was given: readings come back in that order."""
    psu, daq = mvisa("psu"), mvisa("daq")
    power_on(psu, clock=clock)
    daq.write("ROUT:SCAN (@114,111,112,111)")
    assert daq.query("ROUT:SCAN?") == "#214(@111,112,114)"
    daq.write("CONF:VOLT:DC (@114:111)")
    assert daq.query("ROUT:SCAN?") == "#218(@111,112,113,114)"
    rails = [float(x) for x in daq.query("MEAS:VOLT:DC? (@114,111)").split(",")]
    assert rails == pytest.approx([0.75, 3.3], rel=0.01)  # 111 (VDD_CORE) first, then 114 (VDD_AUX)
    daq.write("SENS:TEMP:TRAN:TC:TYPE DEF,(@101)")
    assert daq.query("SENS:TEMP:TRAN:TC:TYPE? (@101)") == "J"  # DEF selects type J
    assert daq.query("SYST:ERR?") == '+0,"No error"'


def test_daq_thermocouples_and_rails_by_channel_list(mvisa, clock):
    psu, daq = mvisa("psu"), mvisa("daq")
    temps = [float(x) for x in daq.query("MEAS:TEMP? TC,K,(@101:104)").split(",")]
    assert all(x == pytest.approx(25.0, abs=0.5) for x in temps)
    assert float(daq.query("MEAS:TEMP? TC,K,(@105)")) == 9.9e37  # no thermocouple wired
    power_on(psu, clock=clock)
    rails = [float(x) for x in daq.query("MEAS:VOLT:DC? (@111:114)").split(",")]
    assert rails == pytest.approx([0.75, 1.2, 0.9, 3.3], rel=0.01)
    ripple = [float(x) for x in daq.query("MEAS:VOLT:AC? (@111:114)").split(",")]
    assert all(0.0005 < r < 0.003 for r in ripple)  # ~1 mV rms on every golden rail
    assert daq.query("SYST:CTYP? 100").split(",")[1] == "DAQM901A"


def test_daq_scan_with_reading_format_fields(mvisa):
    daq = mvisa("daq")
    daq.write("CONF:TEMP TC,K,(@101,102,104)")
    assert daq.query("ROUT:SCAN?") == "#214(@101,102,104)"
    assert daq.query("ROUT:SCAN:SIZE?") == "+3"
    daq.write("FORM:READ:CHAN ON;UNIT ON;:UNIT:TEMP F,(@101:104)")
    fields = daq.query("READ?").split(",")
    assert len(fields) == 6
    value, unit = fields[0].split(" ")
    assert unit == "F" and float(value) == pytest.approx(77.0, abs=1.0)
    assert fields[1] == "101" and fields[5] == "104"
    daq.write("TRIG:SOUR BUS;:TRIG:COUN 2;:INIT;*TRG")
    assert len(daq.query("FETC?").split(",")) == 12
    daq.write("ROUT:SCAN (@)")
    daq.write("READ?")
    assert daq.query("SYST:ERR?").startswith("-221")


def test_daq_monitor_and_bad_channels(mvisa):
    daq = mvisa("daq")
    daq.write("CONF:TEMP TC,K,(@103);:ROUT:MON (@103);:ROUT:MON:STAT ON")
    assert float(daq.query("ROUT:MON:DATA?")) == pytest.approx(25.0, abs=0.5)
    daq.write("MEAS:TEMP? TC,K,(@201)")
    daq.write("CONF:TEMP TC,Q,(@101)")
    assert daq.query("SYST:ERR?").startswith("-241")
    assert daq.query("SYST:ERR?").startswith("-224")
