"""The lab's PostgreSQL goes away mid-run (every connection dropped, new ones refused, through
a TCP proxy) and comes back: the running jobs go on with their results spooled, the agents
claim nothing meanwhile, then push the spool and record every job: nothing is lost, nothing
is written twice, no job runs twice."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from fleet_support import (
    SLOW,
    AgentProcess,
    job_rows,
    reference_measurements,
    run_counts,
    station_fixture,
    submit_many,
    wait_for,
)
from tcpproxy import TcpProxy


@pytest.mark.postgres
@pytest.mark.slow
def test_a_database_outage_mid_run_loses_nothing(tmp_path, lab_db):
    total = reference_measurements(tmp_path, SLOW)
    proxy = TcpProxy("127.0.0.1", 5432)
    proxied = lab_db.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
    fixtures = [station_fixture(tmp_path, f"st-{i}", time_scale=30) for i in range(3)]
    ids = submit_many(lab_db, SLOW, 6, station_class="sim", fixture=fixtures[0])
    agents = [AgentProcess(tmp_path, f, proxied, "--class", "sim", "--exit-when-idle") for f in fixtures]
    try:
        wait_for(lambda: sum(r.state == "running" for r in job_rows(lab_db)) == 3, 60, "three running jobs")
        time.sleep(1.5)  # well into their steps
        proxy.down()
        down_at = time.time()
        time.sleep(6)  # longer than the recorder's bound (LABCTL_DB_TIMEOUT=3): results are spooled
        up_at = time.time()
        proxy.up()
        for a in agents:
            assert a.wait(timeout=180) == 0, a.output()[-3000:]
    finally:
        for a in agents:
            a.stop()
        proxy.cut()

    logs = "".join(a.output() for a in agents)
    assert "results database unreachable" in logs and "results were spooled" in logs, logs[-3000:]
    rows = job_rows(lab_db)
    assert [r.id for r in rows] == ids
    assert Counter(r.state for r in rows) == {"passed": 6}, [(r.id, r.state, r.message) for r in rows]
    # a job whose run could not start (its store did not open) went back to the queue, its run never began
    assert not [r.id for r in rows if down_at < r.claimed_at < up_at]  # nothing claimed during the outage
    assert all(r.claims == 1 or "not started: the results database was unreachable" in logs for r in rows)
    n_runs, measured, outcomes, sessions = run_counts(lab_db)
    run_ids = {r.run_id for r in rows}
    assert n_runs == 6 and set(outcomes) == run_ids and set(outcomes.values()) == {"passed"}
    assert measured == {r: total for r in run_ids}  # spooled, synced: every measurement once
    assert set(sessions.values()) == {1}
    assert any("spooled during a database outage" in r.message or "spooled, then synced" in r.message for r in rows)
