"""Does the live run screen keep up with a fast plan? A feeder thread publishes what the engine
would — 1,000 measurements per second in steps of 100, with a sample and a progress line per
step — through a RunSession's subscriber (the engine's path into the TUI), and the run screen
(headless, ``App.run_test``, 160x48) applies them.

Prints:
  * batch apply time: UI-thread time to apply one buffered batch (tree, table, log, plots);
  * events per batch: how many events one re-render absorbed;
  * frame latency: how late a 20 ms UI timer fires (what a key press waits for), idle and
    under load, and their ratio;
  * the subscriber's cost per event on the engine's thread (what the TUI adds to a run).

    .venv/bin/python bench/tui_run_screen.py [--rate 1000] [--seconds 6]

Not a test: it never fails on time.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time

from labctl.engine import events as ev
from labctl.tui import LabctlApp, TuiConfig
from labctl.tui.run import RunScreen
from labctl.tui.session import RunSession

RUN = "bench0000000001"


def feed(session: RunSession, rate: int, seconds: float, stop: threading.Event, costs: list[float]) -> None:
    session.push(ev.RunStarted(run_id=RUN, time=time.time(), plan_name="bench", plan_version="1", plan_hash="0",
                               plan_text="", plan_path="bench.yaml", station="bench", dut_serial="D1", operator="b",
                               labctl_version="0", host="h", pid=0))
    limits = ev.Limits(low=0.7, high=0.8, text="0.75 V ± 50 mV")
    per_step, step, sent, t0 = 100, 0, 0, time.monotonic()
    while not stop.is_set() and time.monotonic() - t0 < seconds:
        key = f"steps/s{step}#1"
        sub = session.subscriber
        start = time.perf_counter()
        sub(ev.StepStarted(run_id=RUN, time=time.time(), step_key=key, step_id=f"s{step}", group="steps",
                           check="measure"))
        for i in range(per_step):
            sub(ev.MeasurementRecorded(run_id=RUN, time=time.time(), step_key=key, name="v", value=0.75 + i * 1e-4,
                                       unit="V", limits=limits, verdict=ev.Verdict.PASS, labels={"rail": f"R{i % 8}"}))
        sub(ev.SampleRecorded(run_id=RUN, time=time.time(), step_key=key, series="die", value=40 + step % 10,
                              unit="degC"))
        sub(ev.Progress(run_id=RUN, time=time.time(), step_key=key, text=f"step {step}", fraction=0.5))
        sub(ev.StepEnded(run_id=RUN, time=time.time(), step_key=key, outcome=ev.StepOutcome.PASS, duration=0.1))
        costs.append((time.perf_counter() - start) / (per_step + 4))
        sent += per_step
        step += 1
        ahead = sent / rate - (time.monotonic() - t0)
        if ahead > 0:
            time.sleep(ahead)


async def frame_latency(pilot, seconds: float) -> list[float]:
    lates: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic()
        await asyncio.sleep(0.02)
        lates.append(time.monotonic() - t - 0.02)
        await pilot.pause(0)
    return lates


async def main(rate: int, seconds: float) -> None:
    app = LabctlApp(TuiConfig(poll_interval=0))
    async with app.run_test(size=(160, 48)) as pilot:
        session = RunSession(None, operator="bench")
        screen = RunScreen(session, None, start=False)
        applies: list[tuple[float, int]] = []
        original_drain = session.drain

        def drain() -> list:
            items = original_drain()
            applies.append((time.perf_counter(), len(items)))
            return items

        session.drain = drain  # type: ignore[method-assign]
        original_apply = screen.apply_events

        def timed_apply() -> None:
            start = time.perf_counter()
            original_apply()
            applies[-1] = (time.perf_counter() - start, applies[-1][1]) if applies else (0.0, 0)

        screen.apply_events = timed_apply  # type: ignore[method-assign]
        await app.push_screen(screen)
        await pilot.pause(0.3)
        idle = await frame_latency(pilot, 1.5)
        applies.clear()
        stop, costs = threading.Event(), []
        feeder = threading.Thread(target=feed, args=(session, rate, seconds, stop, costs), daemon=True)
        feeder.start()
        loaded = await frame_latency(pilot, seconds)
        stop.set()
        feeder.join()
        await pilot.pause(0.5)
    batches = [a for a in applies if a[1]]
    times = [a[0] * 1000 for a in batches]
    sizes = [a[1] for a in batches]
    p95 = statistics.quantiles
    print(f"rate {rate} measurements/s for {seconds:g} s: {sum(sizes)} events in {len(batches)} batches")
    print(f"batch apply time  median {statistics.median(times):.1f} ms, p95 {p95(times, n=20)[18]:.1f} ms")
    print(f"events per batch  median {statistics.median(sizes):.0f}, max {max(sizes)}")
    li, ll = statistics.median(idle) * 1000, statistics.median(loaded) * 1000
    print(f"frame latency     idle median {li:.1f} ms; loaded median {ll:.1f} ms, p95 {p95(loaded, n=20)[18] * 1000:.1f} ms")
    print(f"ratio loaded/idle (median frame latency): {ll / max(li, 0.01):.1f}")
    print(f"subscriber cost per event on the engine's thread: {statistics.median(costs) * 1e6:.1f} us")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=1000, help="measurements per second (default 1000)")
    parser.add_argument("--seconds", type=float, default=6.0)
    args = parser.parse_args()
    asyncio.run(main(args.rate, args.seconds))
