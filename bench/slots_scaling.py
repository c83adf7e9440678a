"""Benchmark: the flagship plan on 1, 4 and 16 slots of the simulated rack.

Each run is ``labctl run accelerator-evt.yaml --slots all`` in a process of its own, on a
copy of fixtures/sim-rack.yaml cut to N slots (free ports), against ``labctl sim serve`` in
another process (as a real lab's instruments are not in the run's process). Prints wall
time, the ratio to one slot (targets: 4 slots <= 1.3x, 16 slots <= 2x, as the plan's time
is dominated by the shared soaks), and the run's CPU seconds and peak memory per slot, the
simulated lab's CPU per board apart, and the cores both processes kept busy on average.
Ratios are measured in this one run; nothing fails on time.

The time scale (default x60: one simulated minute per wall second, the flagship's ~50
simulated minutes in about 40 s). The targets assume what holds in a real lab, that the
plan's time is the chamber's: at x1 the soaks take the flagship's hours and the CPU of 16
slots is noise. At x600 the soaks pass in about half a second each and the run measures
CPU instead: the simulated lab integrates every board's physics 600 simulated seconds per
wall second (16 boards: about half a core) and the slots' commands arrive 10 times as
densely, on a 2-core machine shared with other work. x60 keeps the soaks the larger part of
the plan and is still a short benchmark; ``--time-scale 600`` shows the CPU-bound case, and
the CPU columns tell the CPU cost per slot at any scale (it barely depends on the scale).

Run: .venv/bin/python bench/slots_scaling.py [--time-scale 60] [--slots 1,4,16] [--set soak_hold="1 min"]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from labctl.sim.testing import isolated_fixture, served_lab


def rack_of(n: int, tmp: Path, time_scale: float) -> Path:
    fx = isolated_fixture(tmp / f"rack{n}", "sim-rack.yaml", time_scale=time_scale)
    data = yaml.safe_load(fx.read_text())
    data["slots"] = data["slots"][:n]
    data["station"] = f"bench-rack-{n}"
    fx.write_text(yaml.safe_dump(data, sort_keys=False))
    return fx


def run(n: int, tmp: Path, time_scale: float, sets: list[str]) -> dict:
    fx = rack_of(n, tmp, time_scale)
    cmd = [sys.executable, "-m", "labctl", "run", "accelerator-evt.yaml", "--fixture", str(fx), "--slots", "all",
           "--db", str(tmp / f"r{n}.db"), "--json"]
    for s in sets:
        cmd += ["--set", s]
    with served_lab(fx) as lab:
        lab_cpu0 = cpu_of(lab.pid)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        lab_cpu = cpu_of(lab.pid) - lab_cpu0
    ended = proc.stdout.count('"event": "RunEnded"')
    problems = []
    for line in proc.stdout.splitlines():
        if '"StepEnded"' in line and ('"FAIL"' in line or '"ERROR"' in line):
            e = json.loads(line)
            problems.append(f"slot {e.get('slot')} {e['step_key']} {e['outcome']}: {e.get('message', '')}")
    return {"slots": n, "wall": wall, "rc": proc.returncode, "runs": ended, "lab_cpu": lab_cpu, "problems": problems,
            "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "rss_mb": after.ru_maxrss / 1024}


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a live process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--time-scale", type=float, default=60.0)
    ap.add_argument("--slots", default="1,4,16")
    ap.add_argument("--set", dest="sets", action="append", default=[])
    args = ap.parse_args()
    counts = [int(x) for x in args.slots.split(",")]
    with tempfile.TemporaryDirectory() as d:
        rows = [run(n, Path(d), args.time_scale, args.sets) for n in counts]
    base = rows[0]["wall"]
    print(f"flagship accelerator-evt.yaml on the simulated rack, time x{args.time_scale:g} "
          f"(exit 1 = the marginal board's failure is expected only where one sits)")
    print(f"{'slots':>5} {'runs':>4} {'exit':>4} {'wall s':>8} {'x one slot':>10} {'CPU s':>7} {'CPU s/slot':>10} "
          f"{'peak RSS MB':>11} {'MB/slot':>8} {'lab CPU s':>9} {'lab CPU s/board':>15} {'cores busy':>10}")
    for r in rows:
        print(f"{r['slots']:>5} {r['runs']:>4} {r['rc']:>4} {r['wall']:>8.1f} {r['wall'] / base:>10.2f} {r['cpu']:>7.1f} "
              f"{r['cpu'] / r['slots']:>10.2f} {r['rss_mb']:>11.0f} {r['rss_mb'] / r['slots']:>8.1f} {r['lab_cpu']:>9.1f} "
              f"{r['lab_cpu'] / r['slots']:>15.2f} {(r['cpu'] + r['lab_cpu']) / r['wall']:>10.2f}")
    print("(peak RSS is the largest of this script's children so far: read each row's growth, not the sum; "
          f"cores busy: run + lab CPU over wall time, of {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f} at the end)")
    for r in rows:
        for p in r["problems"][:5]:
            print(f"  {r['slots']} slots: {p[:200]}")
    targets = {4: 1.3, 16: 2.0}
    for r in rows:
        if r["slots"] in targets:
            ratio = r["wall"] / base
            verdict = "within" if ratio <= targets[r["slots"]] else "OVER"
            print(f"{r['slots']} slots: {ratio:.2f}x one slot ({verdict} the {targets[r['slots']]:g}x target)")


if __name__ == "__main__":
    main()
