"""The fixture's sim: section rejects unknown fault and variant names when it is loaded."""

from __future__ import annotations

import pytest

from labctl.errors import FixtureError
from labctl.fixture import load_fixture


def write(tmp_path, sim: str):
    path = tmp_path / "fx.yaml"
    path.write_text("station: x\nroles: {}\nsim:\n" + sim)
    return path


@pytest.mark.parametrize("sim, message", [
    ("  duts:\n    X: {faults: [marginl_lane]}\n", "unknown fault 'marginl_lane'"),
    ("  duts:\n    X: {variant: wobbly}\n", "unknown variant 'wobbly'"),
    ("  faults:\n    - {fault: melt, role: dmm}\n", "unknown fault 'melt'"),
])
def test_bad_names_are_fixture_errors_with_a_line(tmp_path, sim, message):
    with pytest.raises(FixtureError) as info:
        load_fixture(write(tmp_path, sim))
    assert message in info.value.format()
    assert info.value.line is not None and info.value.line >= 4


def test_good_specs_load(tmp_path):
    fx = load_fixture(write(tmp_path, "  duts:\n    X: {variant: hot, faults: [marginal_lane, {fault: dead_rail, rail: VDD_IO}]}\n"))
    faults = fx.sim.duts["X"].faults
    assert faults[0] == "marginal_lane" and faults[1].fault == "dead_rail"
