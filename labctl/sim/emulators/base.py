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

    def sync(self) -> Bench:
        """Bring the physics up to now (call with ``self.bench.lock`` held)."""
        self.bench.update()
        return self.bench


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
            return self.handle(line)
