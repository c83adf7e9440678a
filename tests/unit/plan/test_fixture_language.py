"""The fixture (station) language: shape, channel maps, drivers, resources, with positions."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from labctl.errors import FixtureError
from labctl.fixture import load_fixture
from labctl.fixture.loader import FixtureErrors, check_fixture_file

ROOT = Path(__file__).resolve().parents[3]

GOOD = """\
station: bench-7
roles:
  psu:
    driver: keysight-e36312a
    resource: TCPIP0::192.168.10.21::5025::SOCKET
    timeout: 2 s
    asset: {serial: MY1, calibration_due: 2099-01-31}
  daq:
    driver: keysight-daq970a
    resource: USB0::0x2A8D::0x5101::MY58012345::INSTR
  dut:
    driver: accel-console
    resource: /dev/ttyUSB0
    options: {baud_rate: 115200}
channels:
  VIN: psu@(@1)
  VDD_CORE: daq@(@111)
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "f.yaml"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def test_sim_bench_loads():
    fx = load_fixture(ROOT / "fixtures" / "sim-bench.yaml")
    assert fx.station == "sim-bench-1"
    assert set(fx.roles) == {"psu", "load", "dmm", "daq", "bert", "chamber", "dut"}
    assert str(fx.channel("VDD_CORE")) == "daq@(@111)"


def test_builtin_fixture_found_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_fixture("sim-bench.yaml").station == "sim-bench-1"
    assert load_fixture("fixtures/sim-bench.yaml").station == "sim-bench-1"


def test_real_bench_shapes_are_accepted(tmp_path):
    fx, errors, warnings = check_fixture_file(write(tmp_path, GOOD))
    assert errors == [] and warnings == []
    assert fx.roles["dut"].is_serial_path


@pytest.mark.parametrize(
    ("replace", "by", "expected"),
    [
        ("driver: keysight-e36312a", "driver: keysight-e36312",
         "4:13: no driver profile 'keysight-e36312' for role psu; did you mean 'keysight-e36312a'?"),
        ("resource: /dev/ttyUSB0", "resource: ttyUSB0",
         "13:15: resource 'ttyUSB0' of role dut is neither a pyvisa resource string nor a serial device path"),
        ("192.168.10.21::5025::SOCKET", "192.168.10.21::99999::SOCKET",
         "5:15: resource 'TCPIP0::192.168.10.21::99999::SOCKET' of role psu: port 99999 is not a TCP port"),
        ("timeout: 2 s", "timeout: 2 V",
         "6:14: timeout of role psu: 2 V is a voltage, expected a time (e.g. 90 s, 5 min, 2 ms)"),
        ("VDD_CORE: daq@(@111)", "VDD_CORE: dqa@(@111)",
         "17:13: channel VDD_CORE: no role 'dqa' in this station; did you mean 'daq'?"),
        ("VIN: psu@(@1)", "VIN: psu",
         "16:8: channel reference 'psu' must look like ROLE@CHANNEL, e.g. daq@(@101)"),
        ("    timeout: 2 s\n", "    timout: 2 s\n",
         "6:5: unknown key 'timout' in psu; did you mean 'timeout'?"),
        ("station: bench-7\n", "stations: bench-7\n",
         "1:1: unknown key 'stations' in the fixture; did you mean 'station'?"),
    ],
)
def test_fixture_mistakes_are_located(tmp_path, replace, by, expected):
    text = GOOD.replace(replace, by)
    assert text != GOOD
    path = write(tmp_path, text)
    _, errors, _ = check_fixture_file(path)
    got = [f"{e.line}:{e.column}: {e.message}" for e in errors]
    assert expected in got
    assert all(e.file == str(path) for e in errors)


def test_missing_station_and_several_errors_at_once(tmp_path):
    path = write(tmp_path, GOOD.replace("station: bench-7\n", "").replace("2 s", "fast"))
    with pytest.raises(FixtureErrors) as e:
        load_fixture(path)
    assert isinstance(e.value, FixtureError) and e.value.exit_code == 4
    assert len(e.value.errors) == 2
    assert "missing required key 'station'" in e.value.format()


def test_overdue_calibration_is_a_warning(tmp_path):
    path = write(tmp_path, GOOD.replace("2099-01-31", "2001-01-31"))
    fx, errors, warnings = check_fixture_file(path)
    assert errors == [] and fx is not None
    assert warnings == [f"{path}:7:43: calibration of psu (keysight-e36312a) was due 2001-01-31"]


def test_bad_yaml_in_fixture(tmp_path):
    path = write(tmp_path, "station: x\nroles:\n  psu: {driver: a\n")
    with pytest.raises(FixtureError) as e:
        load_fixture(path)
    assert e.value.line == 4 and e.value.message.startswith("bad YAML")


def test_roles_get_profiles_of_the_right_kind_and_channels_exist(tmp_path):
    text = (GOOD.replace("driver: keysight-e36312a", "driver: keysight-34465a")
            .replace("VDD_CORE: daq@(@111)", "VDD_CORE: daq@(@411)\n  LANE9: dut@9"))
    path = write(tmp_path, text)
    _, errors, _ = check_fixture_file(path)
    got = [f"{e.line}:{e.column}: {e.message}" for e in errors]
    assert got == [
        "4:13: role psu needs a power supply but keysight-34465a is a multimeter",
        "17:13: channel VDD_CORE: keysight-daq970a has no channel '(@411)'",
        "18:10: channel LANE9: accel-console has no channel '9'",
    ]
    assert errors[2].hint == "its channels: 1, 2, 3, 4, 5, 6, 7, 8"
