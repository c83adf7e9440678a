"""One station's agent under the ways it stops: kill -9 (then restarted: the job's run resumes,
nothing lost, nothing twice), SIGTERM and a double Ctrl-C (the job is aborted to the safe state
and given back to the queue, bound to its station, which resumes it)."""

from __future__ import annotations

import signal
import time

import pytest
from engine_support import ServedLab, assert_bench_safe
from fleet_support import (
    SLOW,
    AgentProcess,
    in_step,
    job_rows,
    open_db,
    reference_measurements,
    run_row,
    station_fixture,
    submit_many,
    wait_for,
)

from labctl.fleet import queue, registry
from labctl.sim.testing import served_lab
from labctl.store.testing import verify_after_kill
from tests.conftest import run_labctl


@pytest.mark.postgres
@pytest.mark.slow
def test_an_agent_killed_mid_job_resumes_it_with_nothing_lost_or_twice(tmp_path, lab_db):
    total = reference_measurements(tmp_path, SLOW)
    fixture = station_fixture(tmp_path, "st-k", time_scale=30)
    [job_id] = submit_many(lab_db, SLOW, 1, station="st-k", fixture=fixture)
    agent = AgentProcess(tmp_path, fixture, lab_db)
    try:
        wait_for(lambda: in_step(lab_db, "st-k", "@2"), 60, "the job's third corner")
        agent.kill()
        store = open_db(lab_db)
        try:  # what the lab sees meanwhile: the station offline, its job interrupted
            assert queue.reap(store) == [job_id]
            [st] = registry.list_stations(store)
            assert st["state"] == "offline" and st["since"] is not None
        finally:
            store.close()
        [job] = job_rows(lab_db)
        assert job.state == "interrupted" and job.run_id
        run_id = job.run_id

        agent.start()  # the station's agent comes back: it takes its job back first
        wait_for(lambda: job_rows(lab_db)[0].state not in ("running", "interrupted"), 120, "the resumed job to end")
        agent.signal(signal.SIGTERM)
        assert agent.wait(timeout=60) == 0
    finally:
        agent.stop()
    [job] = job_rows(lab_db)
    assert (job.state, job.run_id, job.claims, job.exit_code) == ("passed", run_id, 2, 0), agent.output()[-3000:]
    assert f"job {job_id}: resuming run {run_id} (interrupted)" in agent.output()
    store = open_db(lab_db)
    try:
        check = verify_after_kill(store, run_id)
    finally:
        store.close()
    assert check.outcome == "passed" and check.duplicated_steps == []
    assert sum(check.measurement_counts.values()) == total  # nothing lost, nothing twice
    assert run_row(lab_db, run_id).sessions == 2


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.parametrize("signals", [(signal.SIGTERM,), (signal.SIGINT, signal.SIGINT)], ids=["sigterm", "sigint-twice"])
def test_a_stopped_agent_aborts_its_job_to_the_safe_state_and_its_station_resumes_it(tmp_path, lab_db, signals):
    """The station's instruments are served apart (as real ones are), so the safe state is read
    back by an independent client after the agent is gone."""
    fixture = station_fixture(tmp_path, "st-s", time_scale=30)
    [job_id] = submit_many(lab_db, SLOW, 1, station="st-s", fixture=fixture)
    with served_lab(fixture) as lab_proc:
        lab = ServedLab(fixture, lab_proc)
        agent = AgentProcess(tmp_path, fixture, lab_db)
        try:
            wait_for(lambda: in_step(lab_db, "st-s", "@1"), 60, "the job's second corner")
            assert lab.scpi("psu", "OUTP? (@1)") == "1"  # powered, mid-job
            if len(signals) == 2:  # the second press must land while the safe state is being reached:
                # the supply's next answer (the run reads only the DAQ between its waits, so: the
                # teardown's or the safe state's) comes 1 s late, well within its 2 s timeout
                res = run_labctl("sim", "inject", "slow_reply", "role=psu", "delay=1.0", "count=1",
                                 "--fixture", str(fixture))
                assert res.returncode == 0, res.stdout + res.stderr
            for sig in signals:
                agent.signal(sig)
                time.sleep(0.3)  # two presses, not one signal delivered twice at once
            assert agent.wait(timeout=60) == 0
            assert_bench_safe(lab)
        finally:
            agent.stop()
        _check_stopped_then_resumed(lab_db, agent, job_id, signals)


def _check_stopped_then_resumed(lab_db, agent, job_id, signals):
    [job] = job_rows(lab_db)
    assert job.state == "queued" and job.claimed_by == "st-s" and job.run_id, job
    aborted = run_row(lab_db, job.run_id)
    assert aborted.outcome == "aborted" and "received by the station agent" in aborted.message, aborted.message
    try:
        if len(signals) == 2:
            assert "again: already stopping; the safe state is still being reached" in agent.output()

        agent.start()
        wait_for(lambda: job_rows(lab_db)[0].state == "passed", 120, "the resumed job to pass")
    finally:
        agent.stop()
    [job] = job_rows(lab_db)
    assert job.run_id == aborted.id and job.claims == 2
    assert f"job {job_id}: resuming run {aborted.id} (aborted)" in agent.output()
    assert run_row(lab_db, job.run_id).outcome == "passed"


@pytest.mark.postgres
def test_a_job_waits_while_somebody_runs_a_plan_on_the_bench_by_hand(tmp_path, lab_db):
    """An engineer runs a plan at the station's terminal while its agent is idle: the agent's
    next job is not failed and does not touch the bench; it goes back to the queue until the
    bench is free, then runs."""
    from fleet_support import SHORT

    from labctl.fixture import load_fixture
    from labctl.instruments.benchlock import bench_lock

    fixture = station_fixture(tmp_path, "st-busy", time_scale=1000)
    by_hand = bench_lock(load_fixture(str(fixture)), slots=())
    by_hand.acquire()  # what a `labctl run` in another terminal holds for its whole run
    agent = AgentProcess(tmp_path, fixture, lab_db)
    try:
        [job_id] = submit_many(lab_db, SHORT, 1, station="st-busy", fixture=fixture)
        wait_for(lambda: "is in use by process" in agent.output(), 60, "the agent to find the bench busy")
        # between its tries the job is back in the queue, never failed
        wait_for(lambda: job_rows(lab_db)[0].state == "queued", 30, "the job back in the queue")
        assert job_rows(lab_db)[0].exit_code is None, agent.output()
        # it tries again once a heartbeat (0.5 s here), not at once: its own release's queue
        # notification must not wake it into a tight claim-release loop
        tries = agent.output().count("is in use by process")
        time.sleep(3.0)
        tries = agent.output().count("is in use by process") - tries
        assert 1 <= tries <= 8, f"{tries} tries in 3 s with a 0.5 s heartbeat:\n{agent.output()[-3000:]}"
        by_hand.release()
        wait_for(lambda: job_rows(lab_db)[0].state not in ("queued", "running"), 120, "the job to run")
        [job] = job_rows(lab_db)
        assert job.state == "passed", agent.output()[-3000:]
        assert run_row(lab_db, job.run_id).outcome == "passed"
    finally:
        by_hand.release()
        agent.stop()


@pytest.mark.postgres
def test_a_job_for_another_board_ends_without_naming_a_run_that_was_never_recorded(tmp_path, lab_db):
    """The wrong board on the fixture: nothing is powered and no run is recorded, so the job
    names no run (``queue show`` had named one that ``runs show`` did not know)."""
    from fleet_support import SHORT

    from labctl.fixture import load_fixture

    fixture = station_fixture(tmp_path, "st-wrong", time_scale=1000)
    bundle = queue.bundle_plan(str(SHORT), {}, [("test", load_fixture(str(fixture)))])
    store = open_db(lab_db)
    try:
        job_id = queue.submit(store, bundle, station="st-wrong", station_class=None, dut="SN-WRONG",
                              overrides={}, priority=0, user="tester")
    finally:
        store.close()
    with served_lab(fixture):  # served apart: its board is what it is (SIM-GOLD-0001), whatever the job says
        agent = AgentProcess(tmp_path, fixture, lab_db)
        try:
            wait_for(lambda: job_rows(lab_db)[0].state not in ("queued", "running"), 120, "the job to end")
        finally:
            agent.stop()
    [job] = job_rows(lab_db)
    assert (job.id, job.state, job.run_id) == (job_id, "error", None), agent.output()[-3000:]
    assert "reports serial" in (job.message or ""), job
    shown = run_labctl("queue", "show", str(job_id), "--db", lab_db)
    assert shown.returncode == 0 and "SN-WRONG" in shown.stdout and "run: 6" not in shown.stdout, shown.stdout
