"""What the results store costs one ``measure`` step, thread by thread, and what a row costs SQLite.

Publishes, for N steps, what a ``measure`` step of ``labctl run`` gives the store: a step start,
one measurement with limits, the step's end, and its four instrument I/O records (a query and
its reply, twice), through the event bus into a :class:`~labctl.store.Recorder` on a SQLite
file (``synchronous=FULL``, the default commit window), with the garbage collector set as
during a run (``gcpause.gc_settled``). Prints the CPU a step of the main
thread (publishing, the recorder's bookkeeping; the events are built there too, as the engine
builds them anyway) and of the store's other threads (the group commit's writer). With
``--profile``, the writer's functions by their own time (cProfile, inflated ~1.5×).

A last pair of lines times SQLite alone (``executemany`` into an in-memory table of the
``measurements`` columns): a measurement row as the store binds it, ten of its columns NULL
(limits it does not have, labels, the value as text), and the same row with those columns left
out of the statement. Python's sqlite3 module binds a NULL through its adapter lookup.

    .venv/bin/python bench/store_step.py [--steps 20000] [--profile]

Not a test: it never fails on time.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sqlite3
import tempfile
import time
from pathlib import Path

from labctl.bench.common import run_started
from labctl.engine import events as ev
from labctl.gcpause import gc_settled
from labctl.store import open_store
from labctl.store import sink as sink_module
from labctl.store.recorder import Recorder, commit_window_from_env
from labctl.store.sink import _MEASUREMENT_COLUMNS

RESOURCE = "TCPIP::127.0.0.1::5025::SOCKET"


def recorded_steps(db: Path, steps: int, profile: cProfile.Profile | None) -> tuple[float, float]:
    """(main thread's CPU, every thread's CPU) in seconds, for ``steps`` steps recorded."""
    if profile is not None:
        write = sink_module.DbSink.write

        def profiled(self, batch):  # noqa: ANN001, ANN202
            profile.enable()
            try:
                return write(self, batch)
            finally:
                profile.disable()

        sink_module.DbSink.write = profiled  # type: ignore[method-assign]
    run_id = f"bench-{os.getpid()}-{time.time_ns()}"
    limits = ev.Limits(low=-1.0, high=30.0, text="-1 V ≤ x ≤ 30 V")
    with open_store(str(db)) as store:
        recorder = Recorder(store, commit_window=commit_window_from_env())
        bus = ev.EventBus()
        bus.subscribe(recorder)
        bus.publish(run_started(run_id))
        every, main = time.process_time(), time.thread_time()
        for i in range(steps):
            key, t = f"steps/m{i}#1", time.time()
            bus.publish(ev.StepStarted(run_id=run_id, time=t, step_key=key, step_id=f"m{i}", group="steps",
                                       check="measure"))
            bus.publish(ev.MeasurementRecorded(run_id=run_id, time=t, step_key=key, name="value", value=12.0,
                                               unit="V", limits=limits, verdict=ev.Verdict.PASS))
            recorder.add_session_log(run_id, [
                {"t": t, "instrument": "psu", "resource": RESOURCE, "kind": "query", "text": "MEAS:VOLT? (@1)"},
                {"t": t, "instrument": "psu", "resource": RESOURCE, "kind": "reply", "text": "12.0", "elapsed_s": 4e-5},
                {"t": t, "instrument": "psu", "resource": RESOURCE, "kind": "query", "text": "SYST:ERR?"},
                {"t": t, "instrument": "psu", "resource": RESOURCE, "kind": "reply", "text": '+0,"No error"',
                 "elapsed_s": 4e-5},
            ], step_key=key)
            bus.publish(ev.StepEnded(run_id=run_id, time=t, step_key=key, outcome=ev.StepOutcome.PASS))
        main = time.thread_time() - main
        bus.publish(ev.RunEnded(run_id=run_id, time=time.time(), outcome=ev.RunOutcome.PASSED))
        recorder.close()  # waits for the last commit: its CPU counts too
        every = time.process_time() - every
        if bus.errors or not recorder.saved:
            raise SystemExit(f"the recorder failed: {bus.errors} {recorder.problem}")
    return main, every


def sqlite_rows(rows: int) -> tuple[float, float]:
    """Seconds a row of ``executemany``: a measurement row as bound (NULLs), and without them."""
    from labctl.store.store import _bind_none_directly

    _bind_none_directly()  # as the store binds None
    con = sqlite3.connect(":memory:")
    cols = _MEASUREMENT_COLUMNS
    con.execute(f"CREATE TABLE m (id INTEGER PRIMARY KEY, {', '.join(cols)}, UNIQUE (step_ref, seq))")
    row = {c: None for c in cols} | {"step_ref": 0, "run_id": "r" * 32, "seq": 1, "name": "value", "value": 12.0,
                                      "unit": "V", "low": -1.0, "high": 30.0, "limit_text": "-1 V ≤ x ≤ 30 V",
                                      "verdict": "pass", "t": 1.5}
    kept = [c for c in cols if row[c] is not None]
    out = []
    for names in (cols, kept):
        data = [tuple(i if c == "step_ref" else row[c] for c in names) for i in range(rows)]
        sql = f"INSERT INTO m ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
        best = float("inf")
        for _ in range(3):
            con.execute("DELETE FROM m")
            start = time.perf_counter()
            con.executemany(sql, data)
            best = min(best, time.perf_counter() - start)
        out.append(best / rows)
    return out[0], out[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--profile", action="store_true", help="also list the writer's functions by their own time")
    args = ap.parse_args()
    profile = cProfile.Profile() if args.profile else None
    with tempfile.TemporaryDirectory() as tmp, gc_settled():  # the collector as during a run
        main_cpu, every = recorded_steps(Path(tmp) / "store.db", args.steps, profile)
    n = args.steps
    print(f"Recording a measure step ({n:,} steps; a step row, a measurement row, four I/O rows), CPU a step:")
    print(f"  main thread (events published, recorder's bookkeeping)   {main_cpu / n * 1e6:7.1f} µs")
    print(f"  the store's other threads (group commits)                {(every - main_cpu) / n * 1e6:7.1f} µs")
    with_nulls, without = sqlite_rows(max(1000, n * 5))
    print("SQLite alone, a measurement row (executemany, in memory):")
    print(f"  as bound, ten columns NULL                                {with_nulls * 1e6:7.2f} µs")
    print(f"  those columns left out of the statement                   {without * 1e6:7.2f} µs")
    if profile is not None:
        print("The writer's functions by own time (cProfile):")
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
