"""DUT variants and instrument faults, configured in the fixture or injected at run time."""

from __future__ import annotations

import os
import socket
import time

import pytest
import pyvisa
import serial

from labctl.errors import FixtureError
from labctl.fixture import load_fixture
from labctl.sim.lab import SimulatedLab
from labctl.sim.testing import isolated_fixture
from tests.integration.sim.conftest import power_on

pytestmark = pytest.mark.timeout(60)


def test_dead_rail_never_asserts_power_good(manual_lab, mvisa, mconsole, clock):
    manual_lab.inject({"fault": "dead_rail", "rail": "VDD_HBM"})
    power_on(mvisa("psu"), clock=clock)
    pg = mconsole.table("power-good")
    assert pg["VDD_HBM"] == "never" and pg["VDD_IO"] != "never"
    assert float(mconsole.table("sensors")["VDD_HBM_V"]) == 0.0
    assert float(mvisa("daq").query("MEAS:VOLT:DC? (@112)")) == pytest.approx(0.0, abs=0.001)


def test_dead_rail_early_in_the_sequence_blocks_the_rails_after_it(manual_lab, mvisa, mconsole, clock):
    manual_lab.inject({"fault": "dead_rail", "rail": "VDD_CORE"})
    power_on(mvisa("psu"), clock=clock)
    pg = mconsole.table("power-good")
    assert pg["VDD_AUX"] != "never"
    assert [pg[r] for r in ("VDD_CORE", "VDD_IO", "VDD_HBM")] == ["never"] * 3
    assert mconsole.cmd("link status")[0].endswith("DETECT_QUIET")


def test_slow_sequencing(manual_lab, mvisa, mconsole, clock):
    manual_lab.inject("slow_sequencing")
    power_on(mvisa("psu"), clock=clock)
    assert float(mconsole.table("power-good")["VDD_HBM"]) > 60.0


def test_noisy_rail_ripple_is_visible_on_the_dmm(manual_lab, mvisa, clock):
    psu, dmm = mvisa("psu"), mvisa("dmm")
    power_on(psu, clock=clock)
    quiet = float(dmm.query("MEAS:VOLT:AC?"))
    manual_lab.inject({"fault": "noisy_rail", "rail": "VDD_CORE", "ripple_mvpp": 60})
    noisy = float(dmm.query("MEAS:VOLT:AC?"))
    assert quiet < 0.003 < 0.015 < noisy


def test_variant_and_faults_come_from_the_fixture_per_serial(tmp_path):
    path = isolated_fixture(tmp_path, dut="SIM-MARG-0003")
    lab = SimulatedLab(load_fixture(path))
    assert lab.dut_serial == "SIM-MARG-0003"
    assert lab.board.params.lanes[2].tempco > 10 * lab.board.params.lanes[0].tempco
    golden = SimulatedLab(load_fixture(path), dut_serial="SIM-GOLD-0002")
    assert golden.board.params.lanes[2].tempco == lab.board.params.lanes[0].tempco


def test_process_variation_is_seeded_per_serial(tmp_path):
    fx = load_fixture(isolated_fixture(tmp_path))
    a1 = SimulatedLab(fx, dut_serial="SIM-POP-0001").board.params
    a2 = SimulatedLab(fx, dut_serial="SIM-POP-0001").board.params
    b = SimulatedLab(fx, dut_serial="SIM-POP-0002").board.params
    assert a1.rail_offset == a2.rail_offset and a1.theta_die == a2.theta_die
    assert a1.rail_offset != b.rail_offset


def test_unknown_faults_and_roles_are_fixture_errors(lab, tmp_path):
    with pytest.raises(FixtureError, match="unknown fault 'melt'"):
        lab.inject("melt")
    with pytest.raises(FixtureError, match="no role 'scope'"):
        lab.inject({"fault": "disconnect", "role": "scope"})
    path = isolated_fixture(tmp_path, duts={"X-1": {"variant": "wobbly"}}, dut="X-1")
    with pytest.raises(FixtureError, match="unknown variant 'wobbly'"):
        SimulatedLab(load_fixture(path))


def test_instrument_timeout_after_n_commands(lab, visa):
    dmm = visa("dmm", timeout=3000)
    lab.inject({"fault": "instrument_timeout", "role": "dmm", "after": 2})
    assert dmm.query("*IDN?").startswith("Keysight")
    dmm.timeout = 300
    with pytest.raises(pyvisa.errors.VisaIOError):
        dmm.query("MEAS:VOLT:DC?")
    lab.clear_faults("dmm")
    dmm.clear()
    dmm.timeout = 3000
    assert dmm.query("*OPC?") == "1"


def test_disconnect_closes_the_socket_once(lab):
    host, port = lab.addresses["bert"].split("::")[1:3]
    lab.inject({"fault": "disconnect", "role": "bert"})
    with socket.create_connection((host, int(port)), timeout=2) as s:
        s.sendall(b"*IDN?\n")
        assert s.recv(100) == b""  # closed by the instrument
    with socket.create_connection((host, int(port)), timeout=2) as s:
        s.sendall(b"*IDN?\n")
        assert s.recv(100).startswith(b"ANRITSU,MP1900A")


def test_persistent_disconnect_refuses_new_connections(lab, visa):
    bert = visa("bert")
    lab.inject({"fault": "disconnect", "role": "bert", "persistent": True})
    with pytest.raises(pyvisa.errors.VisaIOError):
        bert.query("*IDN?")
    host, port = lab.addresses["bert"].split("::")[1:3]
    with socket.create_connection((host, int(port)), timeout=2) as s:
        try:
            s.sendall(b"*IDN?\n")
            reply = s.recv(100)
        except ConnectionResetError:
            reply = b""
        assert reply == b""


def _unplugged(lab, **fault) -> str:
    """Inject a disconnect of the DUT console while a client has it open; its path."""
    path = lab.addresses["dut"]
    port = serial.Serial(path, 115200, timeout=1)
    lab.inject({"fault": "disconnect", "role": "dut", **fault})
    port.write(b"id\n")
    with pytest.raises(serial.SerialException):
        for _ in range(5):
            port.readline()
    port.close()
    return path


def _answers_when_back(path: str) -> None:
    deadline = time.monotonic() + 5
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    with serial.Serial(path, 115200, timeout=2) as again:
        again.write(b"fw\n")
        assert again.readline().startswith(b"fw ")


def test_serial_disconnect_unplugs_and_replugs_the_console(lab):
    _answers_when_back(_unplugged(lab))


def test_a_persistent_serial_disconnect_stays_away_until_the_fault_is_cleared(lab):
    path = _unplugged(lab, persistent=True)
    time.sleep(1.0)  # twice the time a plain disconnect stays away
    assert not os.path.exists(path)
    lab.clear_faults()  # `labctl sim clear`: the adapter is plugged back (it had stayed away until a restart)
    _answers_when_back(path)


def test_garbage_reply_once(lab, visa):
    daq = visa("daq")
    lab.inject({"fault": "garbage_reply", "role": "daq"})
    first = daq.query("MEAS:TEMP? TC,K,(@101)")
    with pytest.raises(ValueError):
        float(first)
    assert float(daq.query("MEAS:TEMP? TC,K,(@101)")) == pytest.approx(25.0, abs=1.0)


def test_scpi_error_fault_puts_an_error_in_the_queue_instead_of_executing(lab, visa):
    psu = visa("psu")
    lab.inject({"fault": "scpi_error", "role": "psu", "match": "OUTP", "code": -221})
    psu.write("VOLT 5,(@1);:OUTP ON,(@1)")
    assert psu.query("SYST:ERR?").startswith('-221,"Settings conflict')
    assert float(psu.query("VOLT? (@1)")) == 5.0  # only the matching command failed
    lab.clear_faults()
    assert psu.query("OUTP? (@1)") == "0"


def test_instrument_faults_from_the_fixture(tmp_path):
    path = isolated_fixture(tmp_path, faults=[{"fault": "scpi_error", "role": "load", "match": "INP"}])
    with SimulatedLab(load_fixture(path)) as lab:
        rm = pyvisa.ResourceManager("@py")
        try:
            load = rm.open_resource(lab.addresses["load"], read_termination="\n", write_termination="\n", timeout=2000)
            load.write("INP ON")
            assert load.query("SYST:ERR?").startswith("-221")
            load.close()
        finally:
            rm.close()


def test_instrument_timeout_with_a_count_recovers_by_itself(lab, visa):
    psu = visa("psu", timeout=300)
    lab.inject({"fault": "instrument_timeout", "role": "psu", "count": 2})
    for _ in range(2):
        with pytest.raises(pyvisa.errors.VisaIOError):
            psu.query("*IDN?")
    psu.timeout = 3000
    assert psu.query("*IDN?").startswith("Keysight Technologies,E36312A")


def test_slow_reply_answers_late(lab, visa):
    psu = visa("psu", timeout=3000)
    lab.inject({"fault": "slow_reply", "role": "psu", "delay": 0.4, "count": 2})
    assert psu.query("*IDN?").startswith("Keysight Technologies,E36312A")  # late, within 3 s
    psu.timeout = 100
    with pytest.raises(pyvisa.errors.VisaIOError):
        psu.query("*OPC?")  # its answer comes after the client gave up


def test_a_rail_that_dies_while_running_drops_at_once(manual_lab, mvisa, mconsole, clock):
    power_on(mvisa("psu"), clock=clock)
    assert float(mconsole.table("sensors")["VDD_IO_V"]) > 0.85
    manual_lab.inject({"fault": "dead_rail", "rail": "VDD_IO"})
    assert mconsole.cmd("link status")[0].endswith("DETECT_QUIET")  # power-good dropped at once
    clock.advance(0.1)  # ten decay time constants of its output capacitance
    assert float(mconsole.table("sensors")["VDD_IO_V"]) < 0.001
