"""Power checks: power.on, power.rails, power.ripple, power.sequencing, power.efficiency,
power.budget, power.perf_per_watt."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

from labctl.checks.catalog import dmm_role_for
from labctl.checks.generic import (
    check_settings,
    cleanup,
    finish,
    fmt_duration,
    fmt_value,
    input_channel,
    input_power,
    limit_or,
    raw_driver,
    role_kind,
    set_workload,
    switch_on,
    wait_for,
    workload_percent,
)
from labctl.checks.registry import implementation
from labctl.errors import FixtureError, InstrumentError

SQRT8 = 2.0 * math.sqrt(2.0)  # peak-to-peak / rms of a sine

# ------------------------------------------------------------------------------------------
# power.on


@implementation("power.on")
def power_on(ctx: Any, args: Any) -> None:
    """Set limit and voltage, switch on, sample the inrush, then read V and I after settling."""
    start = len(ctx.recorded)
    psu, ch = input_channel(ctx, args.channel)
    volts, amps = args.voltage.to("V"), args.current_limit.to("A")
    ovp = args.ovp.to("V") if args.ovp is not None else None
    check_settings(psu, ch, current_limit=amps, voltage=volts, ovp_level=ovp)  # a refusal leaves the output as it was
    if psu.output(ch):
        ctx.log(f"{args.channel} is already on: switching it off for 1 s to see the inrush", "warning")
        psu.set_output(ch, False)
        ctx.sleep(1.0)
    psu.set_current_limit(ch, amps)
    psu.set_voltage(ch, volts)
    if hasattr(psu, "set_protection"):
        psu.set_protection(ch, ovp=ovp, ocp=args.ocp)
    ctx.progress(f"{args.channel}: switching on at {volts:g} V, limit {amps:g} A")
    protection = switch_on(ctx, psu, ch, args.channel)
    began = ctx.clock.monotonic()
    peak = 0.0
    for _ in range(1000):
        current = float(psu.measure_current(ch))
        ctx.sample(f"{args.channel}_current", current, "A")
        peak = max(peak, current)
        if ctx.clock.monotonic() - began >= args.inrush_window:
            break
    remaining = args.settle - (ctx.clock.monotonic() - began)
    if remaining > 0:
        ctx.sleep(remaining)
    problems: list[str] = []
    if psu.protection_tripped(ch):
        problems.append(f"{args.channel}: the supply's protection tripped at power-on")
    if "ovp_level" in protection:
        ctx.measure("ovp_level", protection["ovp_level"], "V", labels={"rail": args.channel})
    if "ocp_enabled" in protection:
        ctx.measure("ocp_current", protection["current_limit"] if protection["ocp_enabled"] else 0.0, "A",
                    labels={"rail": args.channel})
    if "ocp_delay" in protection:
        ctx.measure("ocp_delay", protection["ocp_delay"], "s", labels={"rail": args.channel})
    ctx.measure("inrush_peak", peak, "A", labels={"rail": args.channel})
    ctx.measure("input_voltage", float(psu.measure_voltage(ch)), "V", labels={"rail": args.channel})
    ctx.measure("input_current", float(psu.measure_current(ch)), "A", labels={"rail": args.channel})
    finish(ctx, start, problems)


# ------------------------------------------------------------------------------------------
# rails: which instrument reads a rail


def _dmm_for(ctx: Any, rail: str, rails: list[str]) -> Any:
    """The multimeter probing ``rail`` (:func:`labctl.checks.catalog.dmm_role_for`)."""
    fixture = ctx.fixture
    # kinds are looked up on the station: asking the context would count the role as used by
    # the step, whose error queue would then be read (a daq not even touched)
    name = dmm_role_for(fixture, rail, rails, lambda role: role_kind(ctx.station.role(role)),
                        lambda: _ac_property_reader(ctx, rail) is not None)
    if name is None:
        raise FixtureError(f"rail {rail}: no multimeter is wired to it (its channel: "
                           f"{fixture.channels.get(rail, 'none')}); measure it via: daq, or say which rail the dmm "
                           f"probes with `options: {{signal: {rail}}}` on the dmm role")
    if name == "dmm" and "signal" not in fixture.roles["dmm"].options and not (
            rail in fixture.channels and fixture.channel(rail).role == "dmm"):
        ctx.log(f"assuming the dmm probes {rail} (give the dmm role `options: {{signal: {rail}}}` to say so)")
    return ctx.role(name)


def _dc_reader(ctx: Any, rail: str, via: str, rails: list[str]) -> Callable[[], float]:
    if via == "dut":
        dut = ctx.role("dut")
        key = f"{rail}_V"

        def read_dut() -> float:
            sensors = dut.sensors()
            if key not in sensors:
                raise InstrumentError(f"the DUT reports no {key} telemetry",
                                      hint=f"it reports: {', '.join(sorted(sensors))}")
            return float(sensors[key])

        return read_dut
    if via == "dmm":
        dmm = _dmm_for(ctx, rail, rails)
        return lambda: float(dmm.measure("dc_voltage"))
    role, ch = ctx.signal(rail)
    kind = role_kind(role)
    if kind == "temperature_scanner":
        return lambda: float(role.read_voltage(ch))
    if kind == "multimeter":
        return lambda: float(role.measure("dc_voltage"))
    if kind == "power_supply":
        return lambda: float(role.measure_voltage(ch))
    raise FixtureError(f"rail {rail} is wired to {ctx.fixture.channels[rail]}, which cannot measure volts")


@implementation("power.rails")
def power_rails(ctx: Any, args: Any) -> None:
    """Each rail's DC voltage (mean of ``samples`` readings), judged against its limits."""
    start = len(ctx.recorded)
    for i, rail in enumerate(args.rails):
        ctx.progress(f"rails: {rail} ({i + 1} of {len(args.rails)})", i / len(args.rails))  # the one read now
        read = _dc_reader(ctx, rail, args.via, args.rails)
        values = [read() for _ in range(args.samples)]
        ctx.measure(rail, statistics.fmean(values), "V", labels={"rail": rail})
    finish(ctx, start)


def _ac_property_reader(ctx: Any, rail: str) -> Callable[[], float] | None:
    """The rail's fixture channel read as AC volts (a scanner with an ``ac_voltage`` property)."""
    if rail not in ctx.fixture.channels:
        return None
    role, ch = ctx.signal(rail)
    if role_kind(role) == "multimeter":
        return lambda: float(role.measure("ac_voltage"))
    ref = ctx.fixture.channel(rail)
    if "ac_voltage" not in raw_driver(ctx, ref.role).profile.properties:
        return None
    return lambda: float(raw_driver(ctx, ref.role).get("ac_voltage", ch))


def _ripple_reader(ctx: Any, rail: str, via: str, rails: list[str]) -> Callable[[], float]:
    """A reader of the rail's AC (true rms) voltage in volts."""
    if via == "scope":
        raise FixtureError("power.ripple via: scope needs an oscilloscope role, which labctl has no interface for yet",
                           hint="measure ripple via: dmm (true-rms AC) or via: daq")
    if via == "dmm":
        try:
            dmm = _dmm_for(ctx, rail, rails)
            return lambda: float(dmm.measure("ac_voltage"))
        except FixtureError:
            fallback = _ac_property_reader(ctx, rail)
            if fallback is None:
                raise
            ctx.log(f"{rail}: no multimeter is wired to it; reading AC volts on its channel "
                    f"{ctx.fixture.channels[rail]}", "warning")
            return fallback
    reader = _ac_property_reader(ctx, rail)
    if reader is None:
        where = ctx.fixture.channels.get(rail, "no channel")
        raise FixtureError(f"rail {rail} ({where}): that instrument's profile cannot read AC volts",
                           hint="give its profile an ac_voltage property, or measure ripple via: dmm")
    return reader


@implementation("power.ripple")
def power_ripple(ctx: Any, args: Any) -> None:
    """Ripple in mV peak-to-peak, from a true-rms AC reading (p-p = 2·√2·rms, a sine's crest
    factor: a DMM cannot see spikes; use a scope for those)."""
    start = len(ctx.recorded)
    for i, rail in enumerate(args.rails):
        ctx.progress(f"ripple: {rail} ({i + 1} of {len(args.rails)})", i / len(args.rails))  # the one read now
        rms = _ripple_reader(ctx, rail, args.via, args.rails)()
        ctx.log(f"{rail}: {rms * 1e3:.3f} mV rms (bandwidth {args.bandwidth})", "debug")
        ctx.measure(rail, rms * SQRT8 * 1e3, "mV", labels={"rail": rail})
    finish(ctx, start)


# ------------------------------------------------------------------------------------------
# power.sequencing


def _pg_times_from_dut(ctx: Any, args: Any) -> dict[str, float | None]:
    """Power-good times (ms after VIN) as the DUT's sequencer logged them for the last power-up."""
    dut = ctx.role("dut")
    psu, ch = input_channel(ctx)
    if not psu.output(ch):
        if float(psu.voltage(ch)) <= 0:
            ctx.fail("power.sequencing: the input supply is off and has no voltage set; run power.on first")
        switch_on(ctx, psu, ch, "VIN")
    last: dict[str, float | None] = {}

    def all_up() -> bool:
        last.update(dut.power_good_times())
        return all(last.get(r) is not None for r in args.order)

    def describe(elapsed: float) -> str:
        up = sum(1 for r in args.order if last.get(r) is not None)
        return f"power-good: {up} of {len(args.order)} rails up ({fmt_duration(elapsed)} of {fmt_duration(args.timeout)})"

    wait_for(ctx, all_up, timeout=args.timeout, poll=min(0.05, args.timeout), describe=describe,
             what="power-good of every rail")
    return {r: last.get(r) for r in args.order}


def _pg_times_from_volts(ctx: Any, args: Any) -> dict[str, float | None]:
    """Cycle the input and poll the rails' voltages until they settle: coarse (one scan per
    poll); a rail is up from the first scan at ``threshold`` of its settled value."""
    psu, ch = input_channel(ctx)
    readers = {r: _dc_reader(ctx, r, "daq", args.order) for r in args.order}
    psu.set_output(ch, False)
    ctx.sleep(1.0)
    switch_on(ctx, psu, ch, "VIN")
    t_on = ctx.clock.monotonic()
    scans: list[tuple[float, dict[str, float]]] = []
    while ctx.clock.monotonic() - t_on < args.timeout:
        scan = {rail: read() for rail, read in readers.items()}
        scans.append(((ctx.clock.monotonic() - t_on) * 1000.0, scan))
        if len(scans) >= 2 and all(v > 0.05 and abs(v - scans[-2][1][r]) <= 0.02 * v for r, v in scan.items()):
            break  # every rail up and steady
        ctx.sleep(0.001)
    final = scans[-1][1] if scans else {}
    out: dict[str, float | None] = {}
    for rail in args.order:
        level = final.get(rail, 0.0)
        hits = [t for t, scan in scans if level > 0.05 and scan[rail] >= args.threshold * level]
        out[rail] = hits[0] if hits else None
    ctx.log("sequencing measured by polling rail voltages: the resolution is one scan", "warning")
    return out


@implementation("power.sequencing")
def power_sequencing(ctx: Any, args: Any) -> None:
    """Power-good order and the delay between consecutive rails (window gap_min..gap_max)."""
    start = len(ctx.recorded)
    has_dut_times = ctx.has_role("dut") and hasattr(ctx.role("dut"), "power_good_times")
    times = _pg_times_from_dut(ctx, args) if has_dut_times else _pg_times_from_volts(ctx, args)
    problems = [f"{r}: power-good never came up (waited {fmt_duration(args.timeout)})"
                for r in args.order if times[r] is None]
    up = sorted((t, r) for r, t in times.items() if t is not None)
    observed = ",".join(r for _t, r in up)
    ctx.measure("order", observed, "", limit=limit_or(ctx, "order", unit="", equals=",".join(args.order)))
    for a, b in zip(args.order, args.order[1:], strict=False):
        ta, tb = times[a], times[b]
        if ta is None or tb is None:
            continue
        limit = limit_or(ctx, f"{a}->{b}", unit="ms", lo=args.gap_min * 1e3, hi=args.gap_max * 1e3)
        ctx.measure(f"{a}->{b}", tb - ta, "ms", labels={"rail": b}, limit=limit)
    finish(ctx, start, problems)


# ------------------------------------------------------------------------------------------
# power.efficiency / budget / perf_per_watt


@implementation("power.efficiency")
def power_efficiency(ctx: Any, args: Any) -> None:
    """Incremental efficiency at each load step: power into the load ÷ the extra input power
    it costs (input power with the load off is the baseline). Every step is judged."""
    start = len(ctx.recorded)
    load = ctx.role("load")
    load.set_input(False)
    ctx.sleep(args.dwell)
    _v, _i, p_base = input_power(ctx, args.input)
    if p_base < 0.01:
        ctx.fail(f"{args.input}: the DUT draws no input power ({p_base:.3g} W): is it powered (power.on)?")
    last_in = p_base
    try:
        load.set_mode("CC")
        for n, step in enumerate(args.load_steps):
            amps = step.to("A")
            load.set_level(amps, "CC")
            load.set_input(True)
            ctx.progress(f"efficiency: {amps:g} A ({n + 1} of {len(args.load_steps)}), dwell {fmt_duration(args.dwell)}",
                         n / len(args.load_steps))
            ctx.sleep(args.dwell)
            p_out = float(load.measure_power())
            _v, _i, last_in = input_power(ctx, args.input)
            extra = last_in - p_base
            if extra <= 1e-3 or p_out <= 1e-3:
                ctx.fail(f"load {amps:g} A: the load draws {p_out:.3g} W and the input rose {extra:.3g} W; "
                         f"is the load wired to the DUT and the rail up?")
            eff = 100.0 * p_out / extra
            ctx.sample("efficiency", eff, "%")
            ctx.log(f"load {amps:g} A: out {p_out:.3f} W, in {last_in:.3f} W (base {p_base:.3f} W)", "debug")
            ctx.measure("efficiency", eff, "%", labels={"load": f"{amps:g} A"})
    finally:
        cleanup(ctx, lambda: load.set_input(False))
    ctx.measure("input_power", last_in, "W", labels={"load": f"{args.load_steps[-1].to('A'):g} A"})
    finish(ctx, start)


def _poll_power(ctx: Any, duration: float, what: str, extra: Callable[[], None] | None = None) -> list[float]:
    """Input power every ``duration/20`` (at least 0.5 s) over ``duration``; samples recorded."""
    powers: list[float] = []
    poll = max(0.5, duration / 20.0)
    began = ctx.clock.monotonic()
    while True:
        _v, _i, p = input_power(ctx)
        powers.append(p)
        ctx.sample("input_power", p, "W")
        if extra is not None:
            extra()
        elapsed = ctx.clock.monotonic() - began
        if elapsed >= duration:
            return powers
        ctx.progress(f"{what}: {p:.2f} W, {fmt_duration(elapsed)} of {fmt_duration(duration)}", elapsed / duration)
        ctx.sleep(min(poll, duration - elapsed))


@implementation("power.budget")
def power_budget(ctx: Any, args: Any) -> None:
    """Mean and peak input power while the DUT runs ``workload``."""
    start = len(ctx.recorded)
    restore = set_workload(ctx, workload_percent(args.workload))
    try:
        powers = _poll_power(ctx, args.duration, f"power budget ({args.workload})")
    finally:
        cleanup(ctx, restore)
    labels = {"load": args.workload}
    ctx.measure("input_power", statistics.fmean(powers), "W", labels=labels)
    ctx.measure("peak_power", max(powers), "W", labels=labels)
    finish(ctx, start)


def _is_cumulative(counter: str) -> bool:
    name = counter.lower()
    return name == "ops" or name.endswith(("_ops", "_count", "ops_total", "count"))


@implementation("power.perf_per_watt")
def perf_per_watt(ctx: Any, args: Any) -> None:
    """Throughput ÷ input power at a stated load. A cumulative counter (``ops``, ``*_count``)
    is differenced over the window (operations/s, 1 TOPS = 1e12 ops/s); a rate counter
    (``throughput``, in ``throughput_unit``) is averaged."""
    from labctl.units import convert

    start = len(ctx.recorded)
    dut = ctx.role("dut")
    percent = workload_percent(args.workload, args.load)
    restore = set_workload(ctx, percent)
    cumulative = _is_cumulative(args.counter)
    rates: list[float] = []
    throttled: list[bool] = []

    def read_counter() -> float:
        perf = dut.perf()
        if args.counter not in perf:
            raise InstrumentError(f"the DUT has no counter {args.counter!r}", hint=f"it reports: {', '.join(perf)}")
        return float(perf[args.counter])

    def timed(read: Callable[[], float]) -> tuple[float, float]:
        """A reading and the midpoint of the time it took (the instant it was taken)."""
        before = ctx.clock.monotonic()
        value = read()
        return value, (before + ctx.clock.monotonic()) / 2.0

    def each_poll() -> None:
        if not cumulative:
            rates.append(read_counter())
            ctx.sample("throughput", rates[-1], args.throughput_unit)
        sensors = dut.sensors()
        throttled.append(bool(sensors.get("throttle", 0)))

    try:
        ctx.sleep(min(2.0, args.duration / 10.0))  # let the workload ramp
        c0, t0 = timed(read_counter) if cumulative else (0.0, 0.0)
        powers = _poll_power(ctx, args.duration, f"perf/W at {percent:g} % {args.workload}", each_poll)
        if cumulative:
            c1, t1 = timed(read_counter)
            tops = (c1 - c0) / max(t1 - t0, 1e-9) / 1e12
        else:
            tops = convert(statistics.fmean(rates), args.throughput_unit, "TOPS")
    finally:
        cleanup(ctx, restore)
    power = statistics.fmean(powers)
    if any(throttled):
        ctx.log(f"the DUT throttled during {sum(throttled)} of {len(throttled)} polls", "warning")
    labels = {"load": f"{percent:g} % {args.workload}"}
    ctx.measure("throughput", tops, "TOPS", labels=labels)
    ctx.measure("input_power", power, "W", labels=labels)
    ctx.measure("perf_per_watt", tops / power if power > 0 else 0.0, "TOPS/W", labels=labels)
    if power <= 0:
        finish(ctx, start, [f"input power is {fmt_value(power, 'W')}: is the DUT powered?"])
    finish(ctx, start)
