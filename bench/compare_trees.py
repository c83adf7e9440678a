"""Benchmark: the cost of a `measure` step in two (or more) checkouts of labctl, side by side.

Each checkout runs `labctl run` of a small and a large plan of `measure` steps (the plan of
`python -m labctl.bench`) against one `labctl sim serve` on an isolated fixture, and the raw
pyvisa loop doing the same two queries a step is measured in the same run. Rounds alternate
between the checkouts (A B, then B A, …) so that a slow spell of a shared VM hits them alike;
it prints every round's wall and CPU slope a step and the least of each. The lab runs on one
CPU and the runs on another, as in `labctl.bench.runsteps`. Never fails on time.

Run it from outside the checkouts (each one's modules compiled, as an install leaves them):

    .venv/bin/python -m compileall -q labctl /tmp/old/labctl
    cd /tmp && <checkout>/.venv/bin/python <checkout>/bench/compare_trees.py \\
        old=/tmp/old new=<checkout> [--rounds 4] [--steps 500,3000]

`git worktree add /tmp/old <commit>` makes an older checkout to compare with.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path


def checkouts(ap: argparse.ArgumentParser, specs: list[str]) -> list[tuple[str, str]]:
    """(name, absolute path) of each ``NAME=PATH`` given, PATH a checkout holding labctl/."""
    trees = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not (Path(path) / "labctl" / "__init__.py").is_file():
            ap.error(f"{spec!r}: give NAME=PATH, PATH a checkout holding labctl/")
        trees.append((name, str(Path(path).resolve())))
    return trees


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+", metavar="NAME=PATH", help="a name and the checkout to import labctl from")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--steps", default="500,3000", help="the small and the large plan (steps)")
    args = ap.parse_args(argv)
    trees = checkouts(ap, args.trees)
    small, large = (int(n) for n in args.steps.split(","))

    import yaml

    from labctl.bench.common import measure_plan, served_apart, timed_cli_cpu
    from labctl.bench.runsteps import raw_pyvisa_step
    from labctl.sim.testing import isolated_fixture

    with tempfile.TemporaryDirectory(prefix="labctl-compare-") as tmp_name:
        tmp = Path(tmp_name)
        fixture = isolated_fixture(tmp / "lab")
        resource = yaml.safe_load(fixture.read_text())["roles"]["psu"]["resource"]
        plans = {n: measure_plan(tmp / f"measure-{n}.yaml", n) for n in (small, large)}
        slopes: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in trees}
        raws: list[tuple[float, float]] = []
        with served_apart(fixture):
            for r in range(args.rounds):
                raws.append(raw_pyvisa_step(resource, 3000))
                for name, path in trees if r % 2 == 0 else trees[::-1]:
                    walls, cpus = {}, {}
                    for n, plan in plans.items():
                        db = tmp / f"{name}-{n}-{r}.db"
                        wall, cpu, code, out = timed_cli_cpu(
                            "run", str(plan), "--fixture", str(fixture), "--db", str(db), "--no-preflight",
                            extra_env={"PYTHONPATH": path}, big=False)
                        if code != 0:
                            print(f"{name}: labctl run of {n} steps exited {code}: {out[-1500:]}", file=sys.stderr)
                            return 1
                        walls[n], cpus[n] = wall, cpu
                    slopes[name].append(((walls[large] - walls[small]) / (large - small),
                                         (cpus[large] - cpus[small]) / (large - small)))
    raw_wall = min(w for w, _ in raws)
    print(f"raw pyvisa loop: {raw_wall * 1e6:.0f} µs a step (least of {len(raws)}; CPU "
          f"{min(c for _, c in raws) * 1e6:.0f} µs)")
    print(f"a measure step, slope {small}→{large} steps, {args.rounds} alternating rounds:")
    for name, rows in slopes.items():
        walls = [w * 1e6 for w, _ in rows]
        cpus = [c * 1e6 for _, c in rows]
        print(f"  {name:12} wall least {min(walls):.0f} µs ({min(walls) / (raw_wall * 1e6):.2f}× raw), "
              f"median {statistics.median(walls):.0f}; CPU least {min(cpus):.0f} µs; "
              f"rounds {', '.join(f'{w:.0f}' for w in walls)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
