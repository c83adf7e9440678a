"""Benchmark: the instructions a `measure` step costs labctl, counted by valgrind's callgrind.

Wall and CPU time of a step move by ±30 % between runs on a shared VM, so a change that saves
a few per cent cannot be told from the noise by timing it (bench/compare_trees.py needs many
rounds for 10 %). Instructions executed do not depend on what else the machine is doing: two
runs of the same checkout agree within about 2 % here.

For each checkout given (default: this one), `labctl run` of a small and a large plan of
`measure` steps (the plan of `python -m labctl.bench`) runs under
`valgrind --tool=callgrind --separate-threads=yes` against `labctl sim serve` (not under
valgrind). The figure is the slope, instructions per step, for the run's main thread and for
its other threads together (the results store's writer above all), with each checkout's
difference to the first. Rounds alternate between the checkouts. The floor is the
hand-written pyvisa loop of ``labctl.bench.runsteps`` doing the same two queries a step,
counted the same way (with this checkout's labctl); "beyond raw" is labctl's own share.

A run under callgrind is about 50 times slower, so what labctl does by the clock comes more
often per step than in a normal run. Two settings keep it close:

* ``LABCTL_COMMIT_WINDOW=5`` (normally 0.1 s): a group commit holds about as many steps as
  one of a normal run does;
* every role's ``reply_spin_us`` is 0: the reply watch looks for a reply as long as it takes
  to come, which valgrind stretches.

The console still prints its ~10 lines a second, so its share is larger than in a normal
run. Compare checkouts with each other, not with the timings of `python -m labctl.bench`.
One round of the default sizes takes about 70 s a checkout. Never fails on time.

    .venv/bin/python bench/step_instructions.py [old=/tmp/old new=.] [--rounds 2] [--steps 100,600]

`git worktree add /tmp/old <commit>` makes an older checkout to compare with (its modules
are run from that folder with this environment's packages).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from compare_trees import checkouts  # bench/ is this script's folder, first on sys.path

ROOT = Path(__file__).resolve().parents[1]


def thread_totals(out_dir: Path, prefix: str) -> tuple[int, int]:
    """(main thread's, other threads') instructions from callgrind's per-thread files."""
    main = others = 0
    for f in sorted(out_dir.glob(prefix + "*")):
        text = f.read_text(encoding="utf-8", errors="replace")
        m = re.search(r"^totals:\s+(\d+)", text, re.MULTILINE) or re.search(r"^summary:\s+(\d+)", text, re.MULTILINE)
        if m is None:
            continue
        n = int(m.group(1))
        if re.search(r"-0*1$", f.name):  # callgrind numbers threads from 1: the first is the main thread
            main += n
        else:
            others += n
    return main, others


def callgrind(argv: list[str], env: dict[str, str], out_dir: Path, tag: str, what: str) -> tuple[int, int]:
    """(main, others) instructions of ``python ARGV`` under callgrind, one file per thread. It
    runs in ``out_dir``: ``python -m``/``-c`` put the working folder first on the module path,
    and a checkout there would be imported instead of the one ``PYTHONPATH`` names."""
    cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--dump-instr=no",
           f"--callgrind-out-file={out_dir / tag}.%p", sys.executable, *argv]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600, cwd=out_dir)
    if res.returncode != 0:
        raise SystemExit(f"{what} under callgrind exited {res.returncode}: {(res.stdout + res.stderr)[-1500:]}")
    return thread_totals(out_dir, tag + ".")


def counted_run(tree: str, plan: Path, fixture: Path, db: Path, out_dir: Path, tag: str) -> tuple[int, int]:
    """(main, others) instructions of one `labctl run` of ``plan`` under callgrind."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LABCTL_MAX") and k not in ("COLUMNS", "LINES")}
    env.update(PYTHONPATH=tree, LABCTL_COMMIT_WINDOW="5")
    return callgrind(["-m", "labctl", "run", str(plan), "--fixture", str(fixture), "--db", str(db), "--no-preflight"],
                     env, out_dir, tag, f"labctl run of {plan.name}")


def counted_raw_loop(resource: str, n: int, out_dir: Path, tag: str) -> int:
    """Instructions of the hand-written pyvisa loop (``labctl.bench.runsteps.raw_pyvisa_step``)
    doing ``n`` steps of the same two queries, under callgrind: the floor."""
    program = f"from labctl.bench.runsteps import raw_pyvisa_step; raw_pyvisa_step({resource!r}, {n})"
    return sum(callgrind(["-c", program], dict(os.environ, PYTHONPATH=str(ROOT)), out_dir, tag,
                         "the raw pyvisa loop"))


def counted_checkouts(ap: argparse.ArgumentParser, specs: list[str], steps: str) -> tuple[list[tuple[str, str]], int, int]:
    """The checkouts to count (``NAME=PATH``; default: this one) and the small and the large
    size of ``--steps``, or the parser's error (also when valgrind is missing)."""
    if shutil.which("valgrind") is None:
        ap.error("valgrind is not installed (Debian: apt-get install valgrind)")
    trees = checkouts(ap, specs or [f"this={ROOT}"])
    small, large = (int(n) for n in steps.split(","))
    if not 0 < small < large:
        ap.error("--steps: give SMALL,LARGE with 0 < SMALL < LARGE")
    return trees, small, large


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="*", metavar="NAME=PATH", help="a name and the checkout to import labctl from")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--steps", default="100,600", help="the small and the large plan (steps)")
    args = ap.parse_args(argv)
    trees, small, large = counted_checkouts(ap, args.trees, args.steps)

    import yaml

    from labctl.bench.common import measure_plan
    from labctl.sim.testing import isolated_fixture, served_lab

    slopes: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in trees}
    with tempfile.TemporaryDirectory(prefix="labctl-instructions-") as tmp_name:
        tmp = Path(tmp_name)
        fixture = isolated_fixture(tmp / "lab")
        data = yaml.safe_load(fixture.read_text(encoding="utf-8"))
        for binding in (data.get("roles") or {}).values():
            binding["options"] = {**(binding.get("options") or {}), "reply_spin_us": 0}
        fixture.write_text(yaml.safe_dump(data), encoding="utf-8")
        plans = {n: measure_plan(tmp / f"measure-{n}.yaml", n) for n in (small, large)}
        resource = str(data["roles"]["psu"]["resource"])
        with served_lab(fixture):
            raw = {n: counted_raw_loop(resource, n, tmp, f"raw-{n}") for n in (small, large)}
            floor = (raw[large] - raw[small]) / (large - small)
            for r in range(args.rounds):
                for name, path in trees if r % 2 == 0 else trees[::-1]:
                    counts = {n: counted_run(path, plan, fixture, tmp / f"{name}-{n}-{r}.db", tmp, f"{name}-{n}-{r}")
                              for n, plan in plans.items()}
                    slopes[name].append(((counts[large][0] - counts[small][0]) / (large - small),
                                         (counts[large][1] - counts[small][1]) / (large - small)))
                    main_i, other_i = slopes[name][-1]
                    print(f"  round {r + 1} {name}: {main_i + other_i:,.0f} a step "
                          f"(main thread {main_i:,.0f}, other threads {other_i:,.0f})", flush=True)
    print(f"Instructions a measure step ({small}→{large} steps, the median of {args.rounds} "
          f"round{'s' if args.rounds != 1 else ''}; callgrind, every role's reply_spin_us 0):")
    print(f"  {'checkout':12s} {'all threads':>14s} {'main thread':>14s} {'other threads':>14s} "
          f"{'beyond raw':>14s} {'vs first':>9s}")
    first = None
    for name, _path in trees:
        main_i = statistics.median(m for m, _ in slopes[name])
        other_i = statistics.median(o for _, o in slopes[name])
        total = main_i + other_i
        first = total if first is None else first
        print(f"  {name:12s} {total:14,.0f} {main_i:14,.0f} {other_i:14,.0f} {total - floor:14,.0f} "
              f"{100 * (total / first - 1):+8.1f}%")
    print(f"  {'raw loop':12s} {floor:14,.0f}   (the hand-written pyvisa loop doing the same two queries a step)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
