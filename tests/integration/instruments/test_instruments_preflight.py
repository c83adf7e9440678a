"""Station pre-flight against the simulated lab: passes, and says something useful for each
way a bench goes wrong."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from labctl.instruments.preflight import preflight

pytestmark = pytest.mark.timeout(120)


def copy(fixture):
    return fixture.model_copy(deep=True)


def test_preflight_passes_on_the_simulated_lab(sim_fixture, lab):
    report = preflight(sim_fixture)
    assert report.ok, [(r.role, r.detail) for r in report.rows]
    assert [r.role for r in report.rows] == list(sim_fixture.roles)
    psu = report.row("psu")
    assert psu.identity.startswith("Keysight Technologies,E36312A,MY59002391")
    assert "console id: serial" in report.row("dut").detail


def test_instrument_not_running(sim_fixture, lab):
    from labctl.sim.testing import free_ports

    fixture = copy(sim_fixture)
    dead = f"TCPIP0::127.0.0.1::{free_ports(1)[0]}::SOCKET"
    fixture.roles["dmm"].resource = dead
    fixture.roles["chamber"].resource = "/nonexistent/labctl/chamber"
    report = preflight(fixture)
    assert not report.ok
    assert "nothing listens at this address" in report.row("dmm").detail
    assert f"(at {dead})" in report.row("dmm").detail  # the line says where it looked
    assert "no such serial device" in report.row("chamber").detail
    assert report.row("psu").status == "ok", "the others are still checked"


def test_wrong_model_answering(sim_fixture, lab):
    fixture = copy(sim_fixture)
    fixture.roles["psu"].driver = "rigol-dp832"  # the bench has a Keysight there
    report = preflight(fixture)
    row = report.row("psu")
    assert row.status == "fail"
    assert "wrong model: profile rigol-dp832 expects DP83[12]A?, the instrument says Keysight Technologies E36312A" in row.detail


def test_serial_differs_from_the_asset_record(sim_fixture, lab):
    fixture = copy(sim_fixture)
    fixture.roles["dmm"].asset.serial = "MY00000000"
    row = preflight(fixture).row("dmm")
    assert row.status == "fail"
    assert "serial MY59008389 does not match the fixture's asset serial MY00000000" in row.detail


def test_expired_and_soon_due_calibration(sim_fixture, lab):
    today = dt.date(2027, 10, 1)  # the sim bench is due 2027-09-30
    report = preflight(sim_fixture, today=today)
    assert not report.ok
    assert "calibration expired on 2027-09-30" in report.row("psu").detail
    allowed = preflight(sim_fixture, today=today, allow_expired=True)
    assert allowed.ok and allowed.row("psu").status == "warn"
    soon = preflight(sim_fixture, today=dt.date(2027, 9, 20), days=30)
    assert soon.ok and "calibration due in 10 days" in soon.row("daq").detail
    assert soon.row("dut").status == "ok", "the DUT console has no calibration date"


def test_error_queue_not_empty(sim_fixture, lab, station):
    station.driver("load").write("NOT:A:COMMAND")
    report = preflight(sim_fixture, station=station)
    row = report.row("load")
    assert row.status == "fail"
    assert 'error queue not empty: -113 "Undefined header"' in row.detail


def test_chamber_error_word_is_reported(sim_fixture, lab, station):
    station.driver("chamber").write("BOGUS 1")  # the ATS flags CME in *ESR?
    row = preflight(sim_fixture, station=station).row("chamber")
    assert row.status == "fail" and "command error" in row.detail


def test_cli_check_starts_the_simulated_lab_when_nothing_serves(tmp_path, labctl):
    from labctl.sim.testing import isolated_fixture

    path = isolated_fixture(tmp_path)
    res = labctl("instruments", "check", "--fixture", str(path), "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    out = json.loads(res.stdout)
    assert out["ok"] and any("started the simulated lab" in n for n in out["notes"])
    assert {r["role"] for r in out["roles"]} == {"psu", "load", "dmm", "daq", "bert", "chamber", "dut"}


def test_cli_check_table_and_exit_code_on_a_problem(tmp_path, labctl):
    from labctl.sim.testing import isolated_fixture

    path = isolated_fixture(tmp_path)
    text = path.read_text().replace("2027-09-30", "2020-01-01", 1)
    path.write_text(text)
    res = labctl("instruments", "check", "--fixture", str(path))
    assert res.returncode == 2
    assert "Pre-flight of station sim-bench-1" in res.stdout
    assert "pre-flight failed for psu" in res.stdout
    assert "psu: calibration expired on 2020-01-01" in res.stdout
    assert "Traceback" not in res.stderr


def test_cli_check_bad_fixture_exits_4(tmp_path, labctl):
    from labctl.sim.testing import isolated_fixture

    path = isolated_fixture(tmp_path)
    path.write_text(path.read_text().replace("driver: keysight-34465a", "driver: keysight-9999z"))
    res = labctl("instruments", "check", "--fixture", str(path), "--no-sim")
    assert res.returncode == 4
    assert "keysight-9999z" in res.stderr and "no driver profile" in res.stderr
    assert "Traceback" not in res.stderr


def test_cli_identify_and_scan(sim_fixture, lab, labctl):
    res = labctl("instruments", "identify", sim_fixture.roles["daq"].resource)
    assert res.returncode == 0, res.stderr
    assert "model:        DAQ970A" in res.stdout and "profile:      keysight-daq970a" in res.stdout
    res = labctl("instruments", "scan", "--no-list", "--timeout", "0.5",
                 "-r", sim_fixture.roles["psu"].resource, "-r", sim_fixture.roles["chamber"].resource)
    assert res.returncode == 0, res.stderr
    flat = res.stdout.replace("\n", " ")
    assert "keysight-e36312a" in flat and "intest-ats545" in flat


def test_cli_identify_nothing_answering_exits_2(labctl):
    from labctl.sim.testing import free_ports

    res = labctl("instruments", "identify", f"TCPIP0::127.0.0.1::{free_ports(1)[0]}::SOCKET", "--timeout", "0.5")
    assert res.returncode == 2
    assert "no answer: cannot open connection" in res.stderr and "Traceback" not in res.stderr


def test_cli_check_writes_the_session_log(tmp_path, labctl):
    from labctl.instruments.sessionlog import SessionLog
    from labctl.sim.testing import isolated_fixture

    path = isolated_fixture(tmp_path)
    log = tmp_path / "session.jsonl"
    res = labctl("instruments", "check", "--fixture", str(path), "--log", str(log))
    assert res.returncode == 0, res.stdout + res.stderr
    records = SessionLog.read_jsonl(log)
    assert {"psu", "dut"} <= {r["instrument"] for r in records}
    assert any(r["kind"] == "query" and r["text"] == "*IDN?" for r in records)


def test_hung_instrument_is_reported_not_waited_for(sim_fixture, lab):
    fixture = copy(sim_fixture)
    fixture.roles["daq"].timeout = "500 ms"
    lab.inject({"fault": "instrument_timeout", "role": "daq"})
    report = preflight(fixture)
    row = report.row("daq")
    assert row.status == "fail"
    assert "no answer within 0.5 s (command '*IDN?')" in row.detail
    assert report.row("dmm").status == "ok"


def test_a_check_and_the_tui_keep_off_a_bench_a_run_is_driving(tmp_path, labctl):
    """A pre-flight drains every error queue: during a run those errors are the run's. Both the
    CLI check (refused, exit 2, the holder named) and the TUI's station poll (not polled, said
    so) leave a locked bench alone."""
    from labctl.fixture import load_fixture
    from labctl.instruments.benchlock import bench_lock
    from labctl.sim.testing import isolated_fixture
    from labctl.tui.status import poll_station

    path = isolated_fixture(tmp_path)
    fixture = load_fixture(str(path))
    with bench_lock(fixture, slots=()):  # what a `labctl run` holds
        res = labctl("instruments", "check", "--fixture", str(path))
        assert res.returncode == 2, res.stdout + res.stderr
        assert "is in use by process" in res.stdout + res.stderr
        assert re.search(r"since \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC", res.stdout + res.stderr)  # one zone for all
        assert "Traceback" not in res.stdout + res.stderr
        status = poll_station(fixture)
        assert status.instruments == ()
        assert status.problems and status.problems[0].startswith("bench in use, not polled: ")
    res = labctl("instruments", "check", "--fixture", str(path))  # free again
    assert res.returncode == 0, res.stdout + res.stderr


def test_cli_check_prints_what_instruments_answer_as_text(tmp_path, labctl):
    """A serial number with brackets in it, as the instrument's *IDN? answers it (the simulated
    DMM takes its asset's): printed as it came, not read as rich markup (the closing tag in it
    ended `labctl instruments check` with a traceback)."""
    from labctl.sim.testing import isolated_fixture

    path = isolated_fixture(tmp_path)
    path.write_text(path.read_text().replace("MY59008389", "'MY[/b]89'"))
    res = labctl("instruments", "check", "--fixture", str(path))
    assert "Traceback" not in res.stderr, res.stderr
    assert res.returncode == 0, res.stdout + res.stderr
    dmm = next(line for line in res.stdout.splitlines() if "keysight-34465a" in line)
    assert "│ MY[/b]89 " in dmm, res.stdout
    import yaml

    from labctl.sim.testing import served_lab

    dmm = yaml.safe_load(path.read_text())["roles"]["dmm"]["resource"]
    with served_lab(path):
        res = labctl("instruments", "scan", "--no-list", "--timeout", "0.5", "-r", dmm)
    assert "Traceback" not in res.stderr and res.returncode == 0, res.stdout + res.stderr
    assert "MY[/b]89" in res.stdout, res.stdout


def test_identify_and_errors_show_terminal_commands_in_what_came_as_escapes(tmp_path, labctl):
    """An *IDN? serial holding a terminal's title-setting sequence (the simulated DMM answers its
    asset's serial): `labctl instruments identify` prints it as escapes, never to the terminal
    as it came; so does the one-line error of any command that quotes what it was given."""
    import yaml

    from labctl.sim.testing import isolated_fixture, served_lab

    path = isolated_fixture(tmp_path)
    path.write_text(path.read_text().replace("MY59008389", '"MY\\e]0;PWNED\\a89"'))
    dmm = yaml.safe_load(path.read_text())["roles"]["dmm"]["resource"]
    with served_lab(path):
        res = labctl("instruments", "identify", dmm)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "serial:       MY\\x1b]0;PWNED\\x0789" in res.stdout, res.stdout
    assert "\x1b" not in res.stdout + res.stderr and "\x07" not in res.stdout
    from labctl.store import open_store

    open_store(str(tmp_path / "r.db")).close()
    res = labctl("runs", "show", "\x1b[2Jr-1", "--db", str(tmp_path / "r.db"))
    assert res.returncode != 0 and "\\x1b[2Jr-1" in res.stderr, res.stderr
    assert "\x1b" not in res.stderr
