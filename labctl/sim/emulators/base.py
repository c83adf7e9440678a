"""Shared helpers of the bench-backed emulators."""

from __future__ import annotations

import math
import threading
from typing import Any

from labctl.clock import RealClock, ScaledClock
from labctl.sim.physics.bench import Bench
from labctl.sim.scpi import ScpiInstrument


class BenchInstrument(ScpiInstrument):
    """A SCPI emulator wired to the shared :class:`Bench`."""

    bench: Bench

    def __init__(self, *, bench: Bench, serial: str | None = None, role: str = "",
                 options: dict[str, Any] | None = None, wiring: dict[str, str] | None = None) -> None:
        self.options_cfg = dict(options or {})
        self.wiring = dict(wiring or {})
        super().__init__(serial=serial, bench=bench, role=role)

    def sync(self, max_age: float = 0.0) -> Bench:
        """Bring the physics up to now (call with ``self.bench.lock`` held); with ``max_age``,
        a solve less than that old will do (:meth:`Bench.refresh`: a readback ADC's refresh)."""
        if max_age > 0:
            self.bench.refresh(max_age)
        else:
            self.bench.update()
        return self.bench

    def changed(self) -> None:
        self.bench.touch()  # a setting: the next reading is solved afresh


class Lookahead:
    """When a periodic reading (a readback ADC's conversion, a board controller's sampling of its
    sensors) is made: at the question when the last one is older than its period (``refresh``),
    and also right after a reply (the instrument converts at its own pace, not at the instant of
    a query): when the client, asking again after the same interval as last time, would find the
    last one too old, the next one is made then, while the client reads the reply. A manual
    clock (tests) moves only when told: there, readings are made at the question only."""

    def __init__(self, bench: Bench, period: float) -> None:
        self.bench = bench
        self.period = period
        self.enabled = isinstance(bench.clock, ScaledClock | RealClock)
        self._last = -math.inf  # simulated time of the last reply with this reading

    def due(self) -> bool:
        """After a reply with this reading (``bench.lock`` held): True if a new one was solved now."""
        bench = self.bench
        if not self.enabled:
            return False
        now = bench.now()
        gap, self._last = now - self._last, now
        return gap < self.period and bench.refresh(self.period - gap)


def nr1s(value: int) -> str:
    """Keysight-style signed integer: ``+1``."""
    return f"{int(value):+d}"


class LineInstrument:
    """A non-SCPI serial instrument: one command per line, handlers looked up by keyword."""

    model = ""
    default_serial = "0"

    def __init__(self, *, bench: Bench, serial: str | None = None, role: str = "",
                 options: dict[str, Any] | None = None, wiring: dict[str, str] | None = None) -> None:
        self.bench = bench
        self.serial = serial or self.default_serial
        self.role = role
        self.options_cfg = dict(options or {})
        self.wiring = dict(wiring or {})
        self.lock = threading.RLock()
        self.commands_seen = 0
        self.log: list[str] = []
        self.reset()

    def reset(self) -> None:
        """Settings to their defaults."""

    def handle(self, line: str) -> str | None:
        raise NotImplementedError

    def process(self, line: str) -> str | None:
        line = line.strip()
        if not line:
            return None
        with self.lock:
            self.commands_seen += 1
            self.log.append(line)
            del self.log[:-200]
            try:
                return self.handle(line)
            finally:
                if not self.reads_only(line):
                    self.bench.touch()  # a line may change the board (workload, reset, prbs …)

    def reads_only(self, line: str) -> bool:
        """``line`` only reads (the bench's readings need not be solved afresh after it)."""
        return False
