"""The safe-state watchdog: safety that does not depend on the thread running the plan.

Normally an abort (signal, interlock, operator) reaches the running step within one poll and
the runner itself drives teardown and the safe state. But that thread can be blocked — in a
database call, in an instrument that stopped answering, anywhere. The watchdog listens for
the abort request and, if the runner has not reached its teardown within ``grace`` seconds,
or has published nothing for ``stall`` seconds while aborting, drives every role's safe state
from its own thread (transports are thread-safe: one exchange at a time per instrument). The
runner still runs its own teardown and safe state when it gets free (they are idempotent) and
records what the watchdog did.

Times are wall-clock seconds: a blocked thread is a real-time matter whatever the time scale.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from labctl.engine.abort import AbortController, AbortReason

DEFAULT_GRACE = 2.0
DEFAULT_STALL = 5.0


def _stderr(text: str) -> None:
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


class SafeStateWatchdog:
    def __init__(self, safe_state: Callable[[], dict[str, Any]], abort: AbortController, *,
                 grace: float = DEFAULT_GRACE, stall: float = DEFAULT_STALL,
                 say: Callable[[str], None] = _stderr) -> None:
        self._safe_state = safe_state
        self.abort = abort
        self.grace = grace
        self.stall = stall
        self.say = say
        self.results: dict[str, Any] | None = None  # what the watchdog's own safe state did
        self.fired_at: float | None = None  # wall time (epoch) it fired
        self.why: str = ""
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._teardown = threading.Event()
        self._last_activity = time.monotonic()
        self._aborted_at: float | None = None
        self._thread: threading.Thread | None = None
        self._remove: Callable[[], None] | None = None

    # -- what the runner tells it ------------------------------------------------------------
    def activity(self, _event: object = None) -> None:
        """Something happened in the run (subscribe it first on the bus)."""
        self._last_activity = time.monotonic()

    def teardown_started(self) -> None:
        self._teardown.set()

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="labctl-safe-state-watchdog", daemon=True)
        self._thread.start()
        self._remove = self.abort.on_request(self._on_abort)

    def stop(self) -> None:
        """The runner's own safe state is done (or the run ended): stand down."""
        if self._remove is not None:
            self._remove()
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=60)

    def _on_abort(self, _reason: AbortReason) -> None:  # may run inside a signal handler
        self._aborted_at = time.monotonic()
        self._wake.set()

    def _loop(self) -> None:
        self._wake.wait()
        while not self._stop.is_set():
            now = time.monotonic()
            since_abort = now - (self._aborted_at or now)
            # silent *while aborting*: a run quiet before the abort (a slot waiting at a shared
            # soak's barrier, a long hold) is not blocked until it stays quiet after it
            idle = now - max(self._last_activity, self._aborted_at or now)
            if not self._teardown.is_set() and since_abort >= self.grace:
                self._fire(f"the run did not reach its teardown within {self.grace:g} s of the abort")
                return
            if idle >= self.stall:
                self._fire(f"the run has been blocked for {idle:.1f} s while aborting")
                return
            self._stop.wait(0.05)

    def _fire(self, why: str) -> None:
        self.why = why
        self.fired_at = time.time()
        reason = self.abort.reason.message if self.abort.reason else "abort"
        self.say(f"safe-state watchdog: {why} ({reason}); driving every instrument's safe state now")
        try:
            self.results = self._safe_state()
        except Exception as exc:  # noqa: BLE001
            self.say(f"safe-state watchdog: the safe state could not run: {exc}")
            self.results = {}
            return
        for role, res in self.results.items():
            label, message = res.verdict()
            self.say(f"safe-state watchdog: {role} {label}: {message}")
