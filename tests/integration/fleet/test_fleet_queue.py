"""Eight agents on eight isolated simulated stations drain a queue of short jobs from one real
PostgreSQL: every job runs exactly once, and the database holds exactly the runs and
measurements those jobs produce. ``LABCTL_FULL=1`` queues 1000 jobs instead of 200."""

from __future__ import annotations

import os
from collections import Counter

import pytest
from fleet_support import (
    SHORT,
    AgentProcess,
    job_rows,
    reference_measurements,
    run_counts,
    station_fixture,
    submit_many,
)

N_AGENTS = 8
N_JOBS = 1000 if os.environ.get("LABCTL_FULL") == "1" else 200


@pytest.mark.postgres
@pytest.mark.slow
def test_eight_agents_run_every_queued_job_exactly_once(tmp_path, lab_db):
    per_run = reference_measurements(tmp_path, SHORT)
    fixtures = [station_fixture(tmp_path, f"st-{i}") for i in range(N_AGENTS)]
    ids = submit_many(lab_db, SHORT, N_JOBS, station_class="sim", fixture=fixtures[0])
    agents = [AgentProcess(tmp_path, f, lab_db, "--class", "sim", "--exit-when-idle") for f in fixtures]
    try:
        for a in agents:
            assert a.wait(timeout=600) == 0, a.output()[-3000:]
    finally:
        for a in agents:
            a.stop()

    rows = job_rows(lab_db)
    assert [r.id for r in rows] == ids
    assert Counter(r.state for r in rows) == {"passed": N_JOBS}, [(r.id, r.state, r.message) for r in rows if r.state != "passed"]
    again = [(r.id, r.claims, r.exit_code, r.message) for r in rows if r.claims != 1 or r.exit_code != 0]
    assert not again, (again, [a.output()[-2000:] for a in agents])  # each claimed once, by one agent
    run_ids = [r.run_id for r in rows]
    assert len(set(run_ids)) == N_JOBS and None not in run_ids
    n_runs, measured, outcomes, sessions = run_counts(lab_db)
    assert n_runs == N_JOBS and set(outcomes) == set(run_ids)
    assert set(outcomes.values()) == {"passed"} and set(sessions.values()) == {1}
    assert measured == {r: per_run for r in run_ids}  # exactly what each job produces, nothing twice
    by_station = Counter(r.claimed_by for r in rows)
    assert set(by_station) <= {f"st-{i}" for i in range(N_AGENTS)} and len(by_station) > 1
    logs = "".join(a.output() for a in agents)
    assert logs.count(": passed (run ") == N_JOBS
