"""Reading a long run back: what ``labctl runs``, ``runs show`` and the reports read of it.

Runs of growing size (steps of one measurement each, recorded through the
:class:`~labctl.store.Recorder` into a SQLite file, as ``labctl run`` records them) are read
back in this process the way those commands read them: the run list with its step counts,
the run's detail (steps and measurements, each step's final attempt found) and its
measurements as a frame. The time per step must not grow with the run (a lab's long plans);
``labctl runs show`` of the largest run, as a command, must answer within 2 s. ``labctl stats``
of many short runs of one plan must cost about what it costs of one run holding as many
measurements (a lab's population: what is read once per run must stay small).
"""

from __future__ import annotations

import functools
import os
import socket
import time
from pathlib import Path
from typing import Any

from labctl.bench import Row
from labctl.bench.common import best, timed_cli


def record_run(db: Path, run_id: str, steps: int) -> None:
    """A finished run of ``steps`` steps, one measurement each, written as the engine's events."""
    from labctl.store import Recorder, open_store

    with open_store(db) as store:
        rec = Recorder(store, commit_window=60.0)
        _record(rec, run_id, steps, "", time.time())
        rec.close()


def record_population(db: Path, runs: int, steps: int) -> list[str]:
    """``runs`` finished runs of one plan of ``steps`` ``measure`` steps (its YAML kept with each
    run, as ``labctl run`` keeps it), an hour apart; their ids."""
    from labctl.bench.common import measure_plan
    from labctl.store import Recorder, open_store

    plan_text = measure_plan(db.with_suffix(".plan.yaml"), steps).read_text(encoding="utf-8")
    ids = [f"pop-{i:06d}" for i in range(runs)]
    first = time.time() - 3600 * runs
    with open_store(db) as store:
        rec = Recorder(store, commit_window=60.0)
        for i, run_id in enumerate(ids):
            _record(rec, run_id, steps, plan_text, first + 3600 * i)
        rec.close()
    return ids


def spool_run(spool_path: Path, target: str, run_id: str, steps: int, *, per_batch: int = 400) -> None:
    """A finished run of ``steps`` steps kept in a spool journal as the recorder keeps one while its
    database ``target`` (a URL) is down: batches of ``per_batch`` steps, each step its start, one
    measurement, its end and the four I/O records of a query and its reply, twice."""
    from labctl.store.sink import Batch
    from labctl.store.spool import Spool

    spool = Spool(spool_path)
    t = time.time() - steps
    started, ended = _run_events(run_id, "", t, steps)
    seq = 0
    try:
        spool.append(target, Batch(run_id, 0, [(0, started)]))
        for first in range(0, steps, per_batch):
            items: list[tuple[int, Any]] = []
            io: list[tuple[int, dict[str, Any]]] = []
            for i in range(first, min(steps, first + per_batch)):
                step_started, measured, step_ended = _step_events(run_id, i, t + i)
                items.append((seq := seq + 1, step_started))
                for command, reply in (("MEAS:VOLT? (@1)", "+5.000000E+00"), ("SYST:ERR?", '+0,"No error"')):
                    common = {"step_key": step_started.step_key, "t": t + i, "instrument": "psu",
                              "resource": "TCPIP0::127.0.0.1::5025::SOCKET"}
                    io.append((seq := seq + 1, {**common, "kind": "query", "text": command}))
                    io.append((seq := seq + 1, {**common, "kind": "reply", "text": reply, "elapsed_s": 5e-5}))
                items += [(seq := seq + 1, measured), (seq := seq + 1, step_ended)]
            spool.append(target, Batch(run_id, 0, items, io))
        spool.append(target, Batch(run_id, 0, [(seq + 1, ended)]))
    finally:
        spool.close()


def _record(rec: Any, run_id: str, steps: int, plan_text: str, t: float) -> None:
    started, ended = _run_events(run_id, plan_text, t, steps)
    rec(started)
    for i in range(steps):
        for event in _step_events(run_id, i, t + i):
            rec(event)
    rec(ended)


def _run_events(run_id: str, plan_text: str, t: float, steps: int) -> tuple[Any, Any]:
    """The start (at ``t``) and the end of a passed run of ``steps`` steps, a second apart."""
    from labctl.engine import events as ev

    return (ev.RunStarted(run_id=run_id, time=t, plan_name="bench-measure", plan_version="1", plan_hash="0" * 64,
                          plan_text=plan_text, plan_path="bench.yaml", station="sim-bench-1",
                          dut_serial="SIM-0001", operator=None, labctl_version="bench", host=socket.gethostname(),
                          pid=os.getpid()),
            ev.RunEnded(run_id=run_id, time=t + steps, outcome=ev.RunOutcome.PASSED))


@functools.cache
def _limits() -> Any:
    """The limits of every step: one object, as a plan's steps written alike share theirs."""
    from labctl.engine import events as ev

    return ev.Limits(low=-1.0, high=30.0, text="-1 V ≤ x ≤ 30 V")


def _step_events(run_id: str, i: int, t: float) -> tuple[Any, Any, Any]:
    """Step ``m{i}``'s start, its one measurement (5 V, within its limits) and its end, at ``t``."""
    from labctl.engine import events as ev

    key = f"steps/m{i}#1"
    return (ev.StepStarted(run_id=run_id, time=t, step_key=key, step_id=f"m{i}", group="steps", check="measure"),
            ev.MeasurementRecorded(run_id=run_id, time=t, step_key=key, name="value", value=5.0, unit="V",
                                   limits=_limits(), verdict=ev.Verdict.PASS),
            ev.StepEnded(run_id=run_id, time=t, step_key=key, outcome=ev.StepOutcome.PASS, duration=0.001))


def read_seconds(db: Path, run_id: str) -> float:
    """Seconds to read the run back as the commands do (the best of a few)."""
    from labctl.store import open_store, query

    with open_store(db) as store:
        def read() -> None:
            query.list_runs(store)
            query.run_detail(store, run_id)
            query.measurements(store, run_id)

        return best(read, 3)


def tui_detail_seconds(db: Path, run_id: str) -> float:
    """Seconds from opening the TUI's run detail of a run to its rows on the screen (Textual
    headless, the app's stylesheet; the best of three)."""
    from labctl.tui.detail import RunDetailScreen

    return _screen_seconds(db, lambda: RunDetailScreen(run_id), "#detail-steps")


def tui_compare_seconds(db: Path, run_id: str) -> float:
    """The same for the TUI's comparison of a run with itself (every measurement a row)."""
    from labctl.tui.compare import CompareScreen

    return _screen_seconds(db, lambda: CompareScreen(run_id, run_id), "#compare-table")


def _screen_seconds(db: Path, make_screen: Any, table_id: str) -> float:
    import asyncio

    from textual.app import App
    from textual.widgets import DataTable

    import labctl.tui
    from labctl.store import open_store
    from labctl.tui.config import TuiConfig

    class ScreenApp(App):
        CSS_PATH = Path(labctl.tui.__file__).parent / "labctl.tcss"

        def __init__(self) -> None:
            super().__init__()
            self.config = TuiConfig(db=str(db))  # (what the screens read from the app)
            self.store = open_store(db)

        def on_unmount(self) -> None:
            self.store.close()

    async def opened() -> float:
        app = ScreenApp()
        async with app.run_test(size=(160, 48)) as pilot:
            start = time.perf_counter()
            await app.push_screen(make_screen())
            while not (app.screen.query(table_id) and app.screen.query_one(table_id, DataTable).row_count):
                await pilot.pause(0.005)
            return time.perf_counter() - start

    return min(asyncio.run(opened()) for _ in range(3))


def rows(tmp: Path, quick: bool) -> list[Row]:
    sizes = (200, 2000) if quick else (1000, 10000)
    per_step = {}
    for n in sizes:
        db = tmp / f"runs-{n}.db"
        record_run(db, f"run-{n}", n)
        per_step[n] = read_seconds(db, f"run-{n}") / n
    small, big = sizes
    seconds, code, out = timed_cli("runs", "show", f"run-{big}", "--db", str(tmp / f"runs-{big}.db"))
    if code != 0:
        raise RuntimeError(f"labctl runs show exited {code}: {out[-1000:]}")
    growth = per_step[big] / per_step[small]
    cmp_seconds, code, out = timed_cli("runs", "compare", f"run-{big}", f"run-{big}", "--db", str(tmp / f"runs-{big}.db"))
    if code != 0:
        raise RuntimeError(f"labctl runs compare exited {code}: {out[-1000:]}")
    detail = tui_detail_seconds(tmp / f"runs-{big}.db", f"run-{big}")
    per_run = 200  # (a plan of this size read once per run cost 40 ms a run)
    record_population(tmp / "population.db", big // per_run, per_run)
    stats: dict[str, float] = {}
    for label, db in (("one", tmp / f"runs-{big}.db"), ("many", tmp / "population.db")):
        stats[label] = min(_stats_seconds(db) for _ in range(2))
    return [
        Row(f"read back a run: list, detail, measurements, per step at {small:,}/{big:,} steps",
            f"linear (per step at {big:,} ≤ 1.5× at {small:,})",
            f"{per_step[small] * 1e6:.0f} / {per_step[big] * 1e6:.0f} µs", growth / 1.5),
        Row(f"labctl runs show of a {big:,}-step run", "≤ 2 s", f"{seconds:.2f} s", seconds / 2.0),
        Row(f"labctl runs compare of two {big:,}-step runs (a run with itself)", "≤ 2 s", f"{cmp_seconds:.2f} s",
            cmp_seconds / 2.0),
        Row(f"TUI: run detail of a {big:,}-step run, opened to its rows on screen", "≤ 1 s",
            f"{detail:.2f} s", detail / 1.0),
        Row(f"labctl stats of {big // per_run:,} runs of a {per_run}-step plan vs of one {big:,}-step run",
            "≤ 1.5× (as many measurements)", f"{stats['many']:.2f} vs {stats['one']:.2f} s",
            stats["many"] / stats["one"] / 1.5),
    ]


def _stats_seconds(db: Path) -> float:
    seconds, code, out = timed_cli("stats", "--db", str(db))
    if code != 0:
        raise RuntimeError(f"labctl stats exited {code}: {out[-1000:]}")
    return seconds
