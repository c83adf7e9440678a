"""What a long plan costs in memory: a loaded plan's Python objects a step, and the peak
memory (RSS) of ``labctl validate`` and ``labctl run``.

For each size (default 1,000, 10,000 and 100,000 ``measure`` steps, the plan of ``python -m
labctl.bench``, read with the plan cache off):

* ``held``: the bytes a step the loaded plan keeps (``tracemalloc``, after the load and a
  garbage collection: the steps' models, the shared arguments and limits, the loader's
  per-step keys), and ``peak``: the most traced while loading, a step;
* ``validate``: the peak RSS of ``labctl validate PLAN`` (its own process), in MiB and in
  KiB a step beyond the interpreter's start (``labctl --version``).

With ``--run N``, also the peak RSS of ``labctl run`` of an N-step plan against ``labctl sim
serve`` of an isolated fixture (SQLite store, console piped), beside the same plan's
``validate``: what running adds (the engine's per-step results, the store's bookkeeping).

    .venv/bin/python bench/plan_memory.py [--steps 1000,10000,100000] [--run 20000]

The plans' sizes pass the default input limits only up to about 30,000 steps; the commands
run with the limits raised, as ``python -m labctl.bench`` does. Never fails on a figure.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from labctl.bench.common import env, measure_plan

_HELD = r"""
import gc, sys, tracemalloc
from labctl.plan.loader import check_plan
tracemalloc.start()
loaded, errors = check_plan(sys.argv[1])
assert loaded is not None and not errors, errors[:3]
gc.collect()
held, peak = tracemalloc.get_traced_memory()
print(held, peak)
"""


def _rss_kib(*args: str) -> int:
    """Peak RSS in KiB of ``python -m labctl ARGS`` in a process of its own (its output is shown
    only if it fails)."""
    proc = subprocess.Popen([sys.executable, "-m", "labctl", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env(big=True, LABCTL_PLAN_CACHE="off"))
    out = proc.stdout.read() if proc.stdout else ""
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"labctl {' '.join(args)} exited {proc.returncode}:\n{out[-2000:]}")
    return usage.ru_maxrss


def held_bytes(plan: Path) -> tuple[int, int]:
    """(bytes the loaded plan keeps, most bytes traced while loading) in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", _HELD, str(plan)], capture_output=True, text=True, check=True,
                         env=env(big=True, LABCTL_PLAN_CACHE="off"), timeout=1200).stdout.split()
    return int(out[0]), int(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="1000,10000,100000", help="plan sizes, comma-separated")
    parser.add_argument("--run", type=int, default=0, metavar="N", help="also run an N-step plan (0: no run)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.steps.split(",")]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        base = _rss_kib("--version")
        print(f"labctl --version: {base / 1024:.0f} MiB RSS (the interpreter's start)")
        print(f"{'steps':>8s} {'held a step':>12s} {'peak a step':>12s} {'validate RSS':>13s} {'beyond start':>14s}")
        for n in sizes:
            plan = measure_plan(tmp / f"plan-{n}.yaml", n)
            held, peak = held_bytes(plan)
            rss = _rss_kib("validate", str(plan))
            print(f"{n:8,d} {held / n:10,.0f} B {peak / n:10,.0f} B {rss / 1024:9,.0f} MiB "
                  f"{(rss - base) / n:8,.2f} KiB/step")
        if args.run:
            run_rows(tmp, args.run, base)


def run_rows(tmp: Path, n: int, base: int) -> None:
    from labctl.sim.testing import isolated_fixture, served_lab

    fixture = isolated_fixture(tmp / "lab")
    plan = measure_plan(tmp / f"run-{n}.yaml", n)
    validate = _rss_kib("validate", str(plan))
    with served_lab(fixture):
        run = _rss_kib("run", str(plan), "--fixture", str(fixture), "--db", str(tmp / "run.db"), "--no-preflight")
    print(f"labctl run of {n:,d} steps: {run / 1024:,.0f} MiB RSS, {(run - base) / n:,.2f} KiB/step beyond start "
          f"(validate of the same plan: {validate / 1024:,.0f} MiB, {(validate - base) / n:,.2f} KiB/step)")


if __name__ == "__main__":
    main()
