"""Where a ``measure`` step's CPU goes: the instrument I/O, labctl's engine, the results store,
the console.

Runs plans of N ``measure`` steps in this process (``launch.execute``, as ``labctl run``
does) against ``labctl sim serve`` of an isolated fixture, three ways, and the raw pyvisa loop
doing the same two queries a step (``MEAS:VOLT? (@1)``, ``SYST:ERR?``) against the same lab:

* ``run``: as ``labctl run`` (SQLite store with its instrument I/O log, console to a buffer);
* ``no console``: the same without the console subscriber;
* ``no store``: without the console and without the results store (nothing recorded).

Each figure is the CPU slope (every thread of this process) between a small and a large plan,
the best of a few rounds; the differences are what the console and the store cost a step, and
``no store`` minus the raw loop is the engine, the checks and the instrument layer (plan
loading included). The served lab runs on one CPU and this process on another, as in
``labctl.bench.runsteps``. The total is steady; on a shared 2-vCPU VM the split between the
parts moved by up to ±30 µs from one invocation to the next: take more rounds for it.

    .venv/bin/python bench/step_breakdown.py [--steps 300,3000] [--rounds 5]

Not a test: it never fails on time.
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
from pathlib import Path

import yaml

from labctl.bench.common import current_cpus, measure_plan, pin, placement
from labctl.bench.runsteps import raw_pyvisa_step
from labctl.console import ConsoleReporter, make_console
from labctl.launch import RunRequest, execute
from labctl.sim.testing import isolated_fixture, served_lab


def run_cpu(plan: Path, fixture: Path, db: Path, *, console: bool, store: bool) -> float:
    subscribers = [ConsoleReporter(make_console(file=io.StringIO()))] if console else []
    start = time.process_time()
    out = execute(RunRequest(plan=str(plan), fixture=str(fixture), db=str(db), preflight=False, use_store=store),
                  subscribers, say=lambda _text: None)
    cpu = time.process_time() - start
    if out.exit_code != 0:
        raise SystemExit(f"the run of {plan.name} exited {int(out.exit_code)}")
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="300,3000", help="the small and the large plan's steps")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (the best of each figure is kept)")
    args = parser.parse_args()
    small, large = (int(n) for n in args.steps.split(","))
    ways = {"run": (True, True), "no console": (False, True), "no store": (False, False)}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        fixture = isolated_fixture(tmp / "lab")
        resource = yaml.safe_load(fixture.read_text())["roles"]["psu"]["resource"]
        plans = {n: measure_plan(tmp / f"measure-{n}.yaml", n) for n in (small, large)}
        client, lab = placement()
        everywhere = current_cpus()
        best: dict[tuple[str, int], float] = {}
        raw = float("inf")
        pin(lab)
        try:
            with served_lab(fixture):
                pin(client)
                for r in range(args.rounds):
                    raw = min(raw, raw_pyvisa_step(resource, 2000)[1])
                    for way, (console, store) in ways.items():
                        for n, plan in plans.items():
                            cpu = run_cpu(plan, fixture, tmp / f"r{r}-{n}-{way}.db", console=console, store=store)
                            best[way, n] = min(best.get((way, n), float("inf")), cpu)
        finally:
            pin(everywhere)
    slope = {way: (best[way, large] - best[way, small]) / (large - small) for way in ways}
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


if __name__ == "__main__":
    main()
