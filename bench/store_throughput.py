"""How fast the results store records measurements, with its real durability.

Every step's measurements are committed (SQLite WAL, synchronous=FULL: fsync per commit) when
its StepEnded is published, exactly as in a run. Events are built before each step (the
engine builds them anyway); the clock runs only while they are published through the bus
into the Recorder. Prints the rate per step size and its ratio to the 50,000/s target.

    .venv/bin/python bench/store_throughput.py                   # temp SQLite file
    .venv/bin/python bench/store_throughput.py --db postgresql://postgres@127.0.0.1/test
    .venv/bin/python bench/store_throughput.py --total 200000 --per-step 10,100,1000,10000

Not a test: it never fails on time.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from sqlalchemy import func, select

from labctl.bench.common import run_started
from labctl.engine import events as ev
from labctl.errors import LabctlError
from labctl.store import Recorder, open_store
from labctl.store.schema import measurements

TARGET = 50_000.0


def step_events(run_id: str, index: int, per_step: int, samples_every: int) -> tuple[str, list[ev.Event]]:
    key = f"steps/lane_ber[{index}]#1"
    t = time.time()
    out: list[ev.Event] = [ev.StepStarted(run_id=run_id, time=t, step_key=key, step_id="lane_ber", group="steps",
                                          check="link.ber", corner={"temp": 25, "vdd": 0.75}, corner_index=index)]
    limits = ev.Limits(low=None, high=1e-12, text="<= 1e-12")
    for j in range(per_step):
        out.append(ev.MeasurementRecorded(run_id=run_id, time=t, step_key=key, name="ber", value=1e-15 * (j + 1),
                                          unit="", limits=limits, verdict=ev.Verdict.PASS,
                                          labels={"lane": str(j % 16), "channel": str(j // 16 % 4)}))
        if samples_every and j % samples_every == 0:
            out.append(ev.SampleRecorded(run_id=run_id, time=t, step_key=key, series="die_temp", value=71.5))
    out.append(ev.StepEnded(run_id=run_id, time=t, step_key=key, outcome=ev.StepOutcome.PASS))
    return key, out


def bench_one(db: str, per_step: int, total: int, samples_every: int, synchronous: str = "FULL") -> tuple[float, float, int]:
    """Returns (measurements per second while publishing, mean StepEnded commit time, stored)."""
    run_id = f"bench-{per_step}-{os.getpid()}-{time.time_ns()}"
    with open_store(db, sqlite_synchronous=synchronous) as store:
        recorder = Recorder(store)
        bus = ev.EventBus()
        bus.subscribe(recorder)
        bus.publish(run_started(run_id))
        busy = commit = 0.0
        steps = max(1, total // per_step)
        for i in range(steps):
            _, events = step_events(run_id, i, per_step, samples_every)
            t0 = time.perf_counter()
            for e in events[:-1]:
                bus.publish(e)
            t1 = time.perf_counter()
            bus.publish(events[-1])  # StepEnded: the commit
            t2 = time.perf_counter()
            busy += t2 - t0
            commit += t2 - t1
        bus.publish(ev.RunEnded(run_id=run_id, time=time.time(), outcome=ev.RunOutcome.PASSED))
        recorder.close()
        assert not bus.errors and recorder.saved, bus.errors
        with store.read_engine.connect() as conn:
            stored = conn.execute(select(func.count()).where(measurements.c.run_id == run_id)).scalar()
    return steps * per_step / busy, commit / steps, stored


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", help="database (default: a new SQLite file in a temp folder)")
    ap.add_argument("--total", type=int, default=300_000, help="measurements per step size")
    ap.add_argument("--per-step", default="10,100,1000,10000", help="measurements per step, comma-separated")
    ap.add_argument("--synchronous", default="FULL,NORMAL",
                    help="SQLite synchronous modes to compare (FULL: fsync per commit, the default)")
    ap.add_argument("--samples-every", type=int, default=100, help="one sample per N measurements (0: none)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or str(Path(tmp) / "bench.db")
        print(f"store throughput into {db} (one commit per step; target {TARGET:,.0f}/s)")
        print(f"{'sync':>6} {'per step':>9} {'measurements/s':>15} {'vs target':>10} {'commit/step':>12} {'stored':>9}")
        modes = args.synchronous.split(",") if "sqlite" in db or "://" not in db else ["-"]
        for mode in modes:
            for per_step in (int(x) for x in args.per_step.split(",")):
                total = min(args.total, max(per_step * 20, args.total // 10 if per_step < 100 else args.total))
                rate, commit, stored = bench_one(db, per_step, total, args.samples_every, mode if mode != "-" else "FULL")
                print(f"{mode:>6} {per_step:>9} {rate:>15,.0f} {rate / TARGET:>9.2f}x {commit * 1e3:>10.2f}ms {stored:>9,}")


if __name__ == "__main__":
    try:
        main()
    except LabctlError as err:  # e.g. a PostgreSQL database without the schema: says what to run
        raise SystemExit(err.format()) from None
