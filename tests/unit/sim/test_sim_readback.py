"""The simulated supply's readback: MEASure/FETCh answer the last conversion of the readback ADC
for at most one readback period (E36312A: 50 ms of simulated time), unless a command changed the
bench since or something happened in between (a transient)."""

from __future__ import annotations

from pathlib import Path

import pytest

from labctl.clock import ManualClock
from labctl.fixture import load_fixture
from labctl.sim.emulators.e36312a import READBACK_PERIOD
from labctl.sim.lab import SimulatedLab
from labctl.sim.testing import isolated_fixture


@pytest.fixture
def lab(tmp_path: Path) -> tuple[SimulatedLab, ManualClock]:
    clock = ManualClock()
    return SimulatedLab(load_fixture(isolated_fixture(tmp_path)), clock=clock), clock


def amps(lab: SimulatedLab) -> float:
    return float(lab.instrument("psu").process("MEAS:CURR? (@1)"))


def power_up(lab: SimulatedLab, clock: ManualClock) -> None:
    psu = lab.instrument("psu")
    psu.process("VOLT 5,(@1);CURR 5,(@1);OUTP ON,(@1)")
    for _ in range(200):  # soft start, UVLO, rail sequencing, link training
        clock.advance(0.005)
        psu.process("MEAS:CURR? (@1)")
    assert lab.board.powered and all(r.up for r in lab.board.rails.values())


def test_readings_within_the_period_repeat_the_last_conversion(lab):
    lab, clock = lab
    power_up(lab, clock)
    bench = lab.bench
    clock.advance(READBACK_PERIOD * 1.5)
    first = amps(lab)  # a conversion
    solves = bench.solves
    readings = []
    for _ in range(9):
        clock.advance(READBACK_PERIOD / 10)
        readings.append(amps(lab))
    assert bench.solves == solves  # the model was not integrated again ...
    assert set(readings) == {first}  # ... and the supply answers its last conversion
    volts = lab.instrument("psu").process("MEAS:VOLT? (@1)")
    assert float(volts) == pytest.approx(5.0, abs=0.05)  # another reading: its own conversion
    clock.advance(READBACK_PERIOD * 1.5)
    fresh = amps(lab)
    assert bench.solves == solves + 1  # one period later: a new conversion, with its own noise
    assert fresh != first and fresh == pytest.approx(first, abs=0.01)


def test_a_command_is_seen_by_the_next_reading(lab):
    lab, clock = lab
    power_up(lab, clock)
    idle = amps(lab)
    clock.advance(READBACK_PERIOD / 10)
    assert lab.instrument("dut").process("load stress 100").endswith("OK")  # the console: another instrument
    busy = amps(lab)
    assert busy > idle + 1.0  # the board draws more at once, not one period later
    clock.advance(READBACK_PERIOD / 10)
    lab.instrument("load").process("CURR 1;INP ON")  # the electronic load on the AUX header
    assert amps(lab) > busy + 0.3
    clock.advance(READBACK_PERIOD / 10)
    lab.instrument("psu").process("OUTP OFF,(@1)")
    assert amps(lab) == pytest.approx(0.0, abs=0.002)


def test_an_injected_fault_is_seen_by_the_next_reading(lab):
    lab, clock = lab
    power_up(lab, clock)
    lab.instrument("dut").process("load stress 100")
    before = amps(lab)
    clock.advance(READBACK_PERIOD / 10)
    lab.inject({"fault": "dead_rail", "rail": "VDD_HBM"})
    assert amps(lab) < before - 0.2


def test_no_reading_is_stale_across_a_transient(lab):
    """VIN's soft-start ramp, each rail of the power-up sequence, the link training: a reading
    after any of them is solved afresh (a second look at the model right after agrees)."""
    lab, clock = lab
    psu, bench = lab.instrument("psu"), lab.bench
    psu.process("VOLT 5,(@1);CURR 5,(@1);OUTP ON,(@1)")
    readings = []
    for _ in range(100):
        clock.advance(0.0005)
        readings.append(amps(lab))
        bench.update()
        assert readings[-1] == pytest.approx(bench.psu[1].i_out, abs=0.002), f"stale {len(readings) / 2} ms into the power-up"
    assert max(readings) > 1.0  # the inrush: C dV/dt of the input capacitance
    assert len({round(r, 1) for r in readings}) >= 4  # the ramp, then each rail: the current steps up
    clock.advance(1.0)
    amps(lab)
    solves = bench.solves
    clock.advance(READBACK_PERIOD / 10)
    amps(lab)
    assert bench.solves == solves  # settled: the readback period applies again


def sensors(lab: SimulatedLab) -> dict[str, float]:
    lines = lab.instrument("dut").process("sensors").splitlines()
    assert lines[-1] == "OK"
    return {name: float(value) for name, value, _unit in (line.split() for line in lines[:-1])}


def test_the_console_sensors_follow_the_board_like_the_readback(lab):
    """The board controller samples its sensors once per telemetry period: ``sensors`` again within
    it answers the same sampling; a command (console or instrument) is seen at once."""
    from labctl.sim.emulators.console import TELEMETRY_PERIOD

    lab, clock = lab
    power_up(lab, clock)
    clock.advance(TELEMETRY_PERIOD * 1.5)
    first = sensors(lab)
    clock.advance(TELEMETRY_PERIOD / 10)
    assert sensors(lab) == first
    lab.instrument("dut").process("load stress 100")
    busy = sensors(lab)
    assert busy["VDD_CORE_I"] > first["VDD_CORE_I"] + 3.0
    lab.instrument("psu").process("OUTP OFF,(@1)")
    clock.advance(TELEMETRY_PERIOD / 10)
    assert sensors(lab)["VIN_V"] < busy["VIN_V"] - 0.1  # VIN falling: sampled afresh (a transient)
    clock.advance(1.0)
    off = sensors(lab)
    assert off["powered"] == 0 and off["VIN_V"] == pytest.approx(0.0, abs=0.01)
    solves = lab.bench.solves
    clock.advance(TELEMETRY_PERIOD * 1.5)
    sensors(lab)
    assert lab.bench.solves == solves + 1  # one period later: a new sampling
