"""Re-running steps of a finished run from the run's detail (labctl.rerun): the operator
confirms what will run on the board now on the fixture; the re-run — a new run that
references the old one — then runs on the live run screen (labctl.tui.run.RunScreen), like
any run started here. Back on the detail, the old and the new run are shown side by side.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from labctl.tui import fmt
from labctl.tui.handover import to_screen
from labctl.tui.station import STATUS_CLASSES


class RerunConfirm(Screen):
    """A short screen that works out the re-run and asks before anything is powered."""

    COMPONENT_CLASSES = STATUS_CLASSES
    BINDINGS = [Binding("y", "yes", "Re-run"), Binding("escape,n", "no", "Cancel")]

    def __init__(self, run: dict[str, Any], steps: list[str] | None) -> None:
        super().__init__()
        self.run = run
        self.steps = steps
        self.plan: Any = None

    def compose(self) -> ComposeResult:
        yield fmt.PlainStatic("Re-run", classes="screen-title")
        yield fmt.PlainStatic("working out what to run…", id="rerun-question", classes="dialog-text")
        yield Footer(compact=True, show_command_palette=False)  # (every key fits 80 columns; ctrl+p: help)

    def on_mount(self) -> None:
        self.work_out()

    @work(thread=True, exclusive=True)
    def work_out(self) -> None:
        from labctl.rerun import plan_rerun

        config = self.app.config
        try:
            plan = plan_rerun(self.run["id"], self.steps, db=config.db, fixture=config.fixture, store=self.app.store)
        except Exception as err:  # noqa: BLE001 - said on the screen, never a crashed UI
            to_screen(self, self._refused, fmt.problem(err))
            return
        to_screen(self, self._ask, plan)

    def _refused(self, text: str) -> None:
        self.query_one("#rerun-question", Static).update(Text(text + "\n\nescape: back", style=fmt.status_style(self, "status-fail")))

    def _ask(self, plan: Any) -> None:
        self.plan = plan
        steps = ", ".join(fmt.step_name(s) for s in plan.steps)
        text = Text()
        text.append(f"Re-run {steps} of run {fmt.short_id(self.run['id'])}", style="bold")
        text.append(f"\non the board now on station {self.run['station']} (DUT {self.run['dut_serial'] or '-'}), "
                    "as a new run that references it.\nThe steps that establish the board's state run first; "
                    "teardown and the safe state run as always.")
        for note in plan.notes[1:]:
            text.append(f"\n{note}", style=fmt.status_style(self, "status-warn"))
        text.append("\n\ny: re-run   n / escape: cancel")
        self.query_one("#rerun-question", Static).update(text)

    def action_yes(self) -> None:
        if self.plan is None:
            return
        if getattr(self.app, "run_session", None) is not None and not self.app.run_session.finished:
            self.notify("a run is in progress on this station", severity="warning")
            return
        from labctl.tui.run import RunScreen
        from labctl.tui.session import RunSession
        from labctl.tui.start import _whoami

        config = self.app.config
        operator = config.operator or _whoami()
        session = RunSession(None, operator=operator)
        session.request = replace(self.plan.request, fixture=self.app.bench.fixture_path, operator=operator,
                                  time_scale=config.time_scale, prompt_handler=session.prompter)
        self.app.run_session = session
        self.app.switch_screen(RunScreen(session))

    def action_no(self) -> None:
        self.app.pop_screen()

