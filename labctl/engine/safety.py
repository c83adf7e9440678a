"""Safety interlocks watched beside the running step.

A :class:`SafetyMonitor` thread polls every interlock at a set interval (simulated time, via
the run's clock). A reading outside its bounds, a read that fails, or a sensor whose last
good reading is older than ``stale_after`` trips the interlock: the monitor requests an abort
at once, which reaches a step even while it is blocked in a long wait.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from labctl.clock import Clock
from labctl.engine.abort import AbortController

MIN_WALL_INTERVAL = 0.05  # seconds of wall time between two polls, whatever the time scale


@dataclass(frozen=True)
class Interlock:
    """One watched signal: ``read()`` returns the value in ``unit`` (base unit of the limit)."""

    name: str  # as the plan wrote it, e.g. dut.die_temp
    read: Callable[[], float]
    low: float | None = None
    high: float | None = None
    unit: str = ""
    stale_after: float | None = 3.0  # seconds (simulated) without a good reading

    def violation(self, value: float) -> str | None:
        if self.high is not None and value > self.high:
            return f"{self.name} = {value:.4g} {self.unit} is above its limit {self.high:g} {self.unit}"
        if self.low is not None and value < self.low:
            return f"{self.name} = {value:.4g} {self.unit} is below its limit {self.low:g} {self.unit}"
        return None


@dataclass
class Trip:
    interlock: str
    message: str
    value: float | None = None


class SafetyMonitor:
    def __init__(
        self,
        interlocks: list[Interlock],
        abort: AbortController,
        clock: Clock,
        *,
        interval: float = 0.5,
        on_reading: Callable[[Interlock, float], None] | None = None,
        min_wall_interval: float = MIN_WALL_INTERVAL,
    ) -> None:
        self.interlocks = list(interlocks)
        self.abort = abort
        self.clock = clock
        self.interval = interval
        self.on_reading = on_reading
        self.min_wall_interval = min_wall_interval
        self.trip: Trip | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_good: dict[str, float] = {}

    def check_once(self) -> Trip | None:
        """Read every interlock once; the first problem is returned (and remembered)."""
        now = self.clock.monotonic()
        for lock in self.interlocks:
            try:
                value = float(lock.read())
            except Exception as exc:  # noqa: BLE001 - any failed read counts as tripped
                last = self._last_good.get(lock.name)
                if lock.stale_after is None or last is None or now - last > lock.stale_after:
                    return self._tripped(lock, f"{lock.name} could not be read ({exc}); treated as tripped")
                continue
            if value != value:  # NaN
                return self._tripped(lock, f"{lock.name} read NaN; treated as tripped")
            self._last_good[lock.name] = now
            if self.on_reading is not None:
                self.on_reading(lock, value)
            problem = lock.violation(value)
            if problem:
                return self._tripped(lock, problem, value)
        return None

    def _tripped(self, lock: Interlock, message: str, value: float | None = None) -> Trip:
        if self.trip is None:
            self.trip = Trip(lock.name, message, value)
            self.abort.request("safety", f"safety interlock tripped: {message}")
        return self.trip

    def start(self) -> None:
        if not self.interlocks or self._thread is not None:
            return
        now = self.clock.monotonic()
        for lock in self.interlocks:
            self._last_good.setdefault(lock.name, now)
        self._thread = threading.Thread(target=self._loop, name="labctl-safety", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        # At a high time scale a 1 s poll would be a few wall milliseconds: keep at least
        # MIN_WALL_INTERVAL of wall time between polls so the monitor never hogs an instrument.
        interval = max(self.interval, self.min_wall_interval * getattr(self.clock, "scale", 1.0))
        while not self._stop.is_set():
            if self.check_once() is not None:
                return
            self.clock.wait(self._stop, interval)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
