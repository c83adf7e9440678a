"""Disconnects name the instrument (issue 9, point 8): a serial device (pty) that drops once is
reconnected like a TCP one, and one that is gone for good ends the step with one clean line
naming the role, its device and what to check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from labctl.sim.testing import isolated_fixture

PLAN = str(Path(__file__).parent / "data" / "chamber-console.yaml")


# lines each device answers before it drops: past the pre-flight, inside a step
AFTER = {"chamber": 25, "dut": 4}


def run_plan(labctl, tmp_path, role, **fault):
    spec = {"fault": "disconnect", "role": role, "after": AFTER[role], **fault}
    fixture = isolated_fixture(tmp_path, time_scale=600, faults=[spec])
    return labctl("run", PLAN, "--fixture", str(fixture), "--db", str(tmp_path / "r.db"), timeout=300,
                  env={**os.environ, "COLUMNS": "400"})


@pytest.mark.parametrize("role", ["chamber", "dut"])
def test_a_pty_that_drops_once_is_reconnected_and_the_step_passes(labctl, tmp_path, role):
    res = run_plan(labctl, tmp_path, role)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Input/output error" not in res.stdout


@pytest.mark.parametrize(("role", "step"), [("chamber", "soak"), ("dut", "console")])
def test_a_pty_gone_for_good_is_one_line_naming_the_role(labctl, tmp_path, role, step):
    res = run_plan(labctl, tmp_path, role, persistent=True)
    assert res.returncode == 2, res.stdout + res.stderr
    out = res.stdout
    assert "internal error" not in out and "Traceback" not in out and "(5, 'Input/output error')" not in out
    device = str(tmp_path / "dev" / role)
    line = next(ln for ln in out.splitlines() if ln.startswith("  ERROR") or ln.startswith("│ " + step))
    assert "connection lost" in line and f"(instrument {role}, at {device}" in line, out
    assert "hint: check the serial cable/USB adapter" in out


@pytest.fixture
def station_and_lab(tmp_path):
    from labctl.fixture import load_fixture
    from labctl.instruments import open_station
    from labctl.sim.lab import SimulatedLab

    fx = isolated_fixture(tmp_path, time_scale=600)
    with SimulatedLab(load_fixture(fx)) as lab, open_station(fx) as station:
        yield station, lab


@pytest.mark.parametrize("role", ["chamber", "dut"])
def test_the_device_vanishing_under_a_query_is_reconnected(station_and_lab, role):
    station, lab = station_and_lab
    read = station.role("chamber").temperature if role == "chamber" else station.role("dut").sensors
    read()
    for _ in range(3):  # the device goes away just as the command is sent, comes back 0.5 s later
        lab.inject({"fault": "disconnect", "role": role})
        assert read()


def test_the_device_gone_for_good_is_instrument_disconnected_naming_it(station_and_lab):
    from labctl.errors import InstrumentDisconnected

    station, lab = station_and_lab
    chamber = station.role("chamber")
    chamber.temperature()
    lab.inject({"fault": "disconnect", "role": "chamber", "persistent": True})
    with pytest.raises(InstrumentDisconnected) as err:
        chamber.temperature()
    assert "instrument chamber, at " in str(err.value) and "check the serial cable/USB adapter" in err.value.hint
