"""The queue's rules on a real (SQLite) store: order, binding to a station, cancelling,
claims guarded by the agent that holds them, jobs of dead agents."""

from __future__ import annotations

import os
import time

import pytest

from labctl.errors import UsageError, ValidationErrors
from labctl.fixture import load_fixture
from labctl.fleet import queue, registry
from labctl.store import open_store

BENCH = load_fixture("sim-bench.yaml")


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "lab.db")
    yield s
    s.close()


@pytest.fixture
def bundle():
    return queue.bundle_plan("smoke.yaml", {}, [("st", BENCH)])


def _register(store, station: str, agent: str, classes=("power",)) -> None:
    info = registry.StationInfo.from_fixture(BENCH.model_copy(update={"station": station}), "f.yaml", "station: x\n",
                                             list(classes))
    registry.register(store, info, agent, 999_999_999 if agent.startswith("dead") else os.getpid(), 1.0)


def _submit(store, bundle, **kw):
    args = {"station": None, "station_class": "power", "dut": None, "overrides": {}} | kw
    return queue.submit(store, bundle, **args)


def test_a_bundle_carries_the_includes_and_the_hash_a_run_records(bundle, tmp_path):
    full = queue.bundle_plan("power-rails.yaml", {}, [("st", BENCH)])
    assert full.file == "power-rails.yaml" and list(full.files) == ["lib/power-up.yaml"]
    job = type("Job", (), {"id": 1, "plan_file": full.file, "plan_text": full.text, "plan_files": full.files})
    from labctl.plan.loader import load_plan

    written = queue.write_bundle(job, tmp_path / "job")
    assert load_plan(str(written), {}, BENCH).sha256 == full.sha256  # what runs is what was submitted


def test_a_plan_that_does_not_fit_is_refused_naming_the_station(tmp_path):
    plan = tmp_path / "p.yaml"
    plan.write_text("name: p\nrequires: [psu, scope]\nsteps:\n  - {id: a, check: wait, args: {duration: 1 s}}\n")
    with pytest.raises(ValidationErrors) as err:
        queue.bundle_plan(str(plan), {}, [("bench-9", BENCH)])
    assert "does not fit station bench-9: nothing was queued" in err.value.format()
    with pytest.raises(UsageError, match="no plan file"):
        queue.bundle_plan(str(tmp_path / "missing.yaml"), {}, [("bench-9", BENCH)])


def test_claims_go_by_priority_then_age_and_never_to_another_station(store, bundle):
    low = _submit(store, bundle)
    high = _submit(store, bundle, priority=5)
    other = _submit(store, bundle, station="st-b", station_class=None)
    later = _submit(store, bundle)
    got = [queue.claim(store, "st-a", "a1", ["power"]).id for _ in range(3)]
    assert got == [high, low, later]
    assert queue.claim(store, "st-a", "a1", ["power"]) is None  # st-b's job stays for st-b
    assert queue.claim(store, "st-a", "a1", ["thermal"]) is None
    assert queue.claim(store, "st-b", "b1", []).id == other


def test_a_released_job_with_a_run_stays_bound_to_its_station_unless_portable(store, bundle):
    bound = _submit(store, bundle)
    job = queue.claim(store, "st-a", "a1", ["power"])
    assert queue.set_run(store, job.id, "a1", "run-1")
    assert queue.release(store, job.id, "a1", "SIGTERM")
    assert queue.claim(store, "st-b", "b1", ["power"]) is None
    assert queue.claim(store, "st-a", "a2", ["power"]).id == bound
    portable = _submit(store, bundle, portable=True)
    job = queue.claim(store, "st-b", "b1", ["power"])
    assert job.id == portable and queue.set_run(store, job.id, "b1", "run-2")
    assert queue.release(store, job.id, "b1", "SIGTERM")
    assert queue.claim(store, "st-c", "c1", ["power"]).id == portable


def test_only_the_agent_holding_a_job_changes_it(store, bundle):
    _submit(store, bundle)
    job = queue.claim(store, "st-a", "a1", ["power"])
    assert not queue.finish(store, job.id, "intruder", "passed", 0)
    assert queue.finish(store, job.id, "a1", "passed", 0, "ok")
    assert not queue.finish(store, job.id, "a1", "failed", 1)  # ended: final
    assert queue.get(store, job.id).state == "passed"


def test_cancel_a_queued_job_at_once_and_a_running_one_through_its_agent(store, bundle):
    queued = _submit(store, bundle)
    assert queue.cancel(store, queued, "lm") == "cancelled"
    with pytest.raises(UsageError, match="already ended"):
        queue.cancel(store, queued)
    running = _submit(store, bundle)
    queue.claim(store, "st-a", "a1", ["power"])
    assert queue.cancel(store, running, "lm") == "cancelling"
    assert queue.finish(store, running, "a1", "aborted", 3)
    row = queue.get(store, running)
    assert row.state == "cancelled" and row.message.startswith("cancelled by lm")


def test_jobs_of_a_dead_agent_are_interrupted_and_taken_back_by_its_station(store, bundle):
    _register(store, "st-a", "dead-a1")  # its pid is gone
    job_id = _submit(store, bundle)
    queue.claim(store, "st-a", "dead-a1", ["power"])
    assert queue.reap(store) == [job_id]
    assert queue.get(store, job_id).state == "interrupted"
    assert queue.claim(store, "st-b", "b1", ["power"]) is None  # hardware-bound
    _register(store, "st-a", "a2")  # the station's agent is back
    job = queue.claim(store, "st-a", "a2", ["power"])
    assert (job.id, job.state, job.claims) == (job_id, "running", 2)
    assert queue.reap(store, now=time.time()) == []  # alive


def test_a_portable_job_of_a_dead_agent_is_taken_by_another_station_of_its_class(store, bundle):
    _register(store, "st-a", "dead-a1")
    job_id = _submit(store, bundle, portable=True)
    bound = _submit(store, bundle, station="st-a", station_class=None, portable=True)  # no class to move within
    for _ in range(2):
        job = queue.claim(store, "st-a", "dead-a1", ["power"])
        assert queue.set_run(store, job.id, "dead-a1", f"run-{job.id}")
    assert sorted(queue.reap(store)) == [job_id, bound]
    row = queue.get(store, job_id)
    assert row.state == "interrupted" and "another station of class power starts it afresh" in row.message
    assert queue.get(store, bound).message.endswith("its station resumes it")
    assert queue.claim(store, "st-b", "b1", ["thermal"]) is None  # not its class
    job = queue.claim(store, "st-b", "b1", ["power"])
    assert (job.id, job.state, job.claimed_by, job.agent_id, job.claims) == (job_id, "running", "st-b", "b1", 2)
    assert queue.claim(store, "st-c", "c1", ["power"]) is None


def test_a_second_live_agent_for_a_station_is_refused(store):
    _register(store, "st-a", "a1")
    with pytest.raises(UsageError, match="already has a live agent"):
        _register(store, "st-a", "a2")
