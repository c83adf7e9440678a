"""The TUI's history: find a board's runs, open one (failures first, measurements against
limits), compare it with the same DUT's previous run, filter — driven with a Pilot."""

from __future__ import annotations

import asyncio

import pytest
from textual import events
from textual.widgets import DataTable, Input, Static
from tuikit import T0, ScreenApp, _Run, history_db, record_run, settle, use_utc

from labctl.engine import events as ev
from labctl.store import Recorder, open_store
from labctl.tui.app import LabctlApp
from labctl.tui.compare import CompareScreen
from labctl.tui.config import TuiConfig
from labctl.tui.detail import RunDetailScreen
from labctl.tui.history import HistoryScreen


@pytest.fixture
def db(tmp_path, monkeypatch):
    use_utc(monkeypatch)
    return history_db(tmp_path / "results.db")


def _cells(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def test_history_lists_runs_newest_first_and_opens_a_run_with_its_failures_first(db):
    async def scenario():
        app = ScreenApp(db, HistoryScreen)
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            rows = _cells(app.screen.query_one("#history-runs", DataTable))
            assert [(r[4], r[2], r[3]) for r in rows] == [
                ("EVT-0042", "passed", "thermal-soak"), ("EVT-0042", "passed", "power-rails"),
                ("EVT-0043", "passed", "power-rails"), ("EVT-0042", "failed", "power-rails")]
            assert rows[1][9] == "re-run of 1a0b0c0d" and rows[3][6] == "2✓ 1✗"
            await pilot.press("down", "down", "down", "enter")  # the oldest run: the failed one
            await settle(pilot)
            assert isinstance(app.screen, RunDetailScreen)
            summary = str(app.screen.query_one("#detail-summary", Static).render())
            assert "run 1a0b0c0d00000001" in summary and "failed" in summary and "DUT EVT-0042" in summary
            ms = _cells(app.screen.query_one("#detail-measurements", DataTable))
            assert ms[0][:6] == ["FAIL", "rails", "VDD_CORE", "0.702 V", "0.725 .. 0.775 V", "-0.023 V"]
            assert [m[0] for m in ms[1:]] == ["PASS"] * 4
            steps = _cells(app.screen.query_one("#detail-steps", DataTable))
            assert [(s[0], s[3]) for s in steps] == [("power_on", "PASS"), ("rails", "FAIL"), ("die_temp", "PASS")]
            await pilot.press("escape")
            assert isinstance(app.screen, HistoryScreen)

    asyncio.run(scenario())


def test_the_same_duts_previous_run_side_by_side_changed_verdicts_first(db):
    async def scenario():
        app = ScreenApp(db, lambda: RunDetailScreen("1a0b0c0d00000003"))
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            await pilot.press("p")
            await settle(pilot)
            assert isinstance(app.screen, CompareScreen)
            a = str(app.screen.query_one("#compare-a", Static).render())
            b = str(app.screen.query_one("#compare-b", Static).render())
            assert "run 1a0b0c0d00000001" in a and "failed" in a  # EVT-0042's run before: same plan
            assert "run 1a0b0c0d00000003" in b and "re-run of 1a0b0c0d0000" in b
            rows = _cells(app.screen.query_one("#compare-table", DataTable))
            assert rows[0][:7] == ["rails", "VDD_CORE", "0.702 V", "0.748 V", "+0.046", "+6.6 %",
                                   "FAIL → PASS"]
            temp = next(r for r in rows if r[1] == "die_temp")
            assert temp[4] == "+3.75" and temp[5] == ""  # no % change of a temperature in degC

    asyncio.run(scenario())


def test_two_marked_runs_are_compared_and_a_first_run_has_nothing_before_it(db):
    async def scenario():
        app = ScreenApp(db, HistoryScreen)
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            await pilot.press("down", "down", "m", "down", "c")  # EVT-0043 marked, the failed EVT-0042 run
            await settle(pilot)
            a = str(app.screen.query_one("#compare-a", Static).render())
            b = str(app.screen.query_one("#compare-b", Static).render())
            assert "1a0b0c0d00000001" in a and "1a0b0c0d00000002" in b  # older first
            await pilot.press("escape", "m", "c")  # the mark moves here: compared with the DUT's run before
            await settle(pilot)
            text = str(app.screen.query_one("#compare-a", Static).render())
            assert "no earlier run of DUT EVT-0042" in text

    asyncio.run(scenario())


def test_filters_narrow_the_list_and_a_bad_date_says_how_to_write_it(db):
    async def scenario():
        app = ScreenApp(db, HistoryScreen)
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            assert app.screen.focused.id == "filter-plan"
            await pilot.press(*"power*", "tab", *"EVT-0042", "enter")
            await settle(pilot)
            rows = _cells(app.screen.query_one("#history-runs", DataTable))
            assert [r[8] for r in rows] == ["1a0b0c0d0000", "1a0b0c0d0000"] and all(r[3] == "power-rails" for r in rows)
            assert "2 run(s) · plan power*, dut EVT-0042" in str(app.screen.query_one("#history-status", Static).render())
            app.screen.query_one("#filter-outcome", Input).value = "failed"
            await pilot.click("#filter-outcome")
            await pilot.press("enter")
            await settle(pilot)
            assert [r[2] for r in _cells(app.screen.query_one("#history-runs", DataTable))] == ["failed"]
            app.screen.query_one("#filter-since", Input).value = "last tuesday"
            await pilot.click("#filter-since")
            await pilot.press("enter")
            await settle(pilot)
            status = str(app.screen.query_one("#history-status", Static).render())
            assert "cannot read the since filter 'last tuesday'" in status and "7d" in status
            assert "--since" not in status  # the field's name, not the CLI's option
            app.screen.query_one("#filter-since", Input).value = ""
            app.screen.query_one("#filter-outcome", Input).value = "broken"
            await pilot.click("#filter-outcome")
            await pilot.press("enter")
            await settle(pilot)
            status = str(app.screen.query_one("#history-status", Static).render())
            assert "the outcome filter 'broken': 'broken' is not a run outcome" in status, status
            # a burst of keys (type-ahead): those after a tab land in the next field
            for ident in ("plan", "dut", "station", "outcome"):
                app.screen.query_one(f"#filter-{ident}", Input).value = ""
            app.screen.query_one("#filter-plan", Input).focus()
            await pilot.pause()
            for key in [*"pro*", "tab", *"EVT"]:
                app.post_message(events.Key(key, key if len(key) == 1 else None))
            await settle(pilot)
            assert app.screen.query_one("#filter-plan", Input).value == "pro*"
            assert app.screen.focused.id != "filter-plan"
            assert app.screen.focused.value == "EVT"

    asyncio.run(scenario())


def test_coming_back_to_the_history_lists_the_runs_recorded_meanwhile(db):
    def run_ends_at_the_bench(run_id: str, t: float, dut: str) -> None:  # labctl run, or this TUI
        store = open_store(db)
        rec = Recorder(store)
        record_run(rec, run_id, t, dut=dut, vcore=0.750, outcome=ev.RunOutcome.PASSED)
        rec.close()
        store.close()

    async def scenario():
        app = LabctlApp(TuiConfig(db=db, watch=True))  # starts in watch mode: no bench polled
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            await pilot.press("h")
            await settle(pilot)
            table = app.screen.query_one("#history-runs", DataTable)
            await pilot.press("down")  # on EVT-0042's re-run
            assert len(_cells(table)) == 4 and _cells(table)[table.cursor_row][9] == "re-run of 1a0b0c0d"
            await pilot.press("enter")
            await settle(pilot)
            run_ends_at_the_bench("1a0b0c0d00000005", T0 + 9000, "EVT-0044")
            await pilot.press("escape")  # back from the run's detail
            await settle(pilot)
            rows = _cells(table)
            assert [r[4] for r in rows] == ["EVT-0044", "EVT-0042", "EVT-0042", "EVT-0043", "EVT-0042"]
            assert rows[table.cursor_row][9] == "re-run of 1a0b0c0d"  # the cursor stays on the run it was on
            run_ends_at_the_bench("1a0b0c0d00000006", T0 + 9600, "EVT-0045")
            await pilot.press("w", "h")  # to watch mode and back
            await settle(pilot)
            assert _cells(app.screen.query_one("#history-runs", DataTable))[0][4] == "EVT-0045"

    asyncio.run(scenario())


def test_enter_before_the_list_has_loaded_says_so_and_opens_the_run_once_it_is_there(db, monkeypatch):
    """`h` then `enter` at once: the list is still being read; the key is not lost."""
    import threading

    from labctl.store import query

    release = threading.Event()
    list_runs = query.list_runs

    def slow_list_runs(*args, **kwargs):
        release.wait(10)
        return list_runs(*args, **kwargs)

    monkeypatch.setattr(query, "list_runs", slow_list_runs)

    async def scenario():
        app = ScreenApp(db, HistoryScreen)
        async with app.run_test(size=(80, 24)) as pilot:
            try:
                await pilot.pause()
                await pilot.press("enter")
                status = str(app.screen.query_one("#history-status", Static).render())
                assert "still loading" in status and "opens" in status
                assert isinstance(app.screen, HistoryScreen)
            finally:
                release.set()
            await settle(pilot)
            assert isinstance(app.screen, RunDetailScreen)
            assert app.screen.run_id == "1a0b0c0d00000004"  # the newest: the run under the cursor

    asyncio.run(scenario())


def _long_run(store, run_id: str, t: float, n: int, *, fail_at: int | None) -> None:
    """A run of ``n`` steps of one measurement each (DUT EVT-0050), step ``fail_at`` failing."""
    rec = Recorder(store, commit_window=60.0)
    run = _Run(rec, run_id, t)
    run.emit(ev.RunStarted, 0.0, plan_name="soak", plan_version="1", plan_hash="a" * 64, plan_text="",
             plan_path="soak.yaml", station="bench-1", dut_serial="EVT-0050", operator="ana",
             labctl_version="0.1.0", host="lab-pc-7", pid=1)
    for i in range(n):
        run.step(f"s{i}", {"VDD_CORE": (0.702 if i == fail_at else 0.75 + i * 1e-6, 0.725, 0.775)})
    run.emit(ev.RunEnded, outcome=ev.RunOutcome.FAILED if fail_at is not None else ev.RunOutcome.PASSED)
    rec.close()


def test_a_long_run_opens_a_page_at_a_time_with_its_failures_in_sight(tmp_path, monkeypatch):
    """A run of 1,300 steps: the detail shows the first page of each table and a "… N more"
    row (the late failure already listed below the steps' one); the cursor reaching that row
    loads the next page, until every step and measurement is there; the summary counts every
    step, not only those shown."""
    from labctl.tui.detail import PAGE

    use_utc(monkeypatch)
    n = 2 * PAGE + 300
    db = str(tmp_path / "long.db")
    with open_store(db) as store:
        _long_run(store, "2b0c0d0e00000001", T0, n, fail_at=n - 5)

    async def scenario():
        app = ScreenApp(db, lambda: RunDetailScreen("2b0c0d0e00000001"))
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            screen = app.screen
            summary = str(screen.query_one("#detail-summary", Static).render())
            assert f"steps {n - 1} passed, 1 failed, 0 error" in summary
            ms_table = screen.query_one("#detail-measurements", DataTable)
            ms = _cells(ms_table)
            assert len(ms) == PAGE + 1 and ms[0][:3] == ["FAIL", f"s{n - 5}", "VDD_CORE"]
            assert ms[-1][1] == f"… {n - PAGE:,} more measurements: the next {PAGE} as the cursor gets here"
            steps = _cells(screen.query_one("#detail-steps", DataTable))
            assert [s[0] for s in steps[:PAGE]] == [f"s{i}" for i in range(PAGE)]
            assert steps[PAGE][5].startswith(f"… {n - PAGE:,} more steps") and "1 did not pass (below)" in steps[PAGE][5]
            assert steps[PAGE + 1][0] == f"s{n - 5}" and steps[PAGE + 1][3] == "FAIL" and len(steps) == PAGE + 2
            assert screen._chosen_step() == f"steps/s{n - 5}"  # (the measurement under the cursor)

            ms_table.move_cursor(row=PAGE)  # onto "… more": the next page comes
            await settle(pilot)
            ms = _cells(ms_table)
            assert len(ms) == 2 * PAGE + 1 and ms_table.cursor_row == PAGE and ms[PAGE][1] == f"s{PAGE - 1}"
            await pilot.press("ctrl+end")  # the last row: "… more" again
            await settle(pilot)
            ms = _cells(ms_table)
            assert len(ms) == n and [m[1] for m in ms[1:]] == [f"s{i}" for i in range(n) if i != n - 5]

            await pilot.press("tab")  # the steps table
            await pilot.pause()
            steps_table = screen.query_one("#detail-steps", DataTable)
            assert screen.focused is steps_table
            steps_table.move_cursor(row=PAGE)
            await settle(pilot)
            steps = _cells(steps_table)
            assert [s[0] for s in steps[:2 * PAGE]] == [f"s{i}" for i in range(2 * PAGE)]
            assert steps[2 * PAGE][5].startswith("… 300 more steps: the next 300") and steps[2 * PAGE + 1][0] == f"s{n - 5}"
            assert screen._chosen_step() is not None
            steps_table.move_cursor(row=2 * PAGE)
            assert screen._chosen_step() is None  # (the "… more" row is no step to re-run)
            await settle(pilot)
            steps = _cells(steps_table)
            assert [s[0] for s in steps] == [f"s{i}" for i in range(n)] and steps[n - 5][3] == "FAIL"

    asyncio.run(scenario())


def test_two_long_runs_compared_a_page_at_a_time_the_changed_verdict_first(tmp_path, monkeypatch):
    """The same DUT's two runs of 600 steps: the comparison lists the changed verdict first,
    one page of rows and a "… N more" row; the cursor there adds the rest."""
    from labctl.tui.detail import PAGE

    use_utc(monkeypatch)
    n = PAGE + 100
    db = str(tmp_path / "long.db")
    with open_store(db) as store:
        _long_run(store, "3c0d0e0f00000001", T0, n, fail_at=n - 1)
        _long_run(store, "3c0d0e0f00000002", T0 + 3600, n, fail_at=None)

    async def scenario():
        app = ScreenApp(db, lambda: CompareScreen(None, "3c0d0e0f00000002"))
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            table = app.screen.query_one("#compare-table", DataTable)
            rows = _cells(table)
            assert len(rows) == PAGE + 1 and rows[0][0] == f"s{n - 1}" and rows[0][6] == "FAIL → PASS"
            assert rows[-1][1] == "… 100 more: the next 100 as the cursor gets here"
            await pilot.press("ctrl+end")
            await settle(pilot)
            rows = _cells(table)
            assert len(rows) == n and sorted(r[0] for r in rows) == sorted(f"s{i}" for i in range(n))

    asyncio.run(scenario())
