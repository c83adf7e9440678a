"""The run screen fed a run's events as the engine publishes them (no lab: the events are
made here), for what a long or an aborted run looks like on it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from textual.widgets import DataTable, RichLog, Tree

from labctl.engine import events as ev
from labctl.instruments.sessionlog import SessionLog
from labctl.tui import LabctlApp, TuiConfig
from tests.e2e.tui_support import columns_in_view, pilot_test, wait_for

RUN = "0000long00000001"


class Feed:
    """Events of one run, with a wall clock that moves a little at each event."""

    def __init__(self, corners: list[dict[str, Any]] | None = None) -> None:
        self.t = 1_767_225_600.0
        self.events: list[Any] = [ev.RunStarted(
            run_id=RUN, time=self.t, plan_name="long", plan_version="1", plan_hash="0" * 64, plan_text="",
            plan_path="long.yaml", station="sim-bench-1", dut_serial="SIM-GOLD-0001", operator="alice",
            labctl_version="0.1.0", host="bench", pid=1, corners=corners or [])]

    def step(self, step_id: str, outcome: str | None = "PASS", *, group: str = "steps", corner: int | None = None,
             duration: float = 0.01, message: str = "", check: str = "measure") -> None:
        key = f"{group}/{step_id}" + (f"@{corner}" if corner is not None else "") + "#1"
        self.t += duration
        self.events.append(ev.StepStarted(run_id=RUN, time=self.t, step_key=key, step_id=step_id, group=group,
                                          check=check, corner_index=corner))
        if outcome is not None:
            self.events.append(ev.StepEnded(run_id=RUN, time=self.t, step_key=key, outcome=ev.StepOutcome(outcome),
                                            message=message, duration=duration))

    def take(self) -> list[Any]:
        out, self.events = self.events, []
        return out


def _app() -> LabctlApp:
    return LabctlApp(TuiConfig(poll_interval=0, operator="alice"))  # no station polled: the run is fed


async def _run_screen(pilot: Any) -> Any:
    from labctl.tui.run import RunScreen
    from labctl.tui.session import RunSession

    session = RunSession(None, operator="alice")
    screen = RunScreen(session, None, start=False)
    await pilot.app.push_screen(screen)
    await pilot.pause()
    return screen


async def _feed(pilot: Any, screen: Any, events: list[Any]) -> None:
    for e in events:
        screen.session.push(e)
    # the screen takes the buffered events in batches (at most every 0.1 s) however loaded the host
    await wait_for(pilot, lambda: not screen.session._buffer, "the run screen to take the events", timeout=30)
    await pilot.pause(0.3)  # the batch applied, then the tree's refresh
    await pilot.pause()


def _on_screen(tree: Tree, node: Any) -> bool:
    top = tree.scroll_offset.y
    return node.line >= 0 and top <= node.line < top + tree.scrollable_content_region.height


@pilot_test
async def test_in_a_long_plan_the_step_tree_keeps_the_running_step_on_screen():
    async with _app().run_test(size=(80, 24)) as pilot:
        screen = await _run_screen(pilot)
        tree = screen.query_one("#steps", Tree)
        feed = Feed()
        for batch in range(4):  # steps completing faster than the screen redraws
            for i in range(batch * 500, batch * 500 + 499):
                feed.step(f"m{i}")
            feed.step(f"m{batch * 500 + 499}", None)  # running now
            await _feed(pilot, screen, feed.take())
            running = screen._step_nodes[f"steps/m{batch * 500 + 499}"]
            await wait_for(pilot, lambda node=running: _on_screen(tree, node), f"batch {batch}'s running step in view", timeout=5)
        for role in ("psu", "load", "dmm"):
            feed.step(f"safe-state.{role}", group="teardown", check="safe_state")
        await _feed(pilot, screen, feed.take())
        assert _on_screen(tree, screen._step_nodes["teardown/safe-state.dmm"])  # the end of the run is in view


@pilot_test
async def test_the_running_step_stays_in_view_when_the_tree_shrinks_until_the_user_scrolls():
    """A layout change after the tree scrolled to the running step (the terminal or the tree
    shrinking, its scrollbar appearing) moves the step out of view again: the screen scrolls again.
    Once the user scrolled the tree, it is theirs until the next step."""
    async with _app().run_test(size=(80, 30)) as pilot:
        screen = await _run_screen(pilot)
        tree = screen.query_one("#steps", Tree)
        feed = Feed()
        for i in range(199):
            feed.step(f"m{i}")
        feed.step("m199", None)
        await _feed(pilot, screen, feed.take())
        running = screen._step_nodes["steps/m199"]
        await wait_for(pilot, lambda: _on_screen(tree, running), "the running step in view", timeout=5)
        height = tree.scrollable_content_region.height
        await pilot.resize_terminal(80, 26)
        await wait_for(pilot, lambda: tree.scrollable_content_region.height < height, "the tree to shrink", timeout=5)
        await wait_for(pilot, lambda: _on_screen(tree, running), "the running step in view again", timeout=5)
        tree.scroll_to(y=0, animate=False, immediate=True)  # the user scrolls back to the first steps
        await pilot.pause(0.6)  # two of the screen's ticks
        assert tree.scroll_offset.y == 0 and not _on_screen(tree, running)
        feed.step("m199")
        feed.step("m200", None)
        await _feed(pilot, screen, feed.take())  # the next step: the tree follows the run again
        await wait_for(pilot, lambda: _on_screen(tree, screen._step_nodes["steps/m200"]), "the next step in view",
                       timeout=5)


@pilot_test
async def test_after_an_abort_the_tree_shows_where_the_run_stopped_and_what_was_not_run():
    async with _app().run_test(size=(120, 40)) as pilot:
        screen = await _run_screen(pilot)
        feed = Feed(corners=[{"ambient": "0 degC"}, {"ambient": "25 degC"}, {"ambient": "45 degC"}])
        feed.step("power_on", group="setup", check="power.on")
        for step in ("soak", "idle_temps", "lid"):
            feed.step(step, corner=0)
        feed.step("soak", None, corner=1)
        await _feed(pilot, screen, feed.take())
        # the operator aborts mid-soak in corner 2: the engine records the rest as not run
        stop = "operator aborted the run from the TUI"
        feed.events.append(ev.StepEnded(run_id=RUN, time=feed.t + 1, step_key="steps/soak@1#1",
                                        outcome=ev.StepOutcome.ABORTED, message=f"aborted: {stop}", duration=1.0,
                                        duration_sim=59.2))
        for corner, steps in ((1, ("idle_temps", "lid")), (2, ("soak", "idle_temps", "lid"))):
            for step in steps:
                feed.step(step, "ABORTED", corner=corner, duration=0.0, message=f"not run: {stop}")
        feed.step("power_off", group="teardown", check="set")
        feed.step("safe-state.psu", group="teardown", check="safe_state")
        await _feed(pilot, screen, feed.take())

        groups = {str(node.label): node.is_expanded for node in screen._group_nodes.values()}
        assert groups == {"setup": False, "corner 1 [ambient=0 degC]": False, "corner 2 [ambient=25 degC]": True,
                          "corner 3 [ambient=45 degC]": False, "teardown": True, "safe state": True}, groups
        labels = {key: str(node.label) for key, node in screen._step_nodes.items()}
        assert labels["steps/soak@1"] == "■ soak  ABORTED  1.0s (sim 59.2s)"
        assert labels["steps/lid@1"] == "■ lid  not run"  # not "ABORTED 0.0s", as if it had run
        assert labels["steps/soak@2"] == "■ soak  not run"


@pilot_test
async def test_a_corner_folded_away_still_says_it_holds_a_step_that_broke():
    async with _app().run_test(size=(120, 40)) as pilot:
        screen = await _run_screen(pilot)
        feed = Feed(corners=[{"vin": "4.75 V"}, {"vin": "5 V"}, {"vin": "5.25 V"}])
        garbage = "expected a number, got '\\x15#?!@garbage\\x7f' (instrument daq)"
        for corner in range(3):
            feed.step("set_vin", corner=corner, check="set")
            feed.step("rails", "ERROR" if corner == 0 else "FAIL" if corner == 1 else "PASS", corner=corner,
                      message=garbage if corner == 0 else "VDD_IO out of limits", check="power.rails")
            feed.step("ripple", corner=corner)
            await _feed(pilot, screen, feed.take())  # the run moves on, corner by corner
        groups = {str(node.label): node.is_expanded for node in screen._group_nodes.values()}
        assert groups == {"corner 1 [vin=4.75 V]  ! 1 ERROR": False, "corner 2 [vin=5 V]  ✖ 1 FAIL": False,
                          "corner 3 [vin=5.25 V]": True}, groups


@pilot_test
async def test_the_instrument_io_pane_follows_the_current_step():
    async with _app().run_test(size=(120, 40)) as pilot:
        screen = await _run_screen(pilot)
        feed = Feed()
        clock = [feed.t]
        log = SessionLog(clock=lambda: clock[0])
        screen.session.station = SimpleNamespace(session_log=log)
        await pilot.press("l")  # the current step's instrument I/O

        def step_with_io(step_id: str, channel: int, queries: int) -> None:
            feed.step(step_id, None, check="power.rails")
            clock[0] = feed.t + 0.001
            for i in range(queries):
                log.record("daq", "TCPIP0::x::SOCKET", "query", f"MEAS:VOLT:DC? AUTO,DEF,(@{channel})")
                log.record("daq", "TCPIP0::x::SOCKET", "reply", f"+0.{channel}{i}E+00")

        def shown() -> list[str]:
            return [line.text for line in screen.query_one("#run-log", RichLog).lines]

        # the pane is redrawn on the screen's 0.25 s tick: wait for it (a loaded CI host may be late)
        step_with_io("rails_hbm", 112, 5)
        await _feed(pilot, screen, feed.take())
        await wait_for(pilot, lambda: len(shown()) == 10, "the first step's I/O in the pane", timeout=30)
        assert shown()[:2] == ["daq → MEAS:VOLT:DC? AUTO,DEF,(@112)", "daq ← +0.1120E+00"], shown()
        feed.events.append(ev.StepEnded(run_id=RUN, time=feed.t, step_key="steps/rails_hbm#1",
                                        outcome=ev.StepOutcome.PASS, duration=0.5))
        step_with_io("rails_io", 113, 3)  # the next step: its own I/O, from its first command
        await _feed(pilot, screen, feed.take())
        await wait_for(pilot, lambda: "(@113)" in "".join(shown()), "the next step's I/O in the pane", timeout=30)
        assert shown() == [line for i in range(3) for line in
                           ("daq → MEAS:VOLT:DC? AUTO,DEF,(@113)", f"daq ← +0.113{i}E+00")], shown()


@pilot_test
async def test_after_a_step_with_a_long_value_the_next_steps_verdicts_and_limits_stay_in_view():
    async with _app().run_test(size=(120, 40)) as pilot:
        screen = await _run_screen(pilot)
        table = screen.query_one("#measurements", DataTable)
        feed = Feed()
        order = "VDD_AUX,VDD_CORE,VDD_IO,VDD_HBM"
        feed.step("sequencing", None, check="power.sequencing")
        feed.events.append(ev.MeasurementRecorded(
            run_id=RUN, time=feed.t, step_key="steps/sequencing#1", name="order", value=order,
            limits=ev.Limits(equals=order, text=f"x == '{order}'"), verdict=ev.Verdict.PASS))
        await _feed(pilot, screen, feed.take())
        feed.step("core_rail", None)
        feed.events.append(ev.MeasurementRecorded(
            run_id=RUN, time=feed.t, step_key="steps/core_rail#1", name="VDD_CORE", value=0.7509, unit="V",
            limits=ev.Limits(low=0.725, high=0.775, text="0.725 V ≤ x ≤ 0.775 V"), verdict=ev.Verdict.PASS))
        await _feed(pilot, screen, feed.take())
        assert [str(c) for c in table.get_row_at(0)][:3] == ["VDD_CORE", "0.7509 V", "PASS"]
        assert columns_in_view(table)[:5] == ["Measurement", "Value", "Verdict", "Margin", "Limits"]


@pilot_test
async def test_control_characters_from_an_instrument_are_shown_never_sent_to_the_terminal():
    """A DUT shell's colours or a noisy serial line (ESC sequences, a bell, a carriage return)
    in a reply, a text value, an instrument error or a step's message: the run screen shows
    them as escapes; sent as they are, they would clear the screen or retitle the terminal."""
    hostile = "\x1b[2J\x1b]0;owned\x07\rX"
    shown_as = "\\x1b[2J\\x1b]0;owned\\x07\\x0dX"
    async with _app().run_test(size=(160, 40)) as pilot:
        screen = await _run_screen(pilot)
        feed = Feed()
        feed.step("fw", None, check="console.read")
        key = "steps/fw#1"
        feed.events += [
            ev.MeasurementRecorded(run_id=RUN, time=feed.t, step_key=key, name="version", value=f"1.4{hostile}",
                                   unit="", limits=None, verdict=ev.Verdict.NONE),
            ev.InstrumentErrorReported(run_id=RUN, time=feed.t, step_key=key, role="dut", code=-100,
                                       message=hostile),
            ev.StepEnded(run_id=RUN, time=feed.t, step_key=key, outcome=ev.StepOutcome.ERROR, message=hostile)]
        await _feed(pilot, screen, feed.take())
        logged = [line.text for line in screen.query_one("#run-log", RichLog).lines]
        assert any(line == f"dut: error -100 {shown_as}" for line in logged), logged
        assert any(line == f"fw: ERROR: {shown_as}" for line in logged), logged
        table = screen.query_one("#measurements", DataTable)
        assert str(table.get_row_at(table.row_count - 1)[1]) == f"1.4{shown_as}"

        feed.step("fw2", None, check="console.read")  # its I/O pane, from its first command
        clock = [feed.t + 0.001]
        log = SessionLog(clock=lambda: clock[0])
        screen.session.station = SimpleNamespace(session_log=log)
        log.record("dut", "/dev/ttyUSB0", "reply", hostile)
        await _feed(pilot, screen, feed.take())
        await pilot.press("l")
        pane = screen.query_one("#run-log", RichLog)
        await wait_for(pilot, lambda: any("owned" in line.text for line in pane.lines), "the I/O pane", timeout=30)
        assert [line.text for line in pane.lines] == [f"dut ← {shown_as}"]
        everything = "".join(str(strip) for strip in pane.lines) + "".join(logged)
        assert not any(ch in everything for ch in "\x1b\x07\r"), repr(everything)


@pilot_test
async def test_the_log_pane_wraps_its_lines_to_its_own_width():
    """A long log line at 120x40 wraps within the pane (it had been wrapped at 78 columns, wider
    than the pane, and its end was off the screen)."""
    long = "power.on: VIN 5 V, current limit 5 A, OVP 5.7 V, OCP on at 5 A, no delay; inrush peak 1.93 A in 0.1 s"
    async with _app().run_test(size=(120, 40)) as pilot:
        screen = await _run_screen(pilot)
        feed = Feed()
        feed.step("power_on", None, check="power.on")
        feed.events.append(ev.LogMessage(run_id=RUN, time=feed.t, level="info", message=long,
                                         step_key="steps/power_on#1"))
        await _feed(pilot, screen, feed.take())
        pane = screen.query_one("#run-log", RichLog)
        width = pane.scrollable_content_region.width
        assert width < 78
        lines = [line.text.rstrip() for line in pane.lines]
        assert lines and all(len(line) <= width for line in lines), (width, lines)
        assert "no delay; inrush peak 1.93 A in 0.1 s" in " ".join(" ".join(lines).split())


@pilot_test
async def test_text_that_looks_like_markup_is_shown_as_it_is_never_parsed():
    """A failing step's message quoting a garbage reply ("got '[/b]'"), an operator prompt
    written with brackets: shown as written. Read as Textual markup, the closing tag raised
    MarkupError and ended the app when the operator selected the step or the prompt opened."""
    from textual.widgets import Static

    from labctl.tui.prompt import PromptDialog

    garbage = "expected a number, got '[/b]\\x15' (instrument daq)"
    async with _app().run_test(size=(120, 40)) as pilot:
        screen = await _run_screen(pilot)
        feed = Feed()
        feed.step("rails", "ERROR", message=garbage, check="power.rails")
        await _feed(pilot, screen, feed.take())
        tree = screen.query_one("#steps", Tree)
        tree.select_node(screen._step_nodes["steps/rails"])
        await pilot.pause(0.3)
        assert [n.message for n in pilot.app._notifications] == [f"rails: {garbage}"]

        asked = ev.PromptAsked(run_id=RUN, time=feed.t, step_key="steps/scan#1", prompt_id="scan",
                               text="Scan the board's label [/b] then press enter", choices=("done",))
        await pilot.app.push_screen(PromptDialog(asked, "alice"))
        await pilot.pause(0.3)
        shown = pilot.app.screen.query_one("#prompt-text", Static)
        assert str(shown.render()) == "Scan the board's label [/b] then press enter"
        pilot.app.pop_screen()
        await pilot.pause()
        # a wait step's reason, an answer quoted in the run's last words: the progress line
        feed.events.append(ev.Progress(run_id=RUN, time=feed.t, step_key="steps/settle#1",
                                       text="settle [/b] rails: 0s of 30m", fraction=0.0))
        await _feed(pilot, screen, feed.take())
        assert str(screen.query_one("#run-progress-text", Static).render()) == "settle [/b] rails: 0s of 30m"
        feed.events.append(ev.RunEnded(run_id=RUN, time=feed.t, outcome=ev.RunOutcome.FAILED,
                                       message="1 step(s) failed, first label: answer BAD[/b] outside SIM-.*"))
        await _feed(pilot, screen, feed.take())
        assert "answer BAD[/b] outside" in str(screen.query_one("#run-progress-text", Static).render())


@pilot_test
async def test_a_run_over_shows_its_last_words_whole():
    """BENCH MAY BE UNSAFE and every role's reason: the progress line of a run that is over is
    not cut to the three lines it keeps while the run goes (the ends were lost at 120x40)."""
    from textual.widgets import Static

    from labctl.tui.session import Note

    roles = ["psu", "load", "dmm", "daq", "bert", "chamber", "dut"]
    message = "BENCH MAY BE UNSAFE: " + " | ".join(
        f"safe-state.{r}: not confirmed: input could not be read back ({r}: no answer within 3 s)" for r in roles)
    async with _app().run_test(size=(120, 40)) as pilot:
        screen = await _run_screen(pilot)
        feed = Feed()
        feed.step("soak", "ABORTED")
        feed.events.append(ev.RunEnded(run_id=RUN, time=feed.t, outcome=ev.RunOutcome.ERROR, message=message))
        await _feed(pilot, screen, [*feed.take(), Note("", "finished")])
        text = screen.query_one("#run-progress-text", Static)
        assert "safe-state.dut: not confirmed" in str(text.render())
        row = screen.query_one("#run-progress-row")
        assert text.region.height > 3 and row.region.height >= text.region.height  # nothing cut off
        await pilot.pause()
        shown = {key for key, active in screen.active_bindings.items() if active.enabled}
        assert "a" not in shown and "escape" in shown  # nothing left to abort: the footer says so
