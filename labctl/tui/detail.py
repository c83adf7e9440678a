"""Run detail: the run's header, its measurements against their limits (failures first, then
marginal, then plan order) and its steps.

``p`` puts the same DUT's previous run side by side (compare); ``f`` re-runs the failed steps
and ``s`` the step under the cursor, on the board now on the fixture, as a new run that
references this one.

A long run opens as fast as a short one: each table gets :data:`PAGE` rows at first (the
steps in the order they ran, then every later step that did not pass, up to another page;
the measurements failures first) and a row "… N more" that loads the next page when the
cursor reaches it (or on enter). Nothing beyond the pages shown is read from the store.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from labctl.console import visible
from labctl.tui import fmt
from labctl.tui.handover import to_screen
from labctl.tui.station import STATUS_CLASSES

#: rows a table of the run detail gets at a time
PAGE = 500
_MORE_STEPS, _MORE_MEASUREMENTS = "more-steps", "more-measurements"  # the keys of the "… N more" rows


def run_summary(run: dict[str, Any], widget: Any, counts: dict[str | None, int] | None = None) -> Text:
    """Two lines about a run: what ran where on which board, and how it ended (``widget``: the
    screen whose status classes colour it; ``counts``: its final plan steps by outcome,
    :func:`labctl.store.query.run_overview`'s ``step_counts``)."""
    text = Text()
    text.append(f"run {run['id']}", style="bold")
    text.append(f"  plan {run['plan_name']} v{run.get('plan_version') or '?'}  DUT {run.get('dut_serial') or '-'}"
                f"  station {run['station']}  operator {run.get('operator') or '-'}\n")
    text.append_text(fmt.styled(run["outcome"], widget))
    took = run.get("duration")  # (of a resumed run: its sessions together)
    if took is None and run.get("ended_at") is not None:
        took = run["ended_at"] - run["started_at"]
    text.append(f"  started {fmt.when(run['started_at'])}  took {fmt.duration(took) if took is not None else '-'}")
    if counts is not None:
        text.append(f"  steps {counts.get('PASS', 0)} passed, {counts.get('FAIL', 0)} failed, "
                    f"{counts.get('ERROR', 0)} error")
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
        Binding("tab", "app.focus_next", "Next table", show=False),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.detail: dict[str, Any] | None = None
        # the rows of each table, in its order (None: a "… N more" row)
        self.step_rows: list[dict[str, Any] | None] = []
        self.measurement_rows: list[dict[str, Any] | None] = []
        self._head = 0  # of step_rows: the steps in the order they ran, before the "… more" row
        self._last_place: Any = None  # (session, seq) of the last of them, where the next page starts
        self._paging: set[str] = set()  # the tables whose next page is being read
        self._shown = 0  # which load the tables show: a page read for an earlier one is dropped
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
            detail = query.run_overview(self.app.store, self.run_id, PAGE)
        except Exception as err:  # noqa: BLE001 - said on the screen, never a crashed UI
            problem = fmt.problem(err)
            to_screen(self, lambda: self.query_one("#detail-summary", Static).update(
                Text(problem, style=fmt.status_style(self, "status-fail"))))
            return
        to_screen(self, self._show, detail)

    def _show(self, detail: dict[str, Any]) -> None:
        self.detail = detail
        self.run_id = detail["run"]["id"]
        self._paging.clear()
        self._shown += 1
        self.query_one("#detail-summary", Static).update(run_summary(detail["run"], self, detail["step_counts"]))
        self.query_one("#detail-measurements", DataTable).clear()
        self.measurement_rows = []
        self._add_measurements(detail["measurements"], detail["measurements_total"])
        self.query_one("#detail-steps", DataTable).clear()
        self.step_rows, self._head, self._last_place = [], 0, None
        self._add_steps(detail["steps"], detail["steps_left"], detail["late"], detail["late_left"])

    def _add_measurements(self, rows: list[dict[str, Any]], total: int) -> None:
        """Append a page of measurements, and the "… N more" row while there are more."""
        table = self.query_one("#detail-measurements", DataTable)
        cursor = table.cursor_row
        if self.measurement_rows and self.measurement_rows[-1] is None:
            table.remove_row(_MORE_MEASUREMENTS)
            self.measurement_rows.pop()
        self.measurement_rows += rows
        table.add_rows([fmt.styled(m["verdict"], self), fmt.step_name(m["step_key"]),
                        " ".join(filter(None, (m["name"], fmt.labels(m)))), fmt.value(m), fmt.limits(m),
                        fmt.margin(m, self)] for m in rows)
        left = total - len(self.measurement_rows)
        if left > 0:
            table.add_row("", Text(f"… {left:,} more measurements: the next {min(left, PAGE):,} as the cursor gets here",
                                   style=fmt.status_style(self, "status-dim")), key=_MORE_MEASUREMENTS)
            self.measurement_rows.append(None)
        if cursor > 0:
            table.move_cursor(row=cursor)

    def _add_steps(self, rows: list[dict[str, Any]], left: int, late: list[dict[str, Any]], late_left: int) -> None:
        """Append a page of steps in the order they ran; then, while there are more, the
        "… N more" row and the later steps that did not pass (read again with every page)."""
        table = self.query_one("#detail-steps", DataTable)
        cursor = table.cursor_row
        for row in self.step_rows[self._head:]:  # the "… more" row and the later steps below it
            table.remove_row(_MORE_STEPS if row is None else f"late-{row['place'][0]}-{row['place'][1]}")
        del self.step_rows[self._head:]
        shown = [s for s in rows if s["check"] != "safe_state" or s["outcome"] != "PASS"]
        table.add_rows(self._step_cells(s) for s in shown)
        self.step_rows += shown
        self._head = len(self.step_rows)
        if rows:
            self._last_place = rows[-1]["place"]
        if left > 0:
            more = f"… {left:,} more steps: the next {min(left, PAGE):,} as the cursor gets here"
            if late:
                more += f"; of them, {len(late) + late_left:,} did not pass" + (
                    f" (the first {len(late):,} below)" if late_left else " (below)")
            table.add_row("", "", "", "", "", Text(more, style=fmt.status_style(self, "status-dim")), key=_MORE_STEPS)
            self.step_rows.append(None)
            for s in late:
                table.add_row(*self._step_cells(s), key=f"late-{s['place'][0]}-{s['place'][1]}")
            self.step_rows += late
        if cursor > 0:
            table.move_cursor(row=cursor)

    def _step_cells(self, s: dict[str, Any]) -> list[Any]:
        name = fmt.step_name(s["step_key"])
        return [name if s["final"] else Text(name, style=fmt.status_style(self, "status-dim")),
                ", ".join(f"{k}={v}" for k, v in (s["corner"] or {}).items()), str(s["attempt"]),
                fmt.styled(s["outcome"] or "cut off", self), fmt.duration(s["duration"]),
                s["message"].splitlines()[0] if s["message"] else ""]

    @on(DataTable.RowHighlighted)
    @on(DataTable.RowSelected)
    def _more(self, event: DataTable.RowHighlighted | DataTable.RowSelected) -> None:
        """The cursor on a "… N more" row: read the next page of that table."""
        kind = event.row_key.value
        if kind in (_MORE_STEPS, _MORE_MEASUREMENTS) and kind not in self._paging and self.detail is not None:
            self._paging.add(kind)
            self.load_more(kind, self.detail["run"]["id"], len(self.measurement_rows) - 1, self._last_place, self._shown)

    @work(thread=True, group="detail-more")
    def load_more(self, kind: str, run_id: str, offset: int, after: Any, shown: int) -> None:
        from labctl.store import query

        try:
            if kind == _MORE_MEASUREMENTS:
                rows, total = query.measurement_page(self.app.store, run_id, offset, PAGE)
                to_screen(self, self._more_measurements, shown, rows, total)
            else:
                rows, left = query.step_page(self.app.store, run_id, after, PAGE)
                late, late_left = query.step_page(self.app.store, run_id, rows[-1]["place"] if rows else after,
                                                  PAGE, not_passed=True)
                to_screen(self, self._more_steps, shown, rows, left, late, late_left)
        except Exception as err:  # noqa: BLE001 - said on the screen, never a crashed UI
            problem = fmt.problem(err)
            to_screen(self, self._paging_failed, shown, kind, problem)

    def _more_measurements(self, shown: int, rows: list[dict[str, Any]], total: int) -> None:
        if shown == self._shown:  # (else the run was read again meanwhile: its tables start over)
            self._paging.discard(_MORE_MEASUREMENTS)
            self._add_measurements(rows, total)

    def _more_steps(self, shown: int, rows: list[dict[str, Any]], left: int, late: list[dict[str, Any]],
                    late_left: int) -> None:
        if shown == self._shown:
            self._paging.discard(_MORE_STEPS)
            self._add_steps(rows, left, late, late_left)

    def _paging_failed(self, shown: int, kind: str, problem: str) -> None:
        if shown == self._shown:
            self._paging.discard(kind)  # (the cursor on the row again tries again)
            self.notify(problem, severity="error")

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
        return split_step_key(row["step_key"])[0] if row is not None else None

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
