"""34465A DMM through pyvisa: ``? MIN|MAX|DEF`` limit queries, ``RANG:AUTO ONCE`` and the
``CALCulate:AVERage`` statistics."""

from __future__ import annotations

import statistics

import pytest

from tests.integration.sim.conftest import power_on, scpi_errors

pytestmark = pytest.mark.timeout(60)


def test_dmm_range_query_min_max_def_answers_the_limits(visa):
    dmm = visa("dmm")
    assert dmm.query("SENS:VOLT:DC:RANG? MIN") == "+1.00000000E-01"
    assert dmm.query("SENS:VOLT:DC:RANG? MAX") == "+1.00000000E+03"
    assert dmm.query("VOLT:RANG? DEF") == "+1.00000000E+01"
    assert dmm.query("VOLT:AC:RANG? MAXimum") == "+7.50000000E+02"
    assert dmm.query("CURR:RANG? MIN") == "+1.00000000E-06"
    dmm.write("VOLT:RANG 1")
    assert dmm.query("SENS:VOLT:DC:RANG?") == "+1.00000000E+00"  # no parameter: the setting
    assert scpi_errors(dmm) == []


def test_dmm_trigger_count_and_nplc_queries_answer_the_limits(visa):
    dmm = visa("dmm")
    assert dmm.query("TRIG:COUN? MAX") == "+1.00000000E+06"
    assert dmm.query("TRIG:COUN? MIN") == "+1.00000000E+00"
    assert dmm.query("TRIG:COUN?") == "+1.00000000E+00"
    assert dmm.query("VOLT:NPLC? MIN") == "+1.00000000E-03"
    assert dmm.query("SENS:VOLT:DC:NPLC? MAX") == "+1.00000000E+02"
    dmm.write("VOLT:NPLC 1")
    assert dmm.query("VOLT:NPLC? DEF") == "+1.00000000E+01"
    assert dmm.query("VOLT:NPLC?") == "+1.00000000E+00"
    assert dmm.query("SAMP:COUN? MAX") == "+1000000"
    assert dmm.query("TRIG:LEV? MIN") == "-1.00000000E+03"
    assert dmm.query("VOLT:APER? MAX") == "+2.00000000E+00"
    assert scpi_errors(dmm) == []


def test_dmm_limit_query_with_an_unknown_word_is_an_error(visa):
    dmm = visa("dmm")
    dmm.write("SENS:VOLT:DC:RANG? FOO")
    dmm.write("TRIG:COUN? BIG")
    errs = scpi_errors(dmm)
    assert [e.split(",")[0] for e in errs] == ["-224", "-224"]


def test_dmm_autorange_once_picks_the_range_and_leaves_autorange_off(mvisa, clock):
    psu, dmm = mvisa("psu"), mvisa("dmm")
    power_on(psu, clock=clock)  # 0.75 V at the sense point
    dmm.write("CONF:VOLT:DC;:VOLT:RANG 100")
    dmm.write("SENS:VOLT:DC:RANG:AUTO ONCE")
    assert dmm.query("SENS:VOLT:DC:RANG:AUTO?") == "0"
    assert float(dmm.query("SENS:VOLT:DC:RANG?")) == 1.0
    assert float(dmm.query("READ?")) == pytest.approx(0.75, rel=0.01)
    dmm.write("SENS:VOLT:DC:ZERO:AUTO ONCE")  # one zero measurement, then autozero off
    assert dmm.query("SENS:VOLT:DC:ZERO:AUTO?") == "0"
    assert scpi_errors(dmm) == []


def test_dmm_statistics_follow_the_readings(mvisa, clock):
    psu, dmm = mvisa("psu"), mvisa("dmm")
    power_on(psu, clock=clock)
    dmm.write("CONF:VOLT:DC 1;:SAMP:COUN 2")
    dmm.query("READ?")  # before the statistics are on: not counted
    dmm.write("CALC:AVER ON")
    assert dmm.query("CALC:AVER?") == "1"
    values: list[float] = []
    for _ in range(3):
        values += [float(x) for x in dmm.query("READ?").split(",")]
    dmm.write("INIT")
    values += [float(x) for x in dmm.query("FETC?").split(",")]
    assert len(values) == 8
    assert float(dmm.query("CALC:AVER:COUN?")) == 8
    assert float(dmm.query("CALC:AVER:AVER?")) == pytest.approx(statistics.fmean(values), abs=1e-8)
    assert float(dmm.query("CALC:AVER:MIN?")) == pytest.approx(min(values), abs=1e-8)
    assert float(dmm.query("CALC:AVER:MAX?")) == pytest.approx(max(values), abs=1e-8)
    assert float(dmm.query("CALC:AVER:PTP?")) == pytest.approx(max(values) - min(values), abs=1e-8)
    assert float(dmm.query("CALC:AVER:SDEV?")) == pytest.approx(statistics.stdev(values), rel=1e-3, abs=1e-8)
    dmm.write("CALC:AVER:CLE")
    assert float(dmm.query("CALC:AVER:COUN?")) == 0
    assert float(dmm.query("CALC:AVER:AVER?")) == 0.0
    dmm.write("CALC:AVER:STAT OFF")
    dmm.query("READ?")  # off: not counted
    assert float(dmm.query("CALC:AVER:COUN?")) == 0
    assert dmm.query("CALC:AVER:STAT?") == "0"
    assert scpi_errors(dmm) == []


def test_dmm_statistics_are_cleared_by_turning_on_and_by_reset(mvisa, clock):
    psu, dmm = mvisa("psu"), mvisa("dmm")
    power_on(psu, clock=clock)
    dmm.write("CALC:AVER:STAT ON")
    dmm.query("READ?")
    assert float(dmm.query("CALC:AVER:COUN?")) == 1
    dmm.write("CALC:AVER:STAT ON")
    assert float(dmm.query("CALC:AVER:COUN?")) == 0
    dmm.query("MEAS:VOLT:DC?")
    assert float(dmm.query("CALC:AVER:COUN?")) == 1
    dmm.write("*RST")
    assert dmm.query("CALC:AVER?") == "0"
    assert float(dmm.query("CALC:AVER:COUN?")) == 0
    assert scpi_errors(dmm) == []


def test_dmm_resolution_follows_the_34465a_table_and_a_resolution_selects_the_nplc(visa):
    """0.1 ppm of the range at 10 PLC (after *RST), 0.3 ppm at 1 PLC, 0.03 ppm at 100; a
    resolution asked for (``RES``, or ``CONF``/``MEAS``'s second parameter) selects the shortest
    integration that resolves at least that finely."""
    dmm = visa("dmm")
    dmm.write("*RST")
    assert float(dmm.query("VOLT:RANG?")) == 10.0
    assert float(dmm.query("VOLT:RES?")) == pytest.approx(1e-6)
    dmm.write("VOLT:NPLC 1")
    assert float(dmm.query("VOLT:RES?")) == pytest.approx(3e-6)
    assert float(dmm.query("VOLT:RES? MIN")) == pytest.approx(3e-7)  # at 100 PLC
    assert float(dmm.query("VOLT:RES? MAX")) == pytest.approx(3e-4)  # at 0.001 PLC
    dmm.write("VOLT:RES 1e-5")  # 15 uV at 0.06 PLC is too coarse: 7 uV at 0.2 PLC
    assert float(dmm.query("VOLT:NPLC?")) == pytest.approx(0.2)
    dmm.write("VOLT:RES 1e-6")
    assert float(dmm.query("VOLT:NPLC?")) == 10.0
    dmm.write("CONF:VOLT:DC 1,3e-6")  # 1 V range: 3 ppm, 0.02 PLC
    assert dmm.query("CONF?") == '"VOLT +1.00000000E+00,+3.00000000E-06"'
    assert float(dmm.query("VOLT:NPLC?")) == pytest.approx(0.02)
    dmm.write("VOLT:RES MIN")
    assert float(dmm.query("VOLT:NPLC?")) == 100.0
    assert scpi_errors(dmm) == []
