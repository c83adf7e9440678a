"""Hardware protection that outlives labctl (issue 9, point 6): before a supply output goes on,
labctl programs the supply's own OVP/OCP and records it; the simulated E36312A honours trips
as the manual says. Read back with an independent pyvisa client."""

from __future__ import annotations

import os
import sqlite3
import time

import pytest
import pyvisa

from labctl.fixture import load_fixture
from labctl.instruments import open_station
from labctl.sim.lab import SimulatedLab
from labctl.sim.testing import isolated_fixture


@pytest.fixture
def bench(tmp_path):
    fx = isolated_fixture(tmp_path, time_scale=600)
    with SimulatedLab(load_fixture(fx)) as lab, open_station(fx) as station:
        inst = pyvisa.ResourceManager("@py").open_resource(lab.addresses["psu"], read_termination="\n",
                                                           write_termination="\n", timeout=3000)
        try:
            yield station, inst
        finally:
            inst.close()


def test_switching_on_programs_ovp_and_ocp_first(bench):
    station, scpi = bench
    psu = station.role("psu")
    psu.set_current_limit("1", 4.0)
    psu.set_voltage("1", 5.0)
    psu.set_output("1", True)
    assert psu.output("1") is True  # orders the station's writes before the independent read
    assert float(scpi.query("VOLT:PROT? (@1)")) == pytest.approx(5.7)  # 5 V x 1.1 + 0.2 V
    assert scpi.query("CURR:PROT:STAT? (@1)") == "1"
    assert psu.protection("1") == {"ovp_level": pytest.approx(5.7), "ocp_delay": 0.0, "ocp_enabled": True,
                                    "current_limit": 4.0}


def test_plan_ovp_and_ocp_off_are_programmed_as_asked(bench):
    station, scpi = bench
    psu = station.role("psu")
    psu.set_voltage("1", 5.0)
    psu.set_protection("1", ovp=6.2, ocp=False)
    psu.set_output("1", True)
    assert psu.output("1") is True  # orders the station's writes before the independent read
    assert float(scpi.query("VOLT:PROT? (@1)")) == pytest.approx(6.2)
    assert scpi.query("CURR:PROT:STAT? (@1)") == "0"


def test_an_ovp_trip_turns_the_output_off_until_cleared_and_switched_on(bench):
    station, scpi = bench
    psu = station.role("psu")
    psu.set_voltage("1", 5.0)
    psu.set_output("1", True)
    # the station's writes are not ordered against another connection's queries: a query on
    # the station's own connection first (the emulator answers it after the writes before it)
    assert psu.output("1") is True
    assert scpi.query("OUTP? (@1)") == "1"
    scpi.write("VOLT 6,(@1)")  # a runaway setpoint (or a frozen labctl and a slip of the hand)
    assert scpi.query("VOLT:PROT:TRIP? (@1)") == "1"
    assert scpi.query("OUTP? (@1)") == "0"
    assert float(scpi.query("MEAS:VOLT? (@1)")) == pytest.approx(0.0, abs=0.01)
    scpi.write("OUTP 1,(@1)")  # cannot come back on while tripped
    assert scpi.query("OUTP? (@1)") == "0"
    scpi.write("VOLT 5,(@1)")
    scpi.write("OUTP:PROT:CLE (@1)")
    assert scpi.query("VOLT:PROT:TRIP? (@1)") == "0"
    assert scpi.query("OUTP? (@1)") == "0", "a cleared trip leaves the output off"
    scpi.write("OUTP 1,(@1)")
    assert scpi.query("OUTP? (@1)") == "1"


def test_an_ocp_trip_at_the_current_limit_turns_the_output_off(bench):
    station, scpi = bench
    psu = station.role("psu")
    psu.set_voltage("1", 5.0)
    psu.set_current_limit("1", 0.3)  # the idle board draws about 1 A
    psu.set_output("1", True)
    for _ in range(100):  # the board's rails come up and its draw rises past the limit
        if scpi.query("CURR:PROT:TRIP? (@1)") == "1":
            break
        time.sleep(0.02)
    assert scpi.query("CURR:PROT:TRIP? (@1)") == "1"
    assert scpi.query("OUTP? (@1)") == "0"
    assert psu.protection_tripped("1") is True


def test_a_run_records_the_protection_it_programmed(labctl, tmp_path):
    fx = isolated_fixture(tmp_path, time_scale=600)
    db = tmp_path / "r.db"
    res = labctl("run", "smoke.yaml", "--fixture", str(fx), "--db", str(db), timeout=300,
                 env={**os.environ, "COLUMNS": "300"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "ovp_level (rail=VIN) = 5.7 V" in res.stdout
    rows = dict(sqlite3.connect(db).execute(
        "select name, value from measurements where name in ('ovp_level', 'ocp_current', 'ocp_delay')").fetchall())
    assert rows == {"ovp_level": pytest.approx(5.7), "ocp_current": 5.0, "ocp_delay": 0.0}
    logs = [m for (m,) in sqlite3.connect(db).execute("select message from logs")]
    assert "VIN: supply protection programmed before switching on: OVP 5.7 V, OCP on at 5 A, no delay, current limit 5 A" in logs
