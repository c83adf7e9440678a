"""The simulated MP1900A counts bits as a counter does: a whole gate at the line rate reads as
a whole number, whatever slices of time the physics advanced in (no 4607999999999)."""

from __future__ import annotations

import pytest

from tests.integration.sim.conftest import power_on

pytestmark = pytest.mark.timeout(60)


def test_a_gate_advanced_in_uneven_slices_counts_exactly_rate_times_gate(mvisa, mconsole, clock):
    psu, bert = mvisa("psu"), mvisa("bert")
    power_on(psu, clock=clock)
    bert.write(":MODule:ID 1;:SENSe:PATTern:TYPE PRBS;:SENSe:PATTern:PRBS:LENGth 31")
    bert.write(":SENS:MEAS:EAL:PER 0,0,2,24;:SENS:MEAS:STAR")  # 144 s: 4.608e12 bits at 32 Gb/s
    assert bert.query("*OPC?") == "1"
    for n in range(760):  # uneven slices (as wall-clock ticks are): their float sum is not exactly 144
        clock.advance(0.37 if n % 2 else 0.011)
        bert.query(":SENSe:MEASure:EALarm:STATe?")
    assert bert.query(":SENSe:MEASure:EALarm:STATe?") == "0"
    assert bert.query(':CALCulate:DATA:EALarm? "CURRent:CC:TOTal"') == '"4608000000000"'
