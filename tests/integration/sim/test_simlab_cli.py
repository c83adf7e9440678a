"""``labctl sim serve`` as a user runs it: addresses printed, reachable, clean stop."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
import pyvisa
import yaml

from labctl.sim.testing import isolated_fixture

pytestmark = pytest.mark.timeout(90)


def serve(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "labctl", "sim", "serve", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_until(proc: subprocess.Popen, marker: str, limit: int = 20) -> list[str]:
    lines = []
    for _ in range(limit):
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if marker in line:
            break
    return lines


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_serve_prints_addresses_serves_and_stops_cleanly(tmp_path, sig):
    path = isolated_fixture(tmp_path)
    roles = yaml.safe_load(path.read_text())["roles"]
    proc = serve("--fixture", str(path), "--dut", "SIM-GOLD-0002")
    try:
        lines = read_until(proc, roles["dut"]["resource"])
        text = "\n".join(lines)
        assert "DUT SIM-GOLD-0002" in text and "time x60" in text
        for binding in roles.values():
            assert binding["resource"] in text
        rm = pyvisa.ResourceManager("@py")
        try:
            psu = rm.open_resource(roles["psu"]["resource"], read_termination="\n",
                                   write_termination="\n", timeout=3000)
            assert psu.query("*IDN?").startswith("Keysight Technologies,E36312A")
            psu.close()
        finally:
            rm.close()
        proc.send_signal(sig)
        assert proc.wait(timeout=20) == 0
        assert "stopped" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def test_serve_twice_on_the_same_ports_fails_cleanly(tmp_path):
    path = isolated_fixture(tmp_path)
    first = serve("--fixture", str(path))
    try:
        read_until(first, "dut")
        second = subprocess.run([sys.executable, "-m", "labctl", "sim", "serve", "--fixture", str(path)],
                                capture_output=True, text=True, timeout=30)
        assert second.returncode == 2
        assert "cannot serve role psu" in second.stderr and "Traceback" not in second.stderr
    finally:
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=20) == 0


def test_serve_with_a_missing_fixture_exits_4(tmp_path):
    res = subprocess.run([sys.executable, "-m", "labctl", "sim", "serve", "--fixture", str(tmp_path / "nope.yaml")],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 4
    assert "nope.yaml" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("scale", ["1e9", "0.0001", "0"])
def test_serve_refuses_a_time_scale_the_fixture_could_not_hold(tmp_path, scale):
    """--time-scale lies in sim.time_scale's range (0.001 to 10000), as docs/fixtures.md says."""
    path = isolated_fixture(tmp_path)
    res = subprocess.run([sys.executable, "-m", "labctl", "sim", "serve", "--fixture", str(path), "--time-scale", scale],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 4, res.stdout + res.stderr
    assert "must lie between 0.001 and 10000" in res.stderr and "Traceback" not in res.stderr


def labctl_sim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "labctl", "sim", *args], capture_output=True, text=True, timeout=60)


def test_steer_a_served_lab_state_inject_dut_clear(tmp_path):
    import json

    path = isolated_fixture(tmp_path)
    proc = serve("--fixture", str(path))
    try:
        assert any("control" in line for line in read_until(proc, "control"))
        res = labctl_sim("state", "--fixture", str(path), "--json")
        assert res.returncode == 0, res.stderr
        state = json.loads(res.stdout)
        assert state["dut"] == "SIM-GOLD-0001" and state["powered"] is False
        res = labctl_sim("inject", "--fixture", str(path), "scpi_error", "role=psu", "match=OUTP", "code=-221")
        assert res.returncode == 0, res.stderr
        assert "psu: scpi_error" in res.stdout
        res = labctl_sim("inject", "--fixture", str(path), "instrument_timeout", "role=dmm", "after=5")
        assert "dmm: instrument_timeout" in res.stdout
        res = labctl_sim("dut", "--fixture", str(path), "SIM-MARG-0003", "--json")
        assert json.loads(res.stdout)["dut"] == "SIM-MARG-0003"
        res = labctl_sim("state", "--fixture", str(path))
        head = res.stdout.splitlines()[0]
        assert head.startswith("DUT SIM-MARG-0003 (marginal_lane): off, VIN 0.000 V"), res.stdout
        assert "golden" not in res.stdout and "board faults: marginal_lane" in res.stdout
        assert "instrument faults: none" in res.stdout  # a new DUT comes with its own (none here)
        res = labctl_sim("clear", "--fixture", str(path), "--json")
        assert json.loads(res.stdout)["faults"] == {}
        res = labctl_sim("inject", "--fixture", str(path), "melt")
        assert res.returncode == 2 and "unknown fault 'melt'" in res.stderr
        res = labctl_sim("inject", "--fixture", str(path), "dead_rail", "VDD_IO")
        assert res.returncode == 4 and "KEY=VALUE" in res.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0


def test_state_without_a_served_lab_is_one_clean_line(tmp_path):
    res = labctl_sim("state", "--fixture", str(isolated_fixture(tmp_path)))
    assert res.returncode == 2
    assert "no simulated lab is serving here" in res.stderr and "Traceback" not in res.stderr


def test_a_board_fault_injected_again_replaces_its_parameters_and_clear_removes_it(tmp_path):
    """`labctl sim inject hot_spot` twice is one hot spot (not θ × 1.4²); a new factor replaces
    the old one; `labctl sim clear` gives back the golden board. Judged on the loaded die's
    settled temperature (12 simulated minutes at x600 between readings)."""
    import json
    import time

    import serial

    from labctl.fixture import load_fixture

    path = isolated_fixture(tmp_path, time_scale=600)
    roles = load_fixture(path).roles
    proc = serve("--fixture", str(path))
    rm = pyvisa.ResourceManager("@py")
    try:
        assert any("control" in line for line in read_until(proc, "control"))
        psu = rm.open_resource(roles["psu"].resource, read_termination="\n", write_termination="\n", timeout=5000)
        psu.write("VOLT 5,(@1);CURR 5,(@1);:OUTP ON,(@1)")
        assert psu.query("OUTP? (@1)") == "1"
        time.sleep(0.1)
        with serial.Serial(roles["dut"].resource, 115200, timeout=5) as con:
            con.write(b"load stress 100\n")
            assert con.readline() == b"OK\n"

        def settled(*steer: str) -> tuple[float, list[str]]:
            if steer:
                res = labctl_sim(*steer, "--fixture", str(path))
                assert res.returncode == 0, res.stderr
            time.sleep(1.2)  # 12 simulated minutes: settled
            state = json.loads(labctl_sim("state", "--fixture", str(path), "--json").stdout)
            return state["temperatures"]["die"], state["dut_faults"]

        golden, faults = settled()
        assert faults == []
        once, faults = settled("inject", "hot_spot", "factor=1.4")
        assert faults == ["hot_spot"] and once > golden + 3.0
        twice, faults = settled("inject", "hot_spot", "factor=1.4")
        assert twice == pytest.approx(once, abs=0.2)  # the same hot spot, not a second one on top
        assert faults == ["hot_spot"]
        milder, _ = settled("inject", "hot_spot", "factor=1.2")
        assert golden + 1.0 < milder < once - 1.0  # the new factor replaced the old one
        cleared, faults = settled("clear")
        assert faults == [] and cleared == pytest.approx(golden, abs=0.2)
        psu.close()
    finally:
        rm.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
