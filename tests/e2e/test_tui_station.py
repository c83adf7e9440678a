"""The station screen fed fixed readings of the station (no lab, no polling)."""

from __future__ import annotations

from dataclasses import replace

from textual.widgets import DataTable, Static

from labctl.instruments.benchlock import bench_lock
from labctl.tui import LabctlApp, TuiConfig
from labctl.tui.status import InterlockValue, StationStatus
from tests.e2e.tui_fixed import plan_catalog, station_status
from tests.e2e.tui_support import columns_in_view, pilot_test, sim_app, station_ready, wait_for


def _fixed_app() -> LabctlApp:
    return LabctlApp(TuiConfig(poll_interval=0, operator="alice"))  # no polling: the readings are fed


async def _show(pilot, status: StationStatus) -> None:
    pilot.app.screen.show_plans(plan_catalog())
    pilot.app.screen.show_status(status)
    await pilot.pause()


@pilot_test
async def test_after_the_bench_was_busy_the_instruments_show_calibration_model_and_serials_again():
    app = _fixed_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await _show(pilot, station_status())
        screen = app.screen
        table = screen.query_one("#instruments", DataTable)
        every = ["Role", "Status", "Error queue", "Cal. due", "Model", "IDN serial", "Asset"]
        assert columns_in_view(table) == every
        # a run in another terminal holds the bench: one poll says so, at length
        screen.show_status(StationStatus("sim-bench-1", problems=(
            "bench in use, not polled: station sim-bench-1: instrument TCPIP0::127.0.0.1::50251::SOCKET is in use "
            "by pid 48213 (labctl run testplans/thermal-soak.yaml) on station sim-bench-1 since 2026-12-02 09:31:30",)))
        await pilot.pause()
        screen.show_status(station_status())  # that run ended: the next poll reads every instrument
        await pilot.pause()
        assert columns_in_view(table) == every
        assert [str(c) for c in table.get_row_at(0)][3:] == ["2027-09-30", "E36312A", "MY59002391", "MY59002391"]


@pilot_test
async def test_a_plan_without_interlocks_says_so_beside_the_dut(tmp_path):
    app = sim_app(tmp_path, poll_interval=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        await station_ready(pilot)
        screen = app.screen
        screen.query_one("#plans", DataTable).move_cursor(row=[p.name for p in screen.plans].index("smoke"))
        locks = screen.query_one("#interlocks", DataTable)
        await wait_for(pilot, lambda: locks.row_count and str(locks.get_row_at(0)[0]) == "none in smoke",
                       "the interlocks pane to say smoke has none", timeout=20)


@pilot_test
async def test_a_bench_in_use_by_another_run_is_said_so_not_reported_as_failing(tmp_path):
    app = sim_app(tmp_path, poll_interval=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        await station_ready(pilot)
        screen = app.screen
        head = screen.query_one("#station-head", Static)
        with bench_lock(app.bench.fixture, slots=()):  # what `labctl run` in another terminal holds
            await wait_for(pilot, lambda: "bench in use" in str(head.render()), "the head line to say the bench is busy")
            shown = str(head.render())
            assert "not answering" not in shown and "problem" not in shown, shown
            table = screen.query_one("#instruments", DataTable)
            assert [str(c) for c in table.get_row_at(0)][:2] == ["station", "▲ busy"]
            assert str(screen.query_one("#dut", Static).render()) == "DUT: not read (bench in use)"
            # the selected plan's interlocks are named as not read, not said to be missing
            screen.query_one("#plans", DataTable).move_cursor(row=[p.name for p in screen.plans].index("accelerator-evt"))
            locks = screen.query_one("#interlocks", DataTable)
            await wait_for(pilot, lambda: locks.row_count and str(locks.get_row_at(0)[0]) == "die over-temperature",
                           "the interlocks pane to name the plan's interlocks", timeout=20)
            assert [str(c) for c in locks.get_row_at(0)][1] == "not read (bench in use)"
        await wait_for(pilot, lambda: "instruments OK" in str(head.render()), "the bench to be read again")


@pilot_test
async def test_on_120_columns_the_head_line_s_interlock_values_are_not_cut_off():
    app = _fixed_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await _show(pilot, replace(station_status(), interlocks=(
            InterlockValue("die over-temperature", "dut.die_temp", "25.1 degC", "≤ 105 degC", True),
            InterlockValue("input over-current", "psu.ch1.current", "0.0002667 A", "≤ 6 A", True))))
        head = app.screen.query_one("#station-head", Static)
        text = str(head.render())
        assert text.endswith("psu.ch1.current 0.0002667 A") and len(text) > head.content_region.width
        assert head.size.height == 2  # wrapped: every value with its unit is on the screen


@pilot_test
async def test_an_instruments_whole_error_is_read_under_the_table_at_80x24(tmp_path):
    """`labctl sim inject disconnect role=bert`: the error column cuts the message; the line
    under the instruments table says all of it for the instrument under the cursor."""
    app = sim_app(tmp_path, poll_interval=60)  # read once, then on ctrl+r only
    async with app.run_test(size=(80, 24)) as pilot:
        await station_ready(pilot)
        screen = app.screen
        app.bench.lab.inject({"fault": "disconnect", "role": "bert", "persistent": True})  # and stays away
        await pilot.press("ctrl+r")

        def bert():
            return next(i for i in screen.status.instruments if i.role == "bert")

        await wait_for(pilot, lambda: bert().errors.startswith("connection lost"), "the poll to see the bert gone")
        full = bert().errors
        table = screen.query_one("#instruments", DataTable)
        row = [i.role for i in screen.status.instruments].index("bert")
        assert str(table.get_row_at(row)[2]).endswith("…") and len(full) > 36  # the column cuts it
        table.focus()
        table.move_cursor(row=row)
        await pilot.pause()
        detail = screen.query_one("#instrument-detail", Static)
        said = " ".join(str(detail.render()).split())
        assert said == f"bert: {full}", said
        shown = detail.region  # on the screen inside the instruments pane, every line of it
        assert shown.height >= 1 and screen.query_one("#instruments-pane").content_region.contains_region(shown)
        assert detail.content_size.height <= shown.height
        assert table.cursor_row == row and table.is_valid_row_index(row) and table.scroll_offset.y <= row
        table.move_cursor(row=0)  # the line follows the cursor: the PSU is fine, the line gives its room back
        await pilot.pause()
        assert not detail.display and str(detail.render()) == ""


@pilot_test
async def test_plan_files_added_edited_or_deleted_show_without_a_restart(tmp_path):
    """An engineer writes a plan beside a running `labctl tui`: it appears within a poll; an
    edit shows its new step count, a deletion takes it off, and the cursor stays on its plan."""
    from labctl.sim.testing import isolated_fixture

    folder = tmp_path / "plans"
    folder.mkdir()
    mine = folder / "mine.yaml"

    def write(name: str, steps: int) -> None:
        lines = [f"name: {name}", 'version: "1"', "requires: [psu]", "steps:"]
        lines += [f"  - {{id: m{i}, check: measure, args: {{role: psu, property: ch1.voltage}}}}" for i in range(steps)]
        (folder / f"{name}.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")

    write("keep", 1)
    app = LabctlApp(TuiConfig(fixture=str(isolated_fixture(tmp_path, time_scale=600)), db=str(tmp_path / "r.db"),
                              plans=(str(folder),), operator="tester", poll_interval=0.3))
    async with app.run_test(size=(160, 48)) as pilot:
        await station_ready(pilot)
        screen = app.screen
        assert "mine" not in [p.name for p in screen.plans]
        table = screen.query_one("#plans", DataTable)
        table.move_cursor(row=[p.name for p in screen.plans].index("keep"))
        write("mine", 2)
        await wait_for(pilot, lambda: "mine" in [p.name for p in screen.plans], "the new plan in the list", timeout=20)
        assert screen.selected_plan.name == "keep"  # the reload left the cursor where it was
        assert next(p for p in screen.plans if p.name == "mine").expanded == 2
        write("mine", 5)
        await wait_for(pilot, lambda: [p.expanded for p in screen.plans if p.name == "mine"] == [5],
                       "the edited plan's 5 steps", timeout=20)
        mine.unlink()
        await wait_for(pilot, lambda: "mine" not in [p.name for p in screen.plans], "the deleted plan gone", timeout=20)
        assert screen.selected_plan.name == "keep"


@pilot_test
async def test_the_instruments_cursor_and_its_detail_line_stay_through_a_poll_that_changes_a_row():
    """The operator reads the bert's whole error under the table; the next poll words it a
    little differently: the cursor stays on the bert (it went back to the psu, the line gone)."""
    app = _fixed_app()
    async with app.run_test(size=(160, 48)) as pilot:
        first = station_status()
        await _show(pilot, first)
        screen = app.screen
        table = screen.query_one("#instruments", DataTable)
        table.focus()
        table.move_cursor(row=4)  # bert
        await pilot.pause()
        detail = screen.query_one("#instrument-detail", Static)
        assert str(detail.render()).startswith("bert: no answer within 3 s")
        bert = replace(first.instruments[4], errors="connection lost: the instrument closed the connection")
        dut = replace(first.instruments[6], detail="console id: serial SIM-GOLD-0001 board ACCEL-SIM-X1 rev B")
        screen.show_status(replace(first, instruments=(*first.instruments[:4], bert, first.instruments[5], dut)))
        await pilot.pause()
        assert table.cursor_row == 4
        assert str(detail.render()).startswith("bert: connection lost: the instrument closed")
        table.move_cursor(row=6)  # the DUT console is fine: no line, whatever its notes
        await pilot.pause()
        assert not detail.display
