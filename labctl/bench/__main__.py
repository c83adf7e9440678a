"""``python -m labctl.bench [--quick] [--only NAME]``: every benchmark, one table."""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import tempfile
import time
from pathlib import Path

from labctl.bench import Row, table
from labctl.bench.common import private_plan_cache

BENCHES = ["runsteps", "loading", "simlab", "startup", "memory", "readback"]  # readback last: the memory row reads this process's RSS


def machine() -> str:
    cpus = os.cpu_count() or 0
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.node()}: {cpus} CPU ({model or platform.machine()}), Python {platform.python_version()}"


def run(quick: bool = False, only: list[str] | None = None) -> list[Row]:
    rows: list[Row] = []
    for name in only or BENCHES:
        mod = importlib.import_module(f"labctl.bench.{name}")
        with tempfile.TemporaryDirectory(prefix=f"labctl-bench-{name}-") as tmp:
            start = time.perf_counter()
            with private_plan_cache(Path(tmp) / "plan-cache"):  # each benchmark starts with none
                rows += mod.rows(Path(tmp), quick)
            print(f"  {name}: {time.perf_counter() - start:.1f} s", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m labctl.bench", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small sizes (the test suite's smoke run)")
    ap.add_argument("--only", action="append", choices=BENCHES, help="run only this benchmark (repeatable)")
    args = ap.parse_args()
    print(f"labctl benchmarks on {machine()}", flush=True)
    rows = run(args.quick, args.only)
    print(table(rows))
    met = sum(r.met for r in rows)
    print(f"{met} of {len(rows)} targets met (ratio = measured / target; never a CI failure)")


if __name__ == "__main__":
    main()
