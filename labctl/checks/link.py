"""Link checks: link.training, link.ber, link.margin, link.bathtub."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from labctl.checks.ber import ber_upper_bound, test_duration
from labctl.checks.generic import (
    cleanup,
    finish,
    fmt_duration,
    limit_or,
    plan_limit,
    raw_driver,
    wait_for,
)
from labctl.checks.registry import implementation
from labctl.engine.events import Verdict
from labctl.errors import InstrumentError

# ------------------------------------------------------------------------------------------
# helpers


def _lane_key(lane: str) -> tuple[int, str]:
    return (int(lane), lane) if str(lane).isdigit() else (10**9, str(lane))


def select_lanes(requested: Any, available: Sequence[str]) -> list[str]:
    """``all`` -> every available lane; a list -> those lanes (as strings)."""
    if requested == "all":
        return sorted((str(x) for x in available), key=_lane_key)
    return [str(x) for x in requested]


def _dut_tx_pattern(ctx: Any, pattern: str) -> Any:
    """Have the DUT transmit (and check) ``pattern``; returns the DUT role or None."""
    if not ctx.has_role("dut"):
        return None
    dut = ctx.role("dut")
    dut.prbs_start(pattern)
    return dut


# ------------------------------------------------------------------------------------------
# link.training


def _retrain(ctx: Any) -> None:
    dut = ctx.role("dut")
    for method in ("link_retrain", "retrain"):
        if callable(getattr(dut, method, None)):
            getattr(dut, method)()
            return
    driver = raw_driver(ctx, "dut")
    if "link_retrain" not in driver.profile.actions:
        raise InstrumentError("the DUT console profile has no link_retrain action", instrument="dut",
                              hint="add a link_retrain action to the DUT's driver profile")
    driver.call("link_retrain")


def _training_problems(status: dict[str, Any], lanes: list[str], args: Any) -> list[str]:
    speed = args.speed.to("GT/s")
    problems: list[str] = []
    per_lane = status.get("lanes", {})
    for lane in lanes:
        info = per_lane.get(lane)
        if info is None:
            problems.append(f"lane {lane}: not reported by the DUT")
            continue
        if info["ltssm"] != args.state:
            problems.append(f"lane {lane}: LTSSM {info['ltssm']}, expected {args.state}")
        if info["speed_gts"] + 1e-9 < speed:
            problems.append(f"lane {lane}: {info['speed_gts']:g} GT/s, expected {speed:g} GT/s")
    if args.width is not None and status.get("width") is not None and int(status["width"]) != args.width:
        problems.append(f"link: width x{status['width']}, expected x{args.width}")
    return problems


@implementation("link.training")
def link_training(ctx: Any, args: Any) -> None:
    """Every lane trained to ``speed`` / ``state`` (and the link to ``width``); then ``retrain``
    retrain cycles, each given ``timeout`` to come back; success ratio recorded."""
    start = len(ctx.recorded)
    dut = ctx.role("dut")
    holder: dict[str, Any] = {}

    def trained() -> bool:
        holder["status"] = status = dut.link_status()
        lanes = select_lanes(args.lanes, status.get("lanes", {}).keys())
        holder["lanes"] = lanes
        holder["problems"] = _training_problems(status, lanes, args)
        return not holder["problems"]

    wait_for(ctx, trained, timeout=args.timeout, poll=min(0.05, args.timeout), what="link training",
             describe=lambda t: f"link training: {len(holder.get('problems', []))} lane problems, "
                                f"{fmt_duration(t)} of {fmt_duration(args.timeout)}")
    status, lanes, problems = holder["status"], holder["lanes"], list(holder["problems"])
    per_lane = status.get("lanes", {})
    speeds = [per_lane[ln]["speed_gts"] for ln in lanes if ln in per_lane]
    states = {ln: per_lane[ln]["ltssm"] for ln in lanes if ln in per_lane}
    ctx.measure("speed", min(speeds) if speeds else 0.0, "GT/s",
                limit=limit_or(ctx, "speed", unit="GT/s", lo=args.speed.to("GT/s")))
    if status.get("width") is not None:
        ctx.measure("width", int(status["width"]), "",
                    limit=limit_or(ctx, "width", unit="", equals=args.width) if args.width else plan_limit(ctx, "width"))
    common = set(states.values())
    state_text = common.pop() if len(common) == 1 else ", ".join(f"lane {ln}: {s}" for ln, s in states.items())
    ctx.measure("state", state_text, "", limit=limit_or(ctx, "state", unit="", equals=args.state))
    ok = 0
    failures: list[str] = []
    for n in range(1, args.retrain + 1):
        ctx.progress(f"retrain {n} of {args.retrain}: {ok} trained so far", (n - 1) / args.retrain)
        _retrain(ctx)
        if wait_for(ctx, trained, timeout=args.timeout, poll=min(0.05, args.timeout), what=f"retrain {n}"):
            ok += 1
        else:
            failures.append(f"retrain {n}: " + "; ".join(holder["problems"][:3]))
    if args.retrain:
        ratio = 100.0 * ok / args.retrain
        for text in failures[:5]:
            ctx.log(text, "warning")
        if failures:
            problems.append(f"{len(failures)} of {args.retrain} retrains failed (first: {failures[0]})")
    else:
        ratio = 100.0 if not problems else 0.0
    ctx.measure("success_ratio", ratio, "%",
                limit=limit_or(ctx, "success_ratio", unit="%", lo=100.0) if args.retrain else plan_limit(ctx, "success_ratio"))
    finish(ctx, start, problems)


# ------------------------------------------------------------------------------------------
# link.ber

EXACT_BOUND_MAX_ERRORS = 10_000


def _normal_quantile(p: float) -> float:
    """z with Φ(z) = p (bisection on erfc)."""
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(-mid / math.sqrt(2)) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def upper_bound(bits: float, errors: int, confidence: float) -> float:
    """The Poisson BER upper bound (:func:`labctl.checks.ber.ber_upper_bound`); above
    10 000 errors, where the exact sum gets slow, the Wilson–Hilferty form of the same bound
    (λ = ½·χ²(CL, 2k+2)), which agrees to better than 0.1 % there."""
    if errors <= EXACT_BOUND_MAX_ERRORS:
        return ber_upper_bound(bits, errors, confidence)
    n = errors + 1
    z = _normal_quantile(confidence)
    lam = n * (1.0 - 1.0 / (9.0 * n) + z * math.sqrt(1.0 / (9.0 * n))) ** 3
    return lam / bits



def _bert_run(ctx: Any, args: Any, duration: float) -> dict[str, Any]:
    bert = ctx.role("bert")
    lanes = select_lanes(args.lanes, bert.lanes)
    rate = args.line_rate.to("bit/s")
    _dut_tx_pattern(ctx, args.pattern)
    bert.configure(args.pattern, rate_gbps=rate / 1e9, lanes=lanes)
    bert.set_gating(duration, lanes)
    bert.start()
    bert.running()  # a query: when it answers, the BERT has started (a command alone proves nothing)
    began = ctx.clock.monotonic()
    poll = min(30.0, max(0.5, duration / 40.0))
    grace = duration * 1.5 + 60.0  # the BERT ends its own gate; this only guards a hung one
    errors_every = max(poll, duration / 4.0)  # per-lane counters cost a query each: read them sparingly
    last_errors: dict[str, int] = {}
    read_at = 0.0
    try:
        while True:
            elapsed = ctx.clock.monotonic() - began
            if not bert.running():
                break
            if elapsed >= grace:
                ctx.log(f"the BERT still runs {fmt_duration(elapsed - duration)} after its gating period; stopping it",
                        "warning")
                break
            if elapsed - read_at >= errors_every:
                last_errors = {ln: bert.results(ln).errors for ln in lanes}
                read_at = elapsed
            bad = ", ".join(f"lane {ln}: {e}" for ln, e in last_errors.items() if e)
            ctx.progress(f"BER {args.pattern} at {rate / 1e9:g} Gb/s on {len(lanes)} lanes: "
                         f"{fmt_duration(min(elapsed, duration))} of {fmt_duration(duration)}, "
                         f"errors {bad or 'none'}", min(1.0, elapsed / duration))
            ctx.sleep(min(poll, duration - elapsed) if elapsed < duration - 0.2 else 0.5)
    finally:
        cleanup(ctx, bert.stop)
    return {ln: bert.results(ln) for ln in lanes}


def _dut_run(ctx: Any, args: Any, duration: float) -> dict[str, Any]:
    dut = ctx.role("dut")
    before = dut.prbs_counters()
    dut.prbs_start(args.pattern)
    began = ctx.clock.monotonic()
    needed = duration * args.line_rate.to("bit/s")
    try:
        while (elapsed := ctx.clock.monotonic() - began) < duration:
            ctx.progress(f"BER (DUT checkers) {args.pattern}: {fmt_duration(elapsed)} of {fmt_duration(duration)}",
                         elapsed / duration)
            ctx.sleep(min(max(0.5, duration / 40.0), duration - elapsed))

        def enough() -> bool:  # the DUT counts on its own time: wait until it has compared the bits
            counts = dut.prbs_counters()
            return all(c.bits - (before[ln].bits if ln in before else 0) >= needed for ln, c in counts.items())

        if not wait_for(ctx, enough, timeout=duration * 0.5 + 30.0, poll=1.0, what="the DUT's PRBS checkers"):
            ctx.log("the DUT's checkers compared fewer bits than the test needs", "warning")
    finally:
        cleanup(ctx, dut.prbs_stop)
    after = dut.prbs_counters()
    lanes = select_lanes(args.lanes, after.keys())
    out: dict[str, Any] = {}
    for ln in lanes:
        a, b = after.get(ln), before.get(ln)
        if a is None:
            raise InstrumentError(f"the DUT reports no PRBS counters for lane {ln}", instrument="dut")
        bits = a.bits - (b.bits if b is not None and b.bits <= a.bits else 0)
        errors = a.errors - (b.errors if b is not None and b.errors <= a.errors else 0)
        out[ln] = type(a)(errors=errors, bits=bits, ber=errors / bits if bits else math.nan, lane=ln)
    return out


@implementation("link.ber")
def link_ber(ctx: Any, args: Any) -> None:
    """Gated PRBS run per lane for the bits that prove ``target_ber`` at ``confidence`` with
    zero errors (N = −ln(1−CL)/BER); the verdict is on each lane's BER upper bound."""
    start = len(ctx.recorded)
    rate = args.line_rate.to("bit/s")
    cl = args.confidence
    duration = test_duration(args.target_ber, cl, rate)
    needed = duration * rate
    ctx.log(f"BER < {args.target_ber:g} at {cl:.0%} CL needs {needed:.3g} bits: {fmt_duration(duration)} "
            f"at {rate / 1e9:g} Gb/s per lane")
    results = _bert_run(ctx, args, duration) if args.via == "bert" else _dut_run(ctx, args, duration)
    own = plan_limit(ctx, "ber")
    problems: list[str] = []
    for lane, res in results.items():
        labels = {"lane": lane}
        bits, errors = int(res.bits), int(res.errors)
        if bits <= 0:
            bound = 1.0  # nothing compared: the BER could be anything
            problems.append(f"lane {lane}: no bits compared (no pattern sync: check {args.pattern}, "
                            f"the line rate and the link)")
        else:
            bound = upper_bound(bits, errors, cl)
        limit = own if own is not None else limit_or(ctx, "ber", unit="", hi=args.target_ber)
        verdict = ctx.measure("ber", bound, "", labels=labels, limit=limit)
        ctx.measure("errors", errors, "", labels=labels)
        ctx.measure("bits", bits, "", labels=labels)
        if bits < needed * 0.99 and bits > 0:
            ctx.log(f"lane {lane}: compared {bits:.3g} of {needed:.3g} bits (sync loss?)", "warning")
        if verdict is Verdict.FAIL and bits > 0:
            target = f"target {args.target_ber:g}" if own is None else f"limit {own.describe()}"
            short = f"; only {bits:.3g} of {needed:.3g} bits compared" if bits < needed * 0.999 else ""
            problems.append(f"lane {lane}: BER upper bound {bound:.2g} > {target} at {cl * 100:g} % CL "
                            f"({errors} errors in {bits:.3g} bits{short})")
    finish(ctx, start, problems, described={"ber"})


# ------------------------------------------------------------------------------------------
# link.margin


@implementation("link.margin")
def link_margin(ctx: Any, args: Any) -> None:
    """Eye height (mV) and width (UI) per lane, as the BERT measures them."""
    start = len(ctx.recorded)
    bert = ctx.role("bert")
    lanes = select_lanes(args.lanes, bert.lanes)
    _dut_tx_pattern(ctx, args.pattern)
    bert.configure(args.pattern, lanes=lanes)
    problems: list[str] = []
    for n, lane in enumerate(lanes, 1):
        eye = bert.eye(lane)
        ctx.progress(f"eye: lane {lane} ({n} of {len(lanes)})", n / len(lanes))
        for key, name, unit in (("height", "eye_height", "mV"), ("width", "eye_width", "UI")):
            if key not in eye:
                problems.append(f"lane {lane}: the BERT does not measure eye {key}")
                continue
            ctx.measure(name, float(eye[key]), unit, labels={"lane": lane})
    finish(ctx, start, problems)


# ------------------------------------------------------------------------------------------
# link.bathtub

_SAMPLERS = {"phase": ("sample_phase", "clock_delay"), "voltage": ("decision_threshold", "threshold")}


def _q_of(ber: float) -> float:
    """Q with BER = ½·erfc(Q/√2) (bisection; BER in (0, 0.5))."""
    lo, hi = 0.0, 40.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(mid / math.sqrt(2)) > ber:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def bathtub_opening(points: list[tuple[float, float]], target_ber: float) -> float:
    """Opening at ``target_ber`` of a bathtub (position, BER) by dual-Dirac extrapolation: on
    each side the points with 0 < BER < 0.5 are fitted as Q(position) linear and solved for
    Q(target). 0 when the bathtub never opens."""
    points = sorted(points)
    if not points:
        return 0.0
    q_target = _q_of(target_ber)
    best = min(range(len(points)), key=lambda i: points[i][1])
    if points[best][1] >= 0.5:
        return 0.0  # no point where the receiver even finds the pattern

    def edge(side: list[tuple[float, float]]) -> float:
        """``side`` runs from the sweep's end towards the centre."""
        fit = [(x, _q_of(b)) for x, b in side if 0 < b < 0.5]
        if len(fit) >= 2:
            n = len(fit)
            mx, my = sum(x for x, _ in fit) / n, sum(q for _, q in fit) / n
            den = sum((x - mx) ** 2 for x, _ in fit)
            slope = sum((x - mx) * (q - my) for x, q in fit) / den if den else 0.0
            if slope:
                return mx + (q_target - my) / slope
        errored = [x for x, b in side if b > 0]
        return errored[-1] if errored else side[0][0]  # not enough errors to fit: the last errored point

    lo = edge(points[: best + 1])
    hi = edge(points[best:][::-1])
    return max(0.0, hi - lo)


def _sampler(ctx: Any, axis: str) -> Any:
    """``move(lane, position)`` with the position in UI (phase) or mV (threshold); a profile
    property in another unit (the MP1900A's clock delay in mUI, its threshold in V) gets the
    position converted to its own unit."""
    from labctl.units import convert

    bert = ctx.role("bert")
    method = f"set_{_SAMPLERS[axis][0]}"
    if callable(getattr(bert, method, None)):
        return lambda lane, value: getattr(bert, method)(lane, value)
    driver = raw_driver(ctx, "bert")
    own = "UI" if axis == "phase" else "mV"
    for prop in _SAMPLERS[axis]:
        spec = driver.profile.properties.get(prop)
        if spec is not None and spec.set is not None:
            unit = spec.unit or own
            return lambda lane, value: raw_driver(ctx, "bert").set(prop, convert(value, own, unit), lane)
    raise InstrumentError(f"the bert ({driver.profile.name}) cannot move its sampling "
                          f"{'phase' if axis == 'phase' else 'threshold'}",
                          instrument="bert",
                          hint=f"its profile needs a settable property {' or '.join(_SAMPLERS[axis])}")


@implementation("link.bathtub")
def link_bathtub(ctx: Any, args: Any) -> None:
    """BER against sampling phase (UI, −0.5..0.5) or threshold (mV, ±half the eye height) per
    lane; the opening at ``target_ber`` is extrapolated (dual-Dirac) from the measured points."""
    start = len(ctx.recorded)
    bert = ctx.role("bert")
    lanes = select_lanes(args.lanes, bert.lanes)
    move = _sampler(ctx, args.axis)
    if args.axis == "phase":
        span, unit = 0.5, "UI"
    else:
        heights = [bert.eye(ln).get("height", 0.0) for ln in lanes]
        span, unit = max(20.0, 0.75 * max(heights, default=0.0)), "mV"
    positions = [-span + 2 * span * i / (args.points - 1) for i in range(args.points)]
    curves: dict[str, list[tuple[float, float]]] = {ln: [] for ln in lanes}
    try:
        for n, pos in enumerate(positions, 1):
            for ln in lanes:
                move(ln, pos)
            bert.set_gating(args.dwell, lanes)
            bert.start()
            ctx.sleep(args.dwell)
            if not wait_for(ctx, lambda: not bert.running(), timeout=args.dwell + 30.0, poll=0.2, what="bathtub point"):
                ctx.log(f"bathtub point {n}: the BERT did not end its gate", "warning")
            for ln in lanes:
                res = bert.results(ln)
                ber = res.errors / res.bits if res.bits else 0.5
                curves[ln].append((pos, ber))
                ctx.sample(f"bathtub_lane{ln}", ber, "")
            ctx.progress(f"bathtub ({args.axis}): point {n} of {args.points} at {pos:+.3g} {unit}", n / args.points)
    finally:
        cleanup(ctx, *[functools.partial(move, ln, 0.0) for ln in lanes], bert.stop)
    for ln in lanes:
        ctx.measure("opening", bathtub_opening(curves[ln], args.target_ber), unit, labels={"lane": ln})
    finish(ctx, start)
