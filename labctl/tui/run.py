"""The live run screen: the step tree, the current step's measurements against their limits,
live plots, a progress line saying what a wait waits for (and an instrument call in flight,
counting down to its timeout), the interlocks, and a log pane that shows the current step's
instrument I/O on demand. Abort is one key, then a confirmation."""

from __future__ import annotations

import time
from typing import Any

from rich.markup import escape
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, ProgressBar, RichLog, Static, Tree
from textual.widgets.tree import TreeNode
from textual_plotext import PlotextPlot

from labctl.console import format_value, visible
from labctl.tui import fmt
from labctl.tui.catalog import PlanEntry
from labctl.tui.model import RunModel, format_seconds, margin
from labctl.tui.session import EventsReady, Note, PromptCancelled, RunSession
from labctl.tui.station import STATUS_CLASSES

ICONS = {"RUNNING": "▶", "PASS": "✓", "FAIL": "✖", "ERROR": "!", "SKIPPED": "–", "ABORTED": "■"}
STATUS_CLASS = {"RUNNING": "status-running", "PASS": "status-ok", "FAIL": "status-fail", "ERROR": "status-fail",
                "SKIPPED": "status-dim", "ABORTED": "status-warn", "MARGINAL": "status-warn",
                "passed": "status-ok", "failed": "status-fail", "error": "status-fail", "aborted": "status-warn"}
GROUP_TITLES = {"setup": "setup", "teardown": "teardown", "safe-state": "safe state"}
TICK = 0.1  # seconds: the screen applies buffered events at most this often
PLOT_EVERY = 0.5  # seconds between plot redraws
MEASUREMENT_COLUMNS = ("Measurement", "Value", "Verdict", "Margin", "Limits", "Step")


def clear_measurements(table: DataTable) -> None:
    """Empty the measurement table, its columns sized anew: a column keeps the width of the
    widest text it ever held, so one long value (a rail sequence, a reply) would push the
    verdicts and limits of every later step off the screen."""
    table.clear(columns=True)
    table.add_columns(*MEASUREMENT_COLUMNS)


class RunScreen(Screen[None]):
    COMPONENT_CLASSES = STATUS_CLASSES
    BINDINGS = [
        Binding("a", "abort", "Abort"),
        Binding("l", "toggle_io", "I/O"),  # (short: every key of the screen fits 80 columns)
        Binding("m", "toggle_measurements", "All"),  # (all measurements, or the step's)
        Binding("p", "next_plot", "Plot"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, session: RunSession, entry: PlanEntry | None = None, *, start: bool = True) -> None:
        super().__init__()
        self.session = session
        self.entry = entry
        self.model = RunModel()
        self._autostart = start
        self._group_nodes: dict[str, TreeNode] = {}
        self._group_failed: dict[str, dict[str, str]] = {}  # group -> step key -> FAIL / ERROR
        self._step_nodes: dict[str, TreeNode] = {}
        self._show_io = False
        self._all_measurements = False
        self._table_step: str | None = None
        self._last_apply = 0.0
        self._apply_scheduled = False
        self._last_plot = 0.0
        self._plot_unit: str | None = None
        self._prompt_open: str | None = None
        self._io_shown = 0  # the session log's index of the next record to show
        self._io_step: tuple[str | None, float] | None = None  # (step, its start) whose I/O is shown
        self._aborting = False
        self._resources: dict[str, float] = {}
        self._log_backlog: list[tuple[str, str]] = []  # log lines that came while the I/O was shown
        self._follow: TreeNode | None = None  # the newest step's node: the tree scrolls to it
        self._following: TreeNode | None = None  # the node the tree keeps in view while the user lets it
        self._follow_y: int | None = None  # the tree's scroll offset as the screen left it
        self._open_group: str | None = None  # the group of the steps the run is in (the others fold)
        self._over = False  # the run's end has been shown

    def compose(self) -> ComposeResult:
        yield Header()
        yield fmt.PlainStatic("starting…", id="run-head")
        with Horizontal(id="run-progress-row"):
            yield ProgressBar(total=None, show_eta=False, id="run-progress")
            yield fmt.PlainStatic("", id="run-progress-text")
        with Horizontal(id="run-main"):
            with Vertical(id="steps-pane", classes="pane"):
                yield Tree("run", id="steps")
            with Vertical(id="run-right"):
                with Vertical(id="measurements-pane", classes="pane"):
                    yield fmt.TextTable(id="measurements", cursor_type="row", zebra_stripes=True)
                with Horizontal(id="plots-pane", classes="pane"):
                    yield PlotextPlot(id="plot-series")
                    yield PlotextPlot(id="plot-ber")
        with Horizontal(id="run-bottom"):
            with Vertical(id="interlocks-run-pane", classes="pane"):
                yield fmt.TextTable(id="run-interlocks", cursor_type="none")
            with Vertical(id="log-pane", classes="pane"):
                yield RichLog(id="run-log", wrap=True, markup=False, max_lines=2000, min_width=10)  # wrapped to the pane
        yield Footer(compact=True, show_command_palette=False)  # (every key fits 80 columns; ctrl+p: help)

    def on_mount(self) -> None:
        self.query_one("#steps-pane").border_title = "Steps"
        self.query_one("#measurements-pane").border_title = "Measurements"
        self.query_one("#plots-pane").border_title = "Plots"
        self.query_one("#interlocks-run-pane").border_title = "Interlocks"
        self.query_one("#log-pane").border_title = "Log"
        tree = self.query_one("#steps", Tree)
        tree.show_root = False
        tree.root.expand()
        table = self.query_one("#measurements", DataTable)
        table.add_columns(*MEASUREMENT_COLUMNS)
        self.query_one("#run-interlocks", DataTable).add_columns("Interlock", "Value", "Limit")
        self.query_one("#plot-ber", PlotextPlot).display = False
        self._resources = self._io_timeouts()
        self.session.target = self
        self.set_interval(0.25, self._tick)
        if self._autostart and not self.session.finished and self.session.started_at is None:
            self.run_worker(lambda: self.session.run(self.app.bench), thread=True, group="engine",
                            name="labctl-engine", exit_on_error=False)
        self.apply_events()

    # ------------------------------------------------------------------ events in
    def on_events_ready(self, _message: EventsReady) -> None:
        """Apply buffered events at most once per TICK (a burst is one re-render)."""
        wait = TICK - (time.monotonic() - self._last_apply)
        if wait > 0:
            if not self._apply_scheduled:
                self._apply_scheduled = True
                self.set_timer(wait, self.apply_events)
            return
        self.apply_events()

    def apply_events(self) -> None:
        self._apply_scheduled = False
        self._last_apply = time.monotonic()
        finished = False
        cancelled: list[PromptCancelled] = []
        for item in self.session.drain():
            if isinstance(item, Note):
                if item.level == "finished":
                    finished = True
                else:
                    self.model.new_logs.append((item.level, item.text))
            elif isinstance(item, PromptCancelled):
                cancelled.append(item)
            else:
                self.model.apply(item)
        self._render_changes()
        for c in cancelled:
            self._withdraw_prompt(c)
        if finished:
            self._finished()

    def _render_changes(self) -> None:
        steps, measurements, logs, prompts = self.model.take_changes()
        for key in sorted(steps, key=lambda k: self.model.steps[k].order):
            self._render_step(key)
        if steps:
            self._fold_corners()
        if self._follow is not None:
            # a node added just now has no line in the tree until its next refresh: scroll then
            self._following, self._follow, self._follow_y = self._follow, None, None
            self.query_one("#steps", Tree).call_after_refresh(self._scroll_to_following)
        if measurements:
            self._render_measurements(measurements)
        log = self.query_one("#run-log", RichLog)
        if not self._show_io:
            for level, text in logs:
                log.write(Text(text, style=self._style({"error": "status-fail", "warning": "status-warn"}.get(level, ""))))
        else:
            self._log_backlog.extend(logs)
        if self.model.header_changed:
            self.model.header_changed = False
            self._render_head()
        self._render_progress()
        for asked in prompts:
            self._ask(asked)
        if self.model.samples_changed or measurements:
            self._maybe_plot()

    # ------------------------------------------------------------------ rendering
    def _style(self, component: str) -> Any:
        return self.get_component_rich_style(component, partial=True) if component else ""

    def _render_head(self) -> None:
        m = self.model
        text = Text()
        if m.outcome:
            text.append(f"{m.outcome.upper()} ", style=self._style(STATUS_CLASS.get(m.outcome, "")))
        elif self._aborting:
            text.append("ABORTING: teardown and safe state running ", style=self._style("status-warn"))
        else:
            text.append("RUNNING ", style=self._style("status-running"))
        parts = [m.plan, f"DUT {m.dut or '?'}"]
        for verdict in ("FAIL", "MARGINAL", "PASS"):
            if m.counts.get(verdict):
                parts.append(f"{verdict} {m.counts[verdict]}")
        parts += [f"operator {m.operator or '?'}", f"run {m.run_id}" if m.run_id else ""]
        text.append(" · ".join(p for p in parts if p))
        self.query_one("#run-head", Static).update(text)

    @staticmethod
    def _group_id(row: Any) -> str:
        return f"corner{row.corner_index}" if row.group == "steps" and row.corner_index is not None else row.group

    def _group_node(self, row: Any) -> TreeNode:
        gid = self._group_id(row)
        node = self._group_nodes.get(gid)
        if node is None:
            title = GROUP_TITLES.get(row.group) or self.model.corner_label(row.corner_index)
            # the steps' groups open as the run reaches them (_fold_corners)
            node = self.query_one("#steps", Tree).root.add(Text(title), expand=row.group != "steps", data=title)
            self._group_nodes[gid] = node
        return node

    def _count_failed(self, row: Any) -> None:
        """A group's label counts its steps that failed or broke, so that a corner folded away
        still says it holds one ("corner 1 [vin=4.75 V]  ! 1 ERROR")."""
        gid = self._group_id(row)
        failed = self._group_failed.setdefault(gid, {})
        before = dict(failed)
        if row.status in ("FAIL", "ERROR"):
            failed[row.key] = row.status
        else:
            failed.pop(row.key, None)
        if failed == before:
            return
        node = self._group_nodes[gid]
        label = Text(str(node.data))
        for status in ("FAIL", "ERROR"):
            count = sum(1 for s in failed.values() if s == status)
            if count:
                label.append(f"  {ICONS[status]} {count} {status}", style=self._style(STATUS_CLASS[status]))
        node.set_label(label)

    def _fold_corners(self) -> None:
        """Earlier corners (and setup) fold away as the run moves on. A step that was not run
        (after an abort or a stop) moves nothing: the corner where the run stopped stays open."""
        current = next((r for r in reversed(self.model.steps.values()) if r.group == "steps" and not r.not_run), None)
        if current is None or self._group_id(current) == self._open_group:
            return
        self._open_group = self._group_id(current)
        for gid, node in self._group_nodes.items():
            if gid == self._open_group:
                node.expand()
            elif gid not in ("teardown", "safe-state"):
                node.collapse()

    def _render_step(self, key: str) -> None:
        row = self.model.steps[key]
        label = Text()
        label.append(f"{ICONS.get(row.status, '?')} ", style=self._style(STATUS_CLASS.get(row.status, "")))
        label.append(row.step_id)
        status = "running" if row.status == "RUNNING" else "not run" if row.not_run else row.status
        label.append(f"  {status}", style=self._style(STATUS_CLASS.get(row.status, "")))
        if row.attempt > 1:
            label.append(f"  attempt {row.attempt}")
        for verdict, count in sorted(row.flagged.items()):
            label.append(f"  {count} {verdict}", style=self._style(STATUS_CLASS.get(verdict, "")))
        if row.duration is not None and not row.not_run:
            label.append(f"  {format_seconds(row.duration)}")
            if row.duration_sim is not None:
                label.append(f" (sim {format_seconds(row.duration_sim)})", style=self._style("status-dim"))
        node = self._step_nodes.get(key)
        if node is None:
            node = self._step_nodes[key] = self._group_node(row).add_leaf(label, data=key)
        else:
            node.set_label(label)
        self._count_failed(row)
        if not row.not_run:
            self._follow = node  # the tree follows the run

    def _render_measurements(self, new: list[Any]) -> None:
        """All measurements (``m``), or those of the step that measured last: the current
        step's as they come, the previous step's until the current one has any."""
        table = self.query_one("#measurements", DataTable)
        rows: list[Any]
        if self._all_measurements:
            rows = new
            if table.row_count + len(rows) > 1000:  # keep the table cheap: the newest 500
                clear_measurements(table)
                rows = list(self.model.measurements)[-500:]
        else:
            latest = new[-1].step_key if new else self._table_step
            if latest is None and self.model.measurements:
                latest = self.model.measurements[-1].step_key
            if latest != self._table_step:
                clear_measurements(table)
                self._table_step = latest
                rows = [m for m in self.model.measurements if m.step_key == latest]
                row = self.model.steps.get(latest or "")
                where = f"{row.step_id}" + (f", {self.model.corner_label(row.corner_index)}"
                                            if row is not None and row.corner_index is not None else "") if row else ""
                self.query_one("#measurements-pane").border_title = (
                    f"Measurements ({escape(where)})" if where else "Measurements")
            else:
                rows = [m for m in new if m.step_key == latest]
        table.add_rows([self._measurement_row(m) for m in rows])
        if rows:
            table.move_cursor(row=table.row_count - 1, animate=False)

    def _measurement_row(self, m: Any) -> tuple[Any, ...]:
        name = m.name + (" " + " ".join(f"{k}={v}" for k, v in m.labels.items()) if m.labels else "")
        step = self.model.steps[m.step_key].step_id if m.step_key in self.model.steps else m.step_key
        value = f"{format_value(m.value)} {m.unit}".rstrip()
        margin_text, _share = margin(m.value, m.limits, m.unit)
        verdict = Text(m.verdict if m.verdict != "NONE" else "—", style=self._style(STATUS_CLASS.get(m.verdict, "")))
        return (name, value, verdict, margin_text, m.limits.text if m.limits else "", step)

    def _render_progress(self) -> None:
        m = self.model
        bar = self.query_one("#run-progress", ProgressBar)
        if m.progress_fraction is None:
            bar.update(total=None)
        else:
            bar.update(total=1.0, progress=max(0.0, min(1.0, m.progress_fraction)))
        self.query_one("#run-progress-text", Static).update(self._waiting_text())

    def _waiting_text(self) -> str:
        text = self.model.progress_text
        call = self._call_in_flight()
        return f"{text}   {call}" if call else text

    # ------------------------------------------------------------------ instrument I/O
    def _io_timeouts(self) -> dict[str, float]:
        from labctl.instruments.timeouts import parse_seconds

        out = {}
        for binding in self.app.bench.fixture.roles.values():
            try:
                out[str(binding.resource)] = parse_seconds(binding.timeout, 2.0)
            except Exception:  # noqa: BLE001 - a display aid only
                out[str(binding.resource)] = 2.0
        return out

    def _call_in_flight(self) -> str:
        """"psu: MEAS:VOLT? no reply yet, timeout in 1.2 s" while an instrument call blocks."""
        station = self.session.station
        log = getattr(station, "session_log", None)
        if log is None or not log.records or self.session.finished:
            return ""
        last = log.records[-1]
        if last.get("kind") != "query":
            return ""
        waited = time.time() - float(last.get("t", time.time()))
        if waited < 0.5:
            return ""
        limit = self._resources.get(str(last.get("resource")), 2.0)
        return (f"{last.get('instrument')}: {last.get('text')!s} no reply for {waited:.1f} s, "
                f"timeout in {max(0.0, limit - waited):.1f} s")

    def _render_io(self) -> None:
        """The current step's instrument I/O as it happens; the pane starts afresh when the next
        step (or attempt) starts."""
        log = getattr(self.session.station, "session_log", None)
        if log is None:
            return
        log_widget = self.query_one("#run-log", RichLog)
        current = self.model.steps.get(self.model.current or "")
        since = current.started if current is not None else 0.0
        if (self.model.current, since) != self._io_step:
            self._io_step = (self.model.current, since)
            log_widget.clear()
            self._io_shown = 0  # the session log's index: read again from its start, by time
        records, self._io_shown = log.since(self._io_shown)
        fresh = [r for r in records if float(r.get("t", 0)) >= since][-400:]
        for r in fresh:
            arrow = {"write": "→", "query": "→", "reply": "←", "error": "✖", "note": "·"}.get(r.get("kind"), " ")
            log_widget.write(visible(f"{r.get('instrument')} {arrow} {r.get('text')}"))

    # ------------------------------------------------------------------ periodic
    def _tick(self) -> None:
        self.query_one("#run-progress-text", Static).update(self._waiting_text())
        self._keep_following()
        self._render_interlocks()
        if self._show_io:
            self._render_io()
        if self.model.samples_changed:
            self._maybe_plot()

    def _scroll_to_following(self) -> None:
        tree = self.query_one("#steps", Tree)
        node = self._following
        if node is None or tree.last_line < 0 or node.line < 0:  # (last_line lays out the tree's lines)
            return  # nothing to follow, or not laid out yet, or folded away
        height = tree.scrollable_content_region.height
        if not tree.scroll_offset.y <= node.line < tree.scroll_offset.y + height:
            tree.scroll_to(y=max(0, node.line - height + 1), animate=False, immediate=True)
        self._follow_y = tree.scroll_offset.y

    def _keep_following(self) -> None:
        """Keep the newest step in view through layout changes after the scroll to it (the tree
        shrinking, its scrollbar appearing); once the user scrolled the tree, leave it to them
        until the next step starts."""
        if self._following is None:
            return
        if self._follow_y is not None and self.query_one("#steps", Tree).scroll_offset.y != self._follow_y:
            self._following = None
        else:
            self._scroll_to_following()

    def _render_interlocks(self) -> None:
        table = self.query_one("#run-interlocks", DataTable)
        values = dict(self.session.interlocks)
        names = list(values) or [n for n, _s, _l in (self.entry.interlocks if self.entry else ())]
        if table.row_count != len(names) or values:
            table.clear()
            for name in names:
                if name not in values:
                    table.add_row(name, "—", next((lim for n, _s, lim in (self.entry.interlocks if self.entry else ())
                                                   if n == name), ""))
                    continue
                value, unit, low, high = values[name]
                ok = (high is None or value <= high) and (low is None or value >= low)
                limit = " ".join(x for x in (f"≥ {low:g} {unit}" if low is not None else "",
                                              f"≤ {high:g} {unit}" if high is not None else "") if x)
                table.add_row(name, Text(f"{value:.4g} {unit}", style=self._style("status-ok" if ok else "status-fail")),
                              limit)

    def _maybe_plot(self) -> None:
        now = time.monotonic()
        if now - self._last_plot < PLOT_EVERY:
            return
        self._last_plot = now
        self.model.samples_changed = False
        self._plot_series()
        self._plot_ber()

    def _units(self) -> list[str]:
        return sorted(set(self.model.series_unit.values()), key=lambda u: (u != "degC", u))

    def _plot_series(self) -> None:
        widget = self.query_one("#plot-series", PlotextPlot)
        units = self._units()
        if not units:
            return
        unit = self._plot_unit if self._plot_unit in units else units[0]
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        t0 = min(points[0][0] for points in self.model.series.values() if points)
        for name, points in self.model.series.items():
            if self.model.series_unit.get(name) != unit or not points:
                continue
            plt.plot([t - t0 for t, _v in points], [v for _t, v in points], label=name)
        plt.title(f"{unit} over time (s)")
        widget.refresh()

    def _plot_ber(self) -> None:
        lanes = self.model.ber_by_lane()
        widget = self.query_one("#plot-ber", PlotextPlot)
        widget.display = bool(lanes)
        if not lanes:
            return
        import math

        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        plt.bar([f"L{lane}" for lane, _ in lanes], [-math.log10(max(v, 1e-30)) for _l, v in lanes])
        plt.title("BER per lane: -log10 (higher is better)")
        widget.refresh()

    # ------------------------------------------------------------------ prompts
    def _ask(self, asked: Any) -> None:
        from labctl.tui.prompt import PromptDialog

        self._prompt_open = asked.prompt_id

        def answered(answer: str | None) -> None:
            if self._prompt_open == asked.prompt_id:
                self._prompt_open = None
            if answer is not None and not self.session.answer(asked.prompt_id, answer):
                self.notify(f"prompt {asked.prompt_id} was already withdrawn", severity="warning")

        self.app.push_screen(PromptDialog(asked, self.session.operator), answered)

    def _withdraw_prompt(self, cancelled: PromptCancelled) -> None:
        from labctl.tui.prompt import PromptDialog

        for screen in self.app.screen_stack:
            if isinstance(screen, PromptDialog) and screen.asked.prompt_id == cancelled.prompt_id:
                screen.dismiss(None)
                self.notify(visible(f"prompt {cancelled.prompt_id} withdrawn: {cancelled.reason}"), severity="warning",
                            markup=False)

    # ------------------------------------------------------------------ end
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A run that is over has nothing to abort: its key leaves the footer."""
        return not (action == "abort" and (self.session.finished or self._over))

    def _finished(self) -> None:
        s = self.session
        for part in ("#run-head", "#run-progress-row"):  # the last words are not cut to 3 lines
            self.query_one(part).add_class("-ended")
        self._over = True
        self.refresh_bindings()
        self._render_head()
        if s.error is not None:
            self.query_one("#run-head", Static).update(
                Text(f"not started: {s.error}", style=self._style("status-fail")))
            self.model.progress_text, self.model.progress_fraction = "nothing was powered", 0.0
            self._render_progress()  # and it stays said (the bar stops; the tick redraws this text)
        self.app.run_finished(s)
        self.notify(f"run {self.model.outcome or 'not started'} (exit code {s.exit_code}); esc: back to the station",
                    severity="information" if s.exit_code == 0 else "warning", timeout=8)

    # ------------------------------------------------------------------ actions
    def action_abort(self) -> None:
        if self.session.finished:
            self.notify("the run is over", severity="information")
            return
        if self._aborting:
            self.notify("already aborting: teardown and the safe state run, please wait", severity="warning")
            return
        from labctl.tui.dialogs import ConfirmDialog

        def decided(yes: bool | None) -> None:
            if yes:
                self._aborting = True
                self.session.abort()
                self.model.new_logs.append(("warning", "abort requested by the operator: teardown and safe state follow"))
                self._render_head()
                self._render_changes()

        self.app.push_screen(ConfirmDialog("Abort the run?",
                                           "The run stops; teardown and the safe state run (outputs off, chamber to "
                                           "its safe temperature), each read back.",
                                           yes="Abort", no="Keep running"), decided)

    def action_toggle_io(self) -> None:
        self._show_io = not self._show_io
        log = self.query_one("#run-log", RichLog)
        log.clear()
        self._io_step = None
        self.set_class(self._show_io, "-io")
        self.query_one("#log-pane").border_title = "Instrument I/O (current step)" if self._show_io else "Log"
        if self._show_io:
            self._render_io()
        else:
            for level, text in self._log_backlog:
                log.write(Text(text, style=self._style({"error": "status-fail", "warning": "status-warn"}.get(level, ""))))
            self._log_backlog = []

    def action_toggle_measurements(self) -> None:
        self._all_measurements = not self._all_measurements
        table = self.query_one("#measurements", DataTable)
        clear_measurements(table)
        self._table_step = None
        self.query_one("#measurements-pane").border_title = "Measurements (all)" if self._all_measurements else "Measurements"
        if self._all_measurements:
            table.add_rows([self._measurement_row(m) for m in list(self.model.measurements)[-500:]])
        else:
            self._render_measurements([])

    def action_next_plot(self) -> None:
        units = self._units()
        if not units:
            self.notify("no time series yet", severity="information")
            return
        current = self._plot_unit if self._plot_unit in units else units[0]
        self._plot_unit = units[(units.index(current) + 1) % len(units)]
        self._last_plot = 0.0
        self._plot_series()

    def action_back(self) -> None:
        if not self.session.finished:
            self.notify("a run is in progress: a aborts it", severity="warning")
            return
        self.app.pop_screen()
        station = self.app.screen
        if hasattr(station, "refresh_status"):
            station.refresh_status()

    @on(Tree.NodeSelected, "#steps")
    def _step_selected(self, event: Tree.NodeSelected) -> None:
        key = event.node.data
        if key and key in self.model.steps:
            row = self.model.steps[key]
            if row.message:
                self.notify(f"{row.step_id}: {row.message}", timeout=8, markup=False)  # (the model shows controls)
