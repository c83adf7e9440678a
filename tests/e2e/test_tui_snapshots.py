"""Snapshots of the TUI's main screens at 80×24 and 160×48 (pytest-textual-snapshot), from
fixed data: no clock, port or temporary path in the rendered text. Update them after an
intended change with ``pytest tests/e2e/test_tui_snapshots.py --snapshot-update`` and look
at the report."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from labctl.tui import LabctlApp, TuiConfig
from tests.e2e.tui_fixed import INTERLOCK_READINGS, plan_catalog, run_events, station_status

SIZES = [(80, 24), (160, 48)]


def _app() -> LabctlApp:
    return LabctlApp(TuiConfig(poll_interval=0, operator="alice"))  # no polling: the data is fed below


async def _station(pilot) -> None:
    screen = pilot.app.screen
    screen.show_plans(plan_catalog())
    screen.show_status(station_status())
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_station_screen(snap_compare, size):
    assert snap_compare(_app(), terminal_size=size, run_before=_station)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_start_form(snap_compare, size):
    async def before(pilot):
        await _station(pilot)
        pilot.app.screen.query_one("#plans").move_cursor(row=2)  # tui-bringup
        await pilot.press("r")
        form = pilot.app.screen
        for _ in range(100):  # until the pre-flight of the form as it stands is shown
            await pilot.pause(0.05)
            if form.start_check is not None and form.query_one("#start-preflight").render().plain:
                break
        await form.workers.wait_for_complete()
        for field in form.query(Input):
            field.cursor_blink = False  # a blinking cursor would make the snapshot depend on timing
        await pilot.pause(0.2)

    assert snap_compare(_app(), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_run_screen_mid_soak(snap_compare, size):
    async def before(pilot):
        from labctl.tui.run import RunScreen
        from labctl.tui.session import RunSession

        app = pilot.app
        entry = plan_catalog()[0]
        session = RunSession(None, operator="alice")
        for event in run_events():
            session.push(event)
        session.interlocks.update(INTERLOCK_READINGS)
        await app.push_screen(RunScreen(session, entry, start=False))
        await pilot.pause(0.6)
        app.screen._last_plot = 0.0
        app.screen._maybe_plot()
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_help_screen(snap_compare, size):
    assert snap_compare(_app(), terminal_size=size, press=["question_mark"])


def test_station_screen_light(snap_compare):
    app = LabctlApp(TuiConfig(poll_interval=0, operator="alice", light=True))
    assert snap_compare(app, terminal_size=(80, 24), run_before=_station)
