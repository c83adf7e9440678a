"""Abort requests: from the operator (Ctrl-C, the TUI's abort), SIGTERM, or a safety monitor.

An :class:`AbortController` holds the first reason given; everything that waits in a run
(``StepContext.sleep``, polling loops) checks it, so an abort reaches even a step blocked in
a long wait within one poll. Signal handlers only *request* an abort: the runner then takes
the abort path, whose teardown and safe-state actions always run. A second Ctrl-C is
acknowledged but cannot skip them.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class AbortReason:
    source: str  # operator | signal | safety | engine
    message: str


class RunAborted(Exception):
    """Raised inside a step when an abort was requested; carries the reason."""

    def __init__(self, reason: AbortReason) -> None:
        self.reason = reason
        super().__init__(reason.message)


class AbortController:
    def __init__(self) -> None:
        self._event = threading.Event()
        self._reason: AbortReason | None = None
        self._lock = threading.Lock()
        self.signals_seen = 0

    @property
    def event(self) -> threading.Event:
        return self._event

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> AbortReason | None:
        return self._reason

    def request(self, source: str, message: str) -> bool:
        """Ask for an abort; the first reason wins. Returns True if this call set it."""
        with self._lock:
            if self._reason is not None:
                return False
            self._reason = AbortReason(source, message)
            self._event.set()
            return True

    def raise_if_requested(self) -> None:
        if self._reason is not None:
            raise RunAborted(self._reason)


@contextmanager
def abort_on_signals(
    controller: AbortController, notify: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Turn SIGINT and SIGTERM into abort requests while the block runs (main thread only).

    The first signal requests the abort; later ones only say that teardown is running.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def say(text: str) -> None:
        if notify is not None:
            notify(text)
        else:
            print(text, file=sys.stderr, flush=True)

    def handler(signum: int, _frame: object) -> None:
        controller.signals_seen += 1
        name = signal.Signals(signum).name
        if controller.request("signal", f"{name} received: aborting to the safe state"):
            say(f"{name}: aborting; teardown and safe-state actions will run")
        else:
            say(f"{name} again: already aborting; safe-state actions still run, please wait")

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
