"""Two runs side by side: the same DUT before and after a rework, or any two runs.

Measurements are matched by step, name and labels (labctl.store.query.compare_runs); changed
verdicts come first, then the largest relative changes. Without a first run, the second
run's DUT's previous run is used (the bring-up loop: rework, re-run, compare).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from labctl.console import format_value, visible
from labctl.tui import fmt
from labctl.tui.detail import PAGE, run_summary
from labctl.tui.handover import to_screen
from labctl.tui.station import STATUS_CLASSES

_MORE = "more"  # the key of the "… N more" row


def _shown(v: Any, unit: str) -> str:
    return "-" if v is None else visible(f"{format_value(v)} {unit or ''}".rstrip())


class CompareScreen(Screen):
    COMPONENT_CLASSES = STATUS_CLASSES
    BINDINGS = [
        Binding("x", "swap", "Swap"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, run_a: str | None, run_b: str) -> None:
        super().__init__()
        self.run_a = run_a
        self.run_b = run_b
        self.rows: list[dict[str, Any]] = []
        self._in_table = 0  # of rows: those in the table

    def compose(self) -> ComposeResult:
        yield fmt.PlainStatic("Compare", classes="screen-title")
        yield fmt.PlainStatic("loading…", id="compare-a", classes="compare-run")
        yield fmt.PlainStatic("", id="compare-b", classes="compare-run")
        table = fmt.TextTable(id="compare-table", cursor_type="row", zebra_stripes=True)
        table.add_columns("step", "measurement", "A", "B", "Δ", "Δ %", "verdict A → B", "limits")
        yield table
        yield Footer(compact=True, show_command_palette=False)  # (every key fits 80 columns; ctrl+p: help)

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
        self.load()

    @work(thread=True, exclusive=True, group="compare")
    def load(self) -> None:
        from labctl.store import query

        try:
            if self.run_a is None:
                before = query.previous_run(self.app.store, self.run_b)
                if before is None:
                    run = query.run_record(self.app.store, self.run_b)
                    to_screen(self, self._nothing, run)
                    return
                self.run_a = before["id"]
            a, b = (query.run_record(self.app.store, r) for r in (self.run_a, self.run_b))
            rows = query.compare_runs(self.app.store, a["id"], b["id"])
        except Exception as err:  # noqa: BLE001 - said on the screen, never a crashed UI
            problem = fmt.problem(err)
            to_screen(self, lambda: self.query_one("#compare-a", Static).update(
                Text(problem, style=fmt.status_style(self, "status-fail"))))
            return
        to_screen(self, self._show, a, b, rows)

    def _nothing(self, run: dict[str, Any]) -> None:
        self.query_one("#compare-a", Static).update(Text(
            f"no earlier run of DUT {run.get('dut_serial') or '(no serial)'} to compare run "
            f"{fmt.short_id(run['id'])} with: mark a run in History (m) and compare (c)", style=fmt.status_style(self, "status-warn")))

    def _show(self, a: dict[str, Any], b: dict[str, Any], rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.query_one("#compare-a", Static).update(Text("A  ", style="bold").append_text(run_summary(a, self)))
        self.query_one("#compare-b", Static).update(Text("B  ", style="bold").append_text(run_summary(b, self)))
        self.query_one(DataTable).clear()
        self._in_table = 0
        self._add_page()

    def _add_page(self) -> None:
        """The next :data:`PAGE` rows, and a "… N more" row while there are more: a table of
        100,000 measurements would take the screen half a minute to build."""
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        if table.row_count > self._in_table:
            table.remove_row(_MORE)
        page = self.rows[self._in_table:self._in_table + PAGE]
        table.add_rows(self._cells(r) for r in page)
        self._in_table += len(page)
        left = len(self.rows) - self._in_table
        if left > 0:
            table.add_row("", Text(f"… {left:,} more: the next {min(left, PAGE):,} as the cursor gets here",
                                   style=fmt.status_style(self, "status-dim")), key=_MORE)
        if cursor > 0:
            table.move_cursor(row=cursor)

    @on(DataTable.RowHighlighted)
    @on(DataTable.RowSelected)
    def _more(self, event: DataTable.RowHighlighted | DataTable.RowSelected) -> None:
        if event.row_key.value == _MORE:
            self._add_page()

    def _cells(self, r: dict[str, Any]) -> list[Any]:
        verdicts = Text()
        verdicts.append_text(fmt.styled(r["verdict_a"], self))
        verdicts.append(" → ")
        verdicts.append_text(fmt.styled(r["verdict_b"], self))
        if r["changed"]:
            verdicts.stylize("reverse", 0, len(verdicts))
        step = r["step"].partition("/")[2] or r["step"]
        delta = f"{r['delta']:+.4g}" if r["delta"] is not None else ""
        pct = f"{r['delta_pct']:+.1f} %" if r["delta_pct"] is not None else ""
        return [step, " ".join(filter(None, (r["name"], fmt.labels(r)))), _shown(r["value_a"], r["unit"]),
                _shown(r["value_b"], r["unit"]), delta, pct, verdicts, r["limit_text"] or ""]

    def action_swap(self) -> None:
        if self.run_a is not None:
            self.run_a, self.run_b = self.run_b, self.run_a
            self.load()

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
