"""Shared helpers of the bench-backed emulators."""

from __future__ import annotations

import threading
from typing import Any

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

    def before_change(self) -> None:
        """The model up to now before a setting: it takes effect at the instant it is read off
        the socket (``*RST``, an OVP level, an ED's pattern applied to the time since the model
        was last integrated: up to 0.25 s of wall time × the time scale)."""
        with self.bench.lock:
            self.sync()

    def changed(self) -> None:
        self.bench.touch()  # a setting: the next reading is solved afresh


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
