"""The bring-up loop in the TUI: a failed run's detail, re-run its failed step on the board
on the fixture (a new run referencing the old one, on the live run screen), and back on the
detail the two runs side by side."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from textual.widgets import DataTable, Static
from tuikit import settle

from labctl.sim.testing import isolated_fixture
from labctl.tui.app import LabctlApp
from labctl.tui.bench import Bench
from labctl.tui.compare import CompareScreen
from labctl.tui.config import TuiConfig
from labctl.tui.detail import RunDetailScreen
from labctl.tui.rerun import RerunConfirm
from labctl.tui.run import RunScreen

ROOT = Path(__file__).resolve().parents[2]


def test_rerun_the_failed_step_from_the_detail_and_compare(labctl, tmp_path):
    plan = tmp_path / "tight.yaml"
    plan.write_text((ROOT / "testplans" / "smoke.yaml").read_text().replace(
        "limits: {nominal: 0.75 V, tol: ±25 mV}", "limits: {nominal: 0.80 V, tol: ±25 mV}"))
    bench, db = isolated_fixture(tmp_path, time_scale=600), str(tmp_path / "r.db")
    assert labctl("run", str(plan), "--fixture", str(bench), "--db", db).returncode == 1
    old = json.loads(labctl("runs", "--db", db, "--format", "json").stdout)[0]["id"]

    async def scenario():
        app = LabctlApp(TuiConfig(fixture=str(bench), db=db, watch=True, operator="ana"), bench=Bench(str(bench)))
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            await pilot.press("h")
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, RunDetailScreen) and app.screen.run_id == old
            await pilot.press("f")
            await settle(pilot)
            assert isinstance(app.screen, RerunConfirm)
            question = str(app.screen.query_one("#rerun-question", Static).render())
            assert f"Re-run core_rail of run {old[:12]}" in question
            await pilot.press("y")
            assert isinstance(app.screen, RunScreen)
            deadline = time.monotonic() + 60
            while not app.run_session.finished and time.monotonic() < deadline:
                await pilot.pause(0.2)
            assert app.run_session.exit_code == 1  # the board was not reworked: fails again
            await pilot.press("escape")  # back to the old run's detail: both side by side
            await settle(pilot)
            assert isinstance(app.screen, CompareScreen)
            new = app.run_session.output.result.run_id
            assert (app.screen.run_a, app.screen.run_b) == (old, new)
            assert f"re-run of {old[:12]}" in str(app.screen.query_one("#compare-b", Static).render())
            rows = [[str(c) for c in r] for r in (app.screen.query_one(DataTable).get_row_at(i)
                                                   for i in range(app.screen.query_one(DataTable).row_count))]
            core = next(r for r in rows if r[0] == "core_rail")
            assert core[6] == "FAIL → FAIL"
            assert all(r[3] == "-" for r in rows if r[0] == "dut_identity")  # not re-run: nothing in B
            return new

    new = asyncio.run(scenario())
    runs = {r["id"]: r for r in json.loads(labctl("runs", "--db", db, "--format", "json").stdout)}
    assert runs[new]["rerun_of"] == old and runs[new]["operator"] == "ana"
