"""Helpers of the fleet tests: simulated stations, agent processes, what the database holds."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import func, select

from labctl.sim.testing import isolated_fixture
from labctl.store.schema import jobs, measurements, runs, stations

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "fleet"
SHORT = DATA / "short.yaml"
SLOW = DATA / "slow.yaml"


def station_fixture(tmp_path: Path, station: str, time_scale: float = 1000) -> Path:
    """An isolated simulated station (own ports and ptys) named ``station``."""
    path = isolated_fixture(tmp_path / station, time_scale=time_scale)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["station"] = station
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


class AgentProcess:
    """``labctl agent`` in a process of its own (own $LABCTL_HOME: spool, job files)."""

    def __init__(self, tmp_path: Path, fixture: Path, db: str, *args: str, name: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.name = name or fixture.parent.name
        self.home = tmp_path / f"home-{self.name}"
        self.log = tmp_path / f"agent-{self.name}.log"
        self.fixture, self.db, self.args = fixture, db, args
        self.env = {**os.environ, "LABCTL_HOME": str(self.home), "LABCTL_DB_TIMEOUT": "3", **(env or {})}
        self.env.pop("LABCTL_DB", None)
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        with self.log.open("a") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "labctl", "agent", "--fixture", str(self.fixture), "--db", self.db,
                 "--heartbeat", "0.5", "--poll", "0.5", *self.args],
                stdout=out, stderr=subprocess.STDOUT, env=self.env, cwd=ROOT)

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)
        assert self.proc is not None
        self.proc.wait(timeout=10)

    def wait(self, timeout: float) -> int:
        assert self.proc is not None
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the agent did not end within {timeout:g} s; its output:\n"
                                 + self.output()[-4000:]) from None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def open_db(url: str) -> Any:
    from labctl.store import open_store

    return open_store(url, mark_interrupted=False)


def submit_many(url: str, plan: Path, n: int, *, station: str | None = None, station_class: str | None = None,
                fixture: Path, priority: int = 0) -> list[int]:
    """Queue ``n`` jobs of ``plan`` (checked against ``fixture`` once) through the queue API."""
    from labctl.fixture import load_fixture
    from labctl.fleet import queue

    bundle = queue.bundle_plan(str(plan), {}, [("test", load_fixture(str(fixture)))])
    store = open_db(url)
    try:
        return [queue.submit(store, bundle, station=station, station_class=station_class, dut=None,
                             overrides={}, priority=priority, user="tester") for _ in range(n)]
    finally:
        store.close()


def wait_for(predicate: Any, timeout: float, what: str, interval: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def job_rows(url: str) -> list[Any]:
    store = open_db(url)
    try:
        with store.read_engine.connect() as conn:
            return list(conn.execute(select(jobs).order_by(jobs.c.id)).all())
    finally:
        store.close()


def _first(url: str, query: Any) -> Any:
    store = open_db(url)
    try:
        with store.read_engine.connect() as conn:
            return conn.execute(query).first()
    finally:
        store.close()


def station_row(url: str, station: str) -> Any:
    return _first(url, select(stations).where(stations.c.id == station))


def in_step(url: str, station: str, marker: str) -> bool:
    """Whether the station's agent reports a current step matching ``marker``, a regular
    expression (``@2``: the third corner; ``@[1-4]``: any of those)."""
    row = station_row(url, station)
    return row is not None and row.current_step is not None and re.search(marker, row.current_step) is not None


def listed_jobs(url: str) -> list[dict[str, Any]]:
    """The jobs as ``labctl queue list --format json`` prints them (newest first)."""
    import json

    from tests.conftest import run_labctl

    res = run_labctl("queue", "list", "--db", url, "--format", "json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def run_row(url: str, run_id: str) -> Any:
    return _first(url, select(runs).where(runs.c.id == run_id))


def run_counts(url: str) -> tuple[int, dict[str, int], dict[str, str], dict[str, int]]:
    """(runs, measurements per run, outcome per run, sessions per run)."""
    store = open_db(url)
    try:
        with store.read_engine.connect() as conn:
            n_runs = conn.execute(select(func.count()).select_from(runs)).scalar_one()
            per_run = dict(conn.execute(select(measurements.c.run_id, func.count())
                                        .group_by(measurements.c.run_id)).all())
            outcomes = dict(conn.execute(select(runs.c.id, runs.c.outcome)).all())
            sessions = dict(conn.execute(select(runs.c.id, runs.c.sessions)).all())
        return n_runs, per_run, outcomes, sessions
    finally:
        store.close()


def reference_measurements(tmp_path: Path, plan: Path) -> int:
    """How many measurements one uninterrupted run of ``plan`` records (SQLite, in-process)."""
    from labctl.launch import RunRequest, execute

    fixture = station_fixture(tmp_path / "reference", "reference")
    db = tmp_path / "reference.db"
    out = execute(RunRequest(plan=str(plan), fixture=str(fixture), db=str(db)), [], say=lambda _t: None,
                  handle_signals=False)
    assert out.exit_code == 0, out.result.message
    n_runs, per_run, _, _ = run_counts(str(db))
    assert n_runs == 1
    return next(iter(per_run.values()))
