"""Where a ``measure`` step's time goes: the instrument I/O, labctl's engine, the results store,
the console, and what watching for replies saves.

Runs plans of N ``measure`` steps in this process (``launch.execute``, as ``labctl run``
does) against ``labctl sim serve`` of an isolated fixture, four ways, and the raw pyvisa loop
doing the same two queries a step (``MEAS:VOLT? (@1)``, ``SYST:ERR?``) against the same lab:

* ``run``: as ``labctl run`` (SQLite store with its instrument I/O log, console to a buffer);
* ``no console``: the same without the console subscriber;
* ``no store``: without the console and without the results store (nothing recorded);
* ``no reply watch``: as ``run``, with every role's ``reply_spin_us`` set to 0 (a query
  sleeps until its reply at once: docs/drivers.md, "Transports and timeouts").

Each figure is the slope (wall time, and CPU of every thread of this process) between a
small and a large plan, the best of a few rounds; the differences are what the console and
the store cost a step, and ``no store`` minus the raw loop is the engine, the checks and the
instrument layer (plan loading included). The served lab runs on one CPU and this process
on another, as in ``labctl.bench.runsteps``. On a shared 2-vCPU VM the split between the parts
moved by up to ±30 µs from one invocation to the next: take more rounds for it.

A last table gives the spread of single steps in the large plan (the time from one step's
start to the next's, every step after the first 100, in the round with the lowest mean): the
median step against the mean says how much of a step's average is the typical step and how
much the occasional slow one (a group commit of the results store, the garbage collector,
other processes on the machine).

    .venv/bin/python bench/step_breakdown.py [--steps 300,3000] [--rounds 5] [--switch-interval 0.0002]

Not a test: it never fails on time.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

from labctl.bench.common import measure_plan, served_apart
from labctl.bench.runsteps import raw_pyvisa_step
from labctl.console import ConsoleReporter, make_console
from labctl.engine.events import StepStarted
from labctl.launch import RunRequest, execute
from labctl.sim.testing import isolated_fixture


class StepClock:
    """A subscriber noting when each step starts (``perf_counter``): the steps' spread."""

    def __init__(self) -> None:
        self.starts: list[float] = []

    def __call__(self, event: object) -> None:
        if isinstance(event, StepStarted):
            self.starts.append(time.perf_counter())

    def steps(self, skip: int = 100) -> list[float]:
        """Seconds from each step's start to the next's (the first ``skip`` left out: warm-up;
        a quarter of them in a short plan)."""
        skip = min(skip, len(self.starts) // 4)
        return [b - a for a, b in zip(self.starts[skip:], self.starts[skip + 1:], strict=False)]


def run_once(plan: Path, fixture: Path, db: Path, *, console: bool, store: bool,
             clock: StepClock | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``plan``."""
    subscribers = [ConsoleReporter(make_console(file=io.StringIO()))] if console else []
    if clock is not None:
        subscribers.append(clock)
    start, cpu = time.perf_counter(), time.process_time()
    out = execute(RunRequest(plan=str(plan), fixture=str(fixture), db=str(db), preflight=False, use_store=store),
                  subscribers, say=lambda _text: None)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    if out.exit_code != 0:
        raise SystemExit(f"the run of {plan.name} exited {int(out.exit_code)}")
    return wall, cpu


def spread(steps: list[float]) -> dict[str, float]:
    """Median, mean, 99th percentile of step times, and the share of all the time spent in
    steps slower than twice the median."""
    ordered = sorted(steps)
    median = statistics.median(ordered)
    slow = sum(t for t in ordered if t > 2 * median)
    return {"median": median, "mean": statistics.fmean(ordered), "p99": ordered[int(0.99 * (len(ordered) - 1))],
            "slow share": slow / sum(ordered)}


def without_watch(fixture: Path) -> Path:
    """A copy of ``fixture`` whose roles all have ``reply_spin_us: 0``."""
    data = yaml.safe_load(fixture.read_text(encoding="utf-8"))
    for binding in (data.get("roles") or {}).values():
        binding["options"] = {**(binding.get("options") or {}), "reply_spin_us": 0}
    out = fixture.with_name("no-watch-" + fixture.name)
    out.write_text(yaml.safe_dump(data), encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="300,3000", help="the small and the large plan's steps")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (the best of each figure is kept)")
    parser.add_argument("--switch-interval", type=float, default=None, metavar="SECONDS",
                        help="the interpreter's thread switch interval for the runs (sys.setswitchinterval; "
                             "default: Python's, 0.005)")
    args = parser.parse_args()
    if args.switch_interval is not None:
        sys.setswitchinterval(args.switch_interval)
    small, large = (int(n) for n in args.steps.split(","))
    ways = {"run": (True, True, True), "no console": (False, True, True), "no store": (False, False, True),
            "no reply watch": (True, True, False)}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        fixture = isolated_fixture(tmp / "lab")
        fixtures = {True: fixture, False: without_watch(fixture)}
        resource = yaml.safe_load(fixture.read_text())["roles"]["psu"]["resource"]
        plans = {n: measure_plan(tmp / f"measure-{n}.yaml", n) for n in (small, large)}
        best: dict[tuple[str, int], tuple[float, float]] = {}
        spreads: dict[str, dict[str, float]] = {}  # way -> the large plan's round with the lowest mean
        raw, raw_wall = float("inf"), float("inf")
        with served_apart(fixture):
            for r in range(args.rounds):
                wall, cpu = raw_pyvisa_step(resource, 2000)
                raw, raw_wall = min(raw, cpu), min(raw_wall, wall)
                for way, (console, store, watch) in ways.items():
                    for n, plan in plans.items():
                        clock = StepClock() if n == large else None
                        wall, cpu = run_once(plan, fixtures[watch], tmp / f"r{r}-{n}-{way}.db",
                                             console=console, store=store, clock=clock)
                        if clock is not None:
                            got = spread(clock.steps())
                            if got["mean"] < spreads.get(way, {"mean": float("inf")})["mean"]:
                                spreads[way] = got
                        old = best.get((way, n), (float("inf"), float("inf")))
                        best[way, n] = (min(old[0], wall), min(old[1], cpu))
    slope = {way: (best[way, large][1] - best[way, small][1]) / (large - small) for way in ways}
    walls = {way: (best[way, large][0] - best[way, small][0]) / (large - small) for way in ways}
    rows = [
        ("a step, as labctl run", slope["run"]),
        ("  console", slope["run"] - slope["no console"]),
        ("  results store (steps, measurements, instrument I/O log)", slope["no console"] - slope["no store"]),
        ("  engine, checks, instrument layer, plan loading", slope["no store"] - raw),
        ("  instrument I/O (raw pyvisa loop, same queries)", raw),
    ]
    print(f"CPU per measure step ({small}→{large} steps, best of {args.rounds}):")
    for label, seconds in rows:
        print(f"  {label:60s} {seconds * 1e6:7.1f} µs  {seconds / slope['run']:6.1%}")
    print("Wall time per measure step (the same runs):")
    for way in ways:
        print(f"  {way:60s} {walls[way] * 1e6:7.1f} µs  {walls[way] / raw_wall:5.2f}× the raw loop")
    print(f"  {'raw pyvisa loop':60s} {raw_wall * 1e6:7.1f} µs")
    print(f"  {'what watching for replies saves a step (no reply watch − run)':60s} "
          f"{(walls['no reply watch'] - walls['run']) * 1e6:7.1f} µs")
    print(f"Single steps of the {large}-step plan (start to next start; raw loop {raw_wall * 1e6:.1f} µs a step):")
    print(f"  {'':22s} {'median':>14s} {'mean':>14s} {'p99':>9s}  time in steps > 2× median")
    for way, got in spreads.items():
        print(f"  {way:22s} {got['median'] * 1e6:6.1f} µs {got['median'] / raw_wall:4.2f}× "
              f"{got['mean'] * 1e6:6.1f} µs {got['mean'] / raw_wall:4.2f}× {got['p99'] * 1e6:6.0f} µs  "
              f"{got['slow share']:6.1%}")


if __name__ == "__main__":
    main()
