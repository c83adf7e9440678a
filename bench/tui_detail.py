"""How long the TUI's run detail and compare screens take to open on a long run, the memory
they take, and what a poll of the watch mode costs.

For each size, a run of N steps (one measurement each, as ``python -m labctl.bench``'s
read-back row records it) is written to a SQLite file; then, in a fresh process each, the run
detail of that run and the comparison of the run with itself are opened in Textual's
headless mode with the app's stylesheet, and the seconds until the screen's table has its
rows (the best of three) and the process's peak RSS are printed. Last, the watch mode's read
of the run (``query.follow`` as the watch screen calls it): its first poll, and a poll with
nothing new (the best of five). A last line: the watch's first poll of a soak step that has
recorded four temperature series at 1 Hz for ``--soak-hours`` (24), and the samples it read.

    .venv/bin/python bench/tui_detail.py [--steps 1000,10000,100000] [--soak-hours 24] [--labctl /tmp/old]

``--labctl`` opens the screens of another checkout (``git worktree add /tmp/old <commit>``):
its labctl is imported, and the opening is timed by this checkout's functions
(``labctl/bench/readback.py``, loaded by path), so that an older checkout without them is
measured the same way.

Not a test: it never fails on time.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_OPEN = r"""
import importlib.util, resource, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("readback_timing", sys.argv[4])
timing = importlib.util.module_from_spec(spec)
spec.loader.exec_module(timing)
db, run_id, screen = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
if screen in ("watch", "soak"):
    import inspect, time
    from labctl.store import open_store, query
    from labctl.tui import watch
    # as the watch screen of the checkout polls (one that reads every step has no every_step)
    known = inspect.signature(query.follow).parameters
    lean = {k: v for k, v in (("every_step", False), ("newest", watch.MEASUREMENT_ROWS),
                              ("newest_samples", getattr(watch, "PLOT_WINDOW", None))) if k in known}
    with open_store(db) as store:
        start = time.perf_counter()
        changes, cursor = query.follow(store, run_id, **lean)
        first, again = time.perf_counter() - start, []
        for _ in range(5 if screen == "watch" else 0):
            start = time.perf_counter()
            query.follow(store, run_id, cursor, **lean)
            again.append(time.perf_counter() - start)
    print(f"{first:.2f} {min(again):.3f}" if again else f"{first:.2f} {len(changes['samples'])}")
else:
    seconds = (timing.tui_detail_seconds if screen == "detail" else timing.tui_compare_seconds)(db, run_id)
    print(f"{seconds:.2f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}")
"""


def record_soak(db: Path, run_id: str, hours: float) -> int:
    """A running run whose one step has recorded four temperature series at 1 Hz for
    ``hours`` (as the engine's events); the number of samples."""
    from labctl.engine import events as ev
    from labctl.store import Recorder, open_store

    t, seconds = time.time(), int(hours * 3600)
    with open_store(db) as store:
        rec = Recorder(store, commit_window=60.0)
        rec(ev.RunStarted(run_id=run_id, time=t, plan_name="soak", plan_version="1", plan_hash="0" * 64, plan_text="",
                          plan_path="soak.yaml", station="sim-bench-1", dut_serial="SIM-0001", operator=None,
                          labctl_version="bench", host=socket.gethostname(), pid=os.getpid()))
        key = "steps/soak#1"
        rec(ev.StepStarted(run_id=run_id, time=t, step_key=key, step_id="soak", group="steps", check="thermal.soak"))
        for i in range(seconds):
            for series in ("die", "hbm", "vrm", "ambient"):
                rec(ev.SampleRecorded(run_id=run_id, time=t + i, step_key=key, series=series, value=50.0 + i * 1e-4,
                                      unit="degC"))
            if i % 3600 == 3599:
                rec.flush()
        rec.flush()
        rec.close()
    return 4 * seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", default="1000,10000,100000", help="the run sizes, comma separated")
    ap.add_argument("--soak-hours", type=float, default=24.0, help="hours of the soak step (four series at 1 Hz)")
    ap.add_argument("--labctl", default=str(ROOT), metavar="CHECKOUT", help="the checkout whose screens are opened")
    args = ap.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=args.labctl)
    from labctl.bench.readback import record_run

    print(f"{'steps':>9s} {'detail':>9s} {'peak RSS':>9s} {'compare':>9s} {'peak RSS':>9s} "
          f"{'watch, 1st poll':>15s} {'next poll':>9s}")
    with tempfile.TemporaryDirectory(prefix="labctl-tui-detail-") as tmp:
        for n in (int(x) for x in args.steps.split(",")):
            db = Path(tmp) / f"run-{n}.db"
            record_run(db, f"run-{n}", n)
            cells = []
            for screen in ("detail", "compare", "watch"):
                res = subprocess.run([sys.executable, "-c", _OPEN, str(db), f"run-{n}", screen,
                                      str(ROOT / "labctl" / "bench" / "readback.py")],
                                     capture_output=True, text=True, timeout=3600, env=env, cwd=tmp)
                if res.returncode != 0:
                    raise SystemExit(f"the {screen} screen of {n} steps failed: {res.stderr[-1500:]}")
                seconds, other = res.stdout.split()
                cells += [f"{seconds} s", f"{other} s" if screen == "watch" else f"{other} MiB"]
            print(f"{n:9,d} " + " ".join(f"{c:>{15 if i == 4 else 9}s}" for i, c in enumerate(cells)), flush=True)
        db = Path(tmp) / "soak.db"
        samples = record_soak(db, "soak-1", args.soak_hours)
        res = subprocess.run([sys.executable, "-c", _OPEN, str(db), "soak-1", "soak",
                              str(ROOT / "labctl" / "bench" / "readback.py")],
                             capture_output=True, text=True, timeout=3600, env=env, cwd=tmp)
        if res.returncode != 0:
            raise SystemExit(f"the watch's poll of the soak failed: {res.stderr[-1500:]}")
        seconds, read = res.stdout.split()
        print(f"watch, first poll of a {args.soak_hours:g} h soak ({samples:,} samples of 4 series): "
              f"{seconds} s, {int(read):,} samples read")
    return 0


if __name__ == "__main__":
    sys.exit(main())
