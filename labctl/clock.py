"""One clock for everything that waits: the engine, the checks and the simulated lab.

``ScaledClock(60)`` runs simulated time 60 times faster than the wall: ``sleep(60)`` returns
after one wall second, and ``monotonic()`` has advanced by 60. Two processes that each make
``ScaledClock(scale)`` agree closely, because both scale from the wall clock.

Two kinds of "now": ``monotonic()``/``time()`` are the clock's own (simulated) time, what waits,
timeouts and the simulated lab's physics run on; ``wall_time()`` is the wall clock's epoch
seconds whatever the scale, what every record a person reads carries (events, the store, the
instrument I/O log).
"""

from __future__ import annotations

import threading
import time as _time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """What every time-dependent part of labctl is handed."""

    scale: float

    def monotonic(self) -> float:
        """Simulated seconds since an arbitrary origin (never goes backwards)."""
        ...

    def time(self) -> float:
        """Epoch seconds (simulated time elapsed since start added to the start's epoch)."""
        ...

    def wall_time(self) -> float:
        """Wall-clock epoch seconds, whatever the scale: the time of every record."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of simulated time."""
        ...


class RealClock:
    """Wall time, scale 1."""

    scale: float = 1.0

    def monotonic(self) -> float:
        return _time.monotonic()

    def time(self) -> float:
        return _time.time()

    def wall_time(self) -> float:
        return _time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            _time.sleep(seconds)

    def wait(self, event: threading.Event, seconds: float) -> bool:
        """Wait on ``event`` for at most ``seconds`` simulated seconds."""
        return event.wait(max(0.0, seconds))

    def __repr__(self) -> str:
        return "RealClock()"


class ScaledClock:
    """Simulated time running ``scale`` times faster than the wall clock."""

    def __init__(self, scale: float = 1.0) -> None:
        if not scale > 0:
            raise ValueError(f"clock scale must be > 0, got {scale!r}")
        self.scale = float(scale)
        self._wall0 = _time.monotonic()
        self._epoch0 = _time.time()

    def monotonic(self) -> float:
        return (_time.monotonic() - self._wall0) * self.scale

    def time(self) -> float:
        return self._epoch0 + self.monotonic()

    def wall_time(self) -> float:
        return _time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            _time.sleep(seconds / self.scale)

    def wait(self, event: threading.Event, seconds: float) -> bool:
        """Wait on ``event`` for at most ``seconds`` simulated seconds."""
        return event.wait(max(0.0, seconds) / self.scale)

    def wall(self, seconds: float) -> float:
        """Wall seconds that ``seconds`` of simulated time take."""
        return seconds / self.scale

    def __repr__(self) -> str:
        return f"ScaledClock({self.scale:g})"


class ManualClock:
    """A clock that only moves when told to (unit tests of time-dependent models)."""

    def __init__(self, start: float = 0.0, scale: float = 1.0) -> None:
        self.scale = scale
        self._now = float(start)
        self._lock = threading.Lock()

    def monotonic(self) -> float:
        return self._now

    def time(self) -> float:
        return 1_700_000_000.0 + self._now

    def wall_time(self) -> float:
        """The manual time as an epoch (unit tests want records that do not depend on the wall)."""
        return self.time()

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += max(0.0, seconds)

    def wait(self, event: threading.Event, seconds: float) -> bool:
        if event.is_set():
            return True
        self.advance(seconds)
        return event.is_set()

    def __repr__(self) -> str:
        return f"ManualClock(now={self._now:g})"
