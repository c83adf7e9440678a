"""What lives on the die does not survive its power: after VIN is cycled (or another DUT is put on
the fixture) the on-die PRBS checkers are stopped and cleared, the transmitter sends its
power-on pattern (PRBS31) and the ops counter starts from 0, as after any power-up."""

from __future__ import annotations

import pytest

from labctl.sim.physics import constants as K
from tests.integration.sim.conftest import power_on

pytestmark = pytest.mark.timeout(60)


def counts(console) -> list[tuple[int, int]]:
    return [(int(ln.split()[3]), int(ln.split()[5])) for ln in console.cmd("prbs count")]


def cycle_vin(psu, clock) -> None:
    assert psu.query("OUTP OFF,(@1);*OPC?") == "1"
    clock.advance(1.0)  # VIN falls below 4.4 V within ~1 ms
    assert psu.query("OUTP ON,(@1);*OPC?") == "1"
    clock.advance(1.0)  # VIN ramps (25 ms), the rails come up, the link trains


def test_a_power_cycle_stops_and_clears_the_checkers_and_restores_prbs31(mvisa, mconsole, clock):
    psu, bert = mvisa("psu"), mvisa("bert")
    power_on(psu, clock=clock)
    mconsole.cmd("prbs start 7")
    mconsole.cmd("load stress 100")
    clock.advance(2.0)
    assert all(bits == round(2.0 * K.LINE_RATE) for bits, _ in counts(mconsole))
    assert float(mconsole.table("perf")["ops"]) > 1e14  # ~120 TOPS for 2 s
    cycle_vin(psu, clock)
    assert mconsole.cmd("prbs status") == ["prbs stopped"]
    assert counts(mconsole) == [(0, 0)] * K.LANES
    assert mconsole.cmd("load") == ["load 0 %"]
    assert float(mconsole.table("perf")["ops"]) == 0
    # the transmitter is back at PRBS31: an ED at its default PRBS31 syncs and counts rate x gate
    assert bert.query(":SENS:MEAS:EAL:PER 0,0,0,2;:SENS:MEAS:STAR;*OPC?") == "1"
    clock.advance(3.0)
    assert bert.query(':CALC:DATA:EAL? "CURR:CC:TOT"') == f'"{round(2 * K.LINE_RATE)}"'
    assert bert.query(':CALC:DATA:EAL? "CURR:AINT:PSL"') == '"0"'


def test_checkers_count_nothing_while_the_board_is_off_and_stay_stopped_after(mvisa, mconsole, clock):
    psu = mvisa("psu")
    power_on(psu, clock=clock)
    mconsole.cmd("prbs start")
    clock.advance(1.0)
    assert psu.query("OUTP OFF,(@1);*OPC?") == "1"
    clock.advance(5.0)
    assert mconsole.cmd("prbs status") == ["prbs stopped"]
    assert psu.query("OUTP ON,(@1);*OPC?") == "1"
    clock.advance(5.0)
    assert counts(mconsole) == [(0, 0)] * K.LANES  # nothing counted after the power came back


def test_another_dut_starts_with_its_own_checkers(manual_lab, mvisa, mconsole, clock):
    psu = mvisa("psu")
    power_on(psu, clock=clock)
    mconsole.cmd("prbs start")
    clock.advance(1.0)
    manual_lab.swap_dut("SIM-GOLD-0002")
    assert mconsole.cmd("prbs status") == ["prbs stopped"]
    assert counts(mconsole) == [(0, 0)] * K.LANES
