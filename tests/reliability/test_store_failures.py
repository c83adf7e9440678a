"""A results store that stalls, drops or refuses never holds a powered bench hostage.

The database sits behind a TCP proxy that can *stall* (connections stay open, nothing is
forwarded: a hung server or a black-holed network) or *cut* (connections dropped). Whatever
the store does, the run reaches the safe state, read back over SCPI by an independent client,
and nothing already measured is lost: it is in the spool and ``labctl sync`` pushes it.
"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from engine_support import DATA, RunProcess, assert_bench_safe
from rel_support import RELIABILITY_DATA
from tcpproxy import TcpProxy

from labctl.store import open_store
from labctl.store.testing import temporary_database
from tests.conftest import run_labctl

ABORTABLE = str(DATA / "abortable.yaml")
SHORT = str(RELIABILITY_DATA / "short-soak.yaml")




@pytest.fixture
def pg_proxy(tmp_path):
    """(proxied URL, direct URL, proxy) of a fresh PostgreSQL schema."""
    with temporary_database("postgresql", tmp_path) as url:
        proxy = TcpProxy("127.0.0.1", 5432)
        yield url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}"), url, proxy
        proxy.cut()


def _env(tmp_path, **extra: str) -> dict[str, str]:
    return {"LABCTL_HOME": str(tmp_path / "home"), "LABCTL_DB_TIMEOUT": "2", **extra}


def _sync_and_read(tmp_path, direct_url: str, run_id: str) -> tuple[str, int]:
    """Push the spool into the database (directly, not through the dead proxy); return the
    run's outcome and its number of measurements there."""
    env = {**os.environ, **_env(tmp_path)}
    res = run_labctl("sync", "--db", direct_url, "--all", env=env, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    from sqlalchemy import func, select

    from labctl.store.schema import measurements, runs

    store = open_store(direct_url, mark_interrupted=False)
    try:
        with store.read_engine.connect() as conn:
            outcome = conn.execute(select(runs.c.outcome).where(runs.c.id == run_id)).scalar_one()
            n = conn.execute(select(func.count()).select_from(measurements)
                             .where(measurements.c.run_id == run_id)).scalar_one()
    finally:
        store.close()
    return outcome, n


def _events(run: RunProcess) -> list[dict]:
    out = []
    for line in run.lines:
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


@pytest.mark.postgres
def test_stalled_postgres_then_sigterm_reaches_the_safe_state(served_lab, tmp_path, pg_proxy):
    proxied, direct, proxy = pg_proxy
    run = RunProcess("run", ABORTABLE, "--fixture", str(served_lab.fixture), "--db", proxied, "--json",
                     env=_env(tmp_path))
    run.wait_for('"step_id": "soak"', timeout=90)
    assert served_lab.scpi("psu", "OUTP? (@1)") == "1"
    proxy.stall()
    time.sleep(3.0)  # the recorder's next flush or heartbeat meets the stalled server
    sent = time.monotonic()
    run.proc.send_signal(signal.SIGTERM)
    rc = run.finish(timeout=60)  # before the fix: hung for 400 s+ with the supply on
    print(f"\nstalled PostgreSQL: SIGTERM -> exit {rc} in {time.monotonic() - sent:.1f} s")
    assert rc == 3, run.output
    assert_bench_safe(served_lab)
    ended = [e for e in _events(run) if e["event"] == "RunEnded"]
    assert ended and ended[-1]["outcome"] == "aborted", run.output
    assert "spooled" in run.output
    outcome, n = _sync_and_read(tmp_path, direct, ended[-1]["run_id"])
    assert outcome == "aborted"
    assert n > 0  # power-on measurements survived the stall via the spool


@pytest.mark.postgres
def test_stalled_postgres_run_goes_on_spooled_and_never_says_passed(served_lab, tmp_path, pg_proxy):
    proxied, direct, proxy = pg_proxy
    run = RunProcess("run", SHORT, "--fixture", str(served_lab.fixture), "--db", proxied, "--json",
                     env=_env(tmp_path))
    run.wait_for('"step_id": "load-on"', timeout=90)
    proxy.stall()
    rc = run.finish(timeout=120)
    events = _events(run)
    ended = [e for e in events if e["event"] == "RunEnded"]
    assert rc == 2, run.output
    assert ended and ended[-1]["outcome"] == "error", run.output
    assert "not in the database" in ended[-1]["message"]
    soak = [e for e in events if e["event"] == "StepEnded" and e["step_key"].startswith("steps/soak")]
    assert soak and soak[-1]["outcome"] == "PASS"  # the plan itself passed: only the store failed
    assert_bench_safe(served_lab)
    outcome, n = _sync_and_read(tmp_path, direct, ended[-1]["run_id"])
    assert outcome == "passed"  # it passed on the bench, and its results are all in the database now
    assert "but the results are not in the database" in ended[-1]["message"]
    assert n == sum(1 for e in events if e["event"] == "MeasurementRecorded")  # nothing lost


@pytest.mark.postgres
def test_interlock_trip_during_a_stalled_store_aborts_to_the_safe_state(served_lab, tmp_path, pg_proxy):
    proxied, _direct, proxy = pg_proxy
    run = RunProcess("run", ABORTABLE, "--fixture", str(served_lab.fixture), "--db", proxied, "--json",
                     "--set", "chamber_max=35 degC", env=_env(tmp_path))
    run.wait_for('"step_id": "load-on"', timeout=90)
    proxy.stall()
    rc = run.finish(timeout=120)
    assert rc == 3, run.output
    assert "safety interlock tripped" in run.output
    assert_bench_safe(served_lab)


@pytest.mark.postgres
def test_dropped_postgres_mid_run_spools_and_exits_2(served_lab, tmp_path, pg_proxy):
    proxied, direct, proxy = pg_proxy
    run = RunProcess("run", SHORT, "--fixture", str(served_lab.fixture), "--db", proxied, "--json",
                     env=_env(tmp_path))
    run.wait_for('"step_id": "load-on"', timeout=90)
    proxy.cut()
    rc = run.finish(timeout=120)
    events = _events(run)
    ended = [e for e in events if e["event"] == "RunEnded"]
    assert rc == 2, run.output
    assert ended[-1]["outcome"] == "error"
    assert_bench_safe(served_lab)
    outcome, n = _sync_and_read(tmp_path, direct, ended[-1]["run_id"])
    assert outcome == ("passed" if "but the results are not in the database" in ended[-1]["message"] else "error")
    assert n == sum(1 for e in events if e["event"] == "MeasurementRecorded")


@pytest.mark.postgres
def test_spool_that_cannot_absorb_stops_the_run_with_exit_2(served_lab, tmp_path, pg_proxy):
    """The database drops and the spool cannot be written either: results can be kept
    nowhere, so the run stops at once, to the safe state, with exit 2."""
    proxied, _direct, proxy = pg_proxy
    (tmp_path / "home" / "spool.db").mkdir(parents=True)  # the spool journal cannot be created
    run = RunProcess("run", ABORTABLE, "--fixture", str(served_lab.fixture), "--db", proxied, "--json",
                     env=_env(tmp_path))
    run.wait_for('"step_id": "soak"', timeout=90)
    proxy.cut()
    rc = run.finish(timeout=120)  # before the fix: the soak went on unrecorded for its full hour
    assert rc == 2, run.output
    events = _events(run)
    ended = [e for e in events if e["event"] == "RunEnded"]
    assert ended and ended[-1]["outcome"] == "error"
    assert "results cannot be recorded" in ended[-1]["message"]
    # at once: the soak is cut short when the group commit finds nowhere to keep its samples
    # (it had soaked on to its end, about a minute here, and PASSed unrecorded)
    soak = [e for e in events if e["event"] == "StepEnded" and e["step_key"].startswith("steps/soak")]
    assert soak and soak[-1]["outcome"] == "ABORTED", soak
    # nothing was spooled: the closing note must not send the operator to `labctl sync` for it
    assert "spooled locally" not in run.output and "results of this run were lost" in run.output, run.output
    assert_bench_safe(served_lab)


def test_recorder_refusing_the_run_at_start_powers_nothing(served_lab, tmp_path):
    """The store refuses the run (its id is taken): the run does not go on unrecorded."""
    from labctl.launch import RunRequest, execute

    db = str(tmp_path / "results.db")
    request = RunRequest(plan=SHORT, fixture=str(served_lab.fixture), db=db, run_id="taken-id-0001")
    first = execute(request, [], say=lambda _t: None, handle_signals=False)
    assert first.exit_code == 0, first.result.message
    second = execute(request, [], say=lambda _t: None, handle_signals=False)
    assert int(second.exit_code) == 2
    assert second.result.outcome.value == "error"
    assert "already exists" in second.result.message
    assert not [s for s in second.result.steps if s.group != "teardown" and s.outcome.value == "PASS"]
    assert_bench_safe(served_lab)
    store = open_store(db)
    try:
        from labctl.store.query import run_detail

        assert run_detail(store, "taken-id-0001")["run"]["outcome"] == "passed"  # the first run untouched
    finally:
        store.close()
