"""Many boards at once on the simulated rack: the issue's "done when" points."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest
import yaml
from slots_support import DATA, chamber_writes, inject, rack, run, scpi, slot_supplies, stored_runs

from labctl.engine.events import MeasurementRecorded, StepStarted
from labctl.errors import ExitCode
from labctl.sim.testing import served_lab


def test_flagship_on_four_slots_one_marginal_lane(tmp_path):
    fx = rack(tmp_path, time_scale=300)  # the flagship's soaks settle on the physics, not on a starved CPU
    db = tmp_path / "r.db"
    with served_lab(fx):
        out = run(fx, "accelerator-evt.yaml", db, slots="1-4", bench_log=tmp_path / "bench.jsonl",
                  duts="SIM-GOLD-0001,SIM-GOLD-0002,SIM-MARG-0003,SIM-GOLD-0004", sets={"soak_hold": "30 s"})
        supplies_off = {slot: scpi(resource, "OUTP? (@1,2,3)") for slot, resource in slot_supplies(fx).items()}
    assert [s.outcome for s in out.slots] == ["passed", "passed", "failed", "passed"]
    assert out.exit_code is ExitCode.FAILED  # the worst outcome
    failed = out.slots[2].result.failures
    assert failed and all("lane 3" in s.message for s in failed)
    # one run record per DUT, each with its slot
    runs = stored_runs(db)
    assert [(slot, outcome) for _id, slot, outcome, _n in runs] == [
        ("1", "passed"), ("2", "passed"), ("3", "failed"), ("4", "passed")]
    # the chamber moved once per corner (and once for the setup's room soak), not once per slot
    setpoints = [text for _slot, _key, text in chamber_writes(db)]
    assert setpoints == ["SETP 25.0", "SETP 0.0", "SETP 25.0", "SETP 45.0"]
    # the chamber's own log (the bench's): the same moves, then its safe temperature when the last slot ended
    bench = [json.loads(line) for line in (tmp_path / "bench.jsonl").read_text().splitlines()]
    moves = [r["text"] for r in bench if r["instrument"] == "chamber" and r["kind"] == "write" and r["text"].startswith("SETP ")]
    assert moves == ["SETP 25.0", "SETP 0.0", "SETP 25.0", "SETP 45.0", "SETP 25.0"]
    assert out.shared_runs == {"setup/chamber_room": 1, "steps/soak@0": 1, "steps/soak@1": 1, "steps/soak@2": 1}
    # each slot's record of a shared soak is the soak its board went through: when it started and
    # how long it took (30 s hold at least, simulated), the same for all, not 0 s at its end
    with sqlite3.connect(db) as c:
        soaks = c.execute("SELECT s.step_key, r.slot, s.started_at, s.duration_sim FROM steps s "
                          "JOIN runs r ON r.id = s.run_id WHERE s.step_key LIKE 'steps/soak@%'").fetchall()
    by_key: dict[str, list[tuple[float, float]]] = {}
    for key, _slot, started, took in soaks:
        by_key.setdefault(key, []).append((started, took))
    assert len(by_key) == 3 and all(len(rows) == 4 for rows in by_key.values()), soaks
    for key, rows in by_key.items():
        assert all(took >= 30 for _s, took in rows), (key, rows)
        assert max(s for s, _t in rows) - min(s for s, _t in rows) < 1e-6, (key, rows)
        assert max(t for _s, t in rows) - min(t for _s, t in rows) < 1e-6, (key, rows)
    # every slot's outputs off afterwards, read back over SCPI; the chamber back at its safe temperature
    assert supplies_off == {slot: "0,0,0" for slot in "1234"}
    assert out.bench_safe_state["chamber"].ok


def test_sixteen_slots_short_plan_loses_nothing(tmp_path):
    fx = rack(tmp_path, "sim-rack.yaml", time_scale=300)
    db = tmp_path / "r.db"
    events: list = []
    out = run(fx, str(DATA / "rails.yaml"), db, events=events)
    assert [s.outcome for s in out.slots] == ["passed"] * 16
    runs = stored_runs(db)
    assert sorted(int(slot) for _id, slot, _o, _n in runs) == list(range(1, 17))
    counts = {slot: n for _id, slot, _o, n in runs}
    # every measurement a slot published is stored, and every slot recorded what one board does
    published = {str(k): 0 for k in range(1, 17)}
    for slot, event in events:
        if isinstance(event, MeasurementRecorded):
            published[slot] += 1
    assert counts == published
    assert len(set(counts.values())) == 1 and min(counts.values()) >= 6
    assert {s.dut for s in out.slots} == {f"SIM-GOLD-{k:04d}" for k in range(1, 17)}


def test_hung_shared_instrument_errors_every_waiting_slot(tmp_path):
    fx = rack(tmp_path, time_scale=120)
    db = tmp_path / "r.db"
    hung = threading.Event()

    def hang_daq_at_rails(_slot, event):
        if isinstance(event, StepStarted) and event.step_id == "rails" and not hung.is_set():
            hung.set()
            inject(fx, {"fault": "instrument_timeout", "role": "daq"})

    with served_lab(fx):
        out = run(fx, str(DATA / "rails.yaml"), db, lease_timeout=2.0, subscriber=hang_daq_at_rails)
        supplies_off = {slot: scpi(resource, "OUTP? (@1,2,3)") for slot, resource in slot_supplies(fx).items()}
    assert hung.is_set()
    for s in out.slots:
        assert s.outcome == "error", (s.slot, s.message)
        rails = next(r for r in s.result.steps if r.step_id == "rails")
        assert "daq" in rails.message
    waited = [s for s in out.slots if "waited 2 s for the shared daq" in s.message]
    assert waited, [s.message for s in out.slots]
    # every slot still reached its own safe state: supply outputs off, read back
    assert supplies_off == {slot: "0,0,0" for slot in "1234"}
    assert out.exit_code is ExitCode.ERROR


@pytest.mark.parametrize("bad, message", [
    ("--slots 1-9", "no slot '9'"),
    ("--slots 3-1", "runs backwards"),
    ("--dut A,B", "2 serial(s) for 4 slot(s)"),
])
def test_bad_slot_selection_is_refused(labctl, tmp_path, bad, message):
    fx = rack(tmp_path)
    args = bad.split()
    if args[0] == "--dut":
        args += ["--slots", "all"]
    res = labctl("run", str(DATA / "rails.yaml"), "--fixture", str(fx), "--db", str(tmp_path / "r.db"), *args)
    assert res.returncode == 4, res.stdout + res.stderr
    assert message in res.stderr and "Traceback" not in res.stderr


def test_slots_on_a_fixture_without_slots(labctl, tmp_path):
    res = labctl("run", "smoke.yaml", "--slots", "all", "--db", str(tmp_path / "r.db"))
    assert res.returncode == 4
    assert "has no slots" in res.stderr


def test_a_board_in_the_wrong_slot_refuses_that_slot_only(tmp_path):
    fx = rack(tmp_path, time_scale=120)
    out = run(fx, str(DATA / "rails.yaml"), tmp_path / "r.db",
              duts="SIM-GOLD-0002,SIM-GOLD-0001,SIM-MARG-0003,SIM-GOLD-0004")
    assert [s.outcome for s in out.slots] == ["error", "error", "passed", "passed"]
    assert "slot 1: the board reports serial SIM-GOLD-0001, not SIM-GOLD-0002" in out.slots[0].message
    assert out.slots[0].result is None  # nothing was powered there: no run record
    assert [slot for _id, slot, _o, _n in stored_runs(tmp_path / "r.db")] == ["3", "4"]
    assert out.exit_code is ExitCode.ERROR


def test_two_slots_binding_one_supply_are_refused(labctl, tmp_path):
    fx = rack(tmp_path)
    data = yaml.safe_load(fx.read_text())
    first = data["slots"][0]["roles"]["psu"]["resource"]  # TCPIP0::127.0.0.1::PORT::SOCKET
    for spelled in (first, first.replace("TCPIP0::127.0.0.1", "TCPIP::localhost")):
        data["slots"][1]["roles"]["psu"]["resource"] = spelled
        fx.write_text(yaml.safe_dump(data))
        for args in (("validate", str(fx)),
                     ("run", str(DATA / "rails.yaml"), "--fixture", str(fx), "--slots", "all", "--db", str(tmp_path / "r.db"))):
            res = labctl(*args)
            assert res.returncode == 4, res.stdout + res.stderr
            assert f"slot 2's psu at {spelled} is the instrument slot 1 binds too" in res.stdout + res.stderr
    # nor may a slot bind the shared DAQ as an instrument of its own
    data["slots"][1]["roles"]["psu"]["resource"] = data["roles"]["daq"]["resource"]
    fx.write_text(yaml.safe_dump(data))
    res = labctl("validate", str(fx))
    assert res.returncode == 4 and "is the station's shared daq too" in res.stdout + res.stderr


def test_eight_slots_into_postgresql(tmp_path):
    """A lab's central database: every slot's run and measurements, written at once."""
    from labctl.store import open_store, query
    from labctl.store.testing import temporary_database

    fx = rack(tmp_path, "sim-rack.yaml", time_scale=300)
    with temporary_database("postgresql", tmp_path) as url:
        out = run(fx, str(DATA / "rails.yaml"), url, slots="1-8")
        store = open_store(url, mark_interrupted=False)
        try:
            runs = {s.slot: query.measurements(store, s.result.run_id) for s in out.slots}
        finally:
            store.close()
    assert [s.outcome for s in out.slots] == ["passed"] * 8
    counts = {slot: len(df) for slot, df in runs.items()}
    assert len(set(counts.values())) == 1 and counts["1"] >= 6, counts


def test_junit_of_a_rack_run_is_a_file_per_slot_and_the_table_still_prints(labctl, tmp_path):
    """docs/slots.md: `--junit R.xml` writes one file per slot (R-slot1.xml …). It crashed with
    a TypeError after every slot had run: no file, no table, exit 1 whatever the slots did."""
    from junitparser import JUnitXml

    fx = rack(tmp_path, time_scale=120)
    out = tmp_path / "out" / "R.xml"
    out.parent.mkdir()
    res = labctl("run", str(DATA / "rails.yaml"), "--fixture", str(fx), "--slots", "1,2", "--db",
                 str(tmp_path / "r.db"), "--junit", str(out), timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Traceback" not in res.stderr and "results: 2 run(s)" in res.stdout
    for slot in ("1", "2"):
        xml = JUnitXml.fromfile(str(out.with_name(f"R-slot{slot}.xml")))
        [suite] = list(xml)
        props = {p.name: p.value for p in suite.properties()}
        assert props["run_outcome"] == "passed" and suite.tests > 0, slot
