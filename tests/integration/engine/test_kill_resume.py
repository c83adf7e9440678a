"""`kill -9` of a running `labctl run` loses nothing it reported, and `labctl resume`
completes the run with no duplicate measurement (SQLite file and PostgreSQL)."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections import Counter

import pytest
from engine_support import DATA, RunProcess, stored_measurements

from labctl.store.testing import upgrade_database

PLAN = str(DATA / "killable.yaml")
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        yield str(tmp_path / "results.db")
        return
    import sqlalchemy as sa

    name = f"labctl_kill_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:  # fails (never skips) when PostgreSQL is unreachable
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
        upgrade_database(url)  # a shared database migrates only by `labctl db upgrade`
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def labctl_json(*args: str) -> list | dict:
    res = subprocess.run([sys.executable, "-m", "labctl", *args], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    return json.loads(res.stdout)


@pytest.mark.parametrize("after_steps,seed", [(2, 1), (7, 2), (15, 3)])
def test_sigkill_then_resume(served_lab, db_url, after_steps, seed):
    run = RunProcess("run", PLAN, "--fixture", str(served_lab.fixture), "--db", db_url, "--json", "--no-preflight")
    committed: list[tuple[str, str, str]] = []
    pending: dict[str, list[tuple[str, str, str]]] = {}
    ended = 0
    run_id = None
    while ended < after_steps:
        event = json.loads(run.wait_for('"event"', timeout=120))
        run_id = event["run_id"]
        if event["event"] == "MeasurementRecorded":
            pending.setdefault(event["step_key"], []).append(
                (event["step_key"], event["name"], json.dumps(event["labels"], sort_keys=True)))
        elif event["event"] == "StepEnded":
            # the recorder handled StepEnded before this line was printed: the step is committed
            committed.extend(pending.pop(event["step_key"], []))
            ended += 1
    # kill at a random moment inside the next step (possibly in the middle of its commit)
    time.sleep(random.Random(seed).uniform(0.0, 0.15))
    run.proc.send_signal(signal.SIGKILL)
    run.proc.wait(timeout=30)

    # any command that opens the store marks the dead run interrupted
    listed = labctl_json("runs", "--db", db_url, "--format", "json")
    (row,) = [r for r in listed if r["id"] == run_id]
    assert row["outcome"] == "interrupted"
    stored = Counter(stored_measurements(db_url, run_id))
    for m in committed:
        assert stored[m] >= 1, f"measurement {m} was reported committed but is not in the database: {sorted(stored)}"
    if db_url.endswith(".db"):
        conn = sqlite3.connect(db_url)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()

    resumed = RunProcess("resume", run_id, "--db", db_url, "--fixture", str(served_lab.fixture), "--no-preflight")
    rc = resumed.finish(timeout=300)
    assert rc == 0, resumed.output
    final = labctl_json("runs", "--db", db_url, "--format", "json")
    (row,) = [r for r in final if r["id"] == run_id]
    assert row["outcome"] == "passed"
    # every step's measurements exactly once: no step is recorded twice across the sessions
    rows = stored_measurements(db_url, run_id)
    logical = Counter((key.rsplit("#", 1)[0], name, labels) for key, name, labels in rows
                      if not key.startswith("setup/"))
    duplicates = {k: n for k, n in logical.items() if n > 1}
    assert not duplicates, duplicates
    # 8 corners x (2 rails + 1 die temperature) measurements in the steps group
    assert len(logical) == 8 * 3


def test_resume_refuses_a_finished_run_and_a_wrong_station(served_lab, tmp_path):
    db = str(tmp_path / "r.db")
    done = RunProcess("run", PLAN, "--fixture", str(served_lab.fixture), "--db", db, "--no-preflight")
    assert done.finish(timeout=300) == 0, done.output
    (row,) = labctl_json("runs", "--db", db, "--format", "json")
    res = subprocess.run([sys.executable, "-m", "labctl", "resume", row["id"], "--db", db,
                          "--fixture", str(served_lab.fixture)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 4
    assert "already passed" in res.stderr or "ended passed" in res.stderr
    assert "Traceback" not in res.stderr

    # an interrupted run cannot be continued on another station
    run = RunProcess("run", PLAN, "--fixture", str(served_lab.fixture), "--db", db, "--json", "--no-preflight")
    run_id = json.loads(run.wait_for('"StepEnded"', timeout=120))["run_id"]
    run.proc.send_signal(signal.SIGKILL)
    run.proc.wait(timeout=30)
    other = tmp_path / "other.yaml"
    other.write_text(served_lab.fixture.read_text().replace("station: sim-bench-1", "station: bench-7"))
    res = subprocess.run([sys.executable, "-m", "labctl", "resume", run_id, "--db", db, "--fixture", str(other)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 4, res.stdout + res.stderr
    assert "it ran on station sim-bench-1" in res.stderr
