"""One physics model behind every emulator: what one instrument changes, the others see."""

from __future__ import annotations

import pytest
import serial

from labctl.clock import ManualClock
from labctl.fixture import load_fixture
from labctl.sim.lab import SimulatedLab
from labctl.sim.testing import isolated_fixture
from tests.integration.sim.conftest import Console, power_on

pytestmark = pytest.mark.timeout(90)


def lid_temp(daq) -> float:
    return float(daq.query("MEAS:TEMP? TC,K,(@101)"))


def die_temp(console) -> float:
    return float(console.table("sensors")["die_temp"])


def set_chamber(lab, celsius: float) -> None:
    with serial.Serial(lab.addresses["chamber"], 9600, timeout=2) as port:
        port.write(f"SETP {celsius}\n*OPC?\n".encode())
        assert port.readline() == b"1\n"


def test_load_raises_input_current_then_die_temp_then_thermocouple(mvisa, mconsole, clock):
    psu, daq = mvisa("psu"), mvisa("daq")
    power_on(psu, clock=clock)
    clock.advance(600)
    i0, die0, lid0 = float(psu.query("MEAS:CURR? (@1)")), die_temp(mconsole), lid_temp(daq)
    mconsole.cmd("load stress 100")
    # electrically instant: the input current jumps, temperatures have not moved yet
    assert float(psu.query("MEAS:CURR? (@1)")) > i0 + 1.8
    assert die_temp(mconsole) == pytest.approx(die0, abs=1.0)
    assert lid_temp(daq) == pytest.approx(lid0, abs=0.3)
    clock.advance(20)
    die1, lid1 = die_temp(mconsole), lid_temp(daq)
    assert die1 > die0 + 2.0  # the die heats first (63 % in 45 s) ...
    assert 0 < lid1 - lid0 < (die1 - die0) * 0.8  # ... its heat reaches the lid thermocouple after it
    clock.advance(900)
    die2, lid2 = die_temp(mconsole), lid_temp(daq)
    assert die2 > die1 + 3 and lid2 > lid1 + 3
    assert lid2 == pytest.approx(25 + 0.85 * (die2 - 25), abs=1.0)


def test_chamber_sets_the_board_ambient(manual_lab, mvisa, mconsole, clock):
    psu, daq = mvisa("psu"), mvisa("daq")
    power_on(psu, clock=clock)
    set_chamber(manual_lab, -10)
    clock.advance(900)
    assert float(daq.query("MEAS:TEMP? TC,K,(@104)")) == pytest.approx(-10, abs=1.0)  # inlet air
    assert die_temp(mconsole) < 0


def test_leakage_rises_with_temperature(mvisa, mconsole, manual_lab, clock):
    power_on(mvisa("psu"), clock=clock)
    clock.advance(600)
    cold = float(mconsole.table("sensors")["VDD_CORE_I"])
    set_chamber(manual_lab, 85)
    clock.advance(900)
    hot = float(mconsole.table("sensors")["VDD_CORE_I"])
    assert hot > cold * 1.5


def hot_corner(tmp_path, serial_no: str, **sim) -> dict[str, float]:
    """Chamber 85 degC, full stress for 25 min: the flagship plan's hot corner."""
    clock = ManualClock()
    path = isolated_fixture(tmp_path, dut=serial_no, **sim)
    with SimulatedLab(load_fixture(path), clock=clock) as lab:
        con = Console(lab.addresses["dut"])
        try:
            lab.instrument("psu").process("VOLT 5,(@1);CURR 5,(@1);:OUTP ON,(@1)")
            clock.advance(1)
            set_chamber(lab, 85)
            con.cmd("load stress 100")
            peak = 0.0
            for _ in range(30):
                clock.advance(50)
                peak = max(peak, die_temp(con))
            sensors = {k: float(v) for k, v in con.table("sensors").items()}
            sensors["peak_die"] = peak
            return sensors
        finally:
            con.close()


def test_golden_duts_pass_the_hot_corner_with_margin(tmp_path):
    for serial_no in ("SIM-GOLD-0001", "SIM-GOLD-0002"):
        s = hot_corner(tmp_path / serial_no, serial_no)
        assert s["peak_die"] < 103.0, serial_no
        assert s["throttle"] == 0


def test_hot_spot_throttles_at_the_hot_corner(tmp_path):
    s = hot_corner(tmp_path, "SIM-HOT-0009", duts={"SIM-HOT-0009": {"faults": ["hot_spot"]}})
    assert s["throttle"] == 1  # it crossed 105 degC and stays throttled under stress
    assert s["peak_die"] > 103.5


def test_overtemp_runs_away_and_trips(tmp_path):
    s = hot_corner(tmp_path, "SIM-OT-0010", duts={"SIM-OT-0010": {"variant": "overtemp"}})
    assert s["peak_die"] > 110.0
    assert s["VDD_CORE_V"] == 0.0  # THERMTRIP turned the rails off


def flagship_corner(tmp_path, serial_no: str, ambient: float, **sim) -> tuple[float, float]:
    """(die temp, theta = (die - inlet) / input power) after 40 min of full load at ``ambient``."""
    import pyvisa

    clock = ManualClock()
    with SimulatedLab(load_fixture(isolated_fixture(tmp_path, dut=serial_no, **sim)), clock=clock) as lab:
        con = Console(lab.addresses["dut"])
        rm = pyvisa.ResourceManager("@py")
        try:
            psu = rm.open_resource(lab.addresses["psu"], read_termination="\n", write_termination="\n", timeout=2000)
            daq = rm.open_resource(lab.addresses["daq"], read_termination="\n", write_termination="\n", timeout=2000)
            power_on(psu, clock=clock)
            set_chamber(lab, ambient)
            con.cmd("load stress 100")
            clock.advance(2400)
            die = die_temp(con)
            inlet = float(daq.query("MEAS:TEMP? TC,K,(@104)"))
            p_in = float(psu.query("MEAS:VOLT? (@1)")) * float(psu.query("MEAS:CURR? (@1)"))
            psu.close()
            daq.close()
            return die, (die - inlet) / p_in
        finally:
            rm.close()
            con.close()


@pytest.mark.parametrize("ambient", [0.0, 45.0])
def test_flagship_corners_separate_golden_hot_spot_and_overtemp_by_theta(tmp_path, ambient):
    die, theta = flagship_corner(tmp_path / "g", "SIM-GOLD-0001", ambient)
    assert die < 95.0 - 10 and theta < 0.92
    _, theta_hot = flagship_corner(tmp_path / "h", "SIM-HOT-0009", ambient,
                                   duts={"SIM-HOT-0009": {"faults": ["hot_spot"]}})
    assert theta_hot > 1.05
    _, theta_ot = flagship_corner(tmp_path / "o", "SIM-OT-0010", ambient,
                                  duts={"SIM-OT-0010": {"faults": ["overtemp"]}})
    assert theta_ot > 2.0


def test_the_console_latches_the_die_temperature_at_which_throttling_asserted(mvisa, mconsole, manual_lab, clock):
    psu = mvisa("psu")
    power_on(psu, clock=clock)
    assert "throttle_temp" not in mconsole.table("sensors")  # no throttling since power-up
    set_chamber(manual_lab, 105)
    mconsole.cmd("load stress 100")
    clock.advance(600)  # nobody asks for ten minutes: the die crossed 105 degC long ago
    sensors = mconsole.table("sensors")
    assert sensors["throttle"] == "1"
    assert float(sensors["die_temp"]) > 108.0  # what a late reading of the die says ...
    latched = [ln for ln in mconsole.cmd("sensors") if ln.startswith("throttle_temp ")]
    assert len(latched) == 1 and latched[0].endswith(" degC")
    assert 105.0 <= float(latched[0].split()[1]) < 106.0  # ... and where the board throttled
    # a power-up (once the board has cooled) starts without a throttle event
    psu.write("OUTP OFF,(@1)")
    # done before the clock moves: a write is not waited for, and an OUTP OFF the lab took only
    # after the 900 s (a loaded machine) met the OUTP ON at the same instant: no power cycle
    assert psu.query("*OPC?") == "1"
    set_chamber(manual_lab, 25)
    clock.advance(900)
    power_on(psu, clock=clock)
    assert "throttle_temp" not in mconsole.table("sensors")


def test_heat_flows_die_to_lid_to_air_while_the_chamber_cools_fast(mvisa, mconsole, manual_lab, clock):
    """The die's heat leaves through the lid: with the board under load and the chamber air
    falling as fast as the ThermoStream can, die >= lid thermocouple >= air at every instant."""
    psu, daq = mvisa("psu"), mvisa("daq")
    power_on(psu, clock=clock)
    set_chamber(manual_lab, 85)
    mconsole.cmd("load stress 100")
    clock.advance(1500)
    set_chamber(manual_lab, -40)  # RAMP 9999 K/min: the air falls with its own 20 s time constant
    readings = []
    for _ in range(120):
        clock.advance(2.5)
        die = die_temp(mconsole)
        lid, air = (float(x) for x in daq.query("MEAS:TEMP? TC,K,(@101,104)").split(","))
        readings.append((die, lid, air))
    assert readings[0][2] > 60 and readings[-1][2] < -30  # the air fell by 100 degC in five minutes
    assert [r for r in readings if not r[0] >= r[1] >= r[2]] == []
