"""Benchmark: the instructions one recorded measurement costs, counted by valgrind's callgrind.

The CPU a measurement (``python -m labctl.bench``'s record row) moves by ±30 % through an hour
on a shared VM. Instructions do not: this counts, for each checkout given (default: this one),
a process that publishes steps of 1,000 measurements (limits, one label) through the event bus
into the recorder (SQLite file, ``synchronous=FULL``, the default commit window) and the
console, as the record row does, the measurement events built in the loop, the store's
threads included. The figure is the slope between a small and a large number of steps,
instructions a measurement, with each checkout's difference to the first. Rounds alternate
between the checkouts. About 40 s a checkout and round. Never fails on time.

    .venv/bin/python bench/record_instructions.py [old=/tmp/old new=.] [--rounds 1] [--steps 2,12]

`git worktree add /tmp/old <commit>` makes an older checkout to compare with (its modules
are run from that folder with this environment's packages).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from step_instructions import (  # bench/ is this script's folder, first on sys.path
    ROOT,
    callgrind,
    counted_checkouts,
)

PER_STEP = 1000  # (what labctl.bench.runsteps._record_measurements publishes a step)


def record(db: str, steps: int) -> None:
    """What is counted: ``labctl.bench.runsteps._record_measurements`` of this checkout (the
    record row's loop: ``steps`` steps of :data:`PER_STEP` measurements recorded in ``db``),
    loaded from its file so that the same program runs in every checkout counted, with that
    checkout's labctl (an older one may not have the function)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("counted_runsteps", ROOT / "labctl" / "bench" / "runsteps.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module._record_measurements(Path(db), steps)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="*", metavar="NAME=PATH", help="a name and the checkout to import labctl from")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--steps", default="2,12", help=f"the small and the large number of steps of {PER_STEP:,}")
    ap.add_argument("--child", nargs=2, metavar=("DB", "STEPS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        record(args.child[0], int(args.child[1]))
        return 0
    trees, small, large = counted_checkouts(ap, args.trees, args.steps)
    slopes: dict[str, list[float]] = {name: [] for name, _ in trees}
    with tempfile.TemporaryDirectory(prefix="labctl-record-instructions-") as tmp_name:
        tmp = Path(tmp_name)
        for r in range(args.rounds):
            for name, path in trees if r % 2 == 0 else trees[::-1]:
                env = {k: v for k, v in os.environ.items() if k != "LABCTL_COMMIT_WINDOW"}
                env["PYTHONPATH"] = os.pathsep.join([path, str(ROOT / "bench")])
                env["LABCTL_DB_TIMEOUT"] = "600"  # a group commit takes valgrind ~50 times as long
                counts = {n: sum(callgrind([__file__, "--child", str(tmp / f"{name}-{n}-{r}.db"), str(n)], env, tmp,
                                           f"{name}-{n}-{r}", f"recording {n} steps"))
                          for n in (small, large)}
                slopes[name].append((counts[large] - counts[small]) / ((large - small) * PER_STEP))
                print(f"  round {r + 1} {name}: {slopes[name][-1]:,.0f} a measurement", flush=True)
    print(f"Instructions a recorded measurement (steps of {PER_STEP:,}, {small}→{large} steps, the median of "
          f"{args.rounds} round{'s' if args.rounds != 1 else ''}; callgrind, every thread):")
    first = None
    for name, _path in trees:
        per = statistics.median(slopes[name])
        first = per if first is None else first
        print(f"  {name:12s} {per:10,.0f}  {100 * (per / first - 1):+6.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
