"""How fast one PostgreSQL serves a lab: jobs claimed per second by 8 agents, and measurements
per second written by 8 concurrent stations. Each figure is measured in the same run with 1
process too, and the ratio printed (how well the database scales across stations).

* claims: N jobs are queued; P processes each loop ``claim`` (SELECT … FOR UPDATE SKIP
  LOCKED, then UPDATE, one transaction) and ``finish`` — the queue's part of a job, without
  running anything. Every job is checked to be claimed exactly once.
* measurements: P processes each record a run through the real Recorder (one commit per step,
  as in a run), steps of ``--per-step`` measurements.

    .venv/bin/python bench/fleet_throughput.py          # PostgreSQL on 127.0.0.1:5432, own schema
    .venv/bin/python bench/fleet_throughput.py --jobs 2000 --measurements 400000

Not a test: it never fails on time.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import func, select

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _claimer(url: str, station: str, start: mp.Event, out: mp.Queue) -> None:
    from labctl.fleet import queue
    from labctl.store import open_store

    store = open_store(url, mark_interrupted=False)
    done = 0
    start.wait()
    t0 = time.perf_counter()
    while (job := queue.claim(store, station, f"agent-{station}", ["bench"])) is not None:
        queue.finish(store, job.id, f"agent-{station}", "passed", 0)
        done += 1
    out.put((done, time.perf_counter() - t0))
    store.close()


def _writer(url: str, station: str, total: int, per_step: int, start: mp.Event, out: mp.Queue) -> None:
    from store_throughput import step_events

    from labctl.engine import events as ev
    from labctl.store import Recorder, open_store

    store = open_store(url, mark_interrupted=False)
    recorder = Recorder(store)
    bus = ev.EventBus()
    bus.subscribe(recorder)
    run_id = f"bench-{station}-{os.getpid()}-{time.time_ns()}"
    steps = [step_events(run_id, i, per_step, 0)[1] for i in range(max(1, total // per_step))]
    start.wait()
    t0 = time.perf_counter()
    bus.publish(ev.RunStarted(
        run_id=run_id, time=time.time(), plan_name="bench", plan_version="1", plan_hash="0" * 64, plan_text="",
        plan_path="bench", station=station, dut_serial="BENCH", operator=None, labctl_version="0",
        host=socket.gethostname(), pid=os.getpid()))
    for events in steps:
        for e in events:
            bus.publish(e)
    bus.publish(ev.RunEnded(run_id=run_id, time=time.time(), outcome=ev.RunOutcome.PASSED))
    recorder.close()
    out.put((len(steps) * per_step, time.perf_counter() - t0))
    store.close()


def _parallel(target, procs: int, args_for) -> tuple[int, float]:
    ctx = mp.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    workers = [ctx.Process(target=target, args=(*args_for(i), start, out)) for i in range(procs)]
    for w in workers:
        w.start()
    time.sleep(2.0)  # let every process import and connect before the clock starts
    t0 = time.perf_counter()
    start.set()
    results = [out.get(timeout=300) for _ in workers]
    wall = time.perf_counter() - t0
    for w in workers:
        w.join()
    return sum(n for n, _ in results), wall


def bench_claims(url: str, jobs: int, procs: int) -> float:
    from labctl.fixture import load_fixture
    from labctl.fleet import queue
    from labctl.store import open_store
    from labctl.store.schema import jobs as jobs_table

    store = open_store(url, mark_interrupted=False)
    bundle = queue.bundle_plan("smoke.yaml", {}, [("bench", load_fixture("sim-bench.yaml"))])
    with store.engine.begin() as conn:
        conn.execute(jobs_table.delete())
    for _ in range(jobs):
        queue.submit(store, bundle, station=None, station_class="bench", dut=None, overrides={})
    done, wall = _parallel(_claimer, procs, lambda i: (url, f"st-{i}"))
    with store.read_engine.connect() as conn:
        states = dict(conn.execute(select(jobs_table.c.state, func.count()).group_by(jobs_table.c.state)).all())
        claims = conn.execute(select(func.max(jobs_table.c.claims))).scalar()
    store.close()
    assert done == jobs and states == {"passed": jobs} and claims == 1, (done, states, claims)
    return done / wall


def bench_measurements(url: str, total: int, per_step: int, procs: int) -> float:
    done, wall = _parallel(_writer, procs, lambda i: (url, f"st-{i}", total // procs, per_step))
    return done / wall


def main() -> None:
    from labctl.store.testing import temporary_database

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=800, help="jobs queued for the claim benchmark")
    ap.add_argument("--measurements", type=int, default=160_000, help="measurements written in all")
    ap.add_argument("--per-step", type=int, default=100)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, temporary_database("postgresql", Path(tmp)) as url:
        print(f"fleet throughput against one PostgreSQL ({args.agents} agents/stations vs 1, one run)")
        one = bench_claims(url, args.jobs // 4, 1)
        many = bench_claims(url, args.jobs, args.agents)
        print(f"jobs claimed/s:          1 agent {one:>9,.0f}   {args.agents} agents {many:>9,.0f}   ratio {many / one:.2f}x")
        one = bench_measurements(url, args.measurements // 4, args.per_step, 1)
        many = bench_measurements(url, args.measurements, args.per_step, args.agents)
        print(f"measurements written/s:  1 station {one:>7,.0f}   {args.agents} stations {many:>7,.0f}   "
              f"ratio {many / one:.2f}x  ({args.per_step} per step, one commit per step)")
        print(f"({os.cpu_count()} CPU core(s) shared by the database, the agents and everything else on this machine)")


if __name__ == "__main__":
    main()
