"""A rack: boards in one chamber, its air the same for all, their heat in its balance."""

from __future__ import annotations

import pytest

from labctl.clock import ManualClock
from labctl.sim.physics.dut import DutParams
from labctl.sim.physics.rack import Rack


def make_rack(n: int) -> tuple[Rack, ManualClock]:
    clock = ManualClock()
    duts = {str(k): DutParams.build(f"SIM-GOLD-{k:04d}", 7, "golden") for k in range(1, n + 1)}
    return Rack(duts, clock=clock, seed=7), clock


def power_on(rack: Rack, slots: list[str]) -> None:
    for slot in slots:
        ch1 = rack.bay(slot).psu[1]
        ch1.v_set, ch1.i_set, ch1.on = 5.0, 5.0, True


def test_every_board_sees_the_chamber_air():
    rack, clock = make_rack(4)
    rack.chamber.setpoint, rack.chamber.ramp = 45.0, 10.0
    clock.advance(900)
    rack.update()
    assert rack.chamber.air == pytest.approx(45.0, abs=0.5)
    assert {round(bay.board.ambient, 6) for bay in rack.bays.values()} == {round(rack.chamber.air, 6)}


def test_each_board_follows_its_own_supply():
    rack, clock = make_rack(3)
    power_on(rack, ["2"])
    clock.advance(5)
    rack.update()
    assert [bay.board.powered for bay in rack.bays.values()] == [False, True, False]
    assert rack.heat == pytest.approx(rack.bay("2").board.p_in)
    assert rack.heat > 0


def test_heat_beyond_the_chamber_capacity_warms_the_air():
    rack, clock = make_rack(2)
    power_on(rack, ["1", "2"])
    clock.advance(120)
    rack.update()
    held = rack.chamber.air
    rack.chamber.capacity = 0.0  # an air handler that removes nothing: the boards' heat shows
    clock.advance(300)
    rack.update()
    assert rack.chamber.air > held + 0.01 * rack.heat * 0.5
