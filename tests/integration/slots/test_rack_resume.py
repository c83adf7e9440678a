"""A many-slot run killed with ``kill -9`` resumes slot by slot, all together: each slot's run
in its own record, on its own instruments, the shared soaks still run once for every slot,
and the verdict each run would have had uninterrupted (3 passed, the marginal board failed)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

from slots_support import rack, scpi, slot_supplies

from labctl.engine.replay import REPLAY_TAG
from labctl.sim.testing import served_lab
from labctl.store import open_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from engine_support import RunProcess  # noqa: E402

FLAGSHIP = "accelerator-evt.yaml"
CUT = "steps/under_load@1"  # the second corner's load step, after its shared soak


def _sessions(db: Path) -> dict[str, tuple[str, str, int]]:
    """run id -> (slot, outcome, sessions)."""
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT id, slot, outcome, sessions FROM runs").fetchall()
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def _measurements(db: Path, run_id: str) -> Counter:
    """(logical step, name, labels) -> how many times it is stored."""
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT s.step_key, m.name, m.labels FROM measurements m JOIN steps s ON s.id = m.step_ref "
                         "WHERE m.run_id = ?", (run_id,)).fetchall()
    return Counter((key.rsplit("#", 1)[0], name, labels) for key, name, labels in rows)


def test_kill_9_during_a_four_slot_run_then_resume_every_slot(tmp_path):
    fx = rack(tmp_path, time_scale=300)  # the soaks settle on the physics, not on a starved CPU
    db = tmp_path / "r.db"
    sets = ["--set", "soak_hold=30 s"]
    with served_lab(fx):
        run = RunProcess("run", FLAGSHIP, "--fixture", str(fx), "--slots", "all", "--db", str(db), "--json", *sets)
        runs: dict[str, str] = {}  # slot -> run id
        while True:
            event = json.loads(run.wait_for('"event"', timeout=240))
            if event["event"] == "RunStarted":
                runs[event["slot"]] = event["run_id"]
            if event["event"] == "StepStarted" and event["step_key"] == f"{CUT}#1":
                break
            assert event["event"] != "RunEnded", run.output
        run.proc.send_signal(signal.SIGKILL)
        run.proc.wait(timeout=30)
        assert sorted(runs) == ["1", "2", "3", "4"]
        before = {rid: _measurements(db, rid) for rid in runs.values()}
        store = open_store(str(db))  # marks the dead process's runs interrupted
        try:  # what `labctl resume --rack RUN` resumes: every interrupted run of that rack run
            assert store.rack_runs(runs["3"]) == [runs[slot] for slot in "1234"]
        finally:
            store.close()

        resumed = subprocess.run([sys.executable, "-m", "labctl", "resume", *runs.values(), "--fixture", str(fx),
                                  "--db", str(db)], capture_output=True, text=True, timeout=600)
        supplies = {slot: scpi(resource, "OUTP? (@1,2,3)") for slot, resource in slot_supplies(fx).items()}
    out = resumed.stdout + resumed.stderr
    assert resumed.returncode == 1, out  # the worst outcome: the marginal board's failed run
    # each slot's run continued in its own record (a second session) with the verdict of an uninterrupted run
    sessions = _sessions(db)
    assert {sessions[rid][0]: sessions[rid][1:] for rid in runs.values()} == {
        "1": ("passed", 2), "2": ("passed", 2), "3": ("failed", 2), "4": ("passed", 2)}, out
    for rid in runs.values():
        stored = _measurements(db, rid)
        assert max(stored.values()) == 1, f"a measurement stored twice in run {rid}"
        assert before[rid] - stored == Counter(), f"a measurement lost in run {rid}"
        assert any(key.startswith("steps/soak@2") for key, _n, _l in stored)  # the last corner ran
    # the chamber moved once for every slot on resume: the replayed room soak and the replayed
    # soak of the cut-off's corner, then the last corner (and not once per slot)
    with sqlite3.connect(db) as c:
        replayed = {key.rsplit("#", 1)[0] for (key,) in c.execute(
            "SELECT step_key FROM steps WHERE session = 1 AND tags LIKE ?", (f"%{REPLAY_TAG}%",))}
        moves = c.execute("SELECT step_key, text FROM io_log WHERE session = 1 AND instrument = 'chamber' "
                          "AND kind = 'write' AND text LIKE 'SETP %' ORDER BY t").fetchall()
    assert {"setup/chamber_room", "steps/power_on"} <= replayed, replayed
    # (the kill lands during the second corner's soak or just after it: a slot whose soak was
    # cut off runs it anew, the others replay it, and they share one move of the chamber)
    assert [(key.rsplit("#", 1)[0], text) for key, text in moves] == [
        ("setup/chamber_room", "SETP 25.0"), ("steps/soak@1", "SETP 25.0"), ("steps/soak@2", "SETP 45.0")], moves
    # every slot's outputs off afterwards, read back over SCPI
    assert supplies == {slot: "0,0,0" for slot in "1234"}
