"""Power-good as the console reports it agrees with the rails the instruments measure: a rail is
reported good (with its time) only while it is up, and a rail that dies falls from that instant."""

from __future__ import annotations

import math

import pytest

from labctl.fixture import load_fixture
from labctl.sim.lab import SimulatedLab
from labctl.sim.testing import isolated_fixture
from tests.integration.sim.conftest import Console, power_on

pytestmark = pytest.mark.timeout(60)

DAQ_CHANNEL = {"VDD_CORE": 111, "VDD_HBM": 112, "VDD_IO": 113, "VDD_AUX": 114}
NOMINAL = {"VDD_CORE": 0.75, "VDD_IO": 0.90, "VDD_HBM": 1.20, "VDD_AUX": 3.30}
DAQ_NOISE_V = 25e-6  # DAQ970A DC volts, 1 sigma (docs/simulated-lab.md)


def test_power_good_is_reported_only_for_rails_that_are_up_during_a_slow_sequence(tmp_path, rm, clock):
    """slow_sequencing: ~100 ms for the four rails. Part way through, a rail still at 0 V on the
    DAQ is not power-good yet (it was listed with the time it would come up)."""
    fixture = isolated_fixture(tmp_path, time_scale=600, dut="SIM-SLOW-0007",
                               duts={"SIM-SLOW-0007": {"faults": ["slow_sequencing"]}})
    with SimulatedLab(load_fixture(fixture), clock=clock) as lab:
        opts = {"read_termination": "\n", "write_termination": "\n", "timeout": 2000}
        psu, daq = rm.open_resource(lab.addresses["psu"], **opts), rm.open_resource(lab.addresses["daq"], **opts)
        console = Console(lab.addresses["dut"])
        try:
            power_on(psu)
            clock.advance(0.05)  # VIN up after 25 ms; AUX (~15 ms) up, HBM (~100 ms) not yet
            pg = console.table("power-good")
            volts = {rail: float(daq.query(f"MEAS:VOLT:DC? (@{ch})")) for rail, ch in DAQ_CHANNEL.items()}
            assert pg["VDD_AUX"] != "off" and volts["VDD_AUX"] == pytest.approx(NOMINAL["VDD_AUX"], rel=0.02)
            assert pg["VDD_HBM"] == "off" and abs(volts["VDD_HBM"]) < 5 * DAQ_NOISE_V
            for rail, state in pg.items():  # every rail reported good reads its voltage, and no other
                assert (state != "off") == (volts[rail] > 0.5 * NOMINAL[rail]), (rail, state, volts[rail])
            clock.advance(1.0)
            times = [float(console.table("power-good")[rail]) for rail in ("VDD_AUX", "VDD_CORE", "VDD_IO", "VDD_HBM")]
            assert times == sorted(times) and 60 < times[-1] < 160
        finally:
            console.close()
            psu.close()
            daq.close()


def test_a_rail_killed_while_running_is_no_longer_power_good_and_decays_from_that_instant(manual_lab, mvisa,
                                                                                            mconsole, clock):
    """dead_rail injected on a running board: its power-good drops (it kept its time from the
    power-up) and its voltage falls with its output capacitance's 10 ms time constant from the
    injection, even when nobody asks before time moves on (it fell only from the next step)."""
    psu, daq = mvisa("psu"), mvisa("daq")
    power_on(psu, clock=clock)
    v0 = float(mconsole.table("sensors")["VDD_IO_V"])
    manual_lab.inject({"fault": "dead_rail", "rail": "VDD_IO"})
    clock.advance(0.05)  # five time constants, no instrument asked in between
    v = float(mconsole.table("sensors")["VDD_IO_V"])  # a stopped rail reads without noise
    assert v == pytest.approx(v0 * math.exp(-5), abs=0.002)
    pg = mconsole.table("power-good")
    assert pg["VDD_IO"] == "off"
    assert all(pg[r] not in ("off", "never") for r in ("VDD_AUX", "VDD_CORE", "VDD_HBM"))
    clock.advance(0.1)
    assert abs(float(daq.query("MEAS:VOLT:DC? (@113)"))) < 5 * DAQ_NOISE_V
