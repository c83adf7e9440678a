"""Thermal checks: thermal.soak, thermal.under_load, thermal.throttle, thermal.ramp."""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Callable
from typing import Any

from labctl.checks.generic import (
    cleanup,
    finish,
    fmt_duration,
    input_power,
    limit_or,
    role_kind,
    set_workload,
    wait_for,
    workload_percent,
)
from labctl.checks.registry import implementation
from labctl.errors import FixtureError, InstrumentError

REACH_BAND = 1.0  # K: a ramp segment has reached its end temperature within this
LATCHED_KEY = "throttle_temp"  # DUT telemetry: the die temperature when throttling last asserted


def temperature_reader(ctx: Any, sensor: str) -> Callable[[], float]:
    """A reader of ``chamber`` (the chamber's own sensor) or of a named thermocouple channel."""
    if sensor == "chamber":
        chamber = ctx.role("chamber")
        return lambda: float(chamber.temperature())
    role, ch = ctx.signal(sensor)
    kind = role_kind(role)
    if kind == "temperature_scanner":
        return lambda: float(role.read_temperature(ch))
    if kind == "thermal_chamber":
        return lambda: float(role.temperature())
    raise FixtureError(f"sensor {sensor} is wired to {ctx.fixture.channels[sensor]}, which cannot read temperature")


# ------------------------------------------------------------------------------------------
# thermal.soak


@implementation("thermal.soak")
def thermal_soak(ctx: Any, args: Any) -> None:
    """Chamber to ``setpoint`` at ``ramp_rate``; done when ``sensor`` stayed within ±``band``
    for ``hold``; FAIL after ``timeout``. Samples the temperature series while it waits."""
    start = len(ctx.recorded)
    chamber = ctx.role("chamber")
    sp = args.setpoint.to("degC")
    band = args.band.to("K")
    read = temperature_reader(ctx, args.sensor)
    label = args.sensor
    chamber.set_ramp_rate(args.ramp_rate.to("K/min"))
    chamber.set_setpoint(sp)
    chamber.start()
    poll = min(10.0, max(1.0, args.hold / 30.0))
    began = ctx.clock.monotonic()
    first = read()
    distance0 = max(abs(sp - first), band)
    in_since: float | None = None
    held: list[float] = []
    temp = first
    while True:
        t = ctx.clock.monotonic() - began
        temp = read()
        ctx.sample(label, temp, "degC")
        if abs(temp - sp) <= band:
            if in_since is None:
                in_since, held = t, []
            held.append(temp)
        else:
            in_since = None
        stable = t - in_since if in_since is not None else 0.0
        if in_since is not None and stable >= args.hold:
            break
        if t >= args.timeout:
            ctx.fail(f"{label}: not stable at {sp:g} degC ±{band:g} within {fmt_duration(args.timeout)} "
                     f"(last {temp:.1f} degC, stable {fmt_duration(stable)} of {fmt_duration(args.hold)})")
        if in_since is not None:
            fraction = 0.5 + 0.5 * stable / args.hold if args.hold else 1.0
        else:
            fraction = 0.5 * (1.0 - min(1.0, abs(temp - sp) / distance0))
        ctx.progress(f"{label} {temp:.1f}/{sp:.1f} degC, stable {fmt_duration(stable)} of {fmt_duration(args.hold)}",
                     fraction)
        ctx.sleep(min(poll, max(0.1, args.timeout - t)))
    ctx.progress(f"{label} {temp:.1f}/{sp:.1f} degC, stable {fmt_duration(args.hold)}", 1.0)
    labels = {"sensor": label}
    ctx.measure("temperature", statistics.fmean(held), "degC", labels=labels)
    ctx.measure("settle_time", in_since or 0.0, "s", labels=labels)
    finish(ctx, start)


# ------------------------------------------------------------------------------------------
# thermal.under_load


def _slope(points: deque[tuple[float, float]]) -> float:
    """Least-squares dT/dt (K/s) of (t, T) points."""
    n = len(points)
    if n < 2:
        return float("inf")
    mt = sum(t for t, _ in points) / n
    my = sum(y for _, y in points) / n
    den = sum((t - mt) ** 2 for t, _ in points)
    return sum((t - mt) * (y - my) for t, y in points) / den if den > 0 else float("inf")


def _die_key(sensors: dict[str, float], telemetry: list[str]) -> str:
    if "die_temp" in sensors:
        return "die_temp"
    for key in telemetry:
        if key in sensors:
            return key
    raise InstrumentError("the DUT reports no die temperature", hint=f"it reports: {', '.join(sorted(sensors))}")


def _shut_down(sensors: dict[str, float]) -> bool:
    """The DUT's core rail collapsed (thermal trip or brown-out)."""
    core = sensors.get("VDD_CORE_V")
    return core is not None and core < 0.05


@implementation("thermal.under_load")
def thermal_under_load(ctx: Any, args: Any) -> None:
    """Workload on; wait until |dT/dt| of the die stays below ``settle_rate`` over
    ``settle_window``; record telemetry, thermocouples, input power and θ = (die − ref) / P.
    The workload stays on afterwards (later steps measure under load; set it idle with
    ``set: dut.workload = idle``)."""
    start = len(ctx.recorded)
    dut = ctx.role("dut")
    rate_limit = args.settle_rate.to("K/s")
    poll = max(1.0, args.settle_window / 12.0)
    problems: list[str] = []
    set_workload(ctx, workload_percent(args.workload, args.load))  # stays on: later steps measure under load
    began = ctx.clock.monotonic()
    history: deque[tuple[float, float]] = deque()
    peak = float("-inf")
    while True:
        t = ctx.clock.monotonic() - began
        sensors = dut.sensors()
        key = _die_key(sensors, args.telemetry)
        die = float(sensors[key])
        peak = max(peak, die)
        ctx.sample(key, die, "degC")
        if _shut_down(sensors):
            ctx.fail(f"{key}: the DUT shut down under load (VDD_CORE collapsed; thermal trip?), "
                     f"die peaked at {peak:.1f} degC")
        history.append((t, die))
        while history and history[0][0] < t - args.settle_window:
            history.popleft()
        slope = _slope(history)
        spanned = history[-1][0] - history[0][0] >= args.settle_window * 0.9
        if spanned and abs(slope) < rate_limit:
            break
        # the slope needs two points: until then it is left out rather than shown as "?"
        rate = f", dT/dt {slope * 60:+.2f} degC/min" if math.isfinite(slope) else ""
        if t >= args.timeout:
            ctx.fail(f"{key}: not settled within {fmt_duration(args.timeout)}: {die:.1f} degC{rate} "
                     f"(needs below {rate_limit * 60:g} degC/min)")
        ctx.progress(f"{key} {die:.1f} degC{rate} (settled below {rate_limit * 60:g} degC/min), "
                     f"{fmt_duration(t)}", min(0.99, t / args.timeout))
        ctx.sleep(poll)
    settle_time = history[-1][0]
    sensors = dut.sensors()
    if sensors.get("throttle"):
        problems.append(f"{key}: the DUT is throttling at {float(sensors[key]):.1f} degC")
    for name in args.telemetry:
        if name not in sensors:
            problems.append(f"{name}: the DUT reports no such sensor")
            continue
        ctx.measure(name, float(sensors[name]), "degC", labels={"sensor": name})
    for name in args.sensors:
        ctx.measure(name, temperature_reader(ctx, name)(), "degC", labels={"sensor": name})
    reference = _reference(ctx, args.reference)
    _v, _i, power = input_power(ctx)
    die = float(sensors[key])
    ctx.measure("input_power", power, "W")
    if power > 0:
        # θ is a property of the path die -> reference, not a reading of the die sensor: label it as such
        ctx.measure("theta", (die - reference) / power, "K/W", labels={"die": key, "reference": args.reference})
    else:
        problems.append("input power is 0 W: θ cannot be computed")
    ctx.measure("settle_time", settle_time, "s")
    finish(ctx, start, problems)


def _reference(ctx: Any, name: str) -> float:
    if name in ctx.fixture.channels:
        return temperature_reader(ctx, name)()
    if ctx.has_role("chamber"):
        ctx.log(f"no channel {name} in the fixture: the chamber's air is the reference for θ", "warning")
        return float(ctx.role("chamber").temperature())
    raise FixtureError(f"reference {name}: no such channel and no chamber", hint="name a thermocouple channel")


# ------------------------------------------------------------------------------------------
# thermal.throttle


@implementation("thermal.throttle")
def thermal_throttle(ctx: Any, args: Any) -> None:
    """Full workload and (with a chamber) the air raised to the threshold until the DUT says it
    throttles; then air back and workload idle until throttling clears."""
    start = len(ctx.recorded)
    dut = ctx.role("dut")
    chamber = ctx.role("chamber") if ctx.has_role("chamber") else None
    threshold = args.threshold.to("degC")
    hyst = args.hysteresis.to("K")
    original_sp = float(chamber.setpoint()) if chamber is not None else None
    restore = set_workload(ctx, workload_percent(args.workload) or 100.0)
    began = ctx.clock.monotonic()
    state: dict[str, float | None] = {"die": float("nan"), "peak": float("-inf"), "latched": None}

    def poll(want: bool) -> bool:
        sensors = dut.sensors()
        key = _die_key(sensors, ["die_temp"])
        state["die"] = die = float(sensors[key])
        latched = sensors.get(LATCHED_KEY)  # the die temperature the DUT latched when throttling asserted
        state["latched"] = None if latched is None else float(latched)
        state["peak"] = max(state["peak"], die)
        ctx.sample(key, die, "degC")
        if _shut_down(sensors):
            ctx.fail(f"die: the DUT shut down (thermal trip?) at {state['peak']:.1f} degC before throttling cleared")
        return bool(sensors.get("throttle", 0)) == want

    try:
        if chamber is not None:
            chamber.set_setpoint(threshold)
            chamber.start()
        if not wait_for(ctx, lambda: poll(True), timeout=args.timeout, poll=1.0, what="throttling",
                        describe=lambda t: f"die {state['die']:.1f} degC, waiting for throttling at {threshold:g} degC"):
            ctx.fail(f"die: throttling never asserted within {fmt_duration(args.timeout)} "
                     f"(die peaked at {state['peak']:.1f} degC, threshold {threshold:g} degC)")
        asserted_at = ctx.clock.monotonic()
        ctx.measure("throttle_temp", _throttle_temp(ctx, state), "degC", labels={"sensor": "die"},
                    limit=limit_or(ctx, "throttle_temp", unit="degC", lo=threshold - 2.0, hi=threshold + 2.0))
        if chamber is not None:
            chamber.set_setpoint(original_sp)
        dut.set_load(0.0)
        if not wait_for(ctx, lambda: poll(False), timeout=args.timeout, poll=1.0, what="throttle recovery",
                        describe=lambda t: f"die {state['die']:.1f} degC, waiting for recovery below "
                                           f"{threshold - hyst:g} degC"):
            ctx.fail(f"die: throttling did not clear within {fmt_duration(args.timeout)} "
                     f"(die {state['die']:.1f} degC)")
        ctx.measure("recovery_temp", state["die"], "degC", labels={"sensor": "die"},
                    limit=limit_or(ctx, "recovery_temp", unit="degC", hi=threshold - hyst))
        ctx.measure("recovery_time", ctx.clock.monotonic() - asserted_at, "s")
        ctx.log(f"throttle test took {fmt_duration(ctx.clock.monotonic() - began)}")
    finally:
        back = [] if chamber is None or original_sp is None else [lambda: chamber.set_setpoint(original_sp)]
        cleanup(ctx, *back, restore)
    finish(ctx, start)


def _throttle_temp(ctx: Any, state: dict[str, Any]) -> float:
    """The die temperature at which the DUT throttled: the one it latched when throttling
    asserted, if it reports it (``throttle_temp``); else the die temperature at the first
    poll that saw throttling, which lags by up to a poll period (more if the host stalls)."""
    die, latched = state["die"], state["latched"]
    if latched is None:
        ctx.log(f"the DUT reports no {LATCHED_KEY}: throttle_temp is the die temperature at the first "
                f"reading that showed throttling ({die:.1f} degC)")
        return float(die)
    ctx.log(f"throttle_temp: the DUT latched {latched:.1f} degC when throttling asserted "
            f"(die {die:.1f} degC when the check saw it)")
    return float(latched)


# ------------------------------------------------------------------------------------------
# thermal.ramp


@implementation("thermal.ramp")
def thermal_ramp(ctx: Any, args: Any) -> None:
    """Run the profile segment by segment (ramp to ``to`` at ``rate``, then ``hold``), sampling
    the chamber and ``sensors`` every ``sample_every``; records the largest overshoot past a
    segment's end temperature and the fastest observed rate."""
    start = len(ctx.recorded)
    chamber = ctx.role("chamber")
    readers = {name: temperature_reader(ctx, name) for name in args.sensors}
    last: tuple[float, float] | None = None
    max_rate = 0.0
    max_overshoot = 0.0

    def sample() -> float:
        nonlocal last, max_rate
        now = ctx.clock.monotonic()
        temp = float(chamber.temperature())
        ctx.sample("chamber", temp, "degC")
        for name, read in readers.items():
            ctx.sample(name, read(), "degC")
        if last is not None and now - last[0] >= args.sample_every * 0.5:
            max_rate = max(max_rate, abs(temp - last[1]) / (now - last[0]) * 60.0)
            last = (now, temp)
        elif last is None:
            last = (now, temp)
        return temp

    for n, seg in enumerate(args.profile, 1):
        to, rate = seg.to.to("degC"), seg.rate.to("K/min")
        chamber.set_ramp_rate(rate)
        chamber.set_setpoint(to)
        chamber.start()
        temp = sample()
        direction = 1.0 if to >= temp else -1.0
        timeout = abs(to - temp) / rate * 60.0 * 1.5 + 600.0
        what = f"segment {n} of {len(args.profile)}: to {to:g} degC at {rate:g} degC/min"
        seg_start = ctx.clock.monotonic()
        while abs(temp - to) > REACH_BAND:
            t = ctx.clock.monotonic() - seg_start
            if t > timeout:
                ctx.fail(f"segment {n}: {to:g} degC not reached within {fmt_duration(timeout)} (at {temp:.1f} degC)")
            ctx.progress(f"{what}, chamber {temp:.1f} degC", (n - 1 + min(0.9, t / timeout)) / len(args.profile))
            ctx.sleep(args.sample_every)
            temp = sample()
            max_overshoot = max(max_overshoot, direction * (temp - to))
        hold_start = ctx.clock.monotonic()
        while ctx.clock.monotonic() - hold_start < seg.hold:
            held = ctx.clock.monotonic() - hold_start
            ctx.progress(f"{what}: holding {fmt_duration(held)} of {fmt_duration(seg.hold)}, chamber {temp:.1f} degC",
                         (n - 0.1) / len(args.profile))
            ctx.sleep(min(args.sample_every, seg.hold - held))
            temp = sample()
            max_overshoot = max(max_overshoot, direction * (temp - to))
    ctx.measure("max_overshoot", max_overshoot, "degC")
    ctx.measure("max_rate", max_rate, "degC/min")
    finish(ctx, start)
