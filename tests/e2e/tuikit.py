"""Helpers for the TUI tests of history, detail, compare and watch: a results database with
deterministic runs (fixed times and ids), and a tiny app hosting one screen."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from textual.app import App
from textual.screen import Screen

from labctl.engine import events as ev
from labctl.store import Recorder, open_store
from labctl.tui.app import LabctlApp
from labctl.tui.config import TuiConfig

TCSS = Path(__file__).resolve().parents[2] / "labctl" / "tui" / "labctl.tcss"
T0 = 1_795_000_000.0  # 2026-11-18 09:46:40 UTC


def use_utc(monkeypatch) -> None:
    """Times on screen are local: pin the zone so pictures are the same everywhere."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


class _Run:
    def __init__(self, rec: Recorder, run_id: str, t: float) -> None:
        self.rec, self.run_id, self.t = rec, run_id, t

    def emit(self, cls, dt: float = 1.0, **fields):
        self.t += dt
        self.rec(cls(run_id=self.run_id, time=self.t, **fields))

    def step(self, step_id: str, values: dict[str, tuple[float, float, float]], *, group: str = "steps",
             unit: str = "V", check: str = "power.rails", attempt: int = 1) -> None:
        key = f"{group}/{step_id}#{attempt}"
        self.emit(ev.StepStarted, step_key=key, step_id=step_id, group=group, check=check, attempt=attempt)
        failed = []
        for name, (value, low, high) in values.items():
            verdict = ev.Verdict.PASS if low <= value <= high else ev.Verdict.FAIL
            if verdict is ev.Verdict.FAIL:
                failed.append(name)
            self.emit(ev.MeasurementRecorded, 0.5, step_key=key, name=name, value=value, unit=unit,
                      limits=ev.Limits(low=low, high=high, text=f"{low:g} .. {high:g} {unit}"),
                      verdict=verdict, labels={"rail": name} if unit == "V" else {})
        outcome = ev.StepOutcome.FAIL if failed else ev.StepOutcome.PASS
        self.emit(ev.StepEnded, 2.0, step_key=key, outcome=outcome,
                  message=f"{failed[0]} out of limits" if failed else "", duration=2.5)


def record_run(rec: Recorder, run_id: str, t: float, *, dut: str, vcore: float, outcome: ev.RunOutcome,
               plan: str = "power-rails", station: str = "bench-1", rerun_of: str | None = None,
               temp: float = 47.5) -> None:
    r = _Run(rec, run_id, t)
    r.emit(ev.RunStarted, 0.0, plan_name=plan, plan_version="1.2", plan_hash="a" * 64, plan_text=f"name: {plan}\n",
           plan_path="power-rails.yaml", station=station, dut_serial=dut, operator="ana", labctl_version="0.1.0",
           host="lab-pc-7", pid=os.getpid(), rerun_of=rerun_of)
    r.step("power_on", {"input_voltage": (12.02, 11.76, 12.24)}, group="setup")
    r.step("rails", {"VDD_CORE": (vcore, 0.725, 0.775), "VDD_IO": (1.803, 1.746, 1.854),
                     "VDD_DDR": (1.198, 1.164, 1.236)})
    r.step("die_temp", {"die_temp": (temp, 20.0, 85.0)}, unit="degC", check="measure")
    r.emit(ev.RunEnded, 5.0, outcome=outcome, message="1 step failed" if outcome is ev.RunOutcome.FAILED else "")


def history_db(path: Path) -> str:
    """Four runs: EVT-0042 failed its core rail, was reworked and passed (a re-run); EVT-0043
    passed; EVT-0042 on another plan."""
    url = str(path)
    store = open_store(url)
    rec = Recorder(store)
    record_run(rec, "1a0b0c0d00000001", T0, dut="EVT-0042", vcore=0.702, outcome=ev.RunOutcome.FAILED)
    record_run(rec, "1a0b0c0d00000002", T0 + 600, dut="EVT-0043", vcore=0.751, outcome=ev.RunOutcome.PASSED)
    record_run(rec, "1a0b0c0d00000003", T0 + 3600, dut="EVT-0042", vcore=0.748, outcome=ev.RunOutcome.PASSED,
               rerun_of="1a0b0c0d00000001", temp=51.25)
    record_run(rec, "1a0b0c0d00000004", T0 + 7200, dut="EVT-0042", vcore=0.749, outcome=ev.RunOutcome.PASSED,
               plan="thermal-soak", station="chamber-2")
    rec.close()
    store.close()
    return url


class ScreenApp(App):
    """One screen on the app's stylesheet, with what the screens read from the app
    (``store``, ``config``) — for tests of a single screen."""

    CSS_PATH = TCSS
    HORIZONTAL_BREAKPOINTS = LabctlApp.HORIZONTAL_BREAKPOINTS

    def __init__(self, db: str, make_screen: Callable[[], Screen]) -> None:
        super().__init__()
        self.config = TuiConfig(db=db)
        self.store = open_store(db)
        self._make_screen = make_screen

    def on_mount(self) -> None:
        self.push_screen(self._make_screen())

    def on_unmount(self) -> None:
        self.store.close()


async def settle(pilot, rounds: int = 3) -> None:
    """Let the screen's store workers finish and their results reach the widgets."""
    for _ in range(rounds):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def rows_shown(selector: str):
    """A ``run_before`` for snapshots: settled, and the table ``selector`` has its rows drawn."""

    async def wait(pilot) -> None:
        from textual.widgets import DataTable

        for _ in range(100):
            await settle(pilot, 1)
            if pilot.app.screen.query_one(selector, DataTable).row_count:
                break
        await settle(pilot, 2)  # what the rows bring with them (status line, cursor) drawn too
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    return wait
