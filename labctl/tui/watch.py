"""Watch mode: runs started anywhere else (``labctl run``, a rig, CI) followed through the
results store — this station's, or with a shared PostgreSQL every station's
(``labctl tui --watch [--station S | --all-stations]``).

The screen polls the store (:func:`labctl.store.query.follow`) twice a second from a worker
thread and applies what changed as one batch per poll: the run's step counts and current step, its newest
measurements (a bounded table), its time series (a plot over a bounded window) and the
current wait line, which the recorder stores throttled (table ``progress``). It follows the
newest running run until the operator picks one (``enter``); ``f`` goes back to following.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, ProgressBar, Static
from textual_plotext import PlotextPlot

from labctl.console import visible
from labctl.tui import fmt
from labctl.tui.handover import to_screen
from labctl.tui.station import STATUS_CLASSES

POLL_INTERVAL = 0.5  # seconds between store polls
MEASUREMENT_ROWS = 200  # newest measurements kept in the table
PLOT_WINDOW = 1200  # newest points per series kept for the plot
PLOT_EVERY = 1.0  # seconds between plot redraws (a plot is the costliest thing to draw)
PLOT_POINTS = 300  # points per series drawn (the window is thinned to this)
RECENT = "1h"  # ended runs stay listed this long
RUN_ROWS = 30
#: the plot's time unit by the span it shows: seconds for a short run, then minutes, then hours
TIME_AXIS = ((120.0, 1.0, "s"), (7200.0, 60.0, "min"), (float("inf"), 3600.0, "h"))


class SeriesWindow:
    """The newest :data:`PLOT_WINDOW` points of each time series (bounded memory over a
    24-hour run)."""

    def __init__(self, window: int = PLOT_WINDOW) -> None:
        self.window = window
        self.series: dict[str, tuple[deque[float], deque[float], str]] = {}
        self.dirty = False  # points added since the plot was drawn

    def add(self, samples: list[dict[str, Any]]) -> None:
        self.dirty = self.dirty or bool(samples)
        for s in samples:
            entry = self.series.get(s["series"])
            if entry is None:
                entry = self.series[s["series"]] = (deque(maxlen=self.window), deque(maxlen=self.window), s["unit"])
            entry[0].append(s["t"])
            entry[1].append(s["value"])

    def clear(self) -> None:
        self.series.clear()
        self.dirty = True

    def units(self) -> list[str]:
        return list(dict.fromkeys(unit for _, _, unit in self.series.values()))


class WatchScreen(Screen):
    COMPONENT_CLASSES = STATUS_CLASSES
    BINDINGS = [
        Binding("enter", "pick", "Follow this run"),
        Binding("f", "follow_newest", "Follow newest"),
        Binding("d", "detail", "Detail"),
        Binding("u", "next_unit", "Plot unit"),
        Binding("escape", "back", "Back", show=False),
    ]

    def __init__(self, *, station: str | None = None, all_stations: bool | None = None,
                 poll_interval: float = POLL_INTERVAL) -> None:
        super().__init__()
        self._station = station
        self._all = all_stations
        self.poll_interval = poll_interval
        self.runs: list[dict[str, Any]] = []
        self.following: str | None = None
        self.pinned = False
        self.cursor: Any = None
        self.window = SeriesWindow()
        self.counts = {"measurements": 0, "FAIL": 0, "MARGINAL": 0}
        self.applied = 0  # polls applied (the throughput benchmark reads it)
        self.last_applied_at = 0.0
        self.newest_t: float | None = None  # wall time of the newest measurement shown
        self._generation = 0  # bumped when the operator picks a run: older polls are dropped
        self._polling = False  # a poll is on its way
        self._rows: deque[list[Any]] = deque(maxlen=MEASUREMENT_ROWS)  # the measurement table's rows
        self._runs_shown: tuple[Any, ...] = ()
        self._plotted_at = 0.0
        self._started_at: float | None = None  # the followed run's start (the plot's zero)
        self.plot_unit: str | None = None  # the unit whose series are plotted (u cycles)

    @property
    def station(self) -> str | None:
        """The station watched (None: every station)."""
        config = getattr(self.app, "config", None)
        every = self._all if self._all is not None else bool(getattr(config, "all_stations", False))
        if every:
            return None
        if self._station or getattr(config, "station", None):
            return self._station or config.station
        bench = getattr(self.app, "bench", None)
        return bench.fixture.station if bench is not None else None

    def compose(self) -> ComposeResult:
        yield fmt.PlainStatic("Watch", id="watch-head", classes="screen-title")
        with Horizontal(id="watch-main"):
            with Vertical(id="watch-left"):
                runs = fmt.TextTable(id="watch-runs", cursor_type="row")
                runs.add_columns("outcome", "station", "DUT", "plan", "started", "run")
                yield runs
            with Vertical(id="watch-right"):
                yield fmt.PlainStatic("waiting for a run…", id="watch-run")
                yield fmt.PlainStatic("", id="watch-step")
                with Horizontal(id="watch-progress-row"):
                    yield ProgressBar(total=1.0, show_eta=False, id="watch-progress")
                    yield fmt.PlainStatic("", id="watch-wait")
                yield PlotextPlot(id="watch-plot")
                ms = fmt.TextTable(id="watch-measurements", cursor_type="row")
                ms.add_columns("time", "step", "measurement", "value", "limits", "verdict")
                yield ms
        yield Footer(compact=True, show_command_palette=False)  # (every key fits 80 columns; ctrl+p: help)

    def on_mount(self) -> None:
        self.query_one("#watch-runs", DataTable).focus()
        self._draw_plot()
        self.poll()
        self.set_interval(self.poll_interval, self.poll)

    # -- polling (worker thread) ---------------------------------------------------------------

    def poll(self) -> None:
        """Start one poll of the store, unless one is still on its way (polls never overlap:
        each continues from the cursor where the one before stopped)."""
        if self._polling:
            return
        self._polling = True
        self._poll(self._generation, self.following, self.cursor)

    @work(thread=True, group="watch-poll")
    def _poll(self, generation: int, following: str | None, cursor: Any) -> None:
        from labctl.store import query

        try:
            store = self.app.store
            runs = query.list_runs(store, station=self.station, since=RECENT, limit=RUN_ROWS)
            running = [r for r in runs if r["outcome"] == "running"]
            current = following
            if not self.pinned and (following is None or (running and following not in {r["id"] for r in running})):
                following = (running or runs or [{"id": None}])[0]["id"]
            changes = None
            if following is not None:
                changes, cursor = query.follow(store, following, None if following != current else cursor,
                                               every_step=False, newest=MEASUREMENT_ROWS, newest_samples=PLOT_WINDOW)
        except Exception as err:  # noqa: BLE001 - a database that went away: say so, poll again
            to_screen(self, self._problem, fmt.problem(err))
            return
        to_screen(self, self._apply_poll, generation, runs, following, changes, cursor)

    def _apply_poll(self, generation: int, *args: Any) -> None:
        self._polling = False
        if generation == self._generation:  # else the operator picked another run meanwhile
            self.apply(*args)

    def _problem(self, text: str) -> None:
        self._polling = False
        self.query_one("#watch-run", Static).update(Text(text + " (retrying)", style=fmt.status_style(self, "status-fail")))

    # -- applying one poll (UI thread): one batch of updates ------------------------------------

    def apply(self, runs: list[dict[str, Any]], following: str | None, changes: dict[str, Any] | None,
              cursor: Any) -> None:
        if following != self.following:
            self._reset(following)
        self.cursor = cursor
        self._show_runs(runs)
        if changes is not None:
            self._show_run(changes)
            self._add_measurements(changes["measurements"], changes["measurement_counts"])
            if changes["samples"]:
                self.window.add(changes["samples"])
            ended = changes["run"]["outcome"] != "running"
            first = not self.query_one("#watch-plot", PlotextPlot).display  # the first series: shown at once
            if self.window.dirty and (ended or first or time.monotonic() - self._plotted_at >= PLOT_EVERY):
                self._draw_plot()
        self.applied += 1
        self.last_applied_at = time.monotonic()

    def _reset(self, following: str | None) -> None:
        self.following = following
        self.cursor = None
        self.window.clear()
        self.counts = {"measurements": 0, "FAIL": 0, "MARGINAL": 0}
        self.newest_t = None
        self._rows.clear()
        self.query_one("#watch-measurements", DataTable).clear()
        self._draw_plot()

    def _show_runs(self, runs: list[dict[str, Any]]) -> None:
        shown = (*((r["id"], r["outcome"]) for r in runs), self.following, self.pinned)
        if shown == self._runs_shown:
            return  # nothing changed: no rebuild
        self._runs_shown = shown
        self.runs = runs
        where = f"station {self.station}" if self.station else "every station"
        running = sum(1 for r in runs if r["outcome"] == "running")
        self.query_one("#watch-head", Static).update(
            f"Watch · {where} · {running} running · {self.app.store.display_url}"
            + ("" if not self.pinned else " · pinned (f: follow newest)"))
        table = self.query_one("#watch-runs", DataTable)
        cursor = table.cursor_row
        table.clear()
        table.add_rows([Text("▶ ", style="bold") + fmt.styled(r["outcome"], self) if r["id"] == self.following
                        else fmt.styled(r["outcome"], self), r["station"], r["dut_serial"] or "-", r["plan_name"],
                        fmt.clock(r["started_at"]), fmt.short_id(r["id"])] for r in runs)
        if runs:
            table.move_cursor(row=min(cursor, len(runs) - 1), scroll=False)

    def _show_run(self, changes: dict[str, Any]) -> None:
        run, counts, current = changes["run"], changes["step_counts"], changes["current_step"]
        self._started_at = run["started_at"]
        head = Text()
        head.append(f"{run['plan_name']} v{run['plan_version']}", style="bold")
        head.append(f"  DUT {run['dut_serial'] or '-'}  station {run['station']}  run {fmt.short_id(run['id'])}  ")
        head.append_text(fmt.styled(run["outcome"], self))
        ended = run.get("ended_at")
        took = (ended or time.time()) - run["started_at"]
        head.append(f"  {fmt.duration(took)}")
        if run["outcome"] != "running" and run.get("message"):
            head.append(f"\n{visible(run['message'])}", style=fmt.status_style(self, "status-dim"))
        self.query_one("#watch-run", Static).update(head)
        done = {o: counts.get(o, 0) for o in ("PASS", "FAIL", "ERROR")}
        line = Text()
        if current is not None and run["outcome"] == "running":
            line.append(f"▶ {fmt.step_name(current['step_key'])}", style="bold")
            if current["attempt"] > 1:
                line.append(f" (attempt {current['attempt']})")
            line.append("  ")
        line.append(f"steps {done['PASS']} passed, {done['FAIL']} failed, {done['ERROR']} error · "
                    f"{self.counts['measurements'] + sum(changes['measurement_counts'].values())} measurements")
        self.query_one("#watch-step", Static).update(line)
        progress, prompt = changes.get("progress"), changes.get("prompt")
        running = current is not None and run["outcome"] == "running"
        live = running and progress is not None and progress["step_key"] == current["step_key"]
        bar = self.query_one("#watch-progress", ProgressBar)
        wait = self.query_one("#watch-wait", Static)
        if running and prompt is not None and prompt["step_key"] == current["step_key"]:
            choices = f" [{' / '.join(prompt['choices'])}]" if prompt.get("choices") else ""
            bar.update(total=None)
            wait.update(fmt.plain(f"waiting for the operator at the bench: {prompt['text']}{choices}"))
            live = True
        elif live:
            bar.update(total=1.0 if progress["fraction"] is not None else None, progress=progress["fraction"] or 0.0)
            wait.update(fmt.plain(progress["text"]))
        else:
            bar.update(total=1.0, progress=1.0 if run["outcome"] != "running" else 0.0)
            wait.update("")
        self.set_class(live, "-waiting")

    def _add_measurements(self, ms: list[dict[str, Any]], counts: dict[str, int]) -> None:
        """The newest measurements since the poll before (at most a table's worth: the store
        counted them all, ``counts``, by verdict)."""
        if not ms:
            return
        self.counts["measurements"] += sum(counts.values())
        for verdict, n in counts.items():
            if verdict in self.counts:
                self.counts[verdict] += n
        self.newest_t = ms[-1]["t"]
        table = self.query_one("#watch-measurements", DataTable)
        shown = ms[-MEASUREMENT_ROWS:]  # rows that would scroll out at once are never built
        rows = [[fmt.clock(m["t"]), fmt.step_name(m["step_key"]), " ".join(filter(None, (m["name"], fmt.labels(m)))),
                 fmt.value(m), fmt.limits(m), fmt.styled(m["verdict"], self)] for m in shown]
        self._rows.extend(rows)
        if table.row_count + len(rows) > MEASUREMENT_ROWS:
            table.clear()  # one rebuild of the bounded window beats removing rows one by one
            table.add_rows(self._rows)
        else:
            table.add_rows(rows)
        # to the newest row once the table has its new size (rows added before a layout)
        table.call_after_refresh(table.move_cursor, row=table.row_count - 1, scroll=True)

    def _draw_plot(self) -> None:
        widget = self.query_one("#watch-plot", PlotextPlot)
        self._plotted_at, self.window.dirty = time.monotonic(), False
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        units = self.window.units()
        widget.display = bool(units)  # no empty box: until there is a series, the room is the table's
        if not units:
            return
        unit = self.plot_unit if self.plot_unit in units else units[0]
        start = self._started_at or min(ts[0] for ts, _, _ in self.window.series.values())
        shown = [(name, ts, vs) for name, (ts, vs, u) in self.window.series.items() if u == unit]
        span = max(ts[-1] for _, ts, _ in shown) - start
        per, label = next((per, label) for upto, per, label in TIME_AXIS if span < upto)
        for name, ts, vs in shown:  # at most PLOT_POINTS per series: a terminal plot has ~2 dots per column
            step = max(1, len(ts) // PLOT_POINTS)
            plt.plot([(t - start) / per for t in list(ts)[::step]], list(vs)[::step], label=name)
        plt.title(f"{unit or 'no unit'}" + (f"   (u: {len(units)} units)" if len(units) > 1 else ""))
        plt.xlabel(f"{label} since the run started")
        widget.refresh()

    # -- actions -------------------------------------------------------------------------------

    def action_pick(self) -> None:
        table = self.query_one("#watch-runs", DataTable)
        if self.runs and table.cursor_row < len(self.runs):
            self.pinned = True
            self._generation += 1
            self._reset(self.runs[table.cursor_row]["id"])
            self.poll()

    @on(DataTable.RowSelected, "#watch-runs")
    def _picked(self, event: DataTable.RowSelected) -> None:
        self.action_pick()

    def action_next_unit(self) -> None:
        units = self.window.units()
        if len(units) > 1:
            current = self.plot_unit if self.plot_unit in units else units[0]
            self.plot_unit = units[(units.index(current) + 1) % len(units)]
            self._draw_plot()

    def action_follow_newest(self) -> None:
        self.pinned = False
        self._generation += 1
        self.poll()

    def action_detail(self) -> None:
        from labctl.tui.detail import RunDetailScreen

        if self.following is not None:
            self.app.push_screen(RunDetailScreen(self.following))

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
