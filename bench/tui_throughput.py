"""Does the watch screen keep up with a fast plan? A writer process records 1,000 measurements
per second (steps of 100, committed at each step end, plus a sample per step and a progress
line) into a real SQLite file through the Recorder, as `labctl run` does; the TUI's watch
screen (headless, ``App.run_test``) follows the run through the store.

Prints, for an idle run and under load:
  * event lag: wall time from each measurement's event to the poll that put it on screen
    (a step's measurements are committed at its end, and polls come every 0.5 s);
  * update time: UI-thread time to apply one poll (one batch: rows, counters, plot);
  * frame latency: how late a 20 ms UI timer fires (what a key press waits for);
and the ratio loaded / idle of the frame latency.

    .venv/bin/python bench/tui_throughput.py [--rate 1000] [--seconds 8]

Not a test: it never fails on time.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import tempfile
import time
from pathlib import Path

from textual.app import App

from labctl.engine import events as ev
from labctl.store import Recorder, open_store
from labctl.tui.app import LabctlApp
from labctl.tui.config import TuiConfig
from labctl.tui.watch import WatchScreen

TCSS = Path(__file__).resolve().parents[1] / "labctl" / "tui" / "labctl.tcss"
TICK = 0.02


class TimedWatch(WatchScreen):
    """The watch screen, timing each poll it applies."""

    def __init__(self) -> None:
        super().__init__(all_stations=True)  # the default poll interval (0.5 s)
        self.update_times: list[float] = []
        self.lags: list[float] = []

    def apply(self, runs, following, changes, cursor) -> None:  # noqa: ANN001
        began = time.perf_counter()
        super().apply(runs, following, changes, cursor)
        self.update_times.append(time.perf_counter() - began)
        if changes:  # every measurement's lag, from its event to the screen
            now = time.time()
            self.lags.extend(now - m["t"] for m in changes["measurements"])


class BenchApp(App):
    CSS_PATH = TCSS
    HORIZONTAL_BREAKPOINTS = LabctlApp.HORIZONTAL_BREAKPOINTS

    def __init__(self, db: str) -> None:
        super().__init__()
        self.config = TuiConfig(db=db, watch=True, all_stations=True)
        self.store = open_store(db)
        self.late: list[float] = []
        self._last = 0.0

    def on_mount(self) -> None:
        self.push_screen(TimedWatch())
        self._last = time.perf_counter()
        self.set_interval(TICK, self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.late.append(max(0.0, now - self._last - TICK))
        self._last = now

    def on_unmount(self) -> None:
        self.store.close()


def writer(db: str, rate: int, seconds: float, out: multiprocessing.Queue) -> None:
    """Record ``rate`` measurements per second for ``seconds`` (steps of rate/10 every 0.1 s),
    in its own process, as a headless `labctl run` would; puts the count sent on ``out``."""
    store = open_store(db)
    rec = Recorder(store)
    run_id = f"bench-{os.getpid()}-{time.time_ns()}"
    rec(ev.RunStarted(run_id=run_id, time=time.time(), plan_name="fast-plan", plan_version="1", plan_hash="0" * 64,
                      plan_text="", plan_path="fast.yaml", station="bench-1", dut_serial="FAST-1", operator=None,
                      labctl_version="0", host="bench", pid=os.getpid()))
    per_step, sent, n = max(1, rate // 10), 0, 0
    limits = ev.Limits(low=0.7, high=0.8, text="0.7 .. 0.8 V")
    t_end = time.monotonic() + seconds
    next_at = time.monotonic()
    while time.monotonic() < t_end:
        n += 1
        key = f"steps/sweep[{n}]#1"
        rec(ev.StepStarted(run_id=run_id, time=time.time(), step_key=key, step_id="sweep", group="steps",
                           check="measure", corner_index=n))
        for j in range(per_step):
            rec(ev.MeasurementRecorded(run_id=run_id, time=time.time(), step_key=key, name="vout",
                                       value=0.75 + (j % 7) * 1e-3, unit="V", limits=limits,
                                       verdict=ev.Verdict.PASS, labels={"lane": str(j % 16)}))
        rec(ev.SampleRecorded(run_id=run_id, time=time.time(), step_key=key, series="die_temp", value=60 + n % 10))
        rec(ev.Progress(run_id=run_id, time=time.time(), step_key=key, text=f"sweep {n}", fraction=None))
        rec(ev.StepEnded(run_id=run_id, time=time.time(), step_key=key, outcome=ev.StepOutcome.PASS, duration=0.1))
        sent += per_step
        next_at += 0.1
        time.sleep(max(0.0, next_at - time.monotonic()))
    rec(ev.RunEnded(run_id=run_id, time=time.time(), outcome=ev.RunOutcome.PASSED))
    rec.close()
    store.close()
    out.put(sent)


async def measure(db: str, rate: int, seconds: float) -> dict[str, object]:
    app = BenchApp(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.5)
        screen = app.screen
        out: multiprocessing.Queue = multiprocessing.Queue()
        proc = multiprocessing.Process(target=writer, args=(db, rate, seconds, out))
        app.late.clear()
        t0 = time.monotonic()
        proc.start()
        while proc.is_alive():
            await pilot.pause(0.1)
        elapsed = time.monotonic() - t0
        await pilot.pause(1.0)  # the last polls
        return {"sent": out.get(timeout=10), "shown": screen.counts["measurements"], "elapsed": elapsed,
                "lags": screen.lags, "updates": screen.update_times, "late": list(app.late),
                "rows": screen.query_one("#watch-measurements").row_count}


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def report(name: str, r: dict[str, object]) -> None:
    ms = 1000.0
    print(f"{name}: {r['sent']:,} measurements written in {r['elapsed']:.1f} s "
          f"({r['sent'] / r['elapsed']:,.0f}/s); on screen {r['shown']:,} (table keeps {r['rows']} rows)")
    print(f"  event lag      median {statistics.median(r['lags']) * ms:7.1f} ms   p95 {pct(r['lags'], .95) * ms:7.1f} ms"
          f"   max {max(r['lags']) * ms:7.1f} ms" if r["lags"] else "  event lag      -")
    print(f"  update (1 poll) median {statistics.median(r['updates']) * ms:6.1f} ms   "
          f"p95 {pct(r['updates'], .95) * ms:7.1f} ms   max {max(r['updates']) * ms:7.1f} ms   ({len(r['updates'])} polls)")
    print(f"  frame latency  median {statistics.median(r['late']) * ms:7.1f} ms   p95 {pct(r['late'], .95) * ms:7.1f} ms"
          f"   max {max(r['late']) * ms:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=1000, help="measurements per second (default 1000)")
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        idle = asyncio.run(measure(str(Path(tmp) / "idle.db"), 10, args.seconds / 2))
        loaded = asyncio.run(measure(str(Path(tmp) / "load.db"), args.rate, args.seconds))
    report("idle (10 measurements/s)", idle)
    report(f"load ({args.rate:,} measurements/s)", loaded)
    ratio = pct(loaded["late"], .95) / max(pct(idle["late"], .95), 1e-4)
    print(f"frame latency p95, loaded / idle: {ratio:.1f}×; every measurement reached the screen: "
          f"{loaded['shown'] == loaded['sent']}")


if __name__ == "__main__":
    main()
