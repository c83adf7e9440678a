"""Run one check at a time against the simulated lab, the way the runner does.

``bench`` starts a simulated lab on free loopback ports and its own ptys (time scale 600, so a
five-minute soak takes half a second), opens the station through pyvisa/pyserial and gives
``bench.run(check, args, limits)`` -> :class:`Outcome` (what the operator would see: the step's
outcome and message, its measurements, progress lines and samples).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import labctl.checks.builtin  # noqa: F401  (attaches the implementations)
from labctl.checks.registry import get_check
from labctl.clock import ScaledClock
from labctl.engine.abort import AbortController, RunAborted
from labctl.engine.context import StepContext, StepFailed
from labctl.engine.events import EventBus, Progress, SampleRecorded, Verdict
from labctl.errors import LabctlError
from labctl.fixture import load_fixture
from labctl.instruments import open_station
from labctl.plan.limits import ResolvedLimit
from labctl.sim.lab import SimulatedLab
from labctl.sim.testing import isolated_fixture

SCALE = 600.0


def lim(unit: str = "", lo: float | None = None, hi: float | None = None, **kw: Any) -> ResolvedLimit:
    return ResolvedLimit(unit=unit, lo=lo, hi=hi, **kw)


def nominal(value: float, tol: float, unit: str) -> ResolvedLimit:
    return ResolvedLimit(unit=unit, lo=value * (1 - tol), hi=value * (1 + tol), nominal=value)


@dataclass
class Outcome:
    outcome: str  # PASS | FAIL | ERROR | ABORTED
    message: str
    ctx: StepContext
    events: list[Any] = field(default_factory=list)

    @property
    def measurements(self) -> list[Any]:
        return self.ctx.recorded

    def values(self, name: str) -> dict[str, Any]:
        """Label text (lane/rail/sensor … or '') -> value of every measurement called ``name``."""
        return {",".join(m.labels.values()): m.value for m in self.ctx.recorded if m.name == name}

    def value(self, name: str) -> Any:
        found = [m.value for m in self.ctx.recorded if m.name == name]
        assert found, f"no measurement {name!r}; have {[m.name for m in self.ctx.recorded]}"
        return found[-1]

    def verdicts(self, name: str) -> dict[str, Verdict]:
        return {",".join(m.labels.values()): m.verdict for m in self.ctx.recorded if m.name == name}

    @property
    def progress(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, Progress)]

    def samples(self, series: str) -> list[float]:
        return [e.value for e in self.events if isinstance(e, SampleRecorded) and e.series == series]


class Bench:
    def __init__(self, lab: SimulatedLab, station: Any, fixture: Any, clock: ScaledClock) -> None:
        self.lab, self.station, self.fixture, self.clock = lab, station, fixture, clock
        self._n = 0

    def run(self, check: str, args: dict[str, Any], limits: dict[str, Any] | None = None, *,
            timeout: float | None = None, prompt_handler: Any = None,
            abort: AbortController | None = None, watch: Any = None) -> Outcome:
        spec = get_check(check)
        assert spec is not None and spec.func is not None, f"{check} is not implemented"
        parsed = spec.args.model_validate(args)
        bus = EventBus()
        events: list[Any] = []
        bus.subscribe(events.append)
        if watch is not None:  # sees each event as it is published
            bus.subscribe(watch)
        self._n += 1
        ctx = StepContext(run_id="test", step_key=f"steps/{check}#{self._n}", step_id=check.replace(".", "_"),
                          bus=bus, clock=self.clock, abort=abort or AbortController(), station=self.station,
                          fixture=self.fixture, limits=limits or {}, timeout=timeout,
                          prompt_handler=prompt_handler, dut_serial=self.lab.dut_serial)
        try:
            spec.func(ctx, parsed)
        except StepFailed as exc:
            return Outcome("FAIL", exc.message, ctx, events)
        except RunAborted as exc:
            return Outcome("ABORTED", str(exc), ctx, events)
        except LabctlError as exc:
            return Outcome("ERROR", str(exc), ctx, events)
        failed = ctx.failed
        return Outcome("FAIL" if failed else "PASS", "", ctx, events)

    # bench set-up shortcuts (what an earlier step of a plan would have done)
    def power_on(self) -> None:
        out = self.run("power.on", {"voltage": "5 V", "current_limit": "5 A"})
        assert out.outcome == "PASS", out.message

    def workload(self, percent: float) -> None:
        self.station.role("dut").set_load(percent)


def make_bench(tmp_path: Path, clock: Any = None, **sim: Any) -> Iterator[Bench]:
    """``clock``: the lab's and the checks' clock (default ``ScaledClock(600)``; a
    ``ManualClock`` moves only when a check sleeps or the test advances it)."""
    sim.setdefault("time_scale", SCALE)
    fixture = load_fixture(isolated_fixture(tmp_path, **sim))
    clock = clock or ScaledClock(SCALE)
    with SimulatedLab(fixture, clock=clock) as lab, open_station(fixture, clock=clock) as station:
        try:
            yield Bench(lab, station, fixture, clock)
        finally:
            lab.clear_faults()
            station.safe_state()


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[Bench]:
    """A golden DUT on the simulated bench, unpowered."""
    yield from make_bench(tmp_path)


@pytest.fixture
def faulty(tmp_path: Path):
    """``faulty("dead_rail", rail="VDD_HBM")`` -> a bench whose DUT has that fault."""
    stack: list[Iterator[Bench]] = []

    def open_(fault: str, **params: Any) -> Bench:
        serial = "SIM-FAULT-0099"
        gen = make_bench(tmp_path / fault, dut=serial, duts={serial: {"faults": [{"fault": fault, **params}]}})
        stack.append(gen)
        return next(gen)

    yield open_
    for gen in stack:
        gen.close()
