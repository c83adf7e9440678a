"""Re-running steps of a finished run from the run's detail (labctl.rerun): the operator
confirms what will run on the board now on the fixture, then the re-run runs in a worker
thread — a new run that references the old one — and this screen shows it live. When it
ends, ``p`` compares it with the run it re-ran and ``d`` opens its detail.

The engine's events reach the screen through a queue drained ten times a second (one batch
per frame); ``a`` aborts to the safe state (after asking).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, RichLog, Static

from labctl.engine import events as ev
from labctl.errors import LabctlError
from labctl.tui import fmt

DRAIN_INTERVAL = 0.1


class RerunSession:
    """What the app knows of a run it started (``app.run_session``): quitting aborts it first."""

    def __init__(self) -> None:
        from labctl.engine.abort import AbortController

        self.abort_controller = AbortController()
        self.finished = False
        self.exit_code: int | None = None
        self.run_id: str | None = None

    def abort(self, reason: str) -> None:
        self.abort_controller.request("operator", reason)


class RerunConfirm(Screen):
    """A short screen that works out the re-run and asks before anything is powered."""

    BINDINGS = [Binding("y", "yes", "Re-run"), Binding("escape,n", "no", "Cancel")]

    def __init__(self, run: dict[str, Any], steps: list[str] | None) -> None:
        super().__init__()
        self.run = run
        self.steps = steps
        self.plan: Any = None

    def compose(self) -> ComposeResult:
        yield Static("Re-run", classes="screen-title")
        yield Static("working out what to run…", id="rerun-question", classes="dialog-text")
        yield Footer()

    def on_mount(self) -> None:
        self.work_out()

    @work(thread=True, exclusive=True)
    def work_out(self) -> None:
        from labctl.rerun import plan_rerun

        config = self.app.config
        try:
            plan = plan_rerun(self.run["id"], self.steps, db=config.db, fixture=config.fixture, store=self.app.store)
        except LabctlError as err:
            self.app.call_from_thread(self._refused, err.format())
            return
        self.app.call_from_thread(self._ask, plan)

    def _refused(self, text: str) -> None:
        self.query_one("#rerun-question", Static).update(Text(text + "\n\nescape: back", style="bold red"))

    def _ask(self, plan: Any) -> None:
        self.plan = plan
        steps = ", ".join(fmt.step_name(s) for s in plan.steps)
        text = Text()
        text.append(f"Re-run {steps} of run {fmt.short_id(self.run['id'])}", style="bold")
        text.append(f"\non the board now on station {self.run['station']} (DUT {self.run['dut_serial'] or '-'}), "
                    "as a new run that references it.\nThe steps that establish the board's state run first; "
                    "teardown and the safe state run as always.")
        for note in plan.notes[1:]:
            text.append(f"\n{note}", style="yellow")
        text.append("\n\ny: re-run   n / escape: cancel")
        self.query_one("#rerun-question", Static).update(text)

    def action_yes(self) -> None:
        if self.plan is None:
            return
        if getattr(self.app, "run_session", None) is not None and not self.app.run_session.finished:
            self.notify("a run is in progress on this station", severity="warning")
            return
        self.app.switch_screen(RerunScreen(self.plan, self.run))

    def action_no(self) -> None:
        self.app.pop_screen()


class RerunScreen(Screen):
    BINDINGS = [
        Binding("a", "abort", "Abort"),
        Binding("p", "compare", "Compare with old run"),
        Binding("d", "detail", "Detail"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, plan: Any, old_run: dict[str, Any]) -> None:
        super().__init__()
        self.plan = plan
        self.old_run = old_run
        self.session = RerunSession()
        self._events: list[ev.Event] = []
        self._lock = threading.Lock()
        self._progress: ev.Progress | None = None

    def compose(self) -> ComposeResult:
        yield Static(f"Re-run of {fmt.short_id(self.old_run['id'])}: {', '.join(self.plan.steps)}",
                     id="rerun-head", classes="screen-title")
        yield Static("starting…", id="rerun-state")
        yield Static("", id="rerun-wait")
        yield RichLog(id="rerun-log", wrap=True, markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.app.run_session = self.session
        self.set_interval(DRAIN_INTERVAL, self._drain)
        self.execute()

    def _subscriber(self, event: ev.Event) -> None:  # engine thread: only queue
        with self._lock:
            if isinstance(event, ev.Progress):
                self._progress = event
            else:
                self._events.append(event)

    def _say(self, text: str) -> None:
        self._subscriber(ev.LogMessage(run_id="", time=time.time(), level="info", message=text))

    @work(thread=True, exclusive=True, group="rerun")
    def execute(self) -> None:
        from labctl.launch import execute

        req = self.plan.request
        if getattr(self.app.config, "operator", None):
            req.operator = self.app.config.operator
        bench = getattr(self.app, "bench", None)
        lock = bench.instruments_lock if bench is not None else threading.Lock()
        try:
            with lock:
                out = execute(req, [self._subscriber], say=self._say, run_notes=self.plan.notes[1:],
                              abort=self.session.abort_controller, handle_signals=False)
            self.session.run_id, self.session.exit_code = out.result.run_id, int(out.exit_code)
            summary = f"run {out.result.outcome.value.upper()}  {out.result.message}"
        except LabctlError as err:
            self.session.exit_code = int(err.exit_code)
            summary = err.format()
        self.session.finished = True
        self.app.call_from_thread(self._done, summary)

    def _drain(self) -> None:
        """One batch per frame: everything the engine published since the last one."""
        with self._lock:
            batch, self._events = self._events, []
            progress, self._progress = self._progress, None
        log = self.query_one("#rerun-log", RichLog)
        for e in batch:
            line = self._line(e)
            if line is not None:
                log.write(line)
        if progress is not None:
            pct = f"{progress.fraction * 100:3.0f}% " if progress.fraction is not None else ""
            self.query_one("#rerun-wait", Static).update(f"… {pct}{progress.text}")
        if any(isinstance(e, ev.StepEnded) for e in batch):
            self.query_one("#rerun-wait", Static).update("")

    def _line(self, e: ev.Event) -> Text | None:
        if isinstance(e, ev.RunStarted):
            self.session.run_id = e.run_id
            self.query_one("#rerun-state", Static).update(
                Text(f"running: run {fmt.short_id(e.run_id)} · DUT {e.dut_serial or '-'} · station {e.station}",
                     style="bold"))
            return None
        if isinstance(e, ev.StepStarted):
            return None if e.check == "safe_state" else Text(f"▶ {fmt.step_name(e.step_key)}  {e.check}", style="bold")
        if isinstance(e, ev.MeasurementRecorded):
            shown = fmt.value({"value": e.value if not isinstance(e.value, str) else None,
                               "value_text": e.value if isinstance(e.value, str) else None, "unit": e.unit})
            limit = f"  {e.limits.text}" if e.limits and e.limits.text else ""
            return Text(f"    {e.name} = {shown}{limit}  ") + fmt.styled(e.verdict.value)
        if isinstance(e, ev.StepEnded):
            return Text("  ") + fmt.styled(e.outcome.value) + Text(f"  {e.message}" if e.message else "")
        if isinstance(e, ev.LogMessage) and (e.level in ("warning", "error") or not e.run_id):
            return Text(e.message, style="yellow" if e.level == "warning" else "")
        if isinstance(e, ev.RunEnded):
            return Text(f"run {e.outcome.value.upper()}  {e.message}", style=fmt.OUTCOME_STYLE.get(e.outcome.value, ""))
        return None

    def _done(self, summary: str) -> None:
        self._drain()
        self.query_one("#rerun-state", Static).update(
            Text(summary + "   p: compare with the old run · d: detail", style="bold"))
        finished = getattr(self.app, "run_finished", None)
        if finished is not None:
            finished(self.session)

    # -- actions -------------------------------------------------------------------------------

    def action_abort(self) -> None:
        from labctl.tui.dialogs import ConfirmDialog

        if self.session.finished:
            return

        def decided(yes: bool | None) -> None:
            if yes:
                self.session.abort("operator aborted the re-run in the TUI")

        self.app.push_screen(ConfirmDialog("Abort the re-run?", "Teardown and the safe state run, then it ends.",
                                           yes="Abort", no="Keep running"), decided)

    def action_compare(self) -> None:
        from labctl.tui.compare import CompareScreen

        if self.session.finished and self.session.run_id:
            self.app.push_screen(CompareScreen(self.old_run["id"], self.session.run_id))

    def action_detail(self) -> None:
        from labctl.tui.detail import RunDetailScreen

        if self.session.finished and self.session.run_id:
            self.app.push_screen(RunDetailScreen(self.session.run_id))

    def action_back(self) -> None:
        if not self.session.finished:
            self.notify("the re-run is still running: a aborts it", severity="warning")
            return
        self.app.pop_screen()
