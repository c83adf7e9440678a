"""Generic checks: ``measure``, ``scpi``, ``console``, ``prompt``, ``wait``, ``set``.

Also the helpers every check module of the library shares (step verdict messages, limits
computed from arguments, reading role properties by name, input power).
"""

from __future__ import annotations

import re
import statistics
import sys
from collections.abc import Callable
from typing import Any

from labctl.checks.registry import implementation
from labctl.engine.events import Verdict
from labctl.errors import InstrumentError, InstrumentReplyError, InstrumentTimeout, PlanError
from labctl.instruments.parsers import quoted

# ------------------------------------------------------------------------------------------
# shared helpers


def fmt_duration(seconds: float) -> str:
    """``100`` -> ``1m40s``; ``3600`` -> ``1h``; ``2.5`` -> ``2.5s``."""
    seconds = max(0.0, float(seconds))
    if seconds < 10:
        return f"{seconds:.1f}s".replace(".0s", "s")
    total = int(round(seconds))
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    parts = [f"{h}h" if h else "", f"{m}m" if m else "", f"{s}s" if s else ""]
    return "".join(parts) or "0s"


def fmt_value(value: Any, unit: str = "") -> str:
    if isinstance(value, float):
        text = f"{value:.3g}" if (value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e5)) else f"{value:.4g}"
    else:
        text = str(value)
    return f"{text} {unit}".strip()


def plan_limit(ctx: Any, name: str) -> Any:
    """The plan's own limit for measurement ``name`` (not the ``*`` fallback), or None."""
    return ctx.limits.get(name)


def limit_or(ctx: Any, name: str, *, unit: str, lo: float | None = None, hi: float | None = None,
             equals: Any = None) -> Any:
    """The plan's limit for ``name`` if it gives one, else a limit computed from the arguments."""
    own = plan_limit(ctx, name)
    if own is not None:
        return own
    from labctl.plan.limits import ResolvedLimit

    return ResolvedLimit(unit=unit, lo=lo, hi=hi, equals=equals)


def _label_text(labels: dict[str, str]) -> str:
    for key in ("lane", "rail", "sensor", "channel", "load", "segment"):
        if key in labels:
            return f"{key} {labels[key]}" if key in ("lane", "load", "segment") else labels[key]
    return ", ".join(f"{k} {v}" for k, v in labels.items())


def describe_failure(rec: Any) -> str:
    """``lane 3: ber 2.1e-09 outside x ≤ 1e-12`` for one failed measurement."""
    where = _label_text(rec.labels)
    limit = rec.limits.text if rec.limits is not None and rec.limits.text else "its limit"
    head = f"{where}: " if where and where != rec.name else ""
    return f"{head}{rec.name} {fmt_value(rec.value, rec.unit)} outside {limit}"


def finish(ctx: Any, start: int = 0, extra: list[str] | None = None, described: set[str] | None = None) -> None:
    """End the check: FAIL with one message naming every failed measurement (and ``extra``
    problems) recorded since ``len(ctx.recorded) == start``. Failed measurements whose name is
    in ``described`` are already explained by ``extra``."""
    fail = Verdict.FAIL
    recorded = ctx.recorded
    if not extra and not any(recorded[i].verdict is fail for i in range(start, len(recorded))):
        return  # the common case: nothing failed
    problems = list(extra or [])
    problems += [describe_failure(r) for r in recorded[start:]
                 if r.verdict is fail and r.name not in (described or set())]
    if problems:
        ctx.fail("; ".join(problems))


def role_kind(role: Any) -> str:
    """``power_supply``, ``dut_console`` … of a role object (through the context's proxy)."""
    kind = getattr(role, "kind", "")
    return kind if isinstance(kind, str) else ""


def input_channel(ctx: Any, name: str = "VIN") -> tuple[Any, str]:
    """The supply feeding the DUT: the named signal ``name`` (default VIN), else psu channel 1."""
    if name in getattr(ctx.fixture, "channels", {}):
        return ctx.signal(name)
    return ctx.role("psu"), "1"


def _ocp_delay_text(done: dict[str, Any]) -> str:
    """How long the supply's OCP tolerates the limit, as read back (supplies with a delay)."""
    if "ocp_delay" not in done:
        return ""
    delay = float(done["ocp_delay"])
    return ", no delay" if delay == 0 else f" after {delay * 1000:g} ms"


def switch_on(ctx: Any, psu: Any, channel: str, name: str) -> dict[str, Any]:
    """Switch a supply output on (the role programs the supply's protection first) and log
    what protects the board from then on, whatever happens to labctl."""
    psu.set_output(channel, True)
    done = psu.protection(channel) if hasattr(psu, "protection") else {}
    if not done:
        ctx.log(f"{name}: the supply has no programmable protection in its profile: only labctl guards the board",
                "warning")
        return done
    parts = [f"OVP {done['ovp_level']:g} V" if "ovp_level" in done else "",
             (f"OCP on at {done['current_limit']:g} A" + _ocp_delay_text(done) if done.get("ocp_enabled") else "OCP off")
             if "ocp_enabled" in done else "",
             f"current limit {done['current_limit']:g} A"]
    ctx.log(f"{name}: supply protection programmed before switching on: {', '.join(p for p in parts if p)}")
    return done


def input_power(ctx: Any, name: str = "VIN") -> tuple[float, float, float]:
    """(volts, amps, watts) at the DUT's input supply."""
    psu, ch = input_channel(ctx, name)
    volts = float(psu.measure_voltage(ch))
    amps = float(psu.measure_current(ch))
    return volts, amps, volts * amps


def workload_percent(workload: str, load: float | None = None) -> float:
    """A workload name as the DUT's load in percent: ``idle`` 0, ``stress 60`` 60, ``60 %`` 60,
    any other name ``load`` (a ratio, default 1.0) x 100."""
    text = workload.strip().lower()
    if text in ("idle", "off", "none", "0"):
        return 0.0
    m = re.search(r"([\d.]+)\s*%?\s*$", text)
    if m and (text.endswith("%") or " " in text or text[0].isdigit()):
        return max(0.0, min(100.0, float(m.group(1))))
    return max(0.0, min(100.0, 100.0 * (1.0 if load is None else load)))


def set_workload(ctx: Any, percent: float) -> Callable[[], None]:
    """Put the DUT under ``percent`` load; returns a function that restores the previous load."""
    dut = ctx.role("dut")
    try:
        before = float(dut.load())
    except (AttributeError, InstrumentError):
        before = 0.0
    dut.set_load(percent)
    return lambda: dut.set_load(before)


def cleanup(ctx: Any, *actions: Callable[[], Any]) -> None:
    """Run every clean-up action (load off, workload back, chamber back), even after an abort
    or the step's timeout (the checkpoint is suspended meanwhile) and even when an earlier
    action failed. Failures are logged; the first is raised only when no other exception is
    already on its way out."""
    in_flight = sys.exc_info()[1]
    saved = (ctx.enforce_abort, ctx.deadline)
    ctx.enforce_abort, ctx.deadline = False, None
    first: Exception | None = None
    try:
        for action in actions:
            try:
                action()
            except Exception as err:  # every action runs; the error is reported below
                ctx.log(f"clean-up action failed: {err}", "warning")
                first = first or err
    finally:
        ctx.enforce_abort, ctx.deadline = saved
    if first is not None and in_flight is None:
        raise first


def wait_for(ctx: Any, condition: Callable[[], Any], *, timeout: float, poll: float = 1.0,
             describe: Callable[[float], str] | None = None, what: str = "condition") -> Any:
    """``ctx.wait_until`` that returns None when *its own* timeout runs out. The step's
    ``timeout:`` (and an instrument timeout inside ``condition``) still propagate."""
    from labctl.engine.context import StepTimeout

    try:
        return ctx.wait_until(condition, timeout=timeout, poll=poll, describe=describe, what=what)
    except StepTimeout:
        if ctx.deadline is not None and ctx.clock.monotonic() > ctx.deadline:
            raise
        return None


def check_settings(role: Any, channel: Any, **values: Any) -> None:
    """Refuse, before anything is sent, a setting the role's instrument would refuse (a
    current limit past the supply's range): a check that changes several settings (switches
    an output off first) asks here, so that a refusal leaves the bench as it was. Roles
    without a profile (``check_setting``) are not asked; None values are skipped."""
    check = getattr(role, "check_setting", None)
    if check is None:
        return
    for name, value in values.items():
        if value is not None:
            check(name, value, channel)


def raw_driver(ctx: Any, role: str) -> Any:
    """The role's profile driver (for profile actions and raw SCPI); passes the checkpoint."""
    ctx.checkpoint()
    ctx.roles_used.add(role)
    return ctx.station.driver(role)


# ------------------------------------------------------------------------------------------
# role properties by name (measure / set)

Reader = Callable[[Any, str | None], Any]

_READERS: dict[str, dict[str, tuple[Reader, str]]] = {
    "power_supply": {
        "voltage": (lambda r, c: r.measure_voltage(c), "V"),
        "current": (lambda r, c: r.measure_current(c), "A"),
        "power": (lambda r, c: r.measure_voltage(c) * r.measure_current(c), "W"),
        "voltage_setpoint": (lambda r, c: r.voltage(c), "V"),
        "current_limit": (lambda r, c: r.current_limit(c), "A"),
        "output": (lambda r, c: r.output(c), ""),
    },
    "electronic_load": {
        "voltage": (lambda r, c: r.measure_voltage(), "V"),
        "current": (lambda r, c: r.measure_current(), "A"),
        "power": (lambda r, c: r.measure_power(), "W"),
        "input": (lambda r, c: r.input(), ""),
        "mode": (lambda r, c: r.mode(), ""),
    },
    "multimeter": {
        "voltage": (lambda r, c: r.measure("dc_voltage"), "V"),
        "dc_voltage": (lambda r, c: r.measure("dc_voltage"), "V"),
        "ac_voltage": (lambda r, c: r.measure("ac_voltage"), "V"),
        "current": (lambda r, c: r.measure("dc_current"), "A"),
        "dc_current": (lambda r, c: r.measure("dc_current"), "A"),
        "resistance": (lambda r, c: r.measure("resistance"), "ohm"),
    },
    "temperature_scanner": {
        "temperature": (lambda r, c: r.read_temperature(c), "degC"),
        "voltage": (lambda r, c: r.read_voltage(c), "V"),
    },
    "thermal_chamber": {
        "temperature": (lambda r, c: r.temperature(), "degC"),
        "setpoint": (lambda r, c: r.setpoint(), "degC"),
        "at_temperature": (lambda r, c: r.at_temperature(), ""),
    },
    "link_tester": {
        "errors": (lambda r, c: r.results(c).errors, ""),
        "bits": (lambda r, c: r.results(c).bits, ""),
        "ber": (lambda r, c: r.results(c).ber, ""),
        "eye_height": (lambda r, c: r.eye(c)["height"], "mV"),
        "eye_width": (lambda r, c: r.eye(c)["width"], "UI"),
    },
    "dut_console": {
        "load": (lambda r, c: r.load(), "%"),
    },
}


def _dut_unit(key: str) -> str:
    if key.endswith("_V"):
        return "V"
    if key.endswith("_I"):
        return "A"
    if key.endswith("temp"):
        return "degC"
    if key == "throughput":
        return "TOPS"
    return ""


_CHANNEL_HEAD = re.compile(r"(?:ch|lane|channel)\s*(\w+)", re.IGNORECASE)


def split_target(ctx: Any, path: str) -> tuple[str | None, str]:
    """``ch1.current`` -> (``1``, ``current``); ``VDD_CORE.voltage`` -> (signal, ``voltage``)."""
    parts = path.split(".")
    if len(parts) == 1:
        return None, parts[0]
    head, prop = ".".join(parts[:-1]), parts[-1]
    m = _CHANNEL_HEAD.fullmatch(head)
    return (m.group(1) if m else head), prop


def read_property(ctx: Any, role_name: str, prop: str, channel: str | None) -> tuple[Any, str]:
    """Read ``prop`` of a role: (value, native unit). Role methods first, then DUT telemetry,
    then the profile's property of that name."""
    role = ctx.role(role_name)
    kind = role_kind(role)
    entry = _READERS.get(kind, {}).get(prop.lower())
    if entry is not None:
        reader, unit = entry
        return reader(role, channel), unit
    if kind == "dut_console":
        sensors = role.sensors()
        if prop in sensors:
            return sensors[prop], _dut_unit(prop)
        perf = role.perf()
        if prop in perf:
            return perf[prop], _dut_unit(prop)
    driver = raw_driver(ctx, role_name)
    props = driver.profile.properties
    if prop not in props:
        known = sorted({*_READERS.get(kind, {}), *props})
        raise PlanError(f"role {role_name} has no property {prop!r} (it has: {', '.join(known)})",
                        hint="write property: one of those, e.g. voltage or ch1.current")
    return driver.get(prop, channel), props[prop].unit or ""


def _convert(value: Any, native: str, unit: str | None) -> Any:
    if not unit or not native or unit == native or not isinstance(value, int | float) or isinstance(value, bool):
        return value
    from labctl.units import convert

    return convert(float(value), native, unit)


# ------------------------------------------------------------------------------------------
# measure


def _resolve_channel(ctx: Any, role: str, channel: str | None) -> str | None:
    if channel is None:
        return None
    if channel in getattr(ctx.fixture, "channels", {}):
        ref = ctx.fixture.channel(channel)
        if ref.role != role:
            raise PlanError(f"channel {channel} is wired to role {ref.role}, not {role}",
                            hint=f"write role: {ref.role}, or pick a channel of {role}")
        _target, ch = ctx.signal(channel)
        return ch
    return channel


_STATISTICS: dict[str, Callable[[list[float]], float]] = {
    "mean": statistics.fmean, "min": min, "max": max, "last": lambda v: v[-1]}


@implementation("measure")
def measure(ctx: Any, args: Any) -> None:
    """Read a role property ``samples`` times and record one statistic of it."""
    start = len(ctx.recorded)
    # the arguments read once each (a step's check runs at every step of a long plan)
    role, samples, unit, arg_channel = args.role, args.samples, args.unit, args.channel
    chan_from_path, prop = split_target(ctx, args.property)
    channel = _resolve_channel(ctx, role, arg_channel or chan_from_path)
    values: list[Any] = []
    native = ""
    for i in range(samples):
        value, native = read_property(ctx, role, prop, channel)
        values.append(_convert(value, native, unit))
        if samples > 1:
            ctx.progress(f"{role}.{args.property}: sample {i + 1} of {samples}", (i + 1) / samples)
            if args.interval and i + 1 < samples:
                ctx.sleep(args.interval)
    numeric = [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numeric) == len(values) and numeric:
        result: Any = _STATISTICS[args.statistic](numeric)
    else:
        result = values[-1]
    labels = {"channel": arg_channel} if arg_channel else {}
    ctx.measure("value", result, unit or native, labels=labels)
    finish(ctx, start)


# ------------------------------------------------------------------------------------------
# scpi


def _parse_reply(args: Any, reply: str) -> Any:
    text = reply.strip()
    try:
        if args.parse == "float":
            return float(text.split(",")[0])
        if args.parse == "int":
            return int(float(text.split(",")[0]))
    except ValueError:
        raise InstrumentReplyError(f"reply {quoted(text)} to {args.query!r} is not a number",
                                   instrument=args.role, command=args.query) from None
    if args.parse == "regex":
        m = re.search(args.pattern, text)
        if not m:
            raise InstrumentReplyError(f"reply {quoted(text)} does not match /{args.pattern}/",
                                       instrument=args.role, command=args.query)
        value = m.group(1) if m.groups() else m.group(0)
        return float(value) if args.unit else value
    return text


@implementation("scpi")
def scpi(ctx: Any, args: Any) -> None:
    """Raw commands to the role's instrument; errors it queues are reported with the command."""
    start = len(ctx.recorded)
    driver = raw_driver(ctx, args.role)
    scpi_errors = _has_error_queue(driver)
    for command in args.write:
        ctx.checkpoint()
        driver.write(command)
        ctx.log(f"{args.role} <- {command}", "debug")
        if scpi_errors:
            _raise_queued(driver, args.role, command)
    if args.query:
        ctx.checkpoint()
        reply = driver.query(args.query)
        ctx.log(f"{args.role} -> {reply.strip()}", "debug")
        if scpi_errors:
            _raise_queued(driver, args.role, args.query)
        ctx.measure("value", _parse_reply(args, reply), args.unit or "")
    finish(ctx, start)


def _has_error_queue(driver: Any) -> bool:
    try:
        specs = driver.profile.errors
        specs = specs if isinstance(specs, list | tuple) else [specs]
        return any(getattr(s, "style", "none") != "none" for s in specs)
    except AttributeError:
        return False


def _raise_queued(driver: Any, role: str, command: str) -> None:
    errors = driver.drain_errors()
    if errors:
        text = "; ".join(str(e) for e in errors)
        raise InstrumentError(f"{role} reported {text} after {command!r}", instrument=role, command=command,
                              hint="check the command against the instrument's programming manual")


# ------------------------------------------------------------------------------------------
# console


def _number(text: str) -> float:
    m = re.search(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", text)
    if not m:
        raise InstrumentReplyError(f"{quoted(text)} is not a number")
    return float(m.group(0))


@implementation("console")
def console(ctx: Any, args: Any) -> None:
    """Send a line; the reply must match ``expect`` (the line is re-sent, at most every 0.5 s,
    until it matches or ``timeout`` runs out); named groups are recorded."""
    start = len(ctx.recorded)
    dut = ctx.role("dut")
    rx = re.compile(args.expect, re.MULTILINE)
    state: dict[str, Any] = {"reply": ""}

    def attempt() -> Any:
        if args.send is not None:
            state["reply"] = dut.send(args.send)
        else:
            state["reply"] = _read_unsolicited(ctx)
        return rx.search(state["reply"])

    match = attempt()
    if not match and args.timeout > 0:
        match = wait_for(ctx, attempt, timeout=args.timeout, poll=min(0.5, args.timeout),
                         what=f"reply matching /{args.expect}/",
                         describe=lambda t: f"console: waiting for /{args.expect}/ ({fmt_duration(t)})")
    if not match:
        last = state["reply"].strip().splitlines()[-3:] if state["reply"].strip() else ["(nothing)"]
        ctx.fail(f"console: reply to {args.send!r} does not match /{args.expect}/ within "
                 f"{fmt_duration(args.timeout)}; last reply: {' | '.join(last)}")
    ctx.measure("reply", match.group(0), "")
    for name, unit in args.extract.items():
        raw = match.group(name)
        if raw is None:
            ctx.fail(f"console: group {name!r} did not take part in the match {match.group(0)!r}")
        ctx.measure(name, _number(raw) if unit else raw, unit or "", labels={"sensor": name})
    finish(ctx, start)


def _read_unsolicited(ctx: Any) -> str:
    """One line the console printed on its own (boot banners); empty when nothing came."""
    try:
        return raw_driver(ctx, "dut").transport.read()
    except InstrumentTimeout:
        return ""


# ------------------------------------------------------------------------------------------
# prompt, wait

_NO = {"no", "n", "fail", "failed", "false", "reject", "abort", "0"}


@implementation("prompt")
def prompt(ctx: Any, args: Any) -> None:
    """Ask the operator (the runner's prompt handler answers: the TUI's dialog, or --answers
    FILE); with ``timeout:``, nobody answering in time ends the step as an ERROR."""
    start = len(ctx.recorded)
    choices: tuple[str, ...] = ("yes", "no") if args.kind == "confirm" else tuple(args.choices)
    answer = str(ctx.prompt(args.message, choices, timeout=args.timeout)).strip()
    ctx.measure("answer", answer, "")
    if args.kind == "confirm" and answer.lower() in _NO:
        ctx.fail(f"operator answered {answer!r} to {args.message!r}")
    if args.kind == "choice" and answer not in args.choices:
        ctx.fail(f"answer {answer!r} is not one of {', '.join(args.choices)}")
    finish(ctx, start)


@implementation("wait")
def wait(ctx: Any, args: Any) -> None:
    """Wait ``duration`` of run time, saying what for."""
    total = float(args.duration)
    what = args.reason or "wait"
    step = max(1.0, total / 50.0)
    begin = ctx.clock.monotonic()
    while True:
        elapsed = ctx.clock.monotonic() - begin
        if elapsed >= total:
            break
        ctx.progress(f"{what}: {fmt_duration(elapsed)} of {fmt_duration(total)}", elapsed / total if total else 1.0)
        ctx.sleep(min(step, total - elapsed))
    ctx.progress(f"{what}: done ({fmt_duration(total)})", 1.0)


# ------------------------------------------------------------------------------------------
# set

Setter = Callable[[Any, str | None, Any], None]

_SETTERS: dict[str, dict[str, tuple[Setter, str]]] = {
    "power_supply": {
        "voltage": (lambda r, c, v: r.set_voltage(c, float(v)), "V"),
        "current_limit": (lambda r, c, v: r.set_current_limit(c, float(v)), "A"),
        "current": (lambda r, c, v: r.set_current_limit(c, float(v)), "A"),
        "output": (lambda r, c, v: r.set_output(c, _bool(v)), ""),
    },
    "electronic_load": {
        "mode": (lambda r, c, v: r.set_mode(str(v)), ""),
        "current": (lambda r, c, v: r.set_level(float(v), "CC"), "A"),
        "voltage": (lambda r, c, v: r.set_level(float(v), "CV"), "V"),
        "resistance": (lambda r, c, v: r.set_level(float(v), "CR"), "ohm"),
        "power": (lambda r, c, v: r.set_level(float(v), "CP"), "W"),
        "input": (lambda r, c, v: r.set_input(_bool(v)), ""),
    },
    "multimeter": {
        "nplc": (lambda r, c, v: r.set_nplc(float(v)), ""),
        "sample_count": (lambda r, c, v: r.set_sample_count(int(float(v))), ""),
    },
    "thermal_chamber": {
        "setpoint": (lambda r, c, v: (r.set_setpoint(float(v)), r.start()), "degC"),
        "ramp_rate": (lambda r, c, v: r.set_ramp_rate(float(v)), "K/min"),
    },
    "dut_console": {
        "load": (lambda r, c, v: r.set_load(float(v)), "%"),
        "workload": (lambda r, c, v: r.set_load(workload_percent(str(v))), ""),
        "prbs": (lambda r, c, v: r.prbs_stop() if str(v).lower() in ("off", "stop", "0", "false")
                 else r.prbs_start(str(v)), ""),
    },
}


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("on", "1", "true", "yes", "enabled"):
        return True
    if text in ("off", "0", "false", "no", "disabled"):
        return False
    raise PlanError(f"{value!r} is not on/off")


def _wire_value(value: Any, unit: str, what: str) -> Any:
    """A plan value (``12 V``, ``500 mV``, ``50 %``, ``on``) in the unit the role takes."""
    from labctl.units import Quantity, looks_like_quantity, parse_quantity

    if isinstance(value, Quantity):
        q = value
    elif isinstance(value, str) and unit and looks_like_quantity(value):
        q = parse_quantity(value, None, what=what)
    else:
        return value
    if not unit:
        return q.magnitude
    if unit == "%":
        return q.to("%") if q.unit else q.magnitude
    return q.to(unit) if q.unit else q.magnitude


@implementation("set")
def set_(ctx: Any, args: Any) -> None:
    """``target: psu.ch1.voltage`` (or ``psu.VIN.voltage``, ``dut.load``) to ``value``."""
    role_name, _, rest = args.target.partition(".")
    chan_text, prop = split_target(ctx, rest)
    channel = _resolve_channel(ctx, role_name, chan_text) if chan_text else None
    role = ctx.role(role_name)
    kind = role_kind(role)
    entry = _SETTERS.get(kind, {}).get(prop.lower())
    if entry is not None:
        setter, unit = entry
        wire = _wire_value(args.value, unit, args.target)
        if kind == "power_supply" and channel is None:
            channel = input_channel(ctx)[1] if role_name == "psu" else "1"
        if kind == "power_supply" and prop.lower() == "output" and _bool(wire):
            switch_on(ctx, role, channel, args.target)
        else:
            setter(role, channel, wire)
    else:
        driver = raw_driver(ctx, role_name)
        props = driver.profile.properties
        if prop not in props or props[prop].set is None:
            settable = sorted({*_SETTERS.get(kind, {}), *(n for n, p in props.items() if p.set is not None)})
            raise PlanError(f"cannot set {args.target}: role {role_name} has no settable property {prop!r} "
                            f"(settable: {', '.join(settable)})", hint="write target: role.property or role.ch1.property")
        wire = _wire_value(args.value, props[prop].unit or "", args.target)
        if props[prop].parse == "bool":
            wire = _bool(wire)
        driver.set(prop, wire, channel)
    ctx.log(f"set {args.target} = {args.value}")
