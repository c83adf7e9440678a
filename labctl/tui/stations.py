"""The lab's stations (``t``): what ``labctl stations`` shows, refreshed every few seconds
from the shared store — each station's state (idle, running job N, offline or stopped since),
last heartbeat, current run and step, soonest calibration due, jobs queued for it."""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from labctl.tui import fmt
from labctl.tui.handover import to_screen
from labctl.tui.station import STATUS_CLASSES

REFRESH_S = 2.0
COLUMNS = ("station", "state", "heartbeat", "run", "step", "calibration due", "queued", "note")


def station_cells(r: dict[str, Any], now: float) -> tuple[str, ...]:
    """One row of the table: the same fields and words as ``labctl stations``."""
    state = r["state"]
    if state in ("offline", "stopped") and r.get("since"):
        state = f"{state} since {fmt.when(r['since'])}"
    run = f"{r['plan']} {fmt.short_id(r['run'])}" if r.get("run") else "-"
    due = (r.get("calibration_due") or "-") + (" OVERDUE" if r.get("calibration_overdue") else "")
    age = max(0.0, now - r["heartbeat_at"]) if r.get("heartbeat_at") else None
    return (r["station"], state, "-" if age is None else f"{age:.0f}s ago", run, r.get("step") or "-", due,
            str(r.get("queued", 0)), (r.get("message") or "")[:60] or "-")


class StationsScreen(Screen):
    """Every registered station of the store, one row each."""

    COMPONENT_CLASSES = STATUS_CLASSES
    BINDINGS = [("r", "refresh", "Refresh")]

    def compose(self) -> ComposeResult:
        yield fmt.PlainStatic("Stations", id="stations-head", classes="screen-title")
        table = fmt.TextTable(id="stations-table", cursor_type="row", zebra_stripes=True)
        table.add_columns(*COLUMNS)
        yield table
        yield fmt.PlainStatic("reading the registry…", id="stations-status")
        yield Footer(compact=True, show_command_palette=False)  # (every key fits 80 columns; ctrl+p: help)

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
        self.load()
        self.set_interval(REFRESH_S, self.load)

    def action_refresh(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="stations")
    def load(self) -> None:
        from labctl.fleet import registry

        try:
            rows = registry.list_stations(self.app.store)
        except Exception as err:  # noqa: BLE001 - said on the screen, never a crashed UI
            to_screen(self, self._show_error, fmt.problem(err))
            return
        to_screen(self, self._show, rows, time.time())

    def _show_error(self, text: str) -> None:
        self.query_one("#stations-status", Static).update(
            Text(text, style=fmt.status_style(self, "status-fail")))

    def _show(self, rows: list[dict[str, Any]], now: float) -> None:
        table = self.query_one(DataTable)
        keep = table.cursor_row
        table.clear()
        for r in rows:
            cells = list(station_cells(r, now))
            style = ("status-fail" if r["state"] in ("offline", "stopped") or r.get("calibration_overdue")
                     else "status-running" if r["state"].startswith("running") else "")
            if style:
                cells[1] = Text(cells[1], style=fmt.status_style(self, style))
            table.add_row(*cells)
        if rows:
            table.move_cursor(row=min(keep, len(rows) - 1))
        running = sum(1 for r in rows if r["state"].startswith("running"))
        gone = sum(1 for r in rows if r["state"] in ("offline", "stopped"))
        self.query_one("#stations-status", Static).update(
            f"{len(rows)} station(s) · {running} running · {gone} offline or stopped · refreshed every "
            f"{REFRESH_S:g} s" if rows else "no station has registered (start `labctl agent --fixture F --db URL`)")
