"""Agents of one station class competing for that class's jobs (docs/lab.md), as a lab runs
them: real agent processes on isolated simulated stations, one real PostgreSQL, jobs queued
and listed with `labctl queue`. One job: exactly one agent runs it. Two jobs: one each, never
one job twice. The agent running a class job is killed: the job waits, interrupted, for its
own station (the other agent of the class never takes it) and is resumed there; a `--portable`
job is started afresh by the other station instead."""

from __future__ import annotations

import json
import os
import re
import signal
import time

import pytest
from fleet_support import (
    SHORT,
    SLOW,
    AgentProcess,
    in_step,
    job_rows,
    listed_jobs,
    run_counts,
    run_row,
    station_fixture,
    station_row,
    wait_for,
)

from tests.conftest import run_labctl

CLASS = "rack-a"


def _class_agents(tmp_path, lab_db, time_scale: float = 1000) -> dict[str, AgentProcess]:
    """Two stations of class CLASS, each with its agent up and idle."""
    agents = {}
    for name in ("st-1", "st-2"):
        agents[name] = AgentProcess(tmp_path, station_fixture(tmp_path, name, time_scale=time_scale), lab_db,
                                    "--class", CLASS)
    for name, agent in agents.items():
        wait_for(lambda a=agent: "agent up" in a.output(), 60, f"the agent of {name} to be up")
    return agents


def _stop(agents: dict[str, AgentProcess]) -> None:
    for agent in agents.values():
        if agent.proc is not None and agent.proc.poll() is None:
            agent.signal(signal.SIGTERM)
    for agent in agents.values():
        agent.stop()


def _submit(lab_db: str, plan, *args: str) -> int:
    res = run_labctl("queue", "submit", str(plan), "--station-class", CLASS, "--db", lab_db, "--json", *args)
    assert res.returncode == 0, res.stdout + res.stderr
    return json.loads(res.stdout)["job"]


def _listed(lab_db: str) -> dict[int, dict]:
    return {j["job"]: j for j in listed_jobs(lab_db)}


def _mentions(text: str, job: int) -> bool:
    return re.search(rf"\bjob {job}\b", text) is not None


def _ran(agents: dict[str, AgentProcess], job: int) -> list[str]:
    """The stations whose agent says a word of ``job`` (took, started, resumed or gave it back)."""
    return sorted(name for name, a in agents.items() if _mentions(a.output(), job))


@pytest.mark.postgres
def test_two_agents_of_a_class_one_job_exactly_one_runs_it(tmp_path, lab_db):
    agents = _class_agents(tmp_path, lab_db)
    try:
        job = _submit(lab_db, SHORT)  # both agents are woken by it and race for it
        wait_for(lambda: job_rows(lab_db)[0].state not in ("queued", "running"), 60, "the job to end")
        time.sleep(2.0)  # four more polls of each agent: nobody takes it again
        listed = _listed(lab_db)
        table = run_labctl("queue", "list", "--db", lab_db, env={**os.environ, "COLUMNS": "250"}).stdout
    finally:
        _stop(agents)
    [row] = job_rows(lab_db)
    assert (row.state, row.claims, row.exit_code) == ("passed", 1, 0), (row, [a.output()[-2000:] for a in agents.values()])
    assert _ran(agents, job) == [row.claimed_by]
    assert f"job {job}: passed (run {row.run_id})" in agents[row.claimed_by].output()
    n_runs, _, outcomes, sessions = run_counts(lab_db)
    assert (n_runs, outcomes, sessions) == (1, {row.run_id: "passed"}, {row.run_id: 1})
    assert run_row(lab_db, row.run_id).station == row.claimed_by
    # what a desk sees: done, by that station, with its run and exit code
    shown = listed[job]
    assert (shown["state"], shown["station"], shown["run"], shown["exit_code"], shown["claims"]) == \
        ("passed", row.claimed_by, row.run_id, 0, 1)
    header = next(t for t in table.splitlines() if "┃" in t and "exit" in t)
    names = [c.strip() for c in header.strip().strip("┃").split("┃")]
    cells = next(c for c in ([c.strip() for c in t.strip().strip("│").split("│")] for t in table.splitlines())
                 if c[0] == str(job))
    shown = dict(zip(names, cells, strict=True))
    assert (shown["state"], shown["station"], shown["run"], shown["exit"]) == ("passed", row.claimed_by, row.run_id, "0"), table


@pytest.mark.postgres
def test_two_jobs_two_agents_of_a_class_each_runs_one(tmp_path, lab_db):
    agents = _class_agents(tmp_path, lab_db, time_scale=50)  # a job of ~4 s: the first is still running
    try:                                                     # when the second is queued
        jobs = [_submit(lab_db, SLOW), _submit(lab_db, SLOW)]
        wait_for(lambda: all(r.state not in ("queued", "running") for r in job_rows(lab_db)), 90, "both jobs to end")
        listed = _listed(lab_db)
    finally:
        _stop(agents)
    rows = job_rows(lab_db)
    assert [(r.id, r.state, r.claims, r.exit_code) for r in rows] == [(j, "passed", 1, 0) for j in jobs], rows
    assert sorted(r.claimed_by for r in rows) == ["st-1", "st-2"]  # one each
    for r in rows:
        assert _ran(agents, r.id) == [r.claimed_by]
        assert run_row(lab_db, r.run_id).station == r.claimed_by
        assert (listed[r.id]["state"], listed[r.id]["station"], listed[r.id]["exit_code"]) == ("passed", r.claimed_by, 0)
    n_runs, _, outcomes, sessions = run_counts(lab_db)
    assert n_runs == 2 and set(outcomes.values()) == {"passed"} and set(sessions.values()) == {1}
    assert set(outcomes) == {r.run_id for r in rows}


@pytest.mark.postgres
@pytest.mark.slow
def test_a_class_job_whose_agent_is_killed_waits_for_its_station_and_resumes_there(tmp_path, lab_db):
    """docs/lab.md: a job that started a run is hardware-bound; its agent killed, it is
    `interrupted` (seen by the other agent: same host, the process is gone) and resumed by
    its station's agent when that comes back; the other agent of the class never takes it."""
    agents = _class_agents(tmp_path, lab_db, time_scale=60)
    try:
        job = _submit(lab_db, SLOW)
        ran_by = wait_for(lambda: job_rows(lab_db)[0].claimed_by, 30, "an agent to claim the job")
        other = next(n for n in agents if n != ran_by)
        wait_for(lambda: in_step(lab_db, ran_by, "@[1-4]"), 30, "the job past its first corner")
        agents[ran_by].kill()
        # nobody calls the reaper here: the other agent notices the dead one
        wait_for(lambda: job_rows(lab_db)[0].state == "interrupted", 15, "the job to be marked interrupted")
        [row] = job_rows(lab_db)
        run_id = row.run_id
        assert row.claimed_by == ran_by and f"the agent of station {ran_by}" in row.message, row
        time.sleep(2.0)  # four polls of the other agent: it leaves the job to its station
        [row] = job_rows(lab_db)
        assert (row.state, row.claimed_by, row.claims) == ("interrupted", ran_by, 1)
        assert _listed(lab_db)[job]["state"] == "interrupted"
        assert _ran(agents, job) == [ran_by]
        assert station_row(lab_db, other).state == "idle"

        agents[ran_by].start()  # its station's agent is back: it resumes the run
        wait_for(lambda: job_rows(lab_db)[0].state not in ("running", "interrupted"), 60, "the resumed job to end")
        listed = _listed(lab_db)
    finally:
        _stop(agents)
    [row] = job_rows(lab_db)
    assert (row.state, row.claimed_by, row.run_id, row.claims, row.exit_code) == ("passed", ran_by, run_id, 2, 0), \
        agents[ran_by].output()[-3000:]
    assert f"job {job}: resuming run {run_id} (interrupted)" in agents[ran_by].output()
    assert _ran(agents, job) == [ran_by]
    n_runs, _, outcomes, sessions = run_counts(lab_db)
    assert (n_runs, outcomes, sessions) == (1, {run_id: "passed"}, {run_id: 2})
    assert (listed[job]["state"], listed[job]["station"], listed[job]["exit_code"]) == ("passed", ran_by, 0)


@pytest.mark.postgres
@pytest.mark.slow
def test_a_portable_class_job_whose_agent_is_killed_is_started_afresh_by_another_station(tmp_path, lab_db):
    """`labctl queue submit --portable`: "an interrupted run may be restarted on another station
    of the class" (docs/lab.md: another station of the class starts it afresh as a new run)."""
    agents = _class_agents(tmp_path, lab_db, time_scale=60)
    try:
        job = _submit(lab_db, SLOW, "--portable")
        ran_by = wait_for(lambda: job_rows(lab_db)[0].claimed_by, 30, "an agent to claim the job")
        other = next(n for n in agents if n != ran_by)
        wait_for(lambda: in_step(lab_db, ran_by, "@[1-4]"), 30, "the job past its first corner")
        first_run = job_rows(lab_db)[0].run_id
        agents[ran_by].kill()
        wait_for(lambda: job_rows(lab_db)[0].claimed_by == other, 15, f"{other} to take the job")
        wait_for(lambda: job_rows(lab_db)[0].state not in ("running", "interrupted"), 60, "the job to end")
        listed = _listed(lab_db)
        before = len(agents[ran_by].output())
        agents[ran_by].start()  # the killed station comes back: the job is no longer its own
        wait_for(lambda: "agent up" in agents[ran_by].output()[before:], 30, f"the agent of {ran_by} to be back")
        time.sleep(1.0)
        assert not _mentions(agents[ran_by].output()[before:], job), agents[ran_by].output()[before:]
    finally:
        _stop(agents)
    [row] = job_rows(lab_db)
    assert (row.state, row.claimed_by, row.claims, row.exit_code) == ("passed", other, 2, 0), \
        (row, agents[other].output()[-3000:])
    assert row.run_id != first_run and run_row(lab_db, row.run_id).station == other
    assert f"job {job}: passed (run {row.run_id})" in agents[other].output()
    assert run_row(lab_db, row.run_id).sessions == 1  # a new run, from its first step
    assert run_row(lab_db, first_run).outcome == "interrupted", run_row(lab_db, first_run)  # kept as it was cut off
    assert (listed[job]["state"], listed[job]["station"], listed[job]["run"]) == ("passed", other, row.run_id)
