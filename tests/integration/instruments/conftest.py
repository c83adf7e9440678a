"""The simulated lab on free loopback ports and its own ptys, one per test."""

from __future__ import annotations

import pytest

from labctl.fixture.loader import load_fixture_file
from labctl.instruments import open_station


@pytest.fixture
def sim_fixture(tmp_path):
    from labctl.sim.testing import isolated_fixture

    return load_fixture_file(isolated_fixture(tmp_path, time_scale=120))


@pytest.fixture
def lab(sim_fixture):
    from labctl.sim.lab import SimulatedLab

    with SimulatedLab(sim_fixture) as lab:
        yield lab


@pytest.fixture
def station(sim_fixture, lab):
    with open_station(sim_fixture) as st:
        yield st
