"""Benchmark: where a `labctl run` step's CPU goes, thread by thread.

Runs `labctl run` of 500 and 5,000 `measure` steps (the plan of `python -m labctl.bench`)
against `labctl sim serve` on an isolated fixture, twice each, and prints for every thread
its CPU per step (the slope between the two sizes, the best of the two rounds) and the wall
time per step. The run's own thread is ``MAIN``; the results store writes on
``labctl-recorder-db``. Never fails on time.

Run: .venv/bin/python bench/run_threads.py [SMALL LARGE]
"""

from __future__ import annotations

import atexit
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

_CHILD = "--thread-times-to"


def _child(out: str, argv: list[str]) -> None:
    """``labctl ARGV`` in this process, writing each thread's CPU seconds to ``out`` at exit."""
    seconds: dict[str, float] = {}
    run = threading.Thread.run

    def timed_run(self: threading.Thread) -> None:
        try:
            run(self)
        finally:
            seconds[self.name] = seconds.get(self.name, 0.0) + time.thread_time()

    threading.Thread.run = timed_run  # type: ignore[method-assign]
    start = time.perf_counter()

    def report() -> None:
        seconds["MAIN"] = time.thread_time()
        seconds["WALL"] = time.perf_counter() - start
        Path(out).write_text("".join(f"{k}\t{v:.6f}\n" for k, v in seconds.items()), encoding="utf-8")

    atexit.register(report)
    sys.argv = ["labctl", *argv]
    from labctl.cli import main

    main()


def main(small: int = 500, large: int = 5000) -> None:
    from labctl.bench.common import env, measure_plan
    from labctl.sim.testing import isolated_fixture, served_lab

    with tempfile.TemporaryDirectory(prefix="labctl-bench-threads-") as tmp_dir:
        tmp = Path(tmp_dir)
        fixture = isolated_fixture(tmp / "lab")
        best: dict[int, dict[str, float]] = {}
        with served_lab(fixture):
            for rnd in range(2):
                for n in (small, large):
                    plan = measure_plan(tmp / f"measure-{n}.yaml", n)
                    out = tmp / f"threads-{n}-{rnd}.txt"
                    proc = subprocess.run(
                        [sys.executable, __file__, _CHILD, str(out), "run", str(plan), "--fixture", str(fixture),
                         "--db", str(tmp / f"run-{n}-{rnd}.db"), "--no-preflight"],
                        capture_output=True, text=True, env=env())
                    if proc.returncode != 0:
                        raise SystemExit(f"labctl run of {n} steps exited {proc.returncode}: {proc.stderr[-2000:]}")
                    for line in out.read_text(encoding="utf-8").splitlines():
                        name, value = line.split("\t")
                        row = best.setdefault(n, {})
                        row[name] = min(row.get(name, float("inf")), float(value))
    print(f"labctl run, {small} → {large} measure steps: per step (slope), best of 2 rounds")
    for name, value in sorted(best[large].items(), key=lambda kv: -kv[1]):
        if name in best[small]:
            per = (value - best[small][name]) / (large - small)
            if abs(per) >= 0.5e-6:
                print(f"  {name:32s} {per * 1e6:8.1f} µs/step" + ("  (wall)" if name == "WALL" else ""))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == _CHILD:
        _child(sys.argv[2], sys.argv[3:])
    else:
        sizes = [int(a) for a in sys.argv[1:3]]
        main(*sizes)
