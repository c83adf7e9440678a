"""The simulated board obeys its supply: output off takes the rails down (with their decay
time constants), power-good and telemetry say off, the die cools; power-up draws an inrush
through the input capacitance; UVLO is judged on the voltage at the board."""

from __future__ import annotations

import math

import pytest

from labctl.sim.physics import constants as K
from tests.integration.sim.conftest import power_on

pytestmark = pytest.mark.timeout(60)


def daq_volts(daq, channel: int) -> float:
    return float(daq.query(f"MEAS:VOLT:DC? (@{channel})"))


def test_output_off_rails_decay_power_good_drops_telemetry_says_off(mvisa, mconsole, clock):
    psu, daq = mvisa("psu"), mvisa("daq")
    power_on(psu, clock=clock)
    core_on, aux_on = daq_volts(daq, 111), daq_volts(daq, 114)
    assert core_on == pytest.approx(0.75, rel=0.02) and aux_on == pytest.approx(3.3, rel=0.02)
    assert psu.query("OUTP OFF,(@1);*OPC?") == "1"
    clock.advance(0.0003)  # VIN at the board falls through UVLO within a fraction of a millisecond
    off_at = clock.monotonic()
    assert mconsole.table("power-good") == dict.fromkeys(("VDD_AUX", "VDD_CORE", "VDD_IO", "VDD_HBM"), "off")
    sensors = mconsole.table("sensors")
    assert sensors["powered"] == "0" and float(sensors["VIN_V"]) < K.VIN_UVLO_FALL
    clock.advance(0.005 - (clock.monotonic() - off_at) + 0.0002)  # one CORE time constant after the VRMs stopped
    assert daq_volts(daq, 111) == pytest.approx(core_on / math.e, rel=0.1)
    clock.advance(0.5)  # > 20 time constants of the slowest rail (AUX, 20 ms)
    assert abs(daq_volts(daq, 111)) < 0.001 and abs(daq_volts(daq, 114)) < 0.001
    assert float(psu.query("MEAS:CURR? (@1)")) == pytest.approx(0.0, abs=0.002)
    sensors = mconsole.table("sensors")
    assert float(sensors["VDD_CORE_V"]) == 0.0 and float(sensors["VIN_V"]) == 0.0
    assert mconsole.cmd("link status")[0].endswith("DETECT_QUIET")


def test_the_die_cools_to_the_chamber_air_once_the_supply_is_off(manual_lab, mvisa, mconsole, clock):
    psu = mvisa("psu")
    power_on(psu, clock=clock)
    mconsole.cmd("load stress 100")
    clock.advance(600)
    hot = float(mconsole.table("sensors")["die_temp"])
    assert hot > 33.0
    assert psu.query("OUTP OFF,(@1);*OPC?") == "1"
    clock.advance(600)  # > 10 die time constants
    assert float(mconsole.table("sensors")["die_temp"]) == pytest.approx(manual_lab.bench.chamber.air, abs=1.0)


def test_golden_inrush_is_a_peak_above_the_settled_current(mvisa, clock):
    psu = mvisa("psu")
    psu.write("VOLT 5,(@1);CURR 5,(@1)")
    peak = float(psu.query("OUTP ON,(@1);:MEAS:CURR? (@1)"))  # the soft-start ramp: C·dV/dt
    assert peak == pytest.approx(K.INPUT_CAPACITANCE * K.SOFT_START_SLEW, rel=0.05)
    assert psu.query("STAT:QUES:INST:ISUM1:COND?") == "+2"  # still constant voltage
    clock.advance(1.0)
    settled = float(psu.query("MEAS:CURR? (@1)"))
    assert 0.6 < settled < peak - 0.2


def test_a_board_without_soft_start_charges_at_the_current_limit_and_trips_ocp_without_a_delay(fixture_path, rm):
    from labctl.clock import ManualClock
    from labctl.fixture import load_fixture
    from labctl.sim.lab import SimulatedLab

    fixture = load_fixture(fixture_path)
    clock = ManualClock()
    with SimulatedLab(fixture, clock=clock) as lab:
        lab.inject("no_soft_start")
        psu = rm.open_resource(lab.addresses["psu"], read_termination="\n", write_termination="\n", timeout=2000)
        try:
            psu.write("VOLT 5,(@1);CURR 4,(@1)")
            assert float(psu.query("OUTP ON,(@1);:MEAS:CURR? (@1)")) == pytest.approx(4.0, abs=0.01)
            assert psu.query("STAT:QUES:INST:ISUM1:COND?") == "+1"  # constant current while charging
            clock.advance(1.0)
            assert float(psu.query("MEAS:CURR? (@1)")) < 1.3  # charged; the board runs
            # OCP with its default delay (50 ms from switching on): the inrush is over in time
            assert psu.query("OUTP OFF,(@1);:CURR:PROT:STAT ON,(@1);*OPC?") == "1"
            clock.advance(1.0)
            assert psu.query("OUTP ON,(@1);:CURR:PROT:TRIP? (@1)") == "0"
            assert psu.query("STAT:QUES:INST:ISUM1:COND?") == "+1"  # in constant current, tolerated
            clock.advance(1.0)
            assert psu.query("CURR:PROT:TRIP? (@1);:OUTP? (@1)") == "0;1"
            # without a delay OCP catches the inrush at once
            assert psu.query("OUTP OFF,(@1);:CURR:PROT:DEL 0,(@1);*OPC?") == "1"
            clock.advance(1.0)
            assert psu.query("OUTP ON,(@1);:CURR:PROT:TRIP? (@1)") == "1"
            assert psu.query("OUTP? (@1)") == "0"
        finally:
            psu.close()


def test_golden_inrush_does_not_trip_ocp(mvisa, mconsole, clock):
    psu = mvisa("psu")
    psu.write("VOLT 5,(@1);CURR 5,(@1);CURR:PROT:STAT ON,(@1)")
    assert psu.query("OUTP ON,(@1);:CURR:PROT:TRIP? (@1)") == "0"
    clock.advance(1.0)
    assert psu.query("CURR:PROT:TRIP? (@1)") == "0"
    assert mconsole.table("sensors")["powered"] == "1"


def test_uvlo_is_judged_on_the_voltage_at_the_board_after_the_lead(mvisa, mconsole, clock):
    psu = mvisa("psu")
    power_on(psu, clock=clock)
    assert psu.query("VOLT 4.45,(@1);*OPC?") == "1"  # idle: ≈ 1 A, 20 mV lead drop -> 4.43 V at the board
    clock.advance(1.0)
    sensors = mconsole.table("sensors")
    assert sensors["powered"] == "1" and float(sensors["VIN_V"]) == pytest.approx(4.43, abs=0.01)
    mconsole.cmd("load stress 100")  # ≈ 3.5 A: 70 mV lead drop -> 4.38 V, below the 4.4 V falling UVLO
    clock.advance(0.01)
    sensors = mconsole.table("sensors")
    assert sensors["powered"] == "0"
    assert set(mconsole.table("power-good").values()) == {"off"}
    clock.advance(1.0)  # unloaded, 4.45 V is still below the 4.5 V rising threshold: it stays off
    assert mconsole.table("sensors")["powered"] == "0"


def test_an_off_output_reads_no_current_and_no_power(mvisa, clock):
    """Outputs that are off deliver nothing: every conversion of their current and power is
    exactly 0 (never noise around it, as -0.2 mA); the voltage reads ≈ 0 V. CH1 is off after
    running the board, CH2 and CH3 never were on."""
    psu = mvisa("psu")
    power_on(psu, clock=clock)
    psu.write("OUTP OFF,(@1)")
    assert psu.query("OUTP? (@1:3)") == "0,0,0"
    clock.advance(1.0)
    amps, watts = [], []
    for _ in range(40):
        clock.advance(0.1)  # past the readback period: a new conversion each time
        amps += psu.query("MEAS:CURR? (@1:3)").split(",")
        watts += psu.query("MEAS:POW? (@1:3)").split(",")
    assert {float(x) for x in amps} == {0.0} and not [x for x in amps if x.startswith("-")]
    assert {float(x) for x in watts} == {0.0} and not [x for x in watts if x.startswith("-")]
    assert all(abs(float(v)) < 1e-3 for v in psu.query("MEAS:VOLT? (@1:3)").split(","))


def test_a_load_whose_input_is_off_sinks_nothing_and_reads_the_rail_voltage(mvisa, clock):
    psu, load = mvisa("psu"), mvisa("load")
    power_on(psu, clock=clock)
    load.write("MODE CURR;CURR 2;:INP OFF")
    readings = [(load.query("MEAS:CURR?"), load.query("MEAS:POW?")) for _ in range(40)]
    assert {(float(i), float(p)) for i, p in readings} == {(0.0, 0.0)}
    assert not [r for pair in readings for r in pair if r.startswith("-")]
    assert float(load.query("MEAS:VOLT?")) == pytest.approx(3.3, rel=0.01)  # it still senses the header
