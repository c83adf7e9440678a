"""Records carry wall-clock time on a time-scaled simulated bench: a run's, its steps',
measurements' and I/O log's times lie inside the wall-clock interval the run really took,
`labctl runs` lists runs newest first, an interrupted run does not end before it starts, and
the simulated seconds of a step are a separate, labelled figure."""

from __future__ import annotations

import json
import signal
import sqlite3
import time

from engine_support import DATA, RunProcess

from labctl.sim.testing import isolated_fixture

SCALE = 300


def _times(db, run_id: str) -> dict[str, list[float]]:
    with sqlite3.connect(db) as conn:
        def col(sql: str) -> list[float]:
            return [r[0] for r in conn.execute(sql, (run_id,)) if r[0] is not None]

        return {
            "run": col("SELECT started_at FROM runs WHERE id = ?") + col("SELECT ended_at FROM runs WHERE id = ?"),
            "steps": col("SELECT started_at FROM steps WHERE run_id = ?") + col("SELECT ended_at FROM steps WHERE run_id = ?"),
            "measurements": col("SELECT t FROM measurements WHERE run_id = ?"),
            "samples": col("SELECT t FROM samples WHERE run_id = ?"),
            "logs": col("SELECT t FROM logs WHERE run_id = ?"),
            "io": col("SELECT t FROM io_log WHERE run_id = ?"),
        }


def test_a_simulated_run_records_wall_clock_times_and_lists_newest_first(labctl, tmp_path):
    bench = isolated_fixture(tmp_path, time_scale=SCALE)
    db = tmp_path / "r.db"
    ids = []
    for _ in range(2):
        before = time.time()
        res = labctl("run", "smoke.yaml", "--fixture", str(bench), "--db", str(db), "--json")
        after = time.time()
        assert res.returncode == 0, res.stdout + res.stderr
        events = [json.loads(line) for line in res.stdout.splitlines()]
        run_id = events[0]["run_id"]
        ids.append(run_id)
        assert all(before <= e["time"] <= after for e in events), [
            (e["event"], e["time"] - before) for e in events if not before <= e["time"] <= after]
        times = _times(db, run_id)
        assert times["measurements"] and times["io"] and times["steps"]
        started, ended = times["run"]
        assert before <= started <= ended <= after
        assert all(before <= t <= after for t in times.pop("io"))  # the pre-flight talks before the start
        for kind, values in times.items():
            assert all(started <= t <= ended for t in values), (kind, [t - started for t in values], ended - started)
        # the power-on step waits simulated seconds: its simulated duration is kept, labelled
        with sqlite3.connect(db) as conn:
            rows = conn.execute("SELECT step_id, duration, duration_sim FROM steps WHERE run_id = ?"
                                " AND duration_sim IS NOT NULL", (run_id,)).fetchall()
        assert rows
        for step_id, wall, sim in rows:
            assert abs(sim - wall * SCALE) <= 1e-6 * max(1.0, sim), step_id
    listed = json.loads(labctl("runs", "--db", str(db), "--format", "json").stdout)
    assert [r["id"] for r in listed] == ids[::-1]
    shown = labctl("runs", "show", ids[0], "--db", str(db))
    assert "simulated" in shown.stdout, shown.stdout


def test_an_interrupted_simulated_run_does_not_end_before_it_starts(labctl, tmp_path):
    bench = isolated_fixture(tmp_path, time_scale=SCALE)
    db = tmp_path / "r.db"
    run = RunProcess("run", str(DATA / "abortable.yaml"), "--fixture", str(bench), "--db", str(db), "--json",
                     "--no-preflight")
    try:
        run.wait_for('"check": "thermal.soak"', timeout=120)
        time.sleep(1.0)  # 300 simulated seconds into the soak
    finally:
        run.proc.send_signal(signal.SIGKILL)
        run.proc.wait(timeout=30)
    listed = json.loads(labctl("runs", "--db", str(db), "--format", "json").stdout)
    assert [r["outcome"] for r in listed] == ["interrupted"]
    assert listed[0]["ended_at"] >= listed[0]["started_at"], listed[0]
