"""Independent drivers written for the real instruments (PyMeasure), used unchanged."""

from __future__ import annotations

import warnings

import pytest
from pymeasure.instruments.agilent import Agilent34410A
from pymeasure.instruments.keysight import KeysightE36312A
from pymeasure.instruments.temptronic import ATS545

pytestmark = pytest.mark.timeout(60)

VISA = {"visa_library": "@py", "read_termination": "\n", "write_termination": "\n", "timeout": 2000}


def test_pymeasure_keysight_e36312a(lab):
    psu = KeysightE36312A(lab.addresses["psu"], **VISA)
    try:
        assert psu.id.startswith("Keysight Technologies,E36312A,")
        psu.ch_1.voltage_setpoint = 5.0
        psu.ch_1.current_limit = 5.0
        psu.ch_1.output_enabled = True
        assert psu.ch_1.voltage_setpoint == 5.0
        assert psu.ch_1.current_limit == 5.0
        assert psu.ch_1.output_enabled is True
        assert psu.ch_1.voltage == pytest.approx(5.0, abs=0.01)
        assert 0.5 < psu.ch_1.current < 1.5  # the idle board
        psu.ch_2.voltage_setpoint = 12.0
        assert psu.ch_2.voltage_setpoint == 12.0
        assert psu.ch_2.output_enabled is False
        assert psu.check_errors() == []
        psu.ch_1.output_enabled = False
        assert psu.ch_1.current == pytest.approx(0.0, abs=0.005)
    finally:
        psu.adapter.close()


def test_pymeasure_agilent_34410a_class_on_the_34465a(lab):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pymeasure's note on unknown SCPI support
        dmm = Agilent34410A(lab.addresses["dmm"], **VISA)
    try:
        assert "34465A" in dmm.id
        assert abs(dmm.voltage_dc) < 0.001  # board unpowered
        assert dmm.voltage_ac >= 0.0
        assert dmm.current_dc == pytest.approx(0.0, abs=1e-5)
        assert dmm.resistance == 9.9e37
    finally:
        dmm.adapter.close()


def test_pymeasure_ats545_over_the_pty(lab):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        chamber = ATS545(f"ASRL{lab.addresses['chamber']}::INSTR", **VISA)
    try:
        chamber.temperature_setpoint_window = 1.0
        chamber.temperature_soak_time = 10
        chamber.temperature_setpoint = 40
        assert chamber.temperature_setpoint == 40.0
        assert chamber.temperature_setpoint_window == 1.0
        assert chamber.head == "down"
        assert chamber.error_code == 0
        assert 20.0 < chamber.temperature <= 41.0
        chamber.head = "up"
        assert chamber.head == "up"
    finally:
        chamber.adapter.close()


@pytest.fixture
def lab_with(fixture_path):
    """A lab whose roles use other models: ``lab_with(psu="keysight-e3631a")``."""
    from labctl.fixture import load_fixture
    from labctl.sim.lab import SimulatedLab

    labs = []

    def start(**drivers: str):
        fixture = load_fixture(fixture_path)
        for role, driver in drivers.items():
            fixture.roles[role].driver = driver
        lab = SimulatedLab(fixture).start()
        labs.append(lab)
        return lab

    yield start
    for lab in labs:
        lab.stop()


def test_pymeasure_keysight_e3631a_on_the_e3631a_emulator(lab_with):
    from pymeasure.instruments.keysight import KeysightE3631A

    lab = lab_with(psu="keysight-e3631a")
    psu = KeysightE3631A(lab.addresses["psu"], **VISA)
    try:
        assert psu.id.startswith("HEWLETT-PACKARD,E3631A,")
        psu.ch_1.voltage_setpoint = 5.0
        psu.ch_1.current_limit = 5.0
        psu.ch_1.output_enabled = True  # sent as OUTPut 1, (@1)
        assert psu.ch_1.output_enabled is True  # asked as INST:NSEL 1;:OUTPut?
        assert psu.ch_1.voltage == pytest.approx(5.0, abs=0.01)
        assert 0.5 < psu.ch_1.current < 1.5  # P6V feeds the board
        psu.ch_3.voltage_setpoint = -12.0
        assert psu.ch_3.voltage_setpoint == -12.0
        psu.output_enabled = True  # the global switch
        assert psu.ch_3.voltage == pytest.approx(-12.0, abs=0.01)
        psu.tracking_enabled = True
        assert psu.tracking_enabled is True
        assert psu.check_errors() == []
    finally:
        psu.adapter.close()


def test_pymeasure_34410a_class_on_a_34461a(lab_with):
    lab = lab_with(dmm="keysight-34461a")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        dmm = Agilent34410A(lab.addresses["dmm"], **VISA)
    try:
        assert dmm.id.split(",")[1] == "34461A"
        assert abs(dmm.voltage_dc) < 0.001
    finally:
        dmm.adapter.close()


def test_e3631a_names_its_outputs_resets_to_its_ratings_tracks_and_has_no_protection(lab_with):
    """As the E3631A's own command set: ``INST?`` names the output, *RST sets the current limits
    to 5 A / 1 A / 1 A, N25V follows P25V while tracking, and OVP/OCP commands are not there."""
    import pyvisa

    lab = lab_with(psu="keysight-e3631a")
    psu = pyvisa.ResourceManager("@py").open_resource(lab.addresses["psu"], read_termination="\n",
                                                       write_termination="\n", timeout=2000)
    try:
        psu.write("*RST")
        assert psu.query("INST?") == "P6V"
        psu.write("INST P25V")
        assert psu.query("INST?") == "P25V"
        assert psu.query("INST:NSEL?") == "2"
        amps = [float(psu.query(f"INST:NSEL {n};:CURR?")) for n in (1, 2, 3)]
        assert amps == [5.0, 1.0, 1.0]
        assert float(psu.query("INST:NSEL 1;:CURR? MAX")) == pytest.approx(5.15)  # over-range programmable
        psu.write("OUTP:TRAC ON")
        psu.write("INST:NSEL 2;:VOLT 15")
        assert float(psu.query("INST:NSEL 3;:VOLT?")) == pytest.approx(-15.0)
        psu.write("APPL N25V,-7,0.5")
        assert float(psu.query("INST:NSEL 2;:VOLT?")) == pytest.approx(7.0)
        psu.write("OUTP:TRAC OFF")
        psu.write("INST:NSEL 2;:VOLT 10")
        assert float(psu.query("INST:NSEL 3;:VOLT?")) == pytest.approx(-7.0)
        assert psu.query("SYST:ERR?").startswith("+0")
        assert psu.query("STAT:QUES:INST:ISUM1:COND?") in ("0", "+0")  # the family's per-output summary: off
        for command in ("VOLT:PROT 5", "CURR:PROT:STAT ON", "OUTP:PROT:CLE", "OUTP:PAIR PAR"):
            psu.write(command)
            assert psu.query("SYST:ERR?") == '-113,"Undefined header"', command
    finally:
        psu.close()
