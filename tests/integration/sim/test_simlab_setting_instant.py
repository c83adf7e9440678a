"""A setting takes effect at the simulated instant the lab reads it off the socket, not over the
time since an instrument last asked the model: *RST of the supply, an OVP level below the
setpoint and an ED's PRBS length changed part way through a gate act from their instant on.
(A served lab integrates every 0.25 s of wall time: at x600 such a setting acted up to 150
simulated seconds before it was sent.)"""

from __future__ import annotations

import pytest

from labctl.sim.physics import constants as K
from tests.integration.sim.conftest import power_on

pytestmark = pytest.mark.timeout(60)

DIE_NOISE = 0.25  # console die_temp, 1 sigma (docs/simulated-lab.md); it prints 0.1 degC


def die(console) -> float:
    return float(console.table("sensors")["die_temp"])


def hot_board(psu, console, clock) -> float:
    """A board settled at full load (15 time constants of the die): its die temperature."""
    power_on(psu, clock=clock)
    console.cmd("load stress 100")
    clock.advance(15 * 45.0)
    return die(console)


@pytest.mark.parametrize("command", ["*RST", "VOLT:PROT 4.8,(@1)"])
def test_switching_the_supply_off_cools_the_die_from_that_instant(mvisa, mconsole, clock, command):
    psu = mvisa("psu")
    hot = hot_board(psu, mconsole, clock)
    assert hot > 35.0
    clock.advance(100.0)  # nobody asks the lab for 100 s of simulated time: the board stays hot
    assert psu.query(f"{command};*OPC?") == "1"
    assert psu.query("OUTP? (@1)") == "0"
    # the output went off now: the die has not begun to cool (it read ~26 degC, cooled for 100 s)
    assert die(mconsole) == pytest.approx(hot, abs=4 * DIE_NOISE * 2**0.5)
    clock.advance(45.0)  # one time constant of the die: 63 % of the way to the chamber air
    assert die(mconsole) == pytest.approx(25.0 + (hot - 25.0) * 0.368, abs=1.0)


def test_an_ed_pattern_changed_part_way_through_a_gate_counts_from_that_instant(mvisa, clock):
    psu, bert = mvisa("psu"), mvisa("bert")
    power_on(psu, clock=clock)
    assert bert.query(":SENS:PATT:PRBS:LENG 7;:SENS:MEAS:EAL:PER 0,0,0,20;:SENS:MEAS:STAR;*OPC?") == "1"
    clock.advance(10.0)  # PRBS7 against the DUT's PRBS31: no sync, nothing compared
    assert bert.query(":SENS:PATT:PRBS:LENG 31;*OPC?") == "1"
    clock.advance(15.0)  # the gate ends 10 s later
    assert bert.query(':CALC:DATA:EAL? "CURR:CC:TOT"') == f'"{round(10 * K.LINE_RATE)}"'
    assert bert.query(':CALC:DATA:EAL? "CURR:AINT:PSL"') == '"10"'
