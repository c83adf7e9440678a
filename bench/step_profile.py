"""Where labctl's own CPU of a ``measure`` step goes, part by part (a profile, not a timing).

Runs a plan of N ``measure`` steps in this process, as ``labctl run`` does (SQLite store,
console to a buffer, ``reply_spin_us: 0`` so that no watch is counted), against ``labctl sim
serve`` of an isolated fixture, under ``cProfile``. Every function's own time is put in one
part by the file it lives in (plan loading, engine, checks, instrument layer, pyvisa and the
socket calls, results store, console, the rest; a thread blocked in ``select`` or on a lock
is waiting, not working, and has a line of its own) and printed per step. The profiler inflates
small functions more than large ones (about 2× overall here), so read the shares, not the
µs; only the run's main thread is profiled (the store's writer thread is not: see
``bench/store_throughput.py``).

    .venv/bin/python bench/step_profile.py [--steps 3000] [--top 15]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import tempfile
from collections import Counter
from pathlib import Path

from labctl.bench.common import measure_plan, served_apart
from labctl.console import ConsoleReporter, make_console
from labctl.launch import RunRequest, execute
from labctl.sim.testing import isolated_fixture

#: part -> what a function's file (or a builtin's name) contains to belong to it; the first match wins
PARTS = {
    "waiting (select, lock acquire): time, not CPU": ("select.select", "'acquire' of"),
    "plan loading (YAML, models, checks of the plan)": ("labctl/plan/", "/yaml/", "pydantic"),
    "engine (runner, step context, events)": ("labctl/engine/",),
    "checks": ("labctl/checks/",),
    "instrument layer (drivers, transports, session log)": ("labctl/instruments/",),
    "pyvisa, pyvisa-py and socket calls": ("pyvisa", "_socket", "select."),
    "results store (main thread)": ("labctl/store/", "sqlalchemy", "sqlite3"),
    "console": ("labctl/console", "/rich/"),
}


def part_of(file: str, name: str) -> str:
    where = f"{file}:{name}"
    for part, marks in PARTS.items():
        if any(mark in where for mark in marks):
            return part
    return "the rest (builtins any part calls, stdlib, launch)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--top", type=int, default=15, help="also list the functions with the most own time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        fixture = isolated_fixture(tmp / "lab")
        plan = measure_plan(tmp / "measure.yaml", args.steps)

        def run(db: str) -> None:
            out = execute(RunRequest(plan=str(plan), fixture=str(fixture), db=str(tmp / db), preflight=False,
                                     reply_spin_us=0),
                          [ConsoleReporter(make_console(file=io.StringIO()))], say=lambda _text: None)
            if out.exit_code != 0:
                raise SystemExit(f"the run exited {int(out.exit_code)}")

        profile = cProfile.Profile()
        with served_apart(fixture):
            run("warm.db")  # imports and first-time caches out of the profile
            profile.enable()
            run("profiled.db")
            profile.disable()
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    parts: Counter[str] = Counter()
    functions: Counter[str] = Counter()
    for (file, line, name), (_cc, _nc, own, _cum, _callers) in stats.items():
        parts[part_of(file, name)] += own
        short = file.split("site-packages/")[-1].split("labctl/")[-1] if file != "~" else ""
        functions[f"{short}:{line}({name})" if short else name] += own
    total = sum(parts.values())
    print(f"Own time of the run's main thread under cProfile, per step ({args.steps} steps, profiled µs):")
    for part, seconds in parts.most_common():
        print(f"  {part:55s} {seconds / args.steps * 1e6:7.1f} µs  {seconds / total:6.1%}")
    print(f"  {'all':55s} {total / args.steps * 1e6:7.1f} µs")
    if args.top:
        print(f"The {args.top} functions with the most own time:")
        for name, seconds in functions.most_common(args.top):
            print(f"  {seconds / args.steps * 1e6:7.1f} µs  {name}")


if __name__ == "__main__":
    main()
