"""The TUI's stations screen (issue 14's registry in the TUI): stations registered by agents
in the store, their state and job, read through the app's store like `labctl stations`."""

from __future__ import annotations

import asyncio
import os

from textual.widgets import DataTable, Static
from tuikit import ScreenApp, settle

from labctl.fleet import registry
from labctl.store import open_store
from labctl.tui.app import LabctlApp
from labctl.tui.config import TuiConfig
from labctl.tui.stations import StationsScreen


def _register(db: str, station: str) -> None:
    store = open_store(db)
    try:
        info = registry.StationInfo(station, "fixtures/sim-bench.yaml", "station: x\n", ["evt"],
                                    {"psu": {"driver": "keysight-e36312a", "resource": "TCPIP0::h::5025::SOCKET",
                                             "idn": "", "asset_serial": "A1", "calibration_due": "2020-01-01"}},
                                    "2020-01-01")
        registry.register(store, info, agent_id=f"agent-{station}", pid=os.getpid(), heartbeat_interval=5.0)
    finally:
        store.close()


def test_t_opens_the_stations_with_their_state_calibration_and_queue(tmp_path):
    db = str(tmp_path / "lab.db")
    _register(db, "bench-7")
    _register(db, "bench-9")

    async def scenario():
        app = LabctlApp(TuiConfig(db=db, watch=True))  # starts in watch mode: no bench polled
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            await pilot.press("t")
            await settle(pilot)
            assert isinstance(app.screen, StationsScreen)
            table = app.screen.query_one("#stations-table", DataTable)
            rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
            assert [r[0] for r in rows] == ["bench-7", "bench-9"]
            assert rows[0][1] == "idle" and rows[0][5] == "2020-01-01 OVERDUE" and rows[0][6] == "0"
            status = str(app.screen.query_one("#stations-status", Static).render())
            assert "2 station(s)" in status and "0 running" in status

    asyncio.run(scenario())


def test_no_registered_station_is_said_not_shown_as_an_empty_table(tmp_path):
    db = str(tmp_path / "empty.db")
    open_store(db).close()

    async def scenario():
        app = ScreenApp(db, StationsScreen)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert app.screen.query_one("#stations-table", DataTable).row_count == 0
            assert "no station has registered" in str(app.screen.query_one("#stations-status", Static).render())

    asyncio.run(scenario())
