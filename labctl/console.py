"""Headless output of a run: readable progress on a console, or one JSON event per line.

Both are event-bus subscribers; neither calls back into the engine.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from typing import Any, TextIO

from labctl.engine import events as ev

_OUTCOME_STYLE = {
    "PASS": "green", "FAIL": "bold red", "ERROR": "bold magenta", "SKIPPED": "dim", "ABORTED": "bold yellow",
    "passed": "bold green", "failed": "bold red", "error": "bold magenta", "aborted": "bold yellow",
}
_VERDICT_STYLE = {"PASS": "green", "MARGINAL": "yellow", "FAIL": "bold red", "NONE": "dim"}


PIPED_WIDTH = 10_000  # "no wrapping": wider than any line labctl prints


def make_console(**kwargs: Any) -> Any:
    """The rich console of a command's output. On a terminal: the terminal's width. Piped (a
    file, a CI log, grep, a script): nothing is wrapped — a line is as long as it is, and a
    table has its natural width, so values are never cut at 80 columns."""
    console_class = _console_class()
    console = console_class(highlight=False, **kwargs)
    if console.is_terminal:
        return console
    return console_class(highlight=False, soft_wrap=True, width=PIPED_WIDTH, **kwargs)


@functools.cache
def _console_class() -> Any:
    """rich's Console (imported when the first console is made), quiet on a broken pipe."""
    from rich.console import Console

    class QuietOnBrokenPipe(Console):
        """A console whose reader went away (``labctl run … | head``) falls silent: rich would
        raise ``SystemExit`` from whatever printed, in the middle of a step, and the run
        would end as if its remaining steps did not exist. The run goes on to its end (as
        with output to a file); its record, not its output, is what counts."""

        def on_broken_pipe(self) -> None:
            self.quiet = True
            stdout_to_devnull()  # later writes to the closed pipe by anything else fail quietly too

    return QuietOnBrokenPipe


def stdout_to_devnull() -> None:
    """Point standard output at /dev/null: its reader went away (``… | head``); whatever is
    still written or buffered goes nowhere, quietly, and the command ends as it would have."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, sys.stdout.fileno())
        finally:
            os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


#: control characters (all but tab and newline) shown as ``\\x1b``-style escapes, never sent to the
#: terminal: a DUT console's coloured reply or a noisy serial line must not clear or retitle it
_VISIBLE_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))}


def visible(text: str) -> str:
    """``text`` with its control characters (all but tab and newline) as ``\\x1b``-style escapes:
    what an instrument or a DUT sent is shown, never run by the terminal (console and TUI)."""
    return text.translate(_VISIBLE_CONTROLS)


def format_value(value: Any) -> str:
    """A measured value as people read it: floats to 6 significant digits (``3.07``, not
    ``3.0700000000000003``), integers whole, anything else as text (control characters shown,
    :func:`visible`)."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return visible(str(value))


def _fmt(value: Any) -> str:
    """A value for rich markup: floats to 6 digits, brackets escaped, control characters shown."""
    text = format_value(value)
    if "[" not in text and not text.endswith("\\"):  # what rich's escape leaves as it is
        return text
    from rich.markup import escape

    return escape(text)


def _corner(corner: dict[str, Any]) -> str:
    """``[ambient=25 degC]`` as literal text inside rich markup."""
    from rich.markup import escape

    return escape(f"[{', '.join(f'{k}={v}' for k, v in corner.items())}]") if corner else ""


class LineBudget:
    """How many lines a console may print now: ``rate`` lines a second, ``burst`` at once (a
    token bucket). A long plan of fast steps never scrolls faster than a person can read."""

    def __init__(self, rate: float = 10.0, burst: float = 40.0, clock: Any = time.monotonic) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self.tokens = burst
        self._t = clock()

    def available(self, now: float | None = None) -> float:
        if now is None:
            now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self._t) * self.rate)
        self._t = now
        return self.tokens

    def spend(self, lines: int) -> None:
        self.tokens -= lines


_QUIET = (ev.StepOutcome.PASS, ev.StepOutcome.SKIPPED)


_LOUD_VERDICTS = frozenset((ev.Verdict.FAIL, ev.Verdict.MARGINAL))


def _noteworthy(event: ev.Event) -> bool:
    """What always prints, even when the step passes and lines are scarce."""
    cls = event.__class__  # (events are never subclassed; this runs for every measurement)
    if cls is ev.MeasurementRecorded:
        return event.verdict in _LOUD_VERDICTS  # type: ignore[attr-defined]
    if cls is ev.LogMessage:
        return event.level in ("warning", "error")  # type: ignore[attr-defined]
    return cls is ev.InstrumentErrorReported


class _Held:
    """A step whose lines are held back until its end: shown if it fails or the budget allows,
    otherwise counted in the next "… N step(s) passed" line."""

    __slots__ = ("started", "events", "t0", "noteworthy")

    def __init__(self, started: ev.StepStarted, t0: float) -> None:
        self.started, self.events, self.t0 = started, [started], t0
        self.noteworthy = False  # one of the events always prints

    def add(self, event: ev.Event) -> None:
        self.events.append(event)
        if not self.noteworthy and _noteworthy(event):
            self.noteworthy = True


class ConsoleReporter:
    """Prints steps, measurements and (throttled) progress of long waits with rich.

    Output is paced by a :class:`LineBudget` (``lines_per_second``): while lines are left, every
    step prints as it runs; past it, a passing step's lines are folded into one line
    ``… 120 step(s) passed (v10 … v129)`` printed at most once a second. Failures, errors,
    aborts, warnings, instrument errors and the run's end always print, in order; a step that
    runs longer than ``hold_up_to`` seconds shows its header live.
    """

    def __init__(self, console: Any = None, *, progress_every: float = 2.0, quiet_measurements: bool = False,
                 compact: bool = False, lines_per_second: float = 10.0, burst: float = 40.0,
                 hold_up_to: float = 1.0, clock: Any = time.monotonic) -> None:
        self.console = console or make_console()
        self.progress_every = progress_every
        self.quiet_measurements = quiet_measurements or compact
        self.compact = compact  # one line per step, failing measurements only
        self.budget = LineBudget(lines_per_second, burst, clock)
        self.hold_up_to = hold_up_to
        self.clock = clock
        self._last_progress: dict[str, float] = {}
        self._steps: dict[str, ev.StepStarted] = {}
        self._held: dict[str, _Held] = {}
        self._unshown: dict[str, int] = {}  # measurements of a live step not printed (no lines left)
        self._folded: list[str] = []  # ids of passing (or skipped) steps not printed yet
        self._folded_skipped = 0  # how many of them were skipped
        self._folded_at = clock()
        self._bar: Any = None  # (rich Progress, task id) while a long wait reports progress
        self.live_bars = bool(getattr(self.console, "is_terminal", False))

    def __call__(self, event: ev.Event) -> None:
        if self.compact:
            self._compact(event)
            return
        key = getattr(event, "step_key", None)
        held = self._held.get(key) if key is not None else None
        if event.__class__ is ev.MeasurementRecorded and held is None and not _noteworthy(event) \
                and (self.quiet_measurements or self.budget.available() < 1):
            if not self.quiet_measurements:  # counted on the step's last line
                self._unshown[key] = self._unshown.get(key, 0) + 1
            return
        if isinstance(event, ev.StepStarted):
            if event.check != "safe_state":
                now = self.clock()
                if self.budget.available(now) < 3:
                    self._held[event.step_key] = _Held(event, now)
                    return
        elif held is not None:
            if isinstance(event, ev.StepEnded):
                del self._held[key]
                if self.budget.available() < 3:  # no lines left for the step in full
                    if event.outcome in _QUIET and not held.noteworthy:
                        self._fold(held.started.step_id, event.outcome is ev.StepOutcome.SKIPPED)
                    else:
                        self._brief(held, event)
                    return
                self._release(held)
            elif self.clock() - held.t0 >= self.hold_up_to:  # a long step: show it live from now on
                del self._held[key]
                self._release(held)
            else:
                held.add(event)
                return
        self._show(event)

    def _fold(self, step_id: str, skipped: bool = False) -> None:
        self._folded.append(step_id)
        self._folded_skipped += skipped
        if self.clock() - self._folded_at >= 1.0:
            self._print_folded()

    def _print_folded(self) -> None:
        if self._folded:
            ids, skipped = self._folded, self._folded_skipped
            span = ids[0] if len(ids) == 1 else f"{ids[0]} … {ids[-1]}"
            counts = ", ".join(x for x in (f"{len(ids) - skipped} step(s) passed" if len(ids) > skipped else "",
                                           f"{skipped} skipped" if skipped else "") if x)
            self.console.print(f"  [dim]… {counts} ({_fmt(span)})[/]")
            self.budget.spend(1)
            self._folded, self._folded_skipped = [], 0
        self._folded_at = self.clock()

    def _release(self, held: _Held) -> None:
        for e in held.events:
            self._show(e)

    def _brief(self, held: _Held, ended: ev.StepEnded) -> None:
        """A step that did not pass (or passed with something to say) when no lines are left:
        its warnings and instrument errors, then one line with its id, corner, attempt and
        outcome message (which names the first failing value and its limit). Failures always
        print; a run where every step fails prints a line per attempt, not four."""
        if self._folded:
            self._print_folded()
        for e in held.events:
            if e.__class__ is not ev.MeasurementRecorded and _noteworthy(e):
                self._show(e)
        started = held.started
        corner = _corner(started.corner)
        attempt = f" (attempt {started.attempt})" if started.attempt > 1 else ""
        style = _OUTCOME_STYLE[ended.outcome.value]
        msg = f"  {_fmt(ended.message)}" if ended.message else ""
        self.console.print(f"  [{style}]{ended.outcome.value}[/] [bold]{_fmt(started.step_id)}[/]"
                           f"{f' [dim]{corner}[/]' if corner else ''}{attempt}{msg}")
        self.budget.spend(1)

    def _show(self, event: ev.Event) -> None:
        if self._folded:
            self._print_folded()
        c = self.console
        printed = 1
        if isinstance(event, ev.RunStarted):
            c.print(f"[bold]run {event.run_id}[/]  plan [cyan]{_fmt(event.plan_name)}[/] v{_fmt(event.plan_version)}  "
                    f"station [cyan]{_fmt(event.station)}[/]  DUT [cyan]{_fmt(event.dut_serial or '-')}[/]")
        elif isinstance(event, ev.StepStarted):
            if event.check == "safe_state":
                return
            corner = _corner(event.corner)
            attempt = f" (attempt {event.attempt})" if event.attempt > 1 else ""
            c.print(f"▶ [bold]{_fmt(event.step_id)}[/] [dim]{_fmt(event.check)}{f'  {corner}' if corner else ''}{attempt}[/]")
        elif isinstance(event, ev.MeasurementRecorded):
            if self.quiet_measurements and event.verdict not in (ev.Verdict.FAIL, ev.Verdict.MARGINAL):
                return
            if not _noteworthy(event) and self.budget.available() < 1:
                self._unshown[event.step_key] = self._unshown.get(event.step_key, 0) + 1
                return
            labels = " ".join(f"{k}={v}" for k, v in event.labels.items())
            limits = f"  [dim]{_fmt(event.limits.text)}[/]" if event.limits and event.limits.text else ""
            style = _VERDICT_STYLE[event.verdict.value]
            verdict = f"  [{style}]{event.verdict.value}[/]" if event.verdict is not ev.Verdict.NONE else ""
            c.print(f"    {_fmt(event.name)}{f' ({_fmt(labels)})' if labels else ''} = {_fmt(event.value)} {_fmt(event.unit)}{limits}{verdict}")
        elif isinstance(event, ev.Progress):
            printed = 0
            if self.live_bars:
                self._show_bar(event)
                return
            now = time.monotonic()
            if now - self._last_progress.get(event.step_key, 0.0) >= self.progress_every:
                self._last_progress[event.step_key] = now
                pct = f" {event.fraction * 100:3.0f}%" if event.fraction is not None else ""
                c.print(f"    [dim]…{pct} {_fmt(event.text)}[/]")
                printed = 1
        elif isinstance(event, ev.StepEnded):
            self._hide_bar()
            self._last_progress.pop(event.step_key, None)
            if event.step_key.startswith("teardown/safe-state."):
                role = event.step_key.split("safe-state.", 1)[1].split("#")[0]
                style = "dim" if event.outcome is ev.StepOutcome.PASS else "bold red"
                c.print(f"  [{style}]safe state {role}: {_fmt(event.message or event.outcome.value)}[/]")
                return
            style = _OUTCOME_STYLE[event.outcome.value]
            msg = f"  {_fmt(event.message)}" if event.message else ""
            unshown = self._unshown.pop(event.step_key, 0)
            more = f"  [dim]({unshown} more measurement(s) within limits not shown)[/]" if unshown else ""
            c.print(f"  [{style}]{event.outcome.value}[/]{msg}{more}")
        elif isinstance(event, ev.LogMessage):
            if event.level not in ("warning", "error"):
                return
            c.print(f"  [{'yellow' if event.level == 'warning' else 'red'}]{event.level}: {_fmt(event.message)}[/]")
        elif isinstance(event, ev.InstrumentErrorReported):
            c.print(f"  [magenta]instrument error {event.role}: {event.code:+d},\"{_fmt(event.message)}\"[/]")
        elif isinstance(event, ev.RunEnded):
            self._hide_bar()
            style = _OUTCOME_STYLE.get(event.outcome.value, "bold")
            c.print(f"[{style}]run {event.outcome.value.upper()}[/]  {_fmt(event.message)}")
        else:
            printed = 0
        self.budget.spend(printed)

    def _show_bar(self, event: ev.Progress) -> None:
        """A live progress bar on a terminal: what the step waits for, how far, how long."""
        from rich.progress import (
            BarColumn,
            Progress,
            SpinnerColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        if self._bar is None:
            bar = Progress(SpinnerColumn(), TextColumn("    {task.description}"), BarColumn(),
                           TaskProgressColumn(), TimeElapsedColumn(), console=self.console, transient=True)
            bar.start()
            self._bar = (bar, bar.add_task(event.text, total=1.0 if event.fraction is not None else None))
        bar, task = self._bar
        bar.update(task, description=event.text, completed=event.fraction or 0.0,
                   total=1.0 if event.fraction is not None else None)

    def _hide_bar(self) -> None:
        if self._bar is not None:
            self._bar[0].stop()
            self._bar = None

    def _compact(self, event: ev.Event) -> None:
        c = self.console
        if isinstance(event, ev.StepStarted):
            self._steps[event.step_key] = event
        elif isinstance(event, ev.MeasurementRecorded) and event.verdict is ev.Verdict.FAIL:
            labels = " ".join(f"{k}={v}" for k, v in event.labels.items())
            limits = f"  [dim]{_fmt(event.limits.text)}[/]" if event.limits and event.limits.text else ""
            c.print(f"      [red]{_fmt(event.name)}{f' ({_fmt(labels)})' if labels else ''} = {_fmt(event.value)} {_fmt(event.unit)}[/]{limits}")
        elif isinstance(event, ev.StepEnded):
            started = self._steps.pop(event.step_key, None)
            if started is None or started.check == "safe_state" and event.outcome is ev.StepOutcome.PASS:
                return
            corner = _corner(started.corner)
            style = _OUTCOME_STYLE[event.outcome.value]
            detail = f"  [dim]{_fmt(event.message)}[/]" if event.message and event.outcome is not ev.StepOutcome.PASS else ""
            c.print(f"  [{style}]{event.outcome.value:<7}[/] {_fmt(started.step_id)}"
                    f"{f' [dim]{corner}[/]' if corner else ''}{detail}")
        elif isinstance(event, ev.RunEnded):
            style = _OUTCOME_STYLE.get(event.outcome.value, "bold")
            c.print(f"  [{style}]run {event.outcome.value.upper()}[/]  {_fmt(event.message)}")


class JsonLinesReporter:
    """One JSON object per event on ``stream`` (default stdout), flushed at once.

    A ``StepEnded`` line is printed only once the step is committed: a run streaming JSON
    commits every step at its end (``commit_before_output``; no group commit)."""

    commit_before_output = True

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout

    def __call__(self, event: ev.Event) -> None:
        self.stream.write(json.dumps(event.to_dict(), default=str) + "\n")
        self.stream.flush()


def summary_table(result: Any, title: str = "", max_rows: int = 60) -> Any:
    """A rich table of a run's steps: outcome, attempts, and the message (value vs limit).

    Past ``max_rows`` steps only those that did not pass are listed, at most ``max_rows`` of
    them (the first), with closing rows counting the others by outcome (``labctl runs show``
    lists them all)."""
    from rich.table import Table

    table = Table(title=title or f"run {result.run_id}: {result.outcome.value}", show_lines=False)
    table.add_column("step")
    table.add_column("corner", style="dim")
    table.add_column("outcome")
    table.add_column("details", overflow="fold")
    shown = [s for s in result.steps if not (s.check == "safe_state" and s.outcome is ev.StepOutcome.PASS)]
    folded = 0
    beyond: dict[str, int] = {}  # outcome -> steps that did not pass and are not listed
    if len(shown) > max_rows:
        kept = [s for s in shown if s.outcome is not ev.StepOutcome.PASS]
        folded = len(shown) - len(kept)
        shown = kept[:max_rows]
        for s in kept[max_rows:]:
            beyond[s.outcome.value] = beyond.get(s.outcome.value, 0) + 1
    for s in shown:
        corner = ", ".join(f"{k}={v}" for k, v in s.corner.items())
        style = _OUTCOME_STYLE.get(s.outcome.value, "")
        attempts = f" ×{s.attempts}" if s.attempts > 1 else ""
        table.add_row(_fmt(s.step_id), _fmt(corner), f"[{style}]{s.outcome.value}[/]{attempts}", _fmt(s.message))
    for outcome, count in beyond.items():
        table.add_row(f"… {count} more", "", f"[{_OUTCOME_STYLE.get(outcome, '')}]{outcome}[/]",
                      "listed by labctl runs show")
    if folded:
        table.add_row(f"… {folded} more", "", f"[{_OUTCOME_STYLE['PASS']}]PASS[/]", "listed by labctl runs show")
    return table
