"""The bench the app drives: the loaded fixture, the simulated lab when the fixture asks for
one and nothing serves it (kept running for the app's lifetime, so the station screen and
every run see the same virtual board), and the lock that keeps the status poll and a run
from opening the instruments at the same time."""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from labctl.errors import LabctlError


class Bench:
    def __init__(self, fixture_path: str | None, *, time_scale: float | None = None) -> None:
        from labctl.launch import resolve_fixture

        self.notes: list[str] = []
        self.fixture_path = fixture_path
        self.fixture = resolve_fixture(fixture_path, self.notes, time_scale)
        self.time_scale = time_scale
        self.instruments_lock = threading.Lock()  # held by a status poll, and by a run from start to end
        self._lab: contextlib.ExitStack | None = None
        self.lab: Any = None
        self.lab_error: str = ""

    @property
    def label(self) -> str:
        return f"{self.fixture.station}" + (f" — {self.fixture.description}" if self.fixture.description else "")

    def start_lab(self) -> str | None:
        """Start the fixture's simulated lab in-process if it has one and nothing serves it
        (blocking: call from a worker thread). Returns a note for the operator, or None."""
        from labctl.instruments.simstart import anything_serving
        from labctl.launch import make_clock

        sim = self.fixture.sim
        if sim is None or not sim.enabled or anything_serving(self.fixture):
            return None
        from labctl.sim.lab import SimulatedLab

        stack = contextlib.ExitStack()
        try:
            self.lab = stack.enter_context(SimulatedLab(self.fixture, clock=make_clock(self.fixture)))
        except (LabctlError, OSError) as err:
            stack.close()
            self.lab_error = f"the simulated lab could not start: {err}"
            return self.lab_error
        self._lab = stack
        return f"simulated lab started in-process ({sim.time_scale:g}× time, DUT {self.lab.dut_serial})"

    def close(self) -> None:
        if self._lab is not None:
            with contextlib.suppress(Exception):
                self._lab.close()
            self._lab = None
            self.lab = None
