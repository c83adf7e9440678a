"""Run detail: the run's header, its measurements against their limits (failures first, then
marginal, then plan order) and its steps.

``p`` puts the same DUT's previous run side by side (compare); ``f`` re-runs the failed steps
and ``s`` the step under the cursor, on the board now on the fixture, as a new run that
references this one.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from labctl.console import visible
from labctl.tui import fmt
from labctl.tui.handover import to_screen
from labctl.tui.station import STATUS_CLASSES


def run_summary(run: dict[str, Any], widget: Any, steps: list[dict[str, Any]] | None = None) -> Text:
    """Two lines about a run: what ran where on which board, and how it ended (``widget``: the
    screen whose status classes colour it)."""
    text = Text()
    text.append(f"run {run['id']}", style="bold")
    text.append(f"  plan {run['plan_name']} v{run.get('plan_version') or '?'}  DUT {run.get('dut_serial') or '-'}"
                f"  station {run['station']}  operator {run.get('operator') or '-'}\n")
    text.append_text(fmt.styled(run["outcome"], widget))
    took = run.get("duration")  # (of a resumed run: its sessions together)
    if took is None and run.get("ended_at") is not None:
        took = run["ended_at"] - run["started_at"]
    text.append(f"  started {fmt.when(run['started_at'])}  took {fmt.duration(took) if took is not None else '-'}")
    if steps is not None:
        plan_steps = [s for s in steps if s["final"] and s["check"] != "safe_state"]
        counts = {o: sum(1 for s in plan_steps if s["outcome"] == o) for o in ("PASS", "FAIL", "ERROR")}
        text.append(f"  steps {counts['PASS']} passed, {counts['FAIL']} failed, {counts['ERROR']} error")
    if run.get("rerun_of"):
        text.append(f"  re-run of {fmt.short_id(run['rerun_of'])}", style=fmt.status_style(widget, "status-running"))
    if (run.get("sessions") or 1) > 1:
        text.append(f"  resumed ({run['sessions']} sessions)", style=fmt.status_style(widget, "status-warn"))
    if run.get("message"):
        text.append(f"\n{visible(run['message'])}", style=fmt.status_style(widget, "status-dim"))
    return text


class RunDetailScreen(Screen):
    COMPONENT_CLASSES = STATUS_CLASSES
    BINDINGS = [
        Binding("p", "compare_previous", "Compare previous"),
        Binding("f", "rerun_failed", "Re-run failed"),
        Binding("s", "rerun_step", "Re-run step"),
        Binding("tab", "focus_next", "Next table", show=False),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.detail: dict[str, Any] | None = None
        self.step_rows: list[dict[str, Any]] = []
        self.measurement_rows: list[dict[str, Any]] = []
        self._compared: str | None = None  # the re-run last shown side by side with this run

    def compose(self) -> ComposeResult:
        yield fmt.PlainStatic("Run detail", classes="screen-title")
        yield fmt.PlainStatic("loading…", id="detail-summary")
        yield fmt.PlainStatic("Measurements (failures first)", classes="section-title")
        ms = fmt.TextTable(id="detail-measurements", cursor_type="row", zebra_stripes=True)
        ms.add_columns("verdict", "step", "measurement", "value", "limits", "margin")
        yield ms
        yield fmt.PlainStatic("Steps", classes="section-title")
        steps = fmt.TextTable(id="detail-steps", cursor_type="row", zebra_stripes=True)
        steps.add_columns("step", "corner", "try", "outcome", "time", "message")
        yield steps
        yield Footer(compact=True, show_command_palette=False)  # (every key fits 80 columns; ctrl+p: help)

    def on_mount(self) -> None:
        self.query_one("#detail-measurements", DataTable).focus()
        self.load()

    @work(thread=True, exclusive=True, group="detail")
    def load(self) -> None:
        from labctl.store import query

        try:
            detail = query.run_detail(self.app.store, self.run_id)
        except Exception as err:  # noqa: BLE001 - said on the screen, never a crashed UI
            problem = fmt.problem(err)
            to_screen(self, lambda: self.query_one("#detail-summary", Static).update(
                Text(problem, style=fmt.status_style(self, "status-fail"))))
            return
        to_screen(self, self._show, detail)

    def _show(self, detail: dict[str, Any]) -> None:
        self.detail = detail
        self.run_id = detail["run"]["id"]
        self.query_one("#detail-summary", Static).update(run_summary(detail["run"], self, detail["steps"]))
        ms = self.query_one("#detail-measurements", DataTable)
        ms.clear()
        self.measurement_rows = detail["measurements"]
        ms.add_rows([fmt.styled(m["verdict"], self), fmt.step_name(m["step_key"]),
                     " ".join(filter(None, (m["name"], fmt.labels(m)))), fmt.value(m), fmt.limits(m),
                     fmt.margin(m, self)] for m in self.measurement_rows)
        steps = self.query_one("#detail-steps", DataTable)
        steps.clear()
        self.step_rows = [s for s in detail["steps"] if s["check"] != "safe_state" or s["outcome"] != "PASS"]
        steps.add_rows([fmt.step_name(s["step_key"]) if s["final"] else Text(fmt.step_name(s["step_key"]), style=fmt.status_style(self, "status-dim")),
                        ", ".join(f"{k}={v}" for k, v in (s["corner"] or {}).items()), str(s["attempt"]),
                        fmt.styled(s["outcome"] or "cut off", self), fmt.duration(s["duration"]),
                        s["message"].splitlines()[0] if s["message"] else ""] for s in self.step_rows)

    def on_screen_resume(self) -> None:
        """Back from a re-run of this run: the old and the new run side by side."""
        from labctl.tui.compare import CompareScreen

        session = getattr(self.app, "run_session", None)
        request = getattr(session, "request", None)
        output = getattr(session, "output", None)
        if (getattr(request, "rerun_of", None) == self.run_id and output is not None
                and self._compared != output.result.run_id):
            self._compared = output.result.run_id
            self.app.push_screen(CompareScreen(self.run_id, output.result.run_id))

    def action_refresh(self) -> None:
        self.load()

    # -- actions ------------------------------------------------------------------------------

    def action_compare_previous(self) -> None:
        from labctl.tui.compare import CompareScreen

        self.app.push_screen(CompareScreen(None, self.run_id))

    def _chosen_step(self) -> str | None:
        """The step under the cursor: in the steps table, or the step of the measurement."""
        from labctl.store.store import split_step_key

        focused = self.focused
        if focused is not None and focused.id == "detail-steps" and self.step_rows:
            row = self.step_rows[focused.cursor_row]
        elif self.measurement_rows:
            row = self.measurement_rows[self.query_one("#detail-measurements", DataTable).cursor_row]
        else:
            return None
        return split_step_key(row["step_key"])[0]

    def action_rerun_failed(self) -> None:
        self._rerun(None)

    def action_rerun_step(self) -> None:
        step = self._chosen_step()
        if step is not None and not step.startswith("teardown/"):
            self._rerun([step])

    def _rerun(self, steps: list[str] | None) -> None:
        from labctl.tui.rerun import RerunConfirm

        if self.detail is not None:
            self.app.push_screen(RerunConfirm(self.detail["run"], steps))

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
