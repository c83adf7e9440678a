"""`labctl queue`, `labctl stations` and `labctl agent` as a lab manager uses them: plans
checked against the target station before queuing, priority then age, cancelling, the
registry's view, and a database password that never shows anywhere."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest
from fleet_support import (
    SHORT,
    SLOW,
    AgentProcess,
    job_rows,
    listed_jobs,
    station_fixture,
    station_row,
    wait_for,
)

from tests.conftest import run_labctl

SECRET = "pw-SECRET-7f3a"


@pytest.mark.postgres
@pytest.mark.slow
def test_submit_checks_the_plan_against_the_station_and_agents_take_priority_then_age(tmp_path, lab_db):
    fx_a, fx_b = station_fixture(tmp_path, "st-a"), station_fixture(tmp_path, "st-b")
    res = run_labctl("queue", "submit", str(SHORT), "--station", "st-a", "--db", lab_db)
    assert res.returncode == 4 and "no station 'st-a' is registered" in res.stderr  # nobody to check it against

    # register both stations (an agent that finds nothing to do stops)
    for fx in (fx_a, fx_b):
        assert AgentProcess(tmp_path, fx, lab_db, "--exit-when-idle", "--class", "bench").wait(60) == 0
    assert station_row(lab_db, "st-a").state == "stopped"

    bad = tmp_path / "needs-bert.yaml"
    bad.write_text(SHORT.read_text().replace("requires: [psu, daq, dut]", "requires: [psu, daq, dut, scope]"))
    res = run_labctl("queue", "submit", str(bad), "--station", "st-a", "--db", lab_db)
    assert res.returncode == 4, res.stdout + res.stderr
    assert "the plan does not fit station st-a: nothing was queued" in res.stderr and "scope" in res.stderr
    res = run_labctl("queue", "submit", str(SHORT), "--station", "st-a", "--set", "nonexistent=1", "--db", lab_db)
    assert res.returncode == 4 and "nonexistent" in res.stderr
    res = run_labctl("queue", "submit", str(SHORT), "--db", lab_db)
    assert res.returncode == 4 and "exactly one of --station S or --station-class C" in res.stderr
    assert listed_jobs(lab_db) == []  # nothing queued by any of those

    submitted = []
    for prio in (0, 5, 0, 9):
        res = run_labctl("queue", "submit", str(SHORT), "--station-class", "bench", "--priority", str(prio),
                         "--db", lab_db, "--json")
        assert res.returncode == 0, res.stderr
        submitted.append(json.loads(res.stdout)["job"])
    res = run_labctl("queue", "submit", str(SHORT), "--station", "st-b", "--db", lab_db)
    assert res.returncode == 0 and "queued: fleet-short for station st-b" in res.stdout
    only_b = int(res.stdout.split()[1])
    cancelled = json.loads(run_labctl("queue", "submit", str(SHORT), "--station", "st-a", "--db", lab_db,
                                      "--json").stdout)["job"]
    res = run_labctl("queue", "cancel", str(cancelled), "--db", lab_db)
    assert res.returncode == 0 and f"job {cancelled} cancelled" in res.stdout
    assert run_labctl("queue", "cancel", str(cancelled), "--db", lab_db).returncode == 4

    st = json.loads(run_labctl("stations", "--db", lab_db, "--format", "json").stdout)
    assert [(s["station"], s["state"], s["queued"]) for s in st] == [("st-a", "stopped", 4), ("st-b", "stopped", 5)]
    assert st[0]["calibration_due"] == "2027-09-30" and st[0]["classes"] == ["bench"]

    agent = AgentProcess(tmp_path, fx_a, lab_db, "--exit-when-idle", "--class", "bench", name="st-a-2")
    assert agent.wait(120) == 0, agent.output()
    rows = {r.id: r for r in job_rows(lab_db)}
    ran = sorted((r for r in rows.values() if r.claimed_by == "st-a"), key=lambda r: r.claimed_at)
    assert [r.id for r in ran] == [submitted[3], submitted[1], submitted[0], submitted[2]]  # priority, then age
    assert all(r.state == "passed" for r in ran)
    assert rows[only_b].state == "queued" and rows[cancelled].state == "cancelled"  # never on another station
    shown = run_labctl("queue", "show", str(submitted[3]), "--db", lab_db, "--plan").stdout
    assert "state:      passed" in shown and f"sha256 {ran[0].plan_sha256}" in shown
    assert SHORT.read_text() in shown  # the plan as it was submitted
    csv_out = run_labctl("queue", "list", "--db", lab_db, "--format", "csv").stdout.splitlines()
    assert csv_out[0].startswith("job,state,priority,plan") and len(csv_out) == 1 + 6
    # the table shows each job's exit code too (docs/lab.md), "-" for one that has none yet
    table = run_labctl("queue", "list", "--db", lab_db, env={**os.environ, "COLUMNS": "250"}).stdout
    header = next(line for line in table.splitlines() if "state" in line and "submitted" in line)
    assert "exit" in header, table
    passed_row = next(line for line in table.splitlines() if f" {ran[0].id} " in f" {line} ")
    assert " 0 " in passed_row, table


@pytest.mark.postgres
@pytest.mark.slow
def test_cancelling_a_running_job_aborts_it_and_the_registry_shows_what_runs(tmp_path, lab_db):
    fx = station_fixture(tmp_path, "st-c", time_scale=5)  # a job of ~40 s: cancelled well before its end
    agent = AgentProcess(tmp_path, fx, lab_db)
    try:
        wait_for(lambda: station_row(lab_db, "st-c"), 60, "the station to register")
        res = run_labctl("queue", "submit", str(SLOW), "--station", "st-c", "--db", lab_db, "--json")
        job = json.loads(res.stdout)["job"]
        wait_for(lambda: (station_row(lab_db, "st-c").current_step or "").startswith("steps/"), 60, "a step")
        [st] = json.loads(run_labctl("stations", "--db", lab_db, "--format", "json").stdout)
        assert st["state"] == f"running job {job}" and st["plan"] == "fleet-slow" and st["run"]
        assert st["step"].startswith("steps/") and st["heartbeat_age_s"] < 5
        assert st["instruments"]["psu"]["idn"].startswith("Keysight Technologies,E36312A,MY59002391")
        assert st["instruments"]["chamber"]["calibration_due"] == "2027-09-30"
        table = run_labctl("stations", "--db", lab_db).stdout
        assert "st-c" in table and f"running job {job}" in table
        res = run_labctl("queue", "cancel", str(job), "--db", lab_db)
        assert "aborting it to the safe state (cancelling)" in res.stdout
        wait_for(lambda: job_rows(lab_db)[0].state == "cancelled", 60, "the job to be cancelled")
        [row] = job_rows(lab_db)
        assert row.exit_code == 3 and "cancelled by" in row.message
        wait_for(lambda: station_row(lab_db, "st-c").state == "idle", 30, "the station to be idle")
    finally:
        agent.signal(signal.SIGTERM)
        agent.wait(60)
    [st] = json.loads(run_labctl("stations", "--db", lab_db, "--format", "json").stdout)
    assert st["state"] == "stopped" and st["since"]


@pytest.mark.postgres
@pytest.mark.slow
def test_the_database_password_never_shows_anywhere(tmp_path, lab_db):
    url = lab_db.replace("postgres@", f"postgres:{SECRET}@") + "&sslmode=disable"
    assert SECRET in url
    fx = station_fixture(tmp_path, "st-p")
    agent = AgentProcess(tmp_path, fx, url)
    outputs: list[str] = []

    def cli(*args: str) -> subprocess.CompletedProcess:
        res = run_labctl(*args)
        outputs.extend([res.stdout, res.stderr])
        return res

    try:
        wait_for(lambda: station_row(lab_db, "st-p"), 60, "the station to register")
        assert cli("queue", "submit", str(SHORT), "--station", "st-p", "--db", url).returncode == 0
        assert cli("queue", "submit", str(tmp_path / "missing.yaml"), "--station", "st-p", "--db", url).returncode == 4
        wait_for(lambda: job_rows(lab_db)[0].state == "passed", 60, "the job")
        for args in (("queue", "list"), ("stations",), ("runs",), ("db", "status"), ("db", "upgrade")):
            assert cli(*args, "--db", url).returncode == 0
        bad_port = url.replace("127.0.0.1:5432", "127.0.0.1:1")
        for args in (("run", str(SHORT), "--fixture", str(fx)), ("stations",), ("db", "status"), ("db", "upgrade")):
            res = cli(*args, "--db", bad_port)
            assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
            assert "postgres:***@127.0.0.1:1" in res.stderr or "127.0.0.1" in res.stderr
    finally:
        agent.signal(signal.SIGTERM)
        agent.wait(60)
    outputs.append(agent.output())
    written = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
    schema = lab_db.split("search_path%3D")[1]
    dump = subprocess.run(["pg_dump", "-h", "127.0.0.1", "-U", "postgres", "-n", schema, "--data-only", "test"],
                          capture_output=True, text=True, check=True).stdout
    assert "fleet-short" in dump and "st-p" in dump  # the dump holds the lab's records
    assert not [o for o in outputs if SECRET in o]
    assert not [b for b in written if SECRET.encode() in b]
    assert SECRET not in dump


@pytest.mark.postgres
def test_a_class_job_given_back_bound_to_its_station_is_counted_for_that_station_only(tmp_path, lab_db):
    """A class job whose run began on st-a and went back to the queue (its agent stopped) may
    only be claimed by st-a, to resume its run: `labctl stations` counts it there, not for
    every station of the class (it had been counted for st-b too)."""
    from fleet_support import open_db, submit_many

    from labctl.fleet import queue

    fx_a, fx_b = station_fixture(tmp_path, "st-a"), station_fixture(tmp_path, "st-b")
    for fx in (fx_a, fx_b):
        assert AgentProcess(tmp_path, fx, lab_db, "--exit-when-idle", "--class", "bench").wait(60) == 0
    [job_id] = submit_many(lab_db, SHORT, 1, station_class="bench", fixture=fx_a)
    counts = lambda: {s["station"]: s["queued"]  # noqa: E731
                      for s in json.loads(run_labctl("stations", "--db", lab_db, "--format", "json").stdout)}
    assert counts() == {"st-a": 1, "st-b": 1}  # either may take it
    store = open_db(lab_db)
    try:
        job = queue.claim(store, "st-a", "agent-a", ["bench"])
        assert job is not None and job.id == job_id
        assert queue.set_run(store, job_id, "agent-a", "run-begun-on-st-a")
        assert queue.release(store, job_id, "agent-a", "SIGTERM: aborted to the safe state")
        assert queue.claim(store, "st-b", "agent-b", ["bench"]) is None  # st-b may not take it
    finally:
        store.close()
    assert counts() == {"st-a": 1, "st-b": 0}
