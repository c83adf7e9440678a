"""What a watcher sees of a run's waits, written by a recorder as a run on another station's
TUI would: the stored progress line while its step is open, then the question an operator
at the bench must answer, gone once answered."""

from __future__ import annotations

import asyncio
import os
import time

from textual.widgets import Static
from tuikit import ScreenApp, settle

from labctl.engine import events as ev
from labctl.store import Recorder, open_store
from labctl.tui.watch import WatchScreen


def test_the_wait_line_and_an_open_prompt_reach_the_watcher(tmp_path):
    db = str(tmp_path / "results.db")
    store = open_store(db)
    rec = Recorder(store, progress_interval=0.0)

    def emit(cls, **fields):
        rec(cls(run_id="run-w", time=time.time(), **fields))

    async def scenario():
        app = ScreenApp(db, lambda: WatchScreen(all_stations=True, poll_interval=0.1))
        async with app.run_test(size=(160, 48)) as pilot:
            screen = app.screen

            async def wait_text(expected: str) -> str:
                end = time.monotonic() + 10
                while time.monotonic() < end:
                    await settle(pilot, 1)
                    shown = str(screen.query_one("#watch-wait", Static).render())
                    if shown == expected:
                        return shown
                raise AssertionError(f"wait line {shown!r}, expected {expected!r}")

            emit(ev.RunStarted, plan_name="bringup", plan_version="1", plan_hash="b" * 64, plan_text="",
                 plan_path="bringup.yaml", station="bench-9", dut_serial="EVT-0042", operator="ana",
                 labctl_version="0", host="bench-9-pc", pid=os.getpid())
            emit(ev.StepStarted, step_key="steps/soak#1", step_id="soak", group="steps", check="thermal.soak")
            emit(ev.Progress, step_key="steps/soak#1", text="chamber 43.1/45.0 degC, stable 0 s of 2 min",
                 fraction=0.1)
            await wait_text("chamber 43.1/45.0 degC, stable 0 s of 2 min")
            assert screen.has_class("-waiting")
            emit(ev.StepEnded, step_key="steps/soak#1", outcome=ev.StepOutcome.PASS, duration=120.0)
            emit(ev.StepStarted, step_key="steps/fan#1", step_id="fan", group="steps", check="prompt")
            await wait_text("")  # the soak's line is not shown under the next step
            emit(ev.PromptAsked, step_key="steps/fan#1", prompt_id="fan", text="Is the fan spinning?",
                 choices=("yes", "no"))
            await wait_text("waiting for the operator at the bench: Is the fan spinning? [yes / no]")
            emit(ev.PromptAnswered, step_key="steps/fan#1", prompt_id="fan", answer="yes")
            rec.flush()
            await wait_text("")
            assert not screen.has_class("-waiting")

    try:
        asyncio.run(scenario())
    finally:
        rec.close()
        store.close()


def test_a_database_that_fails_mid_watch_is_said_on_the_screen_and_the_watcher_keeps_polling(tmp_path):
    import psycopg

    from labctl.store.testing import postgres_admin_url, temporary_database

    with temporary_database("postgresql", tmp_path) as url:
        schema = url.rsplit("search_path%3D", 1)[1]

        async def scenario():
            app = ScreenApp(url, lambda: WatchScreen(all_stations=True, poll_interval=0.1))
            async with app.run_test(size=(120, 36)) as pilot:
                await settle(pilot)
                screen = app.screen
                assert "waiting for a run" in str(screen.query_one("#watch-run", Static).render())
                with psycopg.connect(postgres_admin_url(), autocommit=True) as conn:
                    conn.execute(f'DROP TABLE "{schema}".runs CASCADE')  # the results are gone under it
                end = time.monotonic() + 10
                shown = ""
                while "did not answer" not in shown and time.monotonic() < end:
                    await settle(pilot, 1)
                    shown = str(screen.query_one("#watch-run", Static).render())
                assert "the results database did not answer: ProgrammingError" in shown and "(retrying)" in shown
                await pilot.pause(0.5)  # later polls fail the same way: the app goes on, the line stays
                assert app.is_running and "did not answer" in str(screen.query_one("#watch-run", Static).render())

        asyncio.run(scenario())


def test_a_poll_that_lands_after_the_screen_closed_changes_nothing_and_raises_nothing(tmp_path):
    """A worker hands its result to its screen from another thread; when the operator closed
    the screen (or quit) meanwhile, the result finds no widgets: it is dropped, not raised into
    the app (it was, once in a CI run: NoMatches '#watch-run' while the app shut down)."""
    from labctl.tui.handover import to_screen

    async def scenario():
        app = _quiet_watch(tmp_path)
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, WatchScreen) and screen.applied >= 1  # the first poll was shown
            applied = screen.applied
            app.pop_screen()
            await settle(pilot)
            assert not screen.is_attached
            changes = {"run": {"outcome": "running"}, "measurements": [], "samples": []}
            await asyncio.to_thread(to_screen, screen, screen._apply_poll, screen._generation, [], "run-late",
                                    changes, None)
            await asyncio.to_thread(to_screen, screen, screen._problem, "database is locked")
            await settle(pilot)
            assert screen.applied == applied

    asyncio.run(scenario())


def test_a_short_runs_plot_counts_seconds_and_no_empty_plot_takes_room_at_80x24(tmp_path):
    """A run 30 s old: its x axis reads seconds (it read 0.00159 … min); before there is any
    series the plot takes no room (it was an empty 'no time series yet' box)."""
    from tuikit import _Run

    async def scenario():
        app = _quiet_watch(tmp_path)
        db = app.config.db
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            screen = app.screen
            plot = screen.query_one("#watch-plot")
            assert not plot.display  # nothing to plot: the measurements have the room
            store = open_store(db)
            rec = Recorder(store)
            run = _Run(rec, "5e0c0000000000a1", time.time() - 30)
            run.emit(ev.RunStarted, 0.0, plan_name="thermal-soak", plan_version="1", plan_hash="b" * 64,
                     plan_text="name: thermal-soak\n", plan_path="thermal-soak.yaml", station="bench-1",
                     dut_serial="EVT-0042", operator="ana", labctl_version="0.1.0", host="lab-pc-7", pid=1)
            run.emit(ev.StepStarted, step_key="steps/soak#1", step_id="soak", group="steps", check="soak",
                     attempt=1)
            for i in range(25):
                run.emit(ev.SampleRecorded, 1.0, step_key="steps/soak#1", series="chamber", value=25 + i * 0.5,
                         unit="degC")
            rec.close()
            store.close()
            screen.poll()
            await settle(pilot)
            assert plot.display and plot.region.height >= 5
            drawn = str(plot.render())
            assert "s since the run started" in drawn and "min since" not in drawn, drawn
            ticks = [line for line in drawn.splitlines() if line.strip()][-2].split()
            assert ticks[-1] == "26" and all(float(t) >= 2 for t in ticks), drawn  # samples 2 s to 26 s in

    asyncio.run(scenario())


def _quiet_watch(tmp_path) -> ScreenApp:
    """The watch screen on an empty database, every station, polled when the test says."""
    db = str(tmp_path / "results.db")
    open_store(db).close()
    return ScreenApp(db, lambda: WatchScreen(all_stations=True, poll_interval=60))


def test_a_poll_that_lands_while_the_app_shuts_down_is_dropped(tmp_path):
    """The app stops running, then removes its screens' widgets, the screens last: a worker's
    result landing in between found the screen still attached and its widgets gone, and its
    NoMatches failed the app (seen once in CI: NoMatches '#watch-run' at shutdown)."""
    from labctl.tui.handover import to_screen

    late: list[str] = []

    async def scenario():
        app = _quiet_watch(tmp_path)
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, WatchScreen)
            close_all = app._close_all

            async def close_all_with_a_late_poll() -> None:
                assert not app.is_running and screen.is_attached  # the moment the bug hit
                await screen.query_one("#watch-run", Static).remove()  # the widgets go first
                await asyncio.to_thread(to_screen, screen, screen._problem, "database is locked")
                late.append("delivered")
                await close_all()

            app._close_all = close_all_with_a_late_poll

    asyncio.run(scenario())
    assert late == ["delivered"]  # the late poll was handed over, dropped, and the app closed cleanly


def test_a_missing_widget_on_an_open_screen_is_still_raised(tmp_path):
    """Dropping results is only for closing screens: on an open screen of a running app a
    missing widget is a bug, and the worker hears of it."""
    import pytest
    from textual.css.query import NoMatches

    from labctl.tui.handover import to_screen

    async def scenario():
        app = _quiet_watch(tmp_path)
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            screen = app.screen
            await screen.query_one("#watch-run", Static).remove()
            with pytest.raises(NoMatches):
                await asyncio.to_thread(to_screen, screen, screen._problem, "database is locked")
            await screen.mount(Static("", id="watch-run"))  # so that the screen closes whole

    asyncio.run(scenario())
