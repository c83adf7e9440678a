"""What an operator sees of a many-slot run: a line per step and slot, JSON events that
carry their slot, and one summary table with a row per slot."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any, TextIO

from labctl.engine import events as ev


class SlotJsonReporter:
    """``--json``: one JSON object per event, with ``"slot"``; lines never interleave."""

    def __init__(self, slot: str, lock: threading.Lock, stream: TextIO | None = None) -> None:
        self.slot = slot
        self.lock = lock
        self.stream = stream or sys.stdout

    def __call__(self, event: ev.Event) -> None:
        data = event.to_dict()
        data["slot"] = self.slot
        line = json.dumps(data, default=str) + "\n"
        with self.lock:
            self.stream.write(line)
            self.stream.flush()


class SlotConsoleReporter:
    """One line per step end (failures with their value and limit), prefixed with the slot."""

    def __init__(self, slot: str, console: Any, lock: threading.Lock, *, verbose: bool = False) -> None:
        self.slot = slot
        self.console = console
        self.lock = lock
        self.verbose = verbose
        self._steps: dict[str, ev.StepStarted] = {}

    def _print(self, text: str) -> None:
        with self.lock:
            self.console.print(f"[bold cyan]slot {self.slot:>3}[/] {text}")

    def __call__(self, event: ev.Event) -> None:
        from labctl.console import _OUTCOME_STYLE, _corner, _fmt

        if isinstance(event, ev.RunStarted):
            self._print(f"run {event.run_id}  DUT [cyan]{_fmt(event.dut_serial or '-')}[/]")
        elif isinstance(event, ev.StepStarted):
            self._steps[event.step_key] = event
        elif isinstance(event, ev.MeasurementRecorded) and (self.verbose or event.verdict is ev.Verdict.FAIL):
            labels = " ".join(f"{k}={v}" for k, v in event.labels.items())
            limits = f"  [dim]{_fmt(event.limits.text)}[/]" if event.limits and event.limits.text else ""
            self._print(f"    {_fmt(event.name)}{f' ({_fmt(labels)})' if labels else ''} = "
                        f"{_fmt(event.value)} {_fmt(event.unit)}{limits} {event.verdict.value}")
        elif isinstance(event, ev.StepEnded):
            started = self._steps.pop(event.step_key, None)
            if started is None or started.check == "safe_state" and event.outcome is ev.StepOutcome.PASS:
                return
            corner = _corner(started.corner)
            style = _OUTCOME_STYLE[event.outcome.value]
            detail = f"  [dim]{_fmt(event.message)}[/]" if event.message and event.outcome is not ev.StepOutcome.PASS else ""
            self._print(f"[{style}]{event.outcome.value:<7}[/] {_fmt(started.step_id)}"
                        f"{f' [dim]{corner}[/]' if corner else ''}{detail}")
        elif isinstance(event, ev.LogMessage) and event.level in ("warning", "error"):
            self._print(f"[{'yellow' if event.level == 'warning' else 'red'}]{event.level}: {_fmt(event.message)}[/]")
        elif isinstance(event, ev.RunEnded):
            style = _OUTCOME_STYLE.get(event.outcome.value, "bold")
            self._print(f"[{style}]run {event.outcome.value.upper()}[/]  {_fmt(event.message)}")


def slots_table(out: Any) -> Any:
    """One row per slot: DUT, outcome, steps passed/failed, run id, first problem."""
    from rich.table import Table

    from labctl.console import _OUTCOME_STYLE, _fmt

    table = Table(title=f"{len(out.slots)} slot(s) on station {out.station}: {out.outcome}")
    for col in ("slot", "DUT", "outcome", "passed", "failed", "run", "details"):
        table.add_column(col, overflow="fold" if col == "details" else None)
    for s in out.slots:
        outcome = s.outcome
        style = _OUTCOME_STYLE.get(outcome, "")
        steps = s.result.steps if s.result is not None else []
        passed = sum(1 for r in steps if r.outcome is ev.StepOutcome.PASS and r.check != "safe_state")
        failed = sum(1 for r in steps if r.outcome in (ev.StepOutcome.FAIL, ev.StepOutcome.ERROR))
        table.add_row(s.slot, _fmt(s.dut or "-"), f"[{style}]{outcome}[/]", str(passed), str(failed),
                      s.result.run_id if s.result is not None else "-", _fmt(s.message))
    return table
