"""The board's input node: soft-start ramp (the inrush), current-limited charging, VIN fall,
and the times at which UVLO thresholds were crossed between two solves."""

from __future__ import annotations

import math

import pytest

from labctl.sim.physics import constants as K
from labctl.sim.physics.vin import InputNode


def test_a_ramp_at_the_soft_start_slew_draws_c_dv_dt_and_tells_when_it_crossed_uvlo():
    node = InputNode()
    node.advance(0.0, 5.0, K.SOFT_START_SLEW, i_available=5.0)
    assert node.charge_a == pytest.approx(K.INPUT_CAPACITANCE * K.SOFT_START_SLEW)
    assert not node.current_limited
    node.advance(1.0, 5.0, K.SOFT_START_SLEW, i_available=5.0)
    assert node.v == 5.0 and node.charge_a == 0.0
    assert node.crossed_at(K.VIN_UVLO, 1.0) == pytest.approx(K.VIN_UVLO / K.SOFT_START_SLEW)


def test_a_supply_that_cannot_deliver_c_dv_dt_charges_at_its_limit_and_slower():
    node = InputNode()
    node.advance(0.0, 5.0, K.SUPPLY_SLEW, i_available=4.0)
    assert node.current_limited and node.charge_a == pytest.approx(4.0)
    node.advance(0.001, 5.0, K.SUPPLY_SLEW, i_available=4.0)
    assert node.v == pytest.approx(4.0 / K.INPUT_CAPACITANCE * 0.001)


def test_vin_falls_exponentially_and_small_changes_follow_at_once():
    node = InputNode(v=5.0)
    node.advance(0.0, 4.95, K.SOFT_START_SLEW, 5.0)  # the lead's drop under more load: no ramp, no inrush
    assert node.v == 4.95 and node.charge_a == 0.0
    node.advance(0.0, 0.0, K.SOFT_START_SLEW, 0.0)  # output off
    node.advance(K.INPUT_DISCHARGE_TAU, 0.0, K.SOFT_START_SLEW, 0.0)
    assert node.v == pytest.approx(4.95 / math.e)
    assert node.crossed_at(K.VIN_UVLO_FALL, 1.0) == pytest.approx(K.INPUT_DISCHARGE_TAU * math.log(4.95 / 4.4))
