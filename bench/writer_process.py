"""Would the wall ratio be met with the results store's writer in a process of its own?

An experiment, not a way labctl runs: ``labctl run`` writes from threads of its own process
(docs/store.md). This script runs plans of N ``measure`` steps in this process as
``bench/step_breakdown.py`` does (``launch.execute``, SQLite store, console to a buffer)
against ``labctl sim serve`` of an isolated fixture, three ways:

* ``threads``: as labctl ships (the recorder's writer and group commit on threads);
* ``child``: the recorder's database writes (its ``DbSink``) in a forked child process at the
  default priority, each batch handed over pickled through a pipe (the recorder's bookkeeping,
  the group commit's timing and the spool stay as they are);
* ``child, idle``: the same child at the lowest priority (``SCHED_IDLE``): it runs only
  while the run's CPU would be idle, so it never delays a step, but it may fall behind and
  catch up at the end of the run (the run ends once everything is written).

With ``--placement pinned`` (the default, as ``python -m labctl.bench``) the lab has one CPU
and this process, the child with it, the other; with ``--placement free`` nothing is pinned,
so the child may write on the lab's CPU, as on a bench PC with a core to spare. Figures per
way: the wall-time slope a step between the small and the large plan (its end included), its
ratio to the raw pyvisa loop's step, and the spread of single steps of the large plan
(median, mean, p99), the best of ``--rounds``.

    .venv/bin/python bench/writer_process.py [--steps 300,3000] [--rounds 2] [--placement free]

Not a test: it never fails on time.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_breakdown import StepClock, run_once, spread  # noqa: E402

from labctl.bench.common import current_cpus, measure_plan, pin, placement  # noqa: E402
from labctl.bench.runsteps import raw_pyvisa_step  # noqa: E402
from labctl.sim.testing import isolated_fixture, served_lab  # noqa: E402
from labctl.store import recorder as recorder_module  # noqa: E402


def _serve(conn: Any, url: str, heartbeat_interval: float, idle: bool) -> None:
    """The child: a ``DbSink`` on its own connection, one call a message, "ok" or the error back."""
    if idle:
        with contextlib.suppress(AttributeError, OSError):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    from labctl.store.sink import DbSink
    from labctl.store.store import Store

    sink = DbSink(Store(url, mark_interrupted=False), heartbeat_interval=heartbeat_interval)
    while True:
        try:
            name, arg = pickle.loads(conn.recv_bytes())
        except EOFError:
            return
        if name == "close":
            conn.send_bytes(b"ok")
            return
        try:
            getattr(sink, name)(arg)
            conn.send_bytes(b"ok")
        except Exception as exc:  # noqa: BLE001 - handed to the recorder, which spools
            conn.send_bytes(pickle.dumps(exc))


class ChildSink:
    """What the recorder calls ``write`` and ``write_progress`` on, forwarded to the child."""

    def __init__(self, store: Any, *, heartbeat_interval: float, idle: bool) -> None:
        ctx = multiprocessing.get_context("fork")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, store.url, heartbeat_interval, idle), daemon=True)
        self._proc.start()
        child.close()

    def _call(self, name: str, arg: Any) -> None:
        self._conn.send_bytes(pickle.dumps((name, arg), protocol=pickle.HIGHEST_PROTOCOL))
        reply = self._conn.recv_bytes()
        if reply != b"ok":
            raise pickle.loads(reply)

    def write(self, batch: Any) -> None:
        self._call("write", batch)

    def write_progress(self, event: Any) -> None:
        self._call("write_progress", event)

    def close(self) -> None:
        self._call("close", None)
        self._proc.join()


@contextlib.contextmanager
def writer(way: str):  # noqa: ANN201
    """The recorder's sink as ``way`` has it, for the runs inside."""
    if way == "threads":
        yield
        return
    Recorder, DbSink = recorder_module.Recorder, recorder_module.DbSink  # noqa: N806
    close = Recorder.close

    def make(store: Any, *, heartbeat_interval: float) -> ChildSink:
        return ChildSink(store, heartbeat_interval=heartbeat_interval, idle=way == "child, idle")

    def closing(self: Any) -> None:
        close(self)
        self._sink.close()

    recorder_module.DbSink, Recorder.close = make, closing
    try:
        yield
    finally:
        recorder_module.DbSink, Recorder.close = DbSink, close


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="300,3000", help="the small and the large plan's steps")
    parser.add_argument("--rounds", type=int, default=2, help="rounds (the best of each figure is kept)")
    parser.add_argument("--placement", choices=("pinned", "free"), default="pinned")
    args = parser.parse_args()
    small, large = (int(n) for n in args.steps.split(","))
    ways = ("threads", "child", "child, idle")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        fixture = isolated_fixture(tmp / "lab")
        resource = yaml.safe_load(fixture.read_text())["roles"]["psu"]["resource"]
        plans = {n: measure_plan(tmp / f"measure-{n}.yaml", n) for n in (small, large)}
        client, lab = placement() if args.placement == "pinned" else (set(), set())
        everywhere = current_cpus()
        wall: dict[tuple[str, int], float] = {}
        spreads: dict[str, dict[str, float]] = {}
        raw = float("inf")
        pin(lab)
        try:
            with served_lab(fixture):
                pin(client)
                for r in range(args.rounds):
                    raw = min(raw, raw_pyvisa_step(resource, 2000)[0])
                    for way in ways:
                        with writer(way):
                            for n, plan in plans.items():
                                clock = StepClock() if n == large else None
                                w, _cpu = run_once(plan, fixture, tmp / f"r{r}-{n}-{ways.index(way)}.db",
                                                   console=True, store=True, clock=clock)
                                wall[way, n] = min(wall.get((way, n), float("inf")), w)
                                if clock is not None:
                                    got = spread(clock.steps())
                                    if got["mean"] < spreads.get(way, {"mean": float("inf")})["mean"]:
                                        spreads[way] = got
        finally:
            pin(everywhere)
    print(f"The results store's writer, {args.placement} ({small}→{large} steps, best of {args.rounds}; "
          f"raw pyvisa loop {raw * 1e6:.1f} µs a step):")
    print(f"  {'':12s} {'wall a step (slope)':>24s} {'median step':>18s} {'mean step':>18s} {'p99':>9s}")
    for way in ways:
        slope = (wall[way, large] - wall[way, small]) / (large - small)
        got = spreads[way]
        print(f"  {way:12s} {slope * 1e6:11.1f} µs {slope / raw:5.2f}× "
              f"{got['median'] * 1e6:9.1f} µs {got['median'] / raw:4.2f}× "
              f"{got['mean'] * 1e6:9.1f} µs {got['mean'] / raw:4.2f}× {got['p99'] * 1e6:6.0f} µs")


if __name__ == "__main__":
    main()
