"""The bench model with a manual clock: power, thermal, link, chamber, variation."""

from __future__ import annotations

import math
import statistics
import threading

import pytest

from labctl.clock import ManualClock, RealClock, ScaledClock
from labctl.sim.physics import constants as K
from labctl.sim.physics.bench import Bench
from labctl.sim.physics.chamber import ChamberAir
from labctl.sim.physics.dut import DutParams
from labctl.sim.physics.link import ErrorArrivals, ber_from_q, poisson


def make_bench(*faults: str, serial: str = "UNIT-0001") -> tuple[Bench, ManualClock]:
    clock = ManualClock()
    dut = DutParams.build(serial, seed=7)
    for f in faults:
        dut.apply_fault(f, {})
    bench = Bench(dut, clock=clock, seed=7)
    bench.psu[1].v_set, bench.psu[1].on = 5.0, True
    bench.update()
    clock.advance(1)
    bench.update()
    return bench, clock


def settle(bench: Bench, clock: ManualClock, seconds: float) -> None:
    clock.advance(seconds)
    bench.update()


def test_scaled_clock_runs_faster_than_the_wall():
    clock = ScaledClock(1000)
    t0 = clock.monotonic()
    clock.sleep(50)  # 50 ms of wall time
    assert clock.monotonic() - t0 >= 50
    assert abs(clock.time() - (clock._epoch0 + clock.monotonic())) < 1.0
    assert RealClock().scale == 1.0
    with pytest.raises(ValueError):
        ScaledClock(0)
    ev = threading.Event()
    ev.set()
    assert clock.wait(ev, 10)


def test_power_budget_and_vrm_efficiency():
    bench, clock = make_bench()
    board = bench.board
    idle_in = bench.psu[1].i_out
    board.workload = 1.0
    bench.update()
    full_in = bench.psu[1].i_out
    assert 0.6 < idle_in < 1.2 and 3.0 < full_in < 4.2
    p_out = sum(r.voltage * r.current for r in board.rails.values())
    assert 0.84 < p_out / board.p_in < 0.92
    for rail in K.RAILS:
        assert board.rails[rail.name].voltage == pytest.approx(rail.nominal, rel=0.01)


def test_die_temperature_is_first_order_with_its_time_constant():
    bench, clock = make_bench()
    settle(bench, clock, 1200)
    start = bench.board.die
    bench.board.workload = 1.0
    settle(bench, clock, 3000)
    final = bench.board.die
    bench2, clock2 = make_bench()
    settle(bench2, clock2, 1200)
    bench2.board.workload = 1.0
    settle(bench2, clock2, 45.0)
    # ~63 % of the way after 45 s (the die -> lid -> air chain's step response; leakage feedback adds a little)
    frac = (bench2.board.die - start) / (final - start)
    assert 0.55 < frac < 0.72


def test_chamber_ramp_window_and_soak():
    air = ChamberAir()
    air.setpoint, air.ramp, air.soak, air.window = 85.0, 60.0, 30.0, 1.0
    for _ in range(60):
        air.step(1.0)
    assert air.dynamic_setpoint == pytest.approx(85.0)
    assert not air.at_temperature
    for _ in range(200):
        air.step(1.0)
    assert air.air == pytest.approx(85.0, abs=0.1) and air.tecr == 1
    air.compressor = False
    air.setpoint = -40
    for _ in range(600):
        air.step(1.0)
    assert air.air == pytest.approx(25.0, abs=0.5)  # no compressor: cannot go below room


def test_ber_model_and_poisson_counts():
    assert ber_from_q(7.03) == pytest.approx(1e-12, rel=0.1)
    assert ber_from_q(6.0) == pytest.approx(1e-9, rel=0.1)
    import random

    rng = random.Random(1)
    counts = [poisson(rng, 4.0) for _ in range(4000)]
    assert sum(counts) / len(counts) == pytest.approx(4.0, rel=0.05)
    assert poisson(rng, 0.0) == 0
    big = [poisson(rng, 1e4) for _ in range(200)]
    assert sum(big) / len(big) == pytest.approx(1e4, rel=0.01)


def test_bit_errors_do_not_depend_on_how_the_simulation_slices_time():
    """The same measurement polled once or a thousand times (a busy machine or an idle one)
    counts the same errors; over many lanes the counts are Poisson with the expected mean."""
    for seed in range(200):
        whole, sliced = ErrorArrivals(seed), ErrorArrivals(seed)
        coarse = whole.add(2.5)
        fine = sum(sliced.add(2.5 / 1000) for _ in range(1000))
        assert coarse == fine, seed
    counts = [ErrorArrivals(seed).add(0.05) for seed in range(20000)]
    assert sum(counts) / len(counts) == pytest.approx(0.05, rel=0.15)
    assert sum(c == 0 for c in counts) / len(counts) == pytest.approx(math.exp(-0.05), rel=0.01)
    lots = [ErrorArrivals(seed).add(4.0) for seed in range(4000)]
    assert statistics.pvariance(lots) == pytest.approx(4.0, rel=0.1)  # Poisson: variance = mean
    assert ErrorArrivals(1).add(0.0) == 0
    assert ErrorArrivals(1).add(1e6) == pytest.approx(1e6, rel=0.01)  # far out of spec: drawn at once


def test_low_io_rail_and_heat_degrade_q():
    bench, clock = make_bench()
    cold = bench.board.lane_qs(bench.t)
    bench.chamber.setpoint = 85
    bench.board.workload = 1.0
    settle(bench, clock, 1500)
    hot = bench.board.lane_qs(bench.t)
    assert all(h < c for h, c in zip(hot, cold, strict=True))
    assert max(ber_from_q(q) for q in hot) < 1e-14
    bench.board.params.rail_offset["VDD_IO"] = -0.05
    bench.update()
    assert max(ber_from_q(q) for q in bench.board.lane_qs(bench.t)) > 1e-9


def test_variation_is_deterministic_and_spread():
    a = DutParams.build("POP-1", seed=7)
    assert a == DutParams.build("POP-1", seed=7)
    assert a != DutParams.build("POP-1", seed=8)
    offsets = [DutParams.build(f"POP-{i}", seed=7).rail_offset["VDD_CORE"] for i in range(200)]
    mean = sum(offsets) / len(offsets)
    sd = (sum((o - mean) ** 2 for o in offsets) / len(offsets)) ** 0.5
    assert abs(mean) < 0.0005 and 0.001 < sd < 0.002


def test_faults_change_the_model():
    with pytest.raises(ValueError, match="unknown rail"):
        DutParams.build("X", 1).apply_fault("dead_rail", {"rail": "VDD_FOO"})
    with pytest.raises(ValueError, match="lane must be"):
        DutParams.build("X", 1).apply_fault("marginal_lane", {"lane": 9})
    bench, clock = make_bench("dead_rail")
    assert bench.board.pg_ms["VDD_HBM"] is None and not bench.board.rails["VDD_HBM"].up
    bench, clock = make_bench("slow_sequencing")
    assert bench.board.pg_ms["VDD_HBM"] > 60
    bench, clock = make_bench("noisy_rail")
    assert bench.ripple_rms("VDD_CORE") > 0.015


def test_dut_swap_powers_the_new_board_up_through_its_own_sequence():
    bench, clock = make_bench()
    bench.swap_dut(DutParams.build("OTHER-1", seed=7))
    bench.update()
    assert bench.dut.serial == "OTHER-1"
    assert bench.board.input.charge_a > 0  # VIN is still on: the new board's input capacitance charges
    assert bench.board.rails["VDD_CORE"].up is False
    settle(bench, clock, 1)
    assert bench.board.powered and bench.board.rails["VDD_CORE"].up


@pytest.mark.timeout(60)  # stepping a month at 1 s resolution would take minutes
def test_a_long_stall_is_integrated_coarsely_and_lands_at_steady_state():
    bench, clock = make_bench()
    bench.board.workload = 1.0
    clock.advance(30 * 24 * 3600)  # a month without a single query
    bench.update()
    fresh, fclock = make_bench()
    fresh.board.workload = 1.0
    settle(fresh, fclock, 3000)
    assert bench.board.die == pytest.approx(fresh.board.die, abs=0.5)
