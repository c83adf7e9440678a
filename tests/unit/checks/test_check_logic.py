"""Check logic against small fake roles (one module at a time, no simulated lab): the BER
gate length and per-lane verdicts, the soak's stability timer, sequencing gaps, and the
step message that names what failed."""

from __future__ import annotations

import math
import threading
from types import SimpleNamespace
from typing import Any

import pytest

import labctl.checks.builtin  # noqa: F401
from labctl.checks.ber import ber_upper_bound, test_duration
from labctl.checks.registry import get_check
from labctl.engine.abort import AbortController
from labctl.engine.context import StepContext, StepFailed, StepTimeout
from labctl.engine.events import EventBus, Progress, Verdict
from labctl.errors import InstrumentTimeout
from labctl.instruments.roles import BerResult
from labctl.plan.limits import ResolvedLimit


class FakeClock:
    """Simulated time that only moves when something waits."""

    scale = 1.0

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return 1.7e9 + self.now

    def wall_time(self) -> float:
        return self.time()

    def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)

    def wait(self, event: threading.Event, seconds: float) -> bool:
        self.now += max(0.0, seconds)
        return event.is_set()


class FakeStation:
    def __init__(self, roles: dict[str, Any], channels: dict[str, tuple[str, str]] | None = None) -> None:
        self.roles = roles
        self.channels = channels or {}

    def role(self, name: str, kind: Any = None) -> Any:
        return self.roles[name]

    def channel(self, signal: str) -> tuple[Any, str]:
        role, ch = self.channels[signal]
        return self.roles[role], ch


def run(check: str, args: dict[str, Any], roles: dict[str, Any], limits: dict[str, Any] | None = None,
        channels: dict[str, tuple[str, str]] | None = None, clock: FakeClock | None = None,
        timeout: float | None = None):
    station = FakeStation(roles, channels)
    fixture = SimpleNamespace(
        roles={name: SimpleNamespace(options={}) for name in roles},
        channels={k: f"{r}@{c}" for k, (r, c) in (channels or {}).items()},
        channel=lambda name: SimpleNamespace(role=station.channels[name][0], channel=station.channels[name][1]),
    )
    events: list[Any] = []
    bus = EventBus()
    bus.subscribe(events.append)
    ctx = StepContext(run_id="r", step_key="s#1", step_id="s", bus=bus, clock=clock or FakeClock(),
                      abort=AbortController(), station=station, fixture=fixture, limits=limits or {},
                      timeout=timeout)
    spec = get_check(check)
    message = ""
    try:
        spec.func(ctx, spec.args.model_validate(args))
    except StepFailed as exc:
        message = exc.message
    return ctx, message, events


# ------------------------------------------------------------------------------------------
# link.ber


class FakeBert:
    kind = "link_tester"

    def __init__(self, clock: FakeClock, errors: dict[str, int], rate: float = 32e9, synced: bool = True) -> None:
        self.clock, self.errors, self.rate, self.synced = clock, errors, rate, synced
        self.lanes = sorted(errors)
        self.gate: float | None = None
        self.started_at: float | None = None
        self.configured: tuple[Any, ...] = ()

    def configure(self, pattern, rate_gbps=None, lanes=None):
        self.configured = (pattern, rate_gbps, tuple(lanes or ()))

    def set_gating(self, seconds, lanes=None):
        self.gate = float(math.ceil(seconds))  # whole seconds, as the MP1900A's d,h,m,s period

    def start(self):
        self.started_at = self.clock.now

    def stop(self):
        pass

    def running(self, lane=None):
        return self.started_at is not None and self.clock.now - self.started_at < self.gate

    def results(self, lane=None):
        elapsed = min(self.clock.now - (self.started_at or 0.0), self.gate or 0.0)
        bits = int(self.rate * elapsed) if self.synced else 0
        errs = self.errors[lane] if bits else 0
        return BerResult(errors=errs, bits=bits, ber=errs / bits if bits else math.nan, lane=lane)


BER_ARGS = {"line_rate": "32 Gbps", "target_ber": "1e-12", "confidence": "95 %"}


def test_ber_gate_is_the_zero_error_poisson_length():
    clock = FakeClock()
    bert = FakeBert(clock, {"1": 0, "2": 0})
    ctx, message, events = run("link.ber", BER_ARGS, {"bert": bert}, clock=clock)
    assert message == ""
    assert bert.gate == math.ceil(test_duration(1e-12, 0.95, 32e9)) == 94  # 2.996e12 bits at 32 Gb/s
    assert bert.configured == ("PRBS31", 32.0, ("1", "2"))
    assert all(m.verdict is Verdict.PASS for m in ctx.recorded if m.name == "ber")
    assert [m.value for m in ctx.recorded if m.name == "ber"] == [pytest.approx(2.995732 / (32e9 * 94))] * 2
    assert any(isinstance(e, Progress) and "of 1m34s" in e.text for e in events)


@pytest.mark.parametrize("errors", [1, 2, 3])
def test_any_error_in_the_minimum_gate_fails_on_the_upper_bound(errors):
    clock = FakeClock()
    bert = FakeBert(clock, {"1": 0, "2": errors})
    ctx, message, _ = run("link.ber", BER_ARGS, {"bert": bert}, clock=clock)
    bits = int(32e9 * 94)
    bound = ber_upper_bound(bits, errors, 0.95)
    # the raw ratio is far below the target; the bound at 95 % CL is not
    assert errors / bits < 1e-12 < bound
    assert message == (f"lane 2: BER upper bound {bound:.2g} > target 1e-12 at 95 % CL "
                       f"({errors} errors in {bits:.3g} bits)")
    verdicts = {m.labels["lane"]: m.verdict for m in ctx.recorded if m.name == "ber"}
    assert verdicts == {"1": Verdict.PASS, "2": Verdict.FAIL}


def test_ber_plan_limit_replaces_the_target():
    clock = FakeClock()
    bert = FakeBert(clock, {"1": 2})
    ctx, message, _ = run("link.ber", BER_ARGS, {"bert": bert}, {"ber": ResolvedLimit(hi=1e-11)}, clock=clock)
    assert message == ""  # 2 errors in 3.0e12 bits: bound 2.1e-12 is within a 1e-11 limit
    assert ctx.recorded[0].value == pytest.approx(ber_upper_bound(32e9 * 94, 2, 0.95))


def test_ber_without_sync_names_the_lane():
    clock = FakeClock()
    bert = FakeBert(clock, {"7": 0}, synced=False)
    ctx, message, _ = run("link.ber", {**BER_ARGS, "lanes": [7]}, {"bert": bert}, clock=clock)
    assert message.startswith("lane 7: no bits compared (no pattern sync")
    assert [(m.name, m.value) for m in ctx.recorded] == [("ber", 1.0), ("errors", 0), ("bits", 0)]


# ------------------------------------------------------------------------------------------
# thermal.soak


class FakeChamber:
    kind = "thermal_chamber"

    def __init__(self, clock: FakeClock, profile) -> None:
        self.clock, self.profile = clock, profile
        self.sp: float | None = None
        self.rate: float | None = None
        self.started = False

    def set_setpoint(self, degc):
        self.sp = degc

    def setpoint(self):
        return self.sp

    def set_ramp_rate(self, rate):
        self.rate = rate

    def start(self):
        self.started = True

    def temperature(self):
        return self.profile(self.clock.now)


def test_soak_stability_timer_restarts_when_the_band_is_left():
    # in band from 100 s, a 2 K excursion at 200-210 s, then steady: stable from ~210 s
    def profile(t: float) -> float:
        if t < 100:
            return 25 + 0.2 * t
        return 47.0 if 200 <= t < 210 else 45.1

    clock = FakeClock()
    chamber = FakeChamber(clock, profile)
    ctx, message, events = run("thermal.soak", {"setpoint": "45 degC", "ramp_rate": "12 degC/min", "band": "±0.5 K",
                                                "hold": "5 min", "timeout": "1 h"}, {"chamber": chamber}, clock=clock)
    assert message == ""
    assert (chamber.sp, chamber.rate, chamber.started) == (45.0, 12.0, True)
    settle = next(m.value for m in ctx.recorded if m.name == "settle_time")
    assert 200 <= settle <= 220
    assert clock.now >= settle + 300
    assert next(m.value for m in ctx.recorded if m.name == "temperature") == pytest.approx(45.1)
    texts = [e.text for e in events if isinstance(e, Progress)]
    assert "chamber 47.0/45.0 degC, stable 0s of 5m" in texts


# ------------------------------------------------------------------------------------------
# power.sequencing


class FakePsu:
    kind = "power_supply"

    def __init__(self) -> None:
        self.on = True

    def output(self, ch):
        return self.on

    def set_output(self, ch, on):
        self.on = on

    def voltage(self, ch):
        return 5.0


class FakeDut:
    kind = "dut_console"

    def __init__(self, times: dict[str, float | None]) -> None:
        self.times = times

    def power_good_times(self):
        return dict(self.times)


def test_sequencing_gaps_window_and_order():
    times = {"VDD_AUX": 1.5, "VDD_CORE": 4.5, "VDD_IO": 4.6, "VDD_HBM": 30.0}
    ctx, message, _ = run("power.sequencing", {"order": list(times), "gap_min": "1 ms", "gap_max": "10 ms"},
                          {"psu": FakePsu(), "dut": FakeDut(times)}, channels={"VIN": ("psu", "1")})
    gaps = {m.name: (round(m.value, 3), m.verdict) for m in ctx.recorded if "->" in m.name}
    assert gaps == {"VDD_AUX->VDD_CORE": (3.0, Verdict.PASS), "VDD_CORE->VDD_IO": (0.1, Verdict.FAIL),
                    "VDD_IO->VDD_HBM": (25.4, Verdict.FAIL)}
    assert message == ("VDD_IO: VDD_CORE->VDD_IO 0.1 ms outside 1 ms ≤ x ≤ 10 ms; "
                       "VDD_HBM: VDD_IO->VDD_HBM 25.4 ms outside 1 ms ≤ x ≤ 10 ms")


def test_sequencing_out_of_order_fails_the_order():
    times = {"VDD_AUX": 1.5, "VDD_CORE": 9.0, "VDD_IO": 5.0}
    ctx, message, _ = run("power.sequencing", {"order": list(times), "gap_min": "0 ms", "gap_max": "10 ms"},
                          {"psu": FakePsu(), "dut": FakeDut(times)}, channels={"VIN": ("psu", "1")})
    order = next(m for m in ctx.recorded if m.name == "order")
    assert (order.value, order.verdict) == ("VDD_AUX,VDD_IO,VDD_CORE", Verdict.FAIL)
    assert "order VDD_AUX,VDD_IO,VDD_CORE outside x == 'VDD_AUX,VDD_CORE,VDD_IO'" in message


# ------------------------------------------------------------------------------------------
# waits: the check's own timeout is a FAIL; the step's timeout and instrument timeouts are not


class FakeLinkDut:
    kind = "dut_console"

    def __init__(self, state: str = "RCVRY_LOCK", hang: bool = False) -> None:
        self.state, self.hang = state, hang

    def link_status(self, lane=None):
        if self.hang:
            raise InstrumentTimeout("no reply to 'link status'", instrument="dut")
        lanes = {str(n): {"speed_gts": 32.0, "width": 8, "ltssm": self.state} for n in (1, 2)}
        return {"speed_gts": 32.0, "width": 8, "ltssm": self.state, "lanes": lanes}


def test_training_that_never_reaches_l0_fails_naming_the_lanes():
    _ctx, message, _ = run("link.training", {"speed": "32 GT/s", "timeout": "2 s"}, {"dut": FakeLinkDut()})
    assert message.startswith("lane 1: LTSSM RCVRY_LOCK, expected L0; lane 2: LTSSM RCVRY_LOCK, expected L0")


def test_an_instrument_timeout_inside_a_wait_is_not_taken_for_the_condition():
    with pytest.raises(InstrumentTimeout):
        run("link.training", {"speed": "32 GT/s", "timeout": "2 s"}, {"dut": FakeLinkDut(hang=True)})


def test_the_step_timeout_ends_a_wait_as_a_timeout_not_a_fail():
    with pytest.raises(StepTimeout):
        run("link.training", {"speed": "32 GT/s", "timeout": "60 s"}, {"dut": FakeLinkDut()}, timeout=5.0)


class FakeScanner:
    """Rails come up 5 ms apart after the input is switched on; each reading takes 1 ms."""

    kind = "temperature_scanner"

    def __init__(self, clock: FakeClock, psu: FakePsu, up_ms: dict[str, float | None], levels: dict[str, float]):
        self.clock, self.psu, self.up_ms, self.levels = clock, psu, up_ms, levels
        self.on_at: float | None = None
        self.channels = {f"1{n:02d}": rail for n, rail in enumerate(levels, 11)}

    def read_voltage(self, ch):
        self.clock.now += 0.001
        if self.psu.on and self.on_at is None:
            self.on_at = self.clock.now
        if not self.psu.on:
            self.on_at = None
            return 0.0
        rail = self.channels[ch]
        up = self.up_ms[rail]
        return self.levels[rail] if up is not None and (self.clock.now - self.on_at) * 1000 >= up else 0.0


def test_sequencing_without_dut_telemetry_cycles_the_input_and_polls_the_rails():
    clock = FakeClock()
    psu = FakePsu()
    levels = {"VDD_AUX": 3.3, "VDD_CORE": 0.75, "VDD_IO": 0.9}
    scanner = FakeScanner(clock, psu, {"VDD_AUX": 2.0, "VDD_CORE": 12.0, "VDD_IO": None}, levels)
    channels = {"VIN": ("psu", "1"), **{rail: ("daq", ch) for ch, rail in scanner.channels.items()}}
    ctx, message, events = run("power.sequencing", {"order": list(levels), "gap_min": "1 ms", "gap_max": "20 ms",
                                                    "timeout": "200 ms"},
                               {"psu": psu, "daq": scanner}, channels=channels, clock=clock)
    assert psu.on is True
    gap = next(m for m in ctx.recorded if m.name == "VDD_AUX->VDD_CORE")
    assert gap.value == pytest.approx(10.0, abs=4.0)  # one scan (3 readings) of resolution
    assert message.startswith("VDD_IO: power-good never came up")
