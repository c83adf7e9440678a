"""Does the watch screen's memory stay bounded over a 24-hour run? Feeds 24 simulated hours
of a soak — 4 time series at 1 Hz and a measurement every 10 s — into the watch screen
(headless, ``App.run_test``) one poll per simulated minute, exactly as it applies a poll from
the store, letting the screen render as it goes. Prints the process RSS after 1 h, every 6 h and
after 24 h, the growth and the ratio 24 h / 1 h, and the points the plot holds.

    .venv/bin/python bench/tui_memory.py [--hours 24]

Not a test: it never fails on memory.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import time
from pathlib import Path

from textual.app import App

from labctl.tui.app import LabctlApp
from labctl.tui.watch import PLOT_WINDOW, WatchScreen

TCSS = Path(__file__).resolve().parents[1] / "labctl" / "tui" / "labctl.tcss"
SERIES = (("chamber_temp", "degC", 45.0, 5.0), ("die_temp", "degC", 60.0, 5.0), ("vdd_core", "V", 0.75, 0.01),
          ("psu_current", "A", 3.2, 0.4))
T0 = 1_795_000_000.0


def rss_mb() -> float:
    gc.collect()
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Quiet(WatchScreen):
    def poll(self) -> None:  # fed by the benchmark, not by a store
        pass


class MemoryApp(App):
    CSS_PATH = TCSS
    HORIZONTAL_BREAKPOINTS = LabctlApp.HORIZONTAL_BREAKPOINTS

    def on_mount(self) -> None:
        self.push_screen(Quiet(all_stations=True))

    class _Store:
        display_url = "sqlite:///(benchmark)"

    store = _Store()


def minute(m: int) -> tuple[dict, list[dict]]:
    """One poll's changes: the run row, its steps, 60 s of samples and 6 measurements."""
    t = T0 + m * 60
    run = {"id": "soak-24h", "plan_name": "thermal-soak", "plan_version": "1", "dut_serial": "EVT-0042",
           "station": "chamber-2", "outcome": "running", "started_at": T0, "ended_at": None, "message": ""}
    step = {"step_key": f"steps/soak@{m // 60}#1", "check": "thermal.soak", "outcome": None, "attempt": 1}
    samples = [{"series": name, "t": t + s, "value": mid + swing * math.sin((t + s) / 600 + i), "unit": unit}
               for s in range(60) for i, (name, unit, mid, swing) in enumerate(SERIES)]
    ms = [{"t": t + 10 * k, "step_key": step["step_key"], "name": "die_temp", "value": 60.0 + k * 0.1,
           "value_text": None, "unit": "degC", "low": None, "high": 85.0, "limit_text": "<= 85 degC",
           "labels": {}, "verdict": "PASS"} for k in range(6)]
    progress = {"step_key": step["step_key"], "text": f"chamber {45 + m % 5:.1f}/45.0 degC, stable {m % 60} min",
                "fraction": (m % 60) / 60, "t": t}
    changes = {"run": run, "steps": [step], "measurements": ms, "samples": samples, "logs": [], "progress": progress}
    return changes, [run]


async def feed(hours: float) -> dict[str, float]:
    app = MemoryApp()
    marks: dict[str, float] = {}
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        marks["start"] = rss_mb()
        began = time.monotonic()
        for m in range(int(hours * 60)):
            changes, runs = minute(m)
            screen.apply(runs, "soak-24h", changes, None)
            if m % 30 == 0:  # render twice per simulated hour
                screen._draw_plot()
                await pilot.pause()
            if (m + 1) % 360 == 0 or m + 1 == 60:
                marks[f"{(m + 1) // 60}h"] = rss_mb()
        await pilot.pause()
        marks["end"] = rss_mb()
        marks["seconds"] = time.monotonic() - began
        marks["points"] = sum(len(ts) for ts, _, _ in screen.window.series.values())
        marks["rows"] = screen.query_one("#watch-measurements").row_count
        marks["measurements"] = screen.counts["measurements"]
    return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=24.0)
    args = parser.parse_args()
    r = asyncio.run(feed(args.hours))
    samples = int(args.hours * 3600 * len(SERIES))
    print(f"{args.hours:g} simulated hours fed in {r['seconds']:.1f} s: {samples:,} samples, "
          f"{int(r['measurements']):,} measurements")
    print(f"  RSS at start {r['start']:.1f} MB, after 1 h {r['1h']:.1f} MB, after {args.hours:g} h {r['end']:.1f} MB")
    print("  every 6 h: " + ", ".join(f"{k} {v:.1f} MB" for k, v in r.items() if k.endswith("h")))
    print(f"  growth 1 h -> {args.hours:g} h: {r['end'] - r['1h']:+.1f} MB; ratio {r['end'] / r['1h']:.3f}")
    print(f"  the plot holds {int(r['points']):,} points ({len(SERIES)} series × {PLOT_WINDOW}); "
          f"the table {int(r['rows'])} rows")


if __name__ == "__main__":
    main()
