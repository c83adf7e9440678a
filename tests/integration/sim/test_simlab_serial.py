"""The serial instruments over ptys: ThermoStream chamber and the DUT console (pyserial and
pyvisa-py ASRL)."""

from __future__ import annotations

import os

import pytest
import serial

from tests.integration.sim.conftest import power_on

pytestmark = pytest.mark.timeout(60)


class Chamber:
    def __init__(self, path: str) -> None:
        self.port = serial.Serial(path, 9600, timeout=2)

    def send(self, text: str) -> None:
        self.port.write((text + "\n").encode())

    def ask(self, text: str) -> str:
        self.send(text)
        line = self.port.readline()
        assert line.endswith(b"\n"), f"no reply to {text!r}"
        return line.decode().strip()

    def close(self) -> None:
        self.port.close()


@pytest.fixture
def chamber(manual_lab):
    c = Chamber(manual_lab.addresses["chamber"])
    yield c
    c.close()


def test_serial_devices_are_stable_symlinks_to_ptys(manual_lab, fixture_path):
    path = manual_lab.addresses["chamber"]
    assert path.startswith(str(fixture_path.parent))
    assert os.path.islink(path) and os.readlink(path).startswith("/dev/pts/")


def test_chamber_identity_and_settings(chamber):
    assert chamber.ask("*IDN?") == "inTEST Thermal Solutions,ATS-545,ATS-545-0042,4.3.0"
    chamber.send("%RM")
    chamber.send("WNDW 0.5")
    chamber.send("SOAK 60")
    chamber.send("RAMP 10")
    assert chamber.ask("WNDW?") == "0.5"
    assert chamber.ask("SOAK?") == "60"
    assert chamber.ask("RAMP?") == "10.0"
    assert chamber.ask("HEAD?") == "1" and chamber.ask("FLOW?") == "1"
    assert chamber.ask("*ESR?") == "0"
    chamber.send("BOGUS 1")
    chamber.send("WNDW 20")  # out of range: ignored
    assert chamber.ask("*ESR?") == "48"
    assert chamber.ask("WNDW?") == "0.5"


def test_chamber_ramps_at_the_set_rate_and_reports_at_temperature_after_soak(chamber, clock):
    chamber.send("RAMP 10")  # K/min
    chamber.send("WNDW 1.0")
    chamber.send("SOAK 120")
    chamber.send("SETP 85")
    assert chamber.ask("SETP?") == "85.0"
    assert chamber.ask("TECR?") == "2"
    clock.advance(180)  # 3 min at 10 K/min: the dynamic setpoint is at 55 degC
    assert float(chamber.ask("SETD?")) == pytest.approx(55.0, abs=0.2)
    assert 45.0 < float(chamber.ask("TEMP?")) < 55.5
    assert chamber.ask("TECR?") == "2"
    clock.advance(240)  # setpoint reached at 6 min; air settles with tau 20 s
    assert float(chamber.ask("TEMP?")) == pytest.approx(85.0, abs=1.0)
    assert chamber.ask("TECR?") == "2"  # inside the window, but not soaked yet
    clock.advance(150)
    assert chamber.ask("TECR?") == "1"


def test_chamber_flow_off_drifts_back_to_room(chamber, clock):
    chamber.send("SETP 60")
    assert chamber.ask("*OPC?") == "1"  # processed before time moves
    clock.advance(300)
    assert float(chamber.ask("TEMP?")) == pytest.approx(60.0, abs=1.0)
    chamber.send("FLOW 0")
    assert chamber.ask("FLOW?") == "0"
    clock.advance(300)
    assert float(chamber.ask("TEMP?")) == pytest.approx(25.0, abs=1.0)
    assert chamber.ask("FLWR?") == "0.0"
    assert chamber.ask("TECR?") == "2"


def test_chamber_through_pyvisa_asrl(manual_lab, rm):
    res = rm.open_resource(f"ASRL{manual_lab.addresses['chamber']}::INSTR",
                           read_termination="\n", write_termination="\n", timeout=2000)
    try:
        assert res.query("*IDN?").startswith("inTEST Thermal Solutions,ATS-545")
        res.write("SETP -20")
        assert res.query("SETP?") == "-20.0"
    finally:
        res.close()


def test_console_identity_and_help(mconsole):
    assert mconsole.cmd("*IDN?") == ["labctl,ACCEL-SIM-X1,SIM-GOLD-0001,1.4.2"]
    assert mconsole.table("id") == {"serial": "SIM-GOLD-0001", "board": "ACCEL-SIM-X1", "rev": "B"}
    assert mconsole.table("fw")["fw"] == "1.4.2"
    assert any("prbs" in line for line in mconsole.cmd("help"))
    assert mconsole.raw("frobnicate") == ["ERR unknown command 'frobnicate' (try help)"]


def test_console_unpowered_board(mconsole):
    sensors = mconsole.table("sensors")
    assert float(sensors["VDD_CORE_V"]) == 0.0
    assert sensors["powered"] == "0" and float(sensors["VIN_V"]) == 0.0
    assert set(mconsole.table("power-good").values()) == {"off"}
    assert mconsole.cmd("link status")[0] == "link speed 0.0 GT/s width x0 ltssm DETECT_QUIET"
    assert mconsole.raw("load stress 50") == ["ERR load: VDD_CORE is not up"]


def test_console_sensors_power_good_link(mvisa, mconsole, clock):
    power_on(mvisa("psu"), clock=clock)
    sensors = mconsole.cmd("sensors")
    names = [ln.split()[0] for ln in sensors]
    assert names == ["die_temp", "hbm_temp", "vrm_temp", "VDD_CORE_V", "VDD_CORE_I", "VDD_IO_V", "VDD_IO_I",
                     "VDD_HBM_V", "VDD_HBM_I", "VDD_AUX_V", "VDD_AUX_I", "throttle", "VIN_V", "powered"]
    units = {ln.split()[0]: ln.split()[2] for ln in sensors}
    assert units["die_temp"] == "degC" and units["VDD_IO_V"] == "V" and units["VDD_IO_I"] == "A"
    values = {ln.split()[0]: float(ln.split()[1]) for ln in sensors}
    for rail, nominal in {"VDD_CORE": 0.75, "VDD_IO": 0.9, "VDD_HBM": 1.2, "VDD_AUX": 3.3}.items():
        assert values[f"{rail}_V"] == pytest.approx(nominal, rel=0.02), rail
    pg = mconsole.cmd("power-good")
    assert [ln.split()[0] for ln in pg] == ["VDD_AUX", "VDD_CORE", "VDD_IO", "VDD_HBM"]
    times = [float(ln.split()[1]) for ln in pg]
    assert times == sorted(times) and times[-1] < 15.0
    link = mconsole.cmd("link status")
    assert link[0] == "link speed 32.0 GT/s width x8 ltssm L0"
    assert link[1:] == [f"lane {i} speed 32.0 GT/s width x8 ltssm L0" for i in range(1, 9)]
    mconsole.cmd("link retrain")
    assert mconsole.cmd("link status")[0].endswith("ltssm RCVRY_LOCK")
    clock.advance(0.1)
    assert mconsole.cmd("link status")[0].endswith("ltssm L0")


def test_console_load_perf_prbs_and_reset(mvisa, mconsole, clock):
    power_on(mvisa("psu"), clock=clock)
    assert mconsole.cmd("load") == ["load 0 %"]
    assert mconsole.raw("load stress 150") == ["ERR percent must be 0..100"]
    mconsole.cmd("load stress 40")
    assert mconsole.cmd("load") == ["load 40 %"]
    perf = {ln.split()[0]: float(ln.split()[1]) for ln in mconsole.cmd("perf")}
    assert perf["throughput"] == pytest.approx(48.0, rel=0.05)
    clock.advance(10)
    ops = float(mconsole.cmd("perf")[0].split()[1])
    assert ops == pytest.approx(48e12 * 10, rel=0.05)
    mconsole.cmd("prbs start 31")
    clock.advance(2)
    counts = mconsole.cmd("prbs count")
    assert counts[0] == "lane 1 bits 64000000000 errors 0"
    assert len(counts) == 8
    mconsole.cmd("prbs stop")
    clock.advance(2)
    assert mconsole.cmd("prbs count")[0] == "lane 1 bits 64000000000 errors 0"
    assert mconsole.raw("prbs start 8")[-1].startswith("ERR")
    mconsole.cmd("reset")
    assert mconsole.cmd("load") == ["load 0 %"]
    assert mconsole.cmd("prbs count")[0] == "lane 1 bits 0 errors 0"
