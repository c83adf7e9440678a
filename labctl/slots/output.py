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


class _SlotConsole:
    """A console whose every line starts with the slot, printed whole under one lock."""

    is_terminal = False  # no live progress bars: several slots share the terminal

    def __init__(self, slot: str, console: Any, lock: threading.Lock) -> None:
        self.prefix = f"[bold cyan]slot {slot:>3}[/] "
        self.console = console
        self.lock = lock

    def print(self, text: str = "", *args: Any, **kwargs: Any) -> None:
        with self.lock:
            self.console.print(self.prefix + text, *args, **kwargs)


class SlotConsoleReporter:
    """The console reporter of one slot (compact: a line per step; ``verbose``: every
    measurement and throttled progress), each line prefixed with the slot."""

    def __init__(self, slot: str, console: Any, lock: threading.Lock, *, verbose: bool = False) -> None:
        from labctl.console import ConsoleReporter

        self.console = _SlotConsole(slot, console, lock)
        self.verbose = verbose
        self.reporter = ConsoleReporter(self.console, compact=not verbose, progress_every=10.0)

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.RunStarted) and not self.verbose:
            from labctl.console import _fmt

            self.console.print(f"run {event.run_id}  DUT [cyan]{_fmt(event.dut_serial or '-')}[/]")
        self.reporter(event)


def slots_table(out: Any) -> Any:
    """One row per slot: DUT, outcome, steps pass/fail/err (counted as ``labctl runs``
    counts them: the plan's steps, the safe state apart), run id, first problem."""
    from rich.table import Table

    from labctl.console import _OUTCOME_STYLE, _fmt

    table = Table(title=f"{len(out.slots)} slot(s) on station {out.station}: {out.outcome}")
    for col in ("slot", "DUT", "outcome", "steps pass/fail/err", "run", "details"):
        table.add_column(col, overflow="fold" if col == "details" else None)
    for s in out.slots:
        outcome = s.outcome
        style = _OUTCOME_STYLE.get(outcome, "")
        steps = [r for r in (s.result.steps if s.result is not None else []) if r.check != "safe_state"]
        counts = "/".join(str(sum(1 for r in steps if r.outcome is o))
                          for o in (ev.StepOutcome.PASS, ev.StepOutcome.FAIL, ev.StepOutcome.ERROR))
        table.add_row(s.slot, _fmt(s.dut or "-"), f"[{style}]{outcome}[/]", counts if s.result is not None else "-",
                      s.result.run_id if s.result is not None else "-", _fmt(s.message))
    return table
