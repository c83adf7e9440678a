"""Watch mode follows a run started headless in another process — a real `labctl run` on the
simulated lab writing to the same SQLite file (and, with a shared PostgreSQL, from any
station) — steps, measurements, the current wait line and the end, read from the store."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

from textual.widgets import DataTable, Static
from tuikit import settle

from labctl.sim.testing import isolated_fixture
from labctl.store.testing import temporary_database
from labctl.tui.app import LabctlApp
from labctl.tui.bench import Bench
from labctl.tui.config import TuiConfig
from labctl.tui.history import HistoryScreen
from labctl.tui.watch import WatchScreen

_OUTCOME = {0: "passed", 1: "failed"}  # exit code of `labctl run` -> the run's outcome


def _text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def _watch_headless_run(app: LabctlApp, cmd: list[str], station: str) -> dict[str, object]:
    """Start the app, then the headless run; return what the watcher saw."""
    seen: dict[str, object] = {"waits": set(), "steps": set()}
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        assert "waiting for a run" in _text(screen, "#watch-run")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 150
            while time.monotonic() < deadline:
                await pilot.pause(0.25)
                if screen.following is not None:
                    seen["steps"].add(_text(screen, "#watch-step").split("  ")[0])
                    if wait := _text(screen, "#watch-wait"):
                        seen["waits"].add(wait)
                if proc.poll() is not None and any(o in _text(screen, "#watch-run") for o in ("passed", "failed")):
                    break
            out = proc.communicate(timeout=60)[0]
        finally:
            if proc.poll() is None:
                proc.kill()
        seen["exit"], seen["out"] = proc.returncode, out
        await pilot.pause(1.0)
        seen["run"] = _text(screen, "#watch-run")
        seen["head"] = _text(screen, "#watch-head")
        seen["measurements"] = screen.query_one("#watch-measurements", DataTable).row_count
        seen["counted"] = screen.counts["measurements"]
        seen["runs"] = [[str(c) for c in r] for r in (screen.query_one("#watch-runs", DataTable).get_row_at(i)
                                                       for i in range(len(screen.runs)))]
        seen["plot"] = sorted(screen.window.series)
        await pilot.press("h")  # the same runs in History
        await settle(pilot)
        assert isinstance(app.screen, HistoryScreen)
        seen["history"] = app.screen.query_one("#history-runs", DataTable).row_count
    return seen


def test_watch_follows_a_headless_run_on_this_station_through_the_sqlite_file(tmp_path):
    bench = isolated_fixture(tmp_path, time_scale=120)
    db = str(tmp_path / "results.db")
    app = LabctlApp(TuiConfig(fixture=str(bench), db=db, watch=True), bench=Bench(str(bench)))
    station = app.bench.fixture.station
    cmd = [sys.executable, "-m", "labctl", "run", "thermal-soak.yaml", "--fixture", str(bench), "--db", db,
           "--set", "soak_hold=1 min"]
    seen = asyncio.run(_watch_headless_run(app, cmd, station))
    assert f"station {station}" in seen["head"]
    # the watcher ends on the outcome the headless run exited with (a short soak hold may leave
    # the lid thermocouple behind the chamber: passed or failed, both are a finished run)
    assert "thermal-soak" in seen["run"] and _OUTCOME[seen["exit"]] in seen["run"], seen["out"]
    # the wait line of the soak, as the console prints it, reached the watcher through the store
    assert any("degC, stable" in w for w in seen["waits"]), seen["waits"]
    assert {"▶ soak@0", "▶ soak@1", "▶ soak@2"} & seen["steps"], seen["steps"]
    assert seen["measurements"] == seen["counted"] > 10
    assert seen["runs"][0][0].endswith(_OUTCOME[seen["exit"]]) and seen["runs"][0][1] == station
    assert seen["history"] == 1


def test_watch_all_stations_on_postgresql(tmp_path):
    bench = isolated_fixture(tmp_path, time_scale=120)
    with temporary_database("postgresql", tmp_path) as url:
        app = LabctlApp(TuiConfig(fixture=str(bench), db=url, watch=True, all_stations=True),
                        bench=Bench(str(bench)))
        cmd = [sys.executable, "-m", "labctl", "run", "thermal-soak.yaml", "--fixture", str(bench), "--db", url,
               "--set", "soak_hold=1 min"]
        seen = asyncio.run(_watch_headless_run(app, cmd, app.bench.fixture.station))
    assert "every station" in seen["head"] and "postgresql" in seen["head"]
    assert _OUTCOME[seen["exit"]] in seen["run"], seen["out"]
    assert any("degC" in w for w in seen["waits"]), seen["waits"]
    assert seen["measurements"] == seen["counted"] > 10
