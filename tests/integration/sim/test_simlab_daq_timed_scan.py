"""A scan paced by the DAQ970A's trigger timer takes its time, as on the instrument: sweep k is
read when the model reaches ``k * TRIG:TIM`` after ``INIT``, so a heating board reads warmer
sweep after sweep, ``DATA:POIN?`` counts only the sweeps taken so far, and ``*OPC?``,
``FETC?`` and ``READ?`` answer when the last sweep has been taken (on a manual clock, the wait
moves the clock, as the instrument's time passes)."""

from __future__ import annotations

import pytest

from tests.integration.sim.conftest import power_on, scpi_errors

pytestmark = pytest.mark.timeout(60)


def sweeps(reply: str) -> list[tuple[float, float]]:
    """(reading, seconds since the scan started) of each reading of ``FETC?`` with the time field on."""
    fields = reply.split(",")
    return [(float(fields[i]), float(fields[i + 1])) for i in range(0, len(fields), 2)]


def test_a_timer_paced_scan_reads_each_sweep_at_its_time_and_is_waited_for(mvisa, manual_lab, clock):
    psu, daq = mvisa("psu"), mvisa("daq")
    power_on(psu, clock=clock)
    psu.write("*CLS")
    daq.write("CONF:TEMP TC,K,(@101);:FORM:READ:TIME ON")
    daq.write("TRIG:SOUR TIM;:TRIG:TIM 60;:TRIG:COUN 4;:INIT")
    start = clock.monotonic()
    assert daq.query("DATA:POIN?") == "+1"  # the first sweep at INIT, the next one 60 s on
    clock.advance(61)
    assert daq.query("DATA:POIN?") == "+2"
    assert daq.query("*OPC?") == "1"  # waits for the last sweep, 180 s after INIT
    assert clock.monotonic() - start == pytest.approx(180, abs=0.5)
    readings = sweeps(daq.query("FETC?"))
    assert [t for _, t in readings] == pytest.approx([0, 60, 120, 180], abs=0.01)
    temps = [v for v, _ in readings]
    assert temps == sorted(temps) and temps[-1] - temps[0] > 1.0, temps  # the powered board heats
    assert scpi_errors(daq) == []


def test_read_waits_for_a_paced_scan_and_abort_keeps_the_sweeps_taken(mvisa, clock):
    daq = mvisa("daq")
    daq.write("CONF:TEMP TC,K,(@101,102);:TRIG:SOUR TIM;:TRIG:TIM 10;:TRIG:COUN 3")
    start = clock.monotonic()
    assert len(daq.query("READ?").split(",")) == 6
    assert clock.monotonic() - start == pytest.approx(20, abs=0.5)
    assert len(daq.query("READ?").split(",")) == 6  # a READ? starts a scan as INIT does: ...
    assert daq.query("CALC:AVER:COUN? (@101)") == "+3.00000000E+00"  # ... its statistics begin again
    daq.write("TRIG:COUN 100;:INIT")
    assert daq.query("DATA:POIN?") == "+2"  # (a query: the INIT has been acted on before the clock moves)
    clock.advance(25)
    daq.write("ABOR")
    assert daq.query("TRIG:COUN?") == "+1.00000000E+02"
    clock.advance(100)
    assert daq.query("DATA:POIN?") == "+6"  # sweeps at 0, 10, 20 s: none after ABORt
    assert daq.query("*OPC?") == "1"
    assert len(daq.query("FETC?").split(",")) == 6
    daq.write("TRIG:COUN 50000")
    assert daq.query("TRIG:COUN?") == "+5.00000000E+04"
    assert scpi_errors(daq) == []
