"""The simulated Keysight instruments answer their programming guides' queries as the real
ones do, through pyvisa, exact command -> reply: what a client written from the guide sends.

Each test here failed on the emulator before its fix (a silent wrong answer or a timeout)."""

from __future__ import annotations

import pytest

from tests.integration.sim.conftest import power_on
from tests.integration.sim.conftest import scpi_errors as errors

pytestmark = pytest.mark.timeout(60)


def holds_its_readings(res, query: str, points: str) -> None:
    """``query`` (READ?, MEASure?) leaves exactly its own readings in the reading memory."""
    reply = res.query(query)
    assert res.query("DATA:POIN?") == points
    assert res.query("FETC?") == reply


def test_load_level_and_range_queries_with_min_max_answer_the_limits(mvisa):
    """``CURR? MAX`` is the highest programmable current, not the setting (it answered the
    setting, 0 after *RST, whatever MIN|MAX asked)."""
    load = mvisa("load")
    load.write("CURR 2")
    assert load.query("CURR?") == "+2.00000000E+00"
    assert load.query("CURR? MAX") == "+6.12000000E+01"
    assert load.query("CURR? MIN") == "+0.00000000E+00"
    assert load.query("VOLT? MAX") == "+1.53000000E+02"
    assert load.query("POW? MAX") == "+3.57000000E+02"
    assert load.query("SOUR:CURR:LEV:IMM:AMPL? MAXimum") == "+6.12000000E+01"
    assert load.query("CURR:RANG? MIN") == "+6.12000000E-01"
    assert load.query("CURR:RANG? MAX") == "+6.12000000E+01"
    assert load.query("CURR?") == "+2.00000000E+00"  # the setting is untouched
    assert errors(load) == []
    load.write("CURR? 5")  # a number is no MIN|MAX: no reply, an error
    assert load.query("SYST:ERR?").startswith("-224,")


def test_dmm_read_leaves_its_own_readings_in_memory(mvisa, clock):
    """READ? and MEASure? clear the reading memory (Truevolt DATA subsystem): FETCh?,
    DATA:POINts? and R? then see that READ?'s readings, not those of an earlier INIT."""
    psu, dmm = mvisa("psu"), mvisa("dmm")
    power_on(psu, clock=clock)
    dmm.write("CONF:VOLT:DC 1;:SAMP:COUN 5;:INIT")
    assert dmm.query("DATA:POIN?") == "+5"
    dmm.write("SAMP:COUN 2")
    holds_its_readings(dmm, "READ?", "+2")
    holds_its_readings(dmm, "MEAS:VOLT:DC? 1", "+1")
    assert errors(dmm) == []


def test_dmm_data_last_answers_the_last_reading_with_its_unit(mvisa, clock):
    psu, dmm = mvisa("psu"), mvisa("dmm")
    power_on(psu, clock=clock)
    assert dmm.query("DATA:LAST?") == "+9.91000000E+37 VDC"  # nothing in memory yet
    dmm.write("CONF:VOLT:DC 1;:SAMP:COUN 3;:INIT")
    last = dmm.query("FETC?").split(",")[-1]
    assert dmm.query("DATA:LAST?") == f"{last} VDC"
    assert dmm.query("DATA:POIN?") == "+3"  # DATA:LAST? erases nothing
    dmm.write("CONF:VOLT:AC")
    dmm.query("READ?")
    assert dmm.query("DATA:LAST?").endswith(" VAC")
    assert errors(dmm) == []


def test_dmm_data_remove_needs_its_count_and_that_many_readings(mvisa, clock):
    """``DATA:REMove? <num_readings>[,WAIT]``: unlike R?, the count is required and more than
    memory holds is an error (it answered whatever was there, and all without a count)."""
    psu, dmm = mvisa("psu"), mvisa("dmm")
    power_on(psu, clock=clock)
    dmm.write("CONF:VOLT:DC 1;:SAMP:COUN 3;:INIT")
    assert len(dmm.query("DATA:REM? 2,WAIT").split(",")) == 2
    assert dmm.query("DATA:POIN?") == "+1"
    dmm.write("DATA:REM? 5")  # one reading in memory: no reply, an error, nothing erased
    assert dmm.query("SYST:ERR?").startswith("-222,")
    assert dmm.query("DATA:POIN?") == "+1"
    dmm.write("DATA:REM?")
    assert dmm.query("SYST:ERR?").startswith("-109,")
    assert len(dmm.query("DATA:REM? 1").split(",")) == 1
    assert dmm.query("DATA:POIN?") == "+0"
    assert errors(dmm) == []


def test_daq_read_and_measure_start_a_scan_whose_readings_stay_in_memory(mvisa):
    """READ? (INIT and FETCh?) and MEASure? start a scan: the reading memory holds that
    scan's readings, the earlier ones cleared (FETCh? answered an earlier INIT's)."""
    daq = mvisa("daq")
    daq.write("CONF:TEMP TC,K,(@101:104);:INIT")
    assert daq.query("DATA:POIN?") == "+4"
    daq.write("ROUT:SCAN (@101,102)")
    holds_its_readings(daq, "READ?", "+2")
    holds_its_readings(daq, "MEAS:TEMP? TC,K,(@103)", "+1")
    assert errors(daq) == []
