"""History: recent runs from the store, filtered by plan, DUT, station, outcome and date.

``enter`` opens a run's detail; ``m`` marks a run and ``c`` compares the marked run with the
one under the cursor (without a mark: with the same DUT's previous run). Filters take
``*`` wildcards; outcomes are comma-separated; *since* is an age (``12h``, ``7d``) or a
date (``2026-11-30``).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from labctl.tui import fmt
from labctl.tui.handover import to_screen
from labctl.tui.station import STATUS_CLASSES

FILTERS = (("plan", "plan"), ("dut", "DUT"), ("station", "station"), ("outcome", "outcome"), ("since", "since"))
LIMIT = 500  # runs shown at most (newest first)
LOADING = "loading the runs…"


class RunsTable(DataTable):
    """The run list: ``enter`` on it before any run is listed still reaches the screen (a
    plain table drops it), which says the list is loading and opens the run once it is."""

    def action_select_cursor(self) -> None:
        if self.row_count == 0:
            self.screen.action_open()
            return
        super().action_select_cursor()


class HistoryScreen(Screen):
    """Recent runs; the first screen of the bring-up loop (find the board's runs, open, compare)."""

    COMPONENT_CLASSES = STATUS_CLASSES
    BINDINGS = [
        Binding("enter", "open", "Detail", show=True),
        Binding("m", "mark", "Mark"),
        Binding("c", "compare", "Compare"),
        Binding("slash", "filters", "Filter"),
        Binding("r", "refresh", "Refresh"),
        Binding("escape", "back", "Back"),
        *fmt.FIELD_KEYS,
    ]

    def __init__(self, *, filters: dict[str, str] | None = None) -> None:
        super().__init__()
        self.filters = {k: v for k, v in (filters or {}).items() if v}
        self.rows: list[dict[str, Any]] = []
        self.marked: str | None = None
        self.loaded = False  # the list has been read at least once
        self._open_when_loaded = False  # enter was pressed before that

    def compose(self) -> ComposeResult:
        yield fmt.PlainStatic("History", id="history-title", classes="screen-title")
        with Horizontal(id="history-filters"):
            for key, label in FILTERS:
                yield Input(value=self.filters.get(key, ""), placeholder=label, id=f"filter-{key}",
                            classes="history-filter")
        table = RunsTable(id="history-runs", cursor_type="row", zebra_stripes=True)
        table.add_columns("", "started", "outcome", "plan", "DUT", "station", "steps", "time", "run", "note")
        yield table
        yield fmt.PlainStatic(LOADING, id="history-status")
        yield Footer(compact=True, show_command_palette=False)  # (every key fits 80 columns; ctrl+p: help)

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
        self.load()

    def on_screen_resume(self) -> None:
        """Back on the list (from a run's detail, a run, another screen): the runs recorded
        meanwhile are listed too."""
        self.load()

    # -- loading ------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="history")
    def load(self) -> None:
        from labctl.store import query

        try:
            filters = dict(self.filters)
            # what cannot be read names the filter field, not the CLI's --since / --outcome
            if "since" in filters:
                filters["since"] = query.parse_since(filters["since"], option="the since filter")
            if "outcome" in filters:
                query.parse_outcomes(filters["outcome"], option="the outcome filter")
            rows = query.list_runs(self.app.store, limit=LIMIT, **filters)
        except Exception as err:  # noqa: BLE001 - said on the screen, never a crashed UI
            to_screen(self, self._show_error, fmt.problem(err))
            return
        to_screen(self, self._loaded, rows)

    def _loaded(self, rows: list[dict[str, Any]]) -> None:
        self.loaded = True
        self._show(rows)
        if self._open_when_loaded:
            self._open_when_loaded = False
            self.action_open()

    def _show_error(self, text: str) -> None:
        self._open_when_loaded = False
        self.query_one("#history-status", Static).update(Text(text, style=fmt.status_style(self, "status-fail")))

    def _show(self, rows: list[dict[str, Any]]) -> None:
        table = self.query_one(DataTable)
        was = self.selected
        keep = next((i for i, r in enumerate(rows) if was and r["id"] == was["id"]), table.cursor_row)
        self.rows = rows
        table.clear()
        table.add_rows(self._cells(r) for r in rows)
        for r, key in zip(rows, table.rows, strict=True):
            r["_key"] = key
        if rows:
            table.move_cursor(row=min(keep, len(rows) - 1))  # the same run, when it is still listed
        shown = ", ".join(f"{k} {v}" for k, v in self.filters.items()) or "all runs"
        more = f" (newest {LIMIT})" if len(rows) >= LIMIT else ""
        self.query_one("#history-status", Static).update(
            f"{len(rows)} run(s){more} · {shown}" + (f" · marked {fmt.short_id(self.marked)}" if self.marked else ""))

    def _cells(self, r: dict[str, Any]) -> list[Any]:
        steps = f"{r['steps_passed']}✓"
        if r["steps_failed"]:
            steps += f" {r['steps_failed']}✗"
        if r["steps_error"]:
            steps += f" {r['steps_error']}!"
        note = "re-run of " + fmt.short_id(r["rerun_of"], 8) if r.get("rerun_of") else (
            f"{r['sessions']} sessions" if (r.get("sessions") or 1) > 1 else "")
        return ["◆" if r["id"] == self.marked else "", fmt.when(r["started_at"]), fmt.styled(r["outcome"], self),
                r["plan_name"], r["dut_serial"] or "-", r["station"], steps, fmt.duration(r["duration"]),
                fmt.short_id(r["id"]), note]

    # -- actions ------------------------------------------------------------------------------

    @property
    def selected(self) -> dict[str, Any] | None:
        table = self.query_one(DataTable)
        if not self.rows or table.cursor_row is None or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row]

    @on(Input.Submitted, ".history-filter")
    def _filter(self, event: Input.Submitted) -> None:
        self.filters = {key: self.query_one(f"#filter-{key}", Input).value.strip() for key, _ in FILTERS}
        self.filters = {k: v for k, v in self.filters.items() if v}
        self.query_one(DataTable).focus()
        self.load()

    @on(DataTable.RowSelected, "#history-runs")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        from labctl.tui.detail import RunDetailScreen

        run = self.selected
        if run is not None:
            self.app.push_screen(RunDetailScreen(run["id"]))
        elif not self.loaded:  # h, enter: the key is kept until the list is there
            self._open_when_loaded = True
            self.query_one("#history-status", Static).update(
                "the run list is still loading: the run under the cursor opens when it is there")
        else:
            self.notify("no run listed to open" + (" (press / to change the filters)" if self.filters else ""),
                        severity="warning")

    def action_mark(self) -> None:
        run = self.selected
        if run is None:
            return
        self.marked = None if self.marked == run["id"] else run["id"]
        self._show(self.rows)

    def action_compare(self) -> None:
        from labctl.tui.compare import CompareScreen

        run = self.selected
        if run is None:
            return
        if self.marked and self.marked != run["id"]:
            older, newer = sorted((self.marked, run["id"]), key=lambda i: self._started(i))
            self.app.push_screen(CompareScreen(older, newer))
        else:
            self.app.push_screen(CompareScreen(None, run["id"]))

    def _started(self, run_id: str) -> float:
        return next((r["started_at"] for r in self.rows if r["id"] == run_id), 0.0)

    def action_filters(self) -> None:
        self.query_one("#filter-plan", Input).focus()

    def action_refresh(self) -> None:
        self.load()

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
