"""Steps on the shared environment run as a batch barrier.

Every live slot reaches the step; the last one to arrive leads: it runs the step once (the
chamber moves once); then every slot records the step's result as its own. A slot that
ends its steps (failed with ``on_fail: stop``, errored, aborted, or simply done) leaves the
barrier and never holds the others. When a leader's own run is aborted in the middle of the
step, another waiting slot takes the lead and runs it again.

On resume, a slot may *replay* a shared step (it finished before the kill, and it
establishes the bench's state) while another runs it anew (it was cut off there): both need
the chamber at the same place, so they meet at the same gate, and a slot that runs it anew
leads (``rank``), so that its measurements are real ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from labctl.engine.abort import AbortController, RunAborted

POLL_S = 0.05


class AbortedWaiting(RunAborted):
    """A slot's abort while it waited at a shared step. ``under_way``: another slot was running
    the step then (this slot's board was in it, cut short: an attempt); otherwise the step had
    not begun for anyone (not run: no attempt)."""

    def __init__(self, reason, *, under_way: bool) -> None:  # noqa: ANN001 - an AbortReason
        super().__init__(reason)
        self.under_way = under_way


@dataclass
class _Gate:
    arrived: dict[str, int] = field(default_factory=dict)  # slot -> its rank (the highest leads)
    leader: str | None = None
    result: Any = None
    done: bool = False


class SharedStepBarrier:
    def __init__(self, slots: list[str]) -> None:
        self._cond = threading.Condition()
        self.live: set[str] = set(slots)
        self._gates: dict[str, _Gate] = {}
        self.runs: dict[str, int] = {}  # step key -> how many times the step was actually run

    def leave(self, slot: str) -> None:
        """The slot runs no more steps: nobody waits for it any longer."""
        with self._cond:
            self.live.discard(slot)
            self._cond.notify_all()

    def _first(self, gate: _Gate) -> str:
        """The slot that leads a gate: the highest rank, then the first to have arrived."""
        ranked = [(rank, -i, s) for i, (s, rank) in enumerate(gate.arrived.items())]
        return max(ranked)[2]

    def run(self, key: str, slot: str, action: Callable[[], Any], abort: AbortController,
            *, keep: Callable[[Any], bool], rank: int = 0) -> tuple[Any, str]:
        """Run ``action`` once for every live slot: returns (its result, the leader's slot).
        ``keep(result)`` says whether the result stands for everyone (False: the leader was
        aborted on its own, another slot leads again). Once every live slot has arrived, the
        one of the highest ``rank`` leads."""
        with self._cond:
            gate = self._gates.setdefault(key, _Gate())
            gate.arrived[slot] = rank
            self._cond.notify_all()
            while True:
                if gate.done:
                    return gate.result, gate.leader or slot
                if abort.requested and abort.reason is not None:
                    gate.arrived.pop(slot, None)
                    self._cond.notify_all()
                    raise AbortedWaiting(abort.reason, under_way=gate.leader is not None)
                if gate.leader is None and self.live <= gate.arrived.keys() and slot == self._first(gate):
                    gate.leader = slot
                    break
                self._cond.wait(POLL_S)
        result: Any = None
        kept = False
        try:
            result = action()
            kept = keep(result)
        finally:
            with self._cond:
                self.runs[key] = self.runs.get(key, 0) + 1
                if kept:
                    gate.result, gate.done = result, True
                else:
                    gate.leader = None
                    gate.arrived.pop(slot, None)
                self._cond.notify_all()
        return result, slot
