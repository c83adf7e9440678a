"""The station screen (the first screen): the fixture's instruments with live status, the
DUT on the fixture, the interlock signals of the selected plan, and the plans available."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from labctl.console import visible
from labctl.tui import fmt
from labctl.tui.catalog import PlanEntry
from labctl.tui.handover import to_screen
from labctl.tui.status import StationStatus

STATUS_TEXT = {"ok": ("● ok", "status-ok"), "warn": ("▲ warn", "status-warn"), "fail": ("✖ FAIL", "status-fail")}
INSTRUMENT_COLUMNS = ("Role", "Status", "Error queue", "Cal. due", "Model", "IDN serial", "Asset")


#: component classes every screen showing statuses declares; styled in labctl.tcss
STATUS_CLASSES = {"status-ok", "status-warn", "status-fail", "status-running", "status-dim"}


class StationScreen(Screen[None]):
    """Polls the instruments in a worker thread every ``config.poll_interval`` seconds (paused
    while a run holds the instruments); loads the plan catalog in another."""

    BINDINGS = [
        Binding("enter,r", "start", "Start run"),
        Binding("ctrl+r", "refresh", "Refresh"),
    ]

    COMPONENT_CLASSES = STATUS_CLASSES
    status: reactive[StationStatus | None] = reactive(None, init=False)
    plans: reactive[tuple[PlanEntry, ...]] = reactive((), init=False)

    def __init__(self) -> None:
        super().__init__()
        self._loaded: dict[str, Any] = {}  # plan path -> LoadedPlan (for its interlocks)
        self._polling = False
        self._said: list[tuple[str, str, str]] = []  # per instruments row: role, what is wrong, its class
        self._catalog_stamp: Any = None  # the plan files the list was read from (catalog.catalog_stamp)

    def compose(self) -> ComposeResult:
        yield Header()
        yield fmt.PlainStatic("", id="station-head")
        with Horizontal(id="station-top"):
            with Vertical(id="instruments-pane", classes="pane"):
                yield fmt.TextTable(id="instruments", cursor_type="row", zebra_stripes=True)
                yield fmt.PlainStatic("", id="instrument-detail", classes="-empty")  # the row's whole problem
            with Vertical(id="side-pane", classes="pane"):
                yield fmt.PlainStatic("", id="dut")
                yield fmt.TextTable(id="interlocks", cursor_type="none")
        with Horizontal(id="station-bottom"):
            with Vertical(id="plans-pane", classes="pane"):
                yield fmt.TextTable(id="plans", cursor_type="row", zebra_stripes=True)
            yield fmt.PlainStatic("", id="plan-detail", classes="pane")
        yield Footer(compact=True, show_command_palette=False)  # (every key fits 80 columns; ctrl+p: help)

    def on_mount(self) -> None:
        self.query_one("#instruments-pane").border_title = "Instruments"
        self.query_one("#side-pane").border_title = "DUT · interlocks"
        self.query_one("#plans-pane").border_title = "Plans"
        self.query_one("#plan-detail").border_title = "Plan"
        inst = self.query_one("#instruments", DataTable)
        inst.add_columns(*INSTRUMENT_COLUMNS)
        locks = self.query_one("#interlocks", DataTable)
        locks.add_columns("Interlock", "Value", "Limit")
        plans = self.query_one("#plans", DataTable)
        plans.add_columns("Plan", "Steps", "Corners", "Est.", "Roles", "From")
        self._render_head(None)
        self.query_one("#dut", Static).update("DUT: reading the console…")
        plans.focus()
        if self.app.config.poll_interval > 0:
            self.load_catalog()
            self.set_interval(self.app.config.poll_interval, self.refresh_status)

    # ------------------------------------------------------------------ workers
    @work(thread=True, exclusive=True, group="catalog")
    def load_catalog(self) -> None:
        """Read every plan file (again): at start, when the files changed, on ctrl+r."""
        from labctl.tui.catalog import catalog_stamp, load_catalog

        bench = self.app.bench
        note = bench.start_lab()
        if note:
            self.app.call_from_thread(self.app.notify, note)
        stamp = catalog_stamp(self.app.config.plans)  # before reading: an edit meanwhile is seen next time
        entries = tuple(load_catalog(bench.fixture, self.app.config.plans))
        self._catalog_stamp = stamp
        self._loaded = {}  # plans loaded for their interlocks: read again when next needed
        to_screen(self, self.show_plans, entries)
        self.poll()

    @work(thread=True, group="poll")
    def poll(self) -> None:
        """Read the station once (skipped while a run or another poll holds the instruments);
        a plan file added, edited or deleted since the list was read reloads the list."""
        from labctl.tui.catalog import catalog_stamp
        from labctl.tui.status import poll_station

        if self._catalog_stamp is not None and catalog_stamp(self.app.config.plans) != self._catalog_stamp:
            self._catalog_stamp = None  # one reload, however many polls come before it ends
            self.app.call_from_thread(self.load_catalog)
        bench = self.app.bench
        if not bench.instruments_lock.acquire(blocking=False):
            return
        try:
            entry = self.selected_plan
            loaded = self._loaded_plan(entry) if entry is not None else None
            status = poll_station(bench.fixture, loaded)
        finally:
            bench.instruments_lock.release()
        if entry is not None and not status.plan:  # a plan without interlocks: "none in <plan>"
            status = replace(status, plan=entry.name)
        to_screen(self, self.show_status, status)

    def _loaded_plan(self, entry: PlanEntry) -> Any:
        if not entry.ok or not entry.interlocks:
            return None
        if entry.path not in self._loaded:
            from labctl.errors import LabctlError
            from labctl.plan.loader import load_plan

            try:
                self._loaded[entry.path] = load_plan(entry.path, {}, self.app.bench.fixture)
            except LabctlError:
                self._loaded[entry.path] = None
        return self._loaded[entry.path]

    # ------------------------------------------------------------------ display
    def show_status(self, status: StationStatus) -> None:
        self.status = status

    def show_plans(self, entries: tuple[PlanEntry, ...]) -> None:
        self.plans = entries

    def watch_status(self, status: StationStatus | None) -> None:
        if status is None:
            return
        from labctl.tui.start import StartRunScreen

        if isinstance(self.app.screen, StartRunScreen):
            self.app.screen.station_polled(status)  # its pre-flight follows the station
        table = self.query_one("#instruments", DataTable)
        row = table.cursor_row  # the operator's place: kept through the poll's new rows
        # columns anew: a column keeps the width of the widest text it ever held (a long
        # problem of an earlier poll would push the columns after it off the screen for good)
        table.clear(columns=True)
        table.add_columns(*INSTRUMENT_COLUMNS)
        self._said = []
        for i in status.instruments:
            label, cls = STATUS_TEXT.get(i.status, (i.status, ""))
            wrong = "" if i.status == "ok" else \
                " · ".join(t for t in (i.errors if i.errors not in ("empty", "") else "", i.detail) if t)
            self._said.append((i.role, wrong, cls))
            shown = i.errors if len(i.errors) <= 36 else i.errors[:35] + "…"
            errors = Text(shown or "—", style=_style(self, "" if i.errors in ("empty", "") else "status-fail"))
            table.add_row(i.role, Text(label, style=_style(self, cls)), errors, i.calibration_due or "—",
                          i.model or "—", i.serial or "—", i.asset_serial or "—", key=i.role)
        for problem in status.problems:
            label, cls = ("▲ busy", "status-warn") if problem == status.busy else ("✖ FAIL", "status-fail")
            table.add_row("station", Text(label, style=_style(self, cls)), problem, "", "", "", "")
            self._said.append(("station", problem, cls))
        if table.row_count:
            table.move_cursor(row=min(max(row, 0), table.row_count - 1), animate=False)
        self._show_instrument()
        self._render_head(status)
        dut = self.query_one("#dut", Static)
        if status.busy:
            dut.update("DUT: not read (bench in use)")
        elif status.dut_serial:
            dut.update(fmt.plain(f"DUT {status.dut_serial}\n{status.dut_detail}"))
        else:
            dut.update("DUT: the console did not answer" if "dut" in self.app.bench.fixture.roles else "no DUT console")
        locks = self.query_one("#interlocks", DataTable)
        locks.clear()
        entry = self.selected_plan
        if not status.interlocks and entry is not None and entry.ok and entry.interlocks:
            # the plan has interlocks the poll did not read (the bench busy, a plan not loaded):
            # they are named, not said to be missing
            for name, _signal, limit in entry.interlocks:
                locks.add_row(name, Text("not read" + (" (bench in use)" if status.busy else ""),
                                         style=_style(self, "status-warn")), limit)
        elif not status.interlocks:
            locks.add_row(f"none in {status.plan}" if status.plan else "(select a plan)", "", "")
        for lock in status.interlocks:
            cls = "status-ok" if lock.ok else "status-fail" if lock.ok is False else "status-warn"
            locks.add_row(lock.name, Text(lock.value, style=_style(self, cls)), lock.limit)

    @on(DataTable.RowHighlighted, "#instruments")
    def _show_instrument(self) -> None:
        """Under the table, all of what is wrong with the instrument under the cursor (the
        error column cuts it); nothing, and no room taken, when nothing is."""
        row = self.query_one("#instruments", DataTable).cursor_row
        role, wrong, cls = self._said[row] if 0 <= row < len(self._said) else ("", "", "")
        detail = self.query_one("#instrument-detail", Static)
        detail.update(Text(f"{role}: {wrong}", style=_style(self, cls)) if wrong else "")
        detail.set_class(not wrong, "-empty")

    def _render_head(self, status: StationStatus | None) -> None:
        """One line a bench engineer reads first: station, DUT, interlocks (all on 80 columns)."""
        fixture = self.app.bench.fixture
        head = Text(f"Station {fixture.station}")
        if status is None:
            head.append(" · reading the instruments…", style=_style(self, "status-dim"))
        elif status.busy:  # nothing failed: a run in another terminal holds the instruments
            head.append(" · bench in use by another run: not polled until it ends", style=_style(self, "status-warn"))
        else:
            head.append(" · DUT ")
            head.append(status.dut_serial or "not answering", style=_style(self, "" if status.dut_serial else "status-fail"))
            bad = len(status.blocking) + len(status.problems)
            head.append(" · ")
            head.append(f"{bad} instrument problem(s)" if bad else "instruments OK",
                        style=_style(self, "status-fail" if bad else "status-ok"))
            for lock in status.interlocks:
                cls = "status-ok" if lock.ok else "status-fail" if lock.ok is False else "status-warn"
                head.append(" · ")
                head.append(f"{lock.signal} {lock.value}", style=_style(self, cls))
        self.query_one("#station-head", Static).update(head)

    def watch_plans(self, old: tuple[PlanEntry, ...], entries: tuple[PlanEntry, ...]) -> None:
        table = self.query_one("#plans", DataTable)
        was = old[table.cursor_row].path if 0 <= table.cursor_row < len(old) else None
        table.clear()
        for e in entries:
            if e.ok:
                table.add_row(e.name, str(e.expanded), str(e.corners or "—"), e.estimate,
                              ", ".join(e.requires), e.source, key=e.path)
            else:
                table.add_row(Text(e.name, style=_style(self, "status-fail")), "—", "—", "—", "does not load",
                              e.source, key=e.path)
        paths = [e.path for e in entries]
        if was in paths:  # a reloaded list keeps the cursor on the plan it was on
            table.move_cursor(row=paths.index(was))
        self._show_detail()

    @property
    def selected_plan(self) -> PlanEntry | None:
        table = self.query_one("#plans", DataTable)
        if not self.plans or table.row_count == 0:
            return None
        row = min(table.cursor_row, len(self.plans) - 1)
        return self.plans[row]

    @on(DataTable.RowHighlighted, "#plans")
    def _plan_highlighted(self) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        entry = self.selected_plan
        detail = self.query_one("#plan-detail", Static)
        if entry is None:
            detail.update("loading plans…" if not self.plans else "")
            return
        if not entry.ok:
            detail.update(Text(f"{entry.name}: does not load\n{entry.error}", style=_style(self, "status-fail")))
            return
        lines = [entry.description, "",
                 f"roles: {', '.join(entry.requires) or '—'}",
                 f"{entry.steps} steps, {entry.expanded} expanded, {entry.corners or 'no'} corners, est. {entry.estimate}"]
        scale = self.app.bench.fixture.sim.time_scale if self.app.bench.fixture.sim and self.app.bench.fixture.sim.enabled else 1
        if scale != 1:
            lines[-1] += f" (simulated time; {scale:g}× on this bench)"
        if entry.interlocks:
            lines.append("interlocks: " + "; ".join(f"{n} {lim}" for n, _s, lim in entry.interlocks))
        detail.update("\n".join(lines))

    # ------------------------------------------------------------------ actions
    def _run_going(self) -> bool:
        """A run holds the instruments: nothing is read meanwhile."""
        return self.app.run_session is not None and not self.app.run_session.finished

    def refresh_status(self) -> None:
        """Every poll interval, and back from a run: read the station (and the plan files'
        stamps) again."""
        if not self._run_going():
            self.poll()

    def action_refresh(self) -> None:
        """ctrl+r: read the instruments now, and the plan list again."""
        if not self._run_going():
            self.load_catalog()

    def action_start(self) -> None:
        entry = self.selected_plan
        if entry is None:
            self.notify("no plan selected", severity="warning")
            return
        if not entry.ok:
            self.notify(visible(f"{entry.name} does not load: {entry.error}"), severity="error", markup=False)
            return
        if self.app.run_session is not None and not self.app.run_session.finished:
            self.notify("a run is in progress on this station", severity="warning")
            return
        from labctl.tui.start import StartRunScreen

        self.app.push_screen(StartRunScreen(entry, self.status))

    @on(DataTable.RowSelected, "#plans")
    def _plan_selected(self) -> None:
        self.action_start()


def _style(screen: Any, component: str) -> Any:
    """The rich style of one of :data:`STATUS_CLASSES`, as the stylesheet defines it (no
    colour is written in Python)."""
    return screen.get_component_rich_style(component, partial=True) if component else ""
