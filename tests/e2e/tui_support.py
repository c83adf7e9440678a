"""Driving ``labctl tui`` with Textual's Pilot against the simulated lab (real sockets and ptys)."""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import time
from pathlib import Path
from typing import Any

from labctl.tui import LabctlApp, TuiConfig

PLANS = Path(__file__).resolve().parents[1] / "data" / "tui"


def make_app(tmp_path: Path, fixture: Path, **config: Any) -> LabctlApp:
    return LabctlApp(TuiConfig(fixture=str(fixture), db=str(tmp_path / "results.db"), plans=(str(PLANS),),
                               operator="tester", **config))


async def wait_for(pilot: Any, condition: Any, what: str, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.1)


async def station_ready(pilot: Any) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: app.screen.status is not None and app.screen.plans, "the station screen's first poll")


async def open_start_form(pilot: Any, name: str) -> Any:
    """Select plan ``name`` on the station screen and open its start form; returns the form."""
    app = pilot.app
    await station_ready(pilot)
    names = [p.name for p in app.screen.plans]
    app.screen.query_one("#plans").move_cursor(row=names.index(name))
    await pilot.press("r")
    await wait_for(pilot, lambda: type(app.screen).__name__ == "StartRunScreen", "the start form")
    return app.screen


async def start_plan(pilot: Any, name: str, **fields: str) -> Any:
    """Select plan ``name`` on the station screen, open the start form, fill it, start;
    returns the run screen (a prompt dialog may already be on top of it)."""
    from textual.widgets import Input

    app = pilot.app
    form = await open_start_form(pilot, name)
    for ident, value in fields.items():
        form.query_one(f"#{ident}", Input).value = value
    await wait_for(pilot, lambda: form.start_check is not None and form.form_values() == _values(form)
                   and not form.query_one("#start").disabled, "the pre-flight to clear the start")
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: any(type(s).__name__ == "RunScreen" for s in app.screen_stack), "the run screen")
    return next(s for s in app.screen_stack if type(s).__name__ == "RunScreen")


def columns_in_view(table: Any) -> list[str]:
    """The headings of a DataTable's columns that start inside its visible width."""
    shown, x = [], 0
    for column in table.ordered_columns:
        if x < table.scrollable_content_region.width:
            shown.append(str(column.label))
        x += column.get_render_width(table)
    return shown


def _values(form: Any) -> Any:
    return form.form_values()


def db_rows(tmp_path: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(tmp_path / "results.db") as conn:
        return conn.execute(sql, args).fetchall()


def pilot_test(fn: Any) -> Any:
    """Run an ``async def`` test (Textual's ``run_test``) in its own event loop."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))

    return run


async def screen_shown(pilot: Any, name: str, ready: str, timeout: float = 60.0) -> Any:
    """Wait until the active screen is of class ``name`` and has the widget ``ready`` mounted."""
    app = pilot.app

    def shown() -> bool:
        if type(app.screen).__name__ != name:
            return False
        return bool(app.screen.query(ready))

    await wait_for(pilot, shown, f"the {name}", timeout)
    await pilot.pause()
    return app.screen


async def start_until_prompt(pilot: Any, name: str, ready: str = "#choice-0") -> Any:
    """Start plan ``name`` and wait for its first prompt dialog (``ready`` mounted); returns
    the run screen."""
    run = await start_plan(pilot, name)
    await screen_shown(pilot, "PromptDialog", ready)
    return run


def sim_app(tmp_path: Path, time_scale: float = 600, **config: Any) -> LabctlApp:
    """The app on an isolated copy of the simulated bench (the app starts the lab itself)."""
    from labctl.sim.testing import isolated_fixture

    return make_app(tmp_path, isolated_fixture(tmp_path, time_scale=time_scale), **config)
