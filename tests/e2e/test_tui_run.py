"""``labctl tui`` driven with Textual's Pilot against the simulated lab: start a plan, answer a
prompt, see steps complete and measurements appear; abort a run and find the safe state
recorded and the supply's output off (read back over SCPI by an independent pyvisa client)."""

from __future__ import annotations

import re

import pytest
import pyvisa
from textual import events
from textual.widgets import Button, DataTable, Input, Label, RichLog, Static

from labctl.fixture import load_fixture
from labctl.sim.lab import SimulatedLab
from labctl.sim.testing import isolated_fixture
from tests.e2e.tui_support import (
    db_rows,
    make_app,
    open_start_form,
    pilot_test,
    screen_shown,
    sim_app,
    start_plan,
    start_until_prompt,
    station_ready,
    wait_for,
)

pytestmark = pytest.mark.slow


def _screen_name(app) -> str:
    return type(app.screen).__name__


@pilot_test
async def test_start_answer_prompt_and_see_steps_and_measurements(tmp_path):
    app = sim_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        run = await start_until_prompt(pilot, "tui-bringup", "#choice-0")
        dialog = app.screen
        assert "Is the heatsink fitted?" in str(dialog.query_one("#prompt-text", Static).render())
        assert "timeout 120 s" in str(dialog.query_one("#prompt-countdown", Static).render())
        await pilot.click("#choice-0")  # "yes"
        await wait_for(pilot, lambda: app.run_session.finished, "the run to end")
        await pilot.pause(0.3)
        assert app.run_session.exit_code == 0
        station = app.run_session.station  # the screen's thread needs the interpreter: no query watches
        assert station is not None and {n: station.entry(n).driver.transport.reply_spin for n in station.names} \
            == dict.fromkeys(station.names, 0.0)
        outcomes = {r.step_id: r.status for r in run.model.steps.values()}
        assert {k: outcomes[k] for k in ("heatsink", "power_on", "core_rail", "power_off")} == {
            "heatsink": "PASS", "power_on": "PASS", "core_rail": "PASS", "power_off": "PASS"}
        labels = [str(node.label) for node in run._step_nodes.values()]
        assert any(label.startswith("✓ core_rail  PASS") for label in labels), labels
        table = run.query_one("#measurements", DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        rail = next(r for r in rows if "VDD_CORE" in r[0])  # measurement, value, verdict, margin, limits, step
        assert rail[1].endswith(" V") and rail[2] == "PASS" and rail[4] == "0.725 V ≤ x ≤ 0.775 V"
        assert rail[5] == "core_rail"
        assert re.fullmatch(r"\+0\.02\d* V \(\d+ %\)", rail[3]), rail[3]  # to the nearest limit, in V and of the band
        assert "PASSED" in str(run.query_one("#run-head", Static).render())
    answers = db_rows(tmp_path, "select prompt_id, answer, answer_source, answered_at from prompts")
    assert [(a[0], a[1], a[2]) for a in answers] == [("heatsink", "yes", "operator:tester")]
    assert answers[0][3] > 0
    assert db_rows(tmp_path, "select outcome, operator from runs") == [("passed", "tester")]


@pilot_test
async def test_start_form_checks_the_serial_and_overrides_before_anything_is_powered(tmp_path):
    app = sim_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        form = await open_start_form(pilot, "tui-bringup")
        assert form.query_one("#dut", Input).value == "SIM-GOLD-0001"  # read off the console
        form.query_one("#dut", Input).value = "SIM-OTHER-9"
        form.query_one("#param-vin", Input).value = "banana"

        def shown(ident):
            return str(form.query_one(f"#{ident}-error", Static).render())

        await wait_for(pilot, lambda: "SIM-GOLD-0001" in shown("dut") and "does not fit vin" in shown("param-vin"),
                       "the field errors")
        assert form.query_one("#start", Button).disabled
        assert "block the start" in str(form.query_one("#start-preflight", Static).render())
        await pilot.press("ctrl+s")  # refused
        assert _screen_name(app) == "StartRunScreen"
        form.query_one("#dut", Input).value = "SIM-GOLD-0001"
        form.query_one("#param-vin", Input).value = "5.1 V"
        await wait_for(pilot, lambda: not form.query_one("#start", Button).disabled, "the start to be allowed")
        assert shown("dut") == "" and shown("param-vin") == ""
        form.query_one("#dut", Input).focus()
        await pilot.press("enter")  # a scanner's Enter moves on, it never starts the run
        assert _screen_name(app) == "StartRunScreen" and app.focused is form.query_one("#operator", Input)
        # a burst (a scanner, type-ahead): the keys after an Enter land in the next field
        form.query_one("#dut", Input).value = ""
        form.query_one("#operator", Input).value = ""
        form.query_one("#dut", Input).focus()
        await pilot.pause()
        for key in [*"SIM-GOLD-0001", "enter", *"ope", "enter"]:
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await wait_for(pilot, lambda: form.query_one("#operator", Input).value == "ope", "the burst to be typed")
        assert form.query_one("#dut", Input).value == "SIM-GOLD-0001"
        assert _screen_name(app) == "StartRunScreen"
        await pilot.press("escape")
        assert _screen_name(app) == "StationScreen"
    assert not (tmp_path / "results.db").exists() or db_rows(tmp_path, "select count(*) from runs") == [(0,)]


@pilot_test
async def test_the_open_start_form_s_pre_flight_follows_the_station(tmp_path):
    app = sim_app(tmp_path, poll_interval=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        form = await open_start_form(pilot, "tui-bringup")
        preflight = form.query_one("#start-preflight", Static)
        await wait_for(pilot, lambda: "nothing blocks the start" in str(preflight.render()), "a clear pre-flight")
        app.bench.lab.inject({"fault": "instrument_timeout", "role": "daq"})  # the DAQ stops answering
        await wait_for(pilot, lambda: "✖ daq: no answer" in str(preflight.render()), "the DAQ to block the start")
        assert form.query_one("#start", Button).disabled
        app.bench.lab.clear_faults()  # it answers again: the start is allowed without reopening the form
        await wait_for(pilot, lambda: "nothing blocks the start" in str(preflight.render()), "the pre-flight to clear")
        assert not form.query_one("#start", Button).disabled


@pilot_test
async def test_a_run_that_cannot_start_says_nothing_was_powered(tmp_path):
    app = sim_app(tmp_path, poll_interval=60)  # the station is read once: the swap below goes unseen
    async with app.run_test(size=(160, 48)) as pilot:
        # another board is put on the fixture between the form's pre-flight and the start
        await _start_after(pilot, lambda: app.bench.lab.swap_dut("SIM-GOLD-0002"))
        run = app.screen
        await pilot.pause(0.6)  # the screen's periodic redraws come and go
        assert str(run.query_one("#run-head", Static).render()).startswith("not started: ")
        assert str(run.query_one("#run-progress-text", Static).render()) == "nothing was powered"
        assert run.query_one("#run-progress").total is not None  # the bar no longer says "working"
        assert app.run_session.exit_code == 2
        assert _psu_output(app.bench.lab.addresses["psu"]) == "0"
        said = _log_text(run)  # what to do, in the TUI's words (the CLI's is "run with --dut")
        assert "reports serial SIM-GOLD-0002" in said and "type SIM-GOLD-0002 in the start form's DUT serial" in said
        assert "--dut" not in said


@pilot_test
async def test_a_pre_flight_failing_at_the_start_says_to_fix_the_station_here(tmp_path):
    app = sim_app(tmp_path, poll_interval=60)  # the station is read once: the fault below goes unseen
    async with app.run_test(size=(160, 48)) as pilot:
        # the DAQ stops answering between the form's pre-flight and the start
        await _start_after(pilot, lambda: app.bench.lab.inject({"fault": "instrument_timeout", "role": "daq"}))
        await pilot.pause(0.3)
        said = _log_text(app.screen)
        assert "station pre-flight failed: daq" in said, said
        assert "the station screen (s) shows each instrument's problem, ctrl+r reads them again" in said
        assert "--no-preflight" not in said  # the TUI has no such option


@pilot_test
async def test_an_expired_calibration_blocks_the_start_until_allowed_in_the_form_and_is_recorded(tmp_path):
    """The TUI way of `labctl run --allow-expired`: the form's box, shown only while a
    calibration has expired; the run then records the allowance in its log."""
    import yaml
    from textual.widgets import Checkbox

    bench = isolated_fixture(tmp_path, time_scale=600)
    data = yaml.safe_load(bench.read_text())
    data["roles"]["daq"]["asset"]["calibration_due"] = "2020-01-31"
    bench.write_text(yaml.safe_dump(data))
    app = make_app(tmp_path, bench, poll_interval=60)
    async with app.run_test(size=(160, 48)) as pilot:
        form = await open_start_form(pilot, "smoke")
        preflight = form.query_one("#start-preflight", Static)
        await wait_for(pilot, lambda: form.start_check is not None, "the form's pre-flight")
        said = " ".join(str(preflight.render()).split())
        assert "✖ daq: calibration expired on 2020-01-31 (recalibrate, or override with the start form's " \
               "allow-expired box)" in said, said
        assert "--allow-expired" not in said
        box = form.query_one("#allow-expired", Checkbox)
        assert box.display and form.query_one("#start", Button).disabled
        box.value = True
        await wait_for(pilot, lambda: not form.query_one("#start", Button).disabled, "the start to be allowed")
        assert "▲ daq: calibration expired on 2020-01-31 (allowed: recorded with the run)" in str(preflight.render())
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.run_session is not None and app.run_session.finished, "the run to end")
        assert app.run_session.exit_code == 0
        logs = [m for (m,) in db_rows(tmp_path, "select message from logs")]
        assert any("calibration expired on 2020-01-31 (allowed by the start form's allow-expired box)" in m
                   for m in logs), logs


@pilot_test
async def test_the_allow_expired_box_is_not_offered_while_every_calibration_is_current(tmp_path):
    from textual.widgets import Checkbox

    app = sim_app(tmp_path, poll_interval=60)
    async with app.run_test(size=(160, 48)) as pilot:
        form = await open_start_form(pilot, "smoke")
        await wait_for(pilot, lambda: not form.query_one("#start", Button).disabled, "the start to be allowed")
        assert not form.query_one("#allow-expired", Checkbox).display


async def _start_after(pilot, change) -> None:
    """Open smoke's start form, wait for a clear pre-flight, ``change()`` the bench (the form
    does not see it: the app polls rarely), start, and wait for the run to end."""
    form = await open_start_form(pilot, "smoke")
    await wait_for(pilot, lambda: not form.query_one("#start", Button).disabled, "the start to be allowed")
    change()
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: pilot.app.run_session.finished, "the run to end")


def _log_text(run) -> str:
    """The run screen's log as one line of words (its wrapping undone)."""
    return " ".join(" ".join(strip.text.split()) for strip in run.query_one("#run-log", RichLog).lines)


@pilot_test
async def test_unanswered_prompt_times_out_and_is_withdrawn(tmp_path):
    app = sim_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        run = await start_until_prompt(pilot, "tui-unanswered", "#prompt-input")
        await wait_for(pilot, lambda: app.run_session.finished, "the run to end", timeout=30)
        await pilot.pause(0.3)
        assert _screen_name(app) == "RunScreen"  # the dialog was withdrawn
        row = run.model.steps["steps/label"]
        assert row.status == "ERROR" and "nobody answered 'Scan the DUT label' within 2 s" in row.message
        assert "answer in the dialog before its countdown ends" in row.message and "--answers" not in row.message
        assert app.run_session.exit_code == 2
    assert db_rows(tmp_path, "select answer from prompts") == [(None,)]


def _psu_output(address: str) -> str:
    inst = pyvisa.ResourceManager("@py").open_resource(address, read_termination="\n",
                                                       write_termination="\n", timeout=3000)
    try:
        return inst.query("OUTP? (@1)").strip()
    finally:
        inst.close()


@pilot_test
async def test_abort_drives_the_safe_state_and_shows_it(tmp_path):
    app = sim_app(tmp_path, time_scale=60)
    async with app.run_test(size=(160, 48)) as pilot:
        run = await start_plan(pilot, "abortable")
        await wait_for(pilot, lambda: run.model.current == "steps/soak", "the soak to start")
        await wait_for(pilot, lambda: "chamber" in run.model.progress_text, "the soak's progress")
        assert _psu_output(app.bench.lab.addresses["psu"]) == "1"  # powered, mid-soak
        await pilot.press("a")
        assert _screen_name(app) == "ConfirmDialog"
        await pilot.press("y")
        await wait_for(pilot, lambda: app.run_session.finished, "the run to end")
        await pilot.pause(0.3)
        assert app.run_session.exit_code == 3
        steps = run.model.steps
        assert steps["steps/soak"].status == "ABORTED"
        safe = {k: r.status for k, r in steps.items() if r.group == "safe-state"}
        assert safe and set(safe.values()) == {"PASS"}, safe
        tree_groups = [str(n.label) for n in run._group_nodes.values()]
        assert "safe state" in tree_groups
        assert "ABORTED" in str(run.query_one("#run-head", Static).render())
        assert _psu_output(app.bench.lab.addresses["psu"]) == "0"  # read back by an independent client
    assert db_rows(tmp_path, "select outcome from runs") == [("aborted",)]
    recorded = db_rows(tmp_path, "select step_id, outcome from steps where step_id like 'safe-state.%'")
    assert ("safe-state.psu", "PASS") in recorded


@pilot_test
async def test_quitting_during_a_run_asks_then_aborts_to_the_safe_state(tmp_path):
    fx = isolated_fixture(tmp_path, time_scale=60)
    with SimulatedLab(load_fixture(fx)) as lab:  # outlives the app: the supply is read after it quit
        app = make_app(tmp_path, fx)
        async with app.run_test(size=(120, 40)) as pilot:
            run = await start_plan(pilot, "abortable")
            await wait_for(pilot, lambda: run.model.current == "steps/soak", "the soak to start")
            assert _psu_output(lab.addresses["psu"]) == "1"
            await pilot.press("q")
            assert _screen_name(app) == "ConfirmDialog"
            await pilot.press("n")  # keep running
            assert not app.run_session.finished and _screen_name(app) == "RunScreen"
            await pilot.press("q")
            await pilot.press("y")
            await wait_for(pilot, lambda: app._exit, "the app to quit by itself once the safe state is done")
        assert app.return_value == 3  # what `labctl tui` exits with
        assert _psu_output(lab.addresses["psu"]) == "0"
    assert db_rows(tmp_path, "select outcome from runs") == [("aborted",)]


@pilot_test
async def test_a_hung_instrument_counts_down_and_the_screen_stays_live(tmp_path):
    app = sim_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        run = await start_until_prompt(pilot, "tui-hung", "#choice-0")
        app.bench.lab.inject({"fault": "instrument_timeout", "role": "dmm"})  # the DMM stops answering
        await pilot.click("#choice-0")
        progress = run.query_one("#run-progress-text", Static)
        await wait_for(pilot, lambda: "no reply for" in str(progress.render()), "the call in flight to show")
        shown = str(progress.render())
        assert shown.startswith("core (measure)") and "dmm: " in shown and "timeout in" in shown, shown
        await pilot.press("m")  # the UI answers keys while the engine is blocked in the instrument call
        assert run.query_one("#measurements-pane").border_title == "Measurements (all)"
        await pilot.press("l")  # the current step's instrument I/O: the query left unanswered
        await pilot.pause(0.5)
        assert run.query_one("#log-pane").border_title == "Instrument I/O (current step)"
        io_lines = [line.text for line in run.query_one("#run-log", RichLog).lines]
        assert any(line.startswith("dmm → ") for line in io_lines), io_lines
        await wait_for(pilot, lambda: app.run_session.finished, "the run to end")
        await pilot.pause(0.3)
        core = run.model.steps["steps/core"]
        assert core.status == "ERROR" and "no answer within 3 s" in core.message, core.message
        assert "no reply for" not in str(progress.render())


@pilot_test
async def test_abort_while_a_prompt_is_open_withdraws_it(tmp_path):
    app = sim_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        run = await start_until_prompt(pilot, "tui-bringup", "#choice-0")
        await pilot.press("ctrl+a")
        await screen_shown(pilot, "ConfirmDialog", "#yes")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.run_session.finished, "the run to end")
        await pilot.pause(0.3)
        assert _screen_name(app) == "RunScreen"  # the prompt was withdrawn
        assert run.model.steps["steps/heatsink"].status == "ABORTED"
        assert app.run_session.exit_code == 3
    assert db_rows(tmp_path, "select prompt_id, answer from prompts") == [("heatsink", None)]


@pilot_test
async def test_the_start_form_shows_long_parameter_names_whole_and_a_broken_plan_its_first_error(tmp_path):
    """`input_current_limit` read `input_current_l` at any width; a plan that does not load
    said only '1 problem(s) found' instead of its error and where."""
    from labctl.sim.testing import isolated_fixture
    from labctl.tui import LabctlApp, TuiConfig

    plans = tmp_path / "plans"
    plans.mkdir()
    (plans / "long.yaml").write_text("name: long\nrequires: [psu]\nparameters:\n  input_current_limit: 5 A\n"
                                     "  vin: 5 V\nsteps:\n  - {id: w, check: wait, args: {duration: 1 s}}\n")
    (plans / "broken.yaml").write_text("name: broken\nsteps:\n  - {id: a, check: nosuch.check}\n")
    app = LabctlApp(TuiConfig(fixture=str(isolated_fixture(tmp_path, time_scale=600)), db=str(tmp_path / "r.db"),
                              plans=(str(plans),), operator="tester"))
    async with app.run_test(size=(80, 24)) as pilot:
        await station_ready(pilot)
        broken = next(p for p in app.screen.plans if p.name == "broken")
        assert broken.error == f"{plans / 'broken.yaml'}:3:20: unknown check 'nosuch.check'", broken.error
        form = await open_start_form(pilot, "long")
        label = next(lb for lb in form.query(".field-label").results(Label) if "input_current" in str(lb.render()))
        assert str(label.render()) == "input_current_limit" and label.region.width >= len("input_current_limit") + 1
        field = form.query_one("#param-input_current_limit", Input)
        assert field.region.x >= label.region.right and field.region.width >= 20  # the input keeps room
