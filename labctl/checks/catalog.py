"""Declarations of labctl's built-in checks: names, arguments, measurements.

Declarations only: this module says what each check takes and what it records, so that
``labctl validate`` can check plans before anything is powered. The implementations are
attached by the engine's check library (``@implementation("power.rails")``); until then
:attr:`CheckSpec.implemented` is False for them.
"""

from __future__ import annotations

import difflib
import math
import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from labctl.checks.registry import CheckArgs, Measure, argument_error, register_check
from labctl.errors import LabctlError
from labctl.plan.types import (
    Current,
    DataRate,
    Duration,
    Frequency,
    Ratio,
    Temperature,
    TemperatureDelta,
    TemperatureRate,
    TransferRate,
    Voltage,
)

ROOM_TEMPERATURE_C = 25.0  # estimates assume a chamber starts from room temperature

Lanes = Annotated[list[int] | Literal["all"], BeforeValidator(lambda v: _check_lanes(v))]
SignalName = str  # a named channel of the fixture (VDD_CORE, TC_LID …)

_LANES_DOC = "lane numbers (a list) or 'all' (every lane the DUT reports)"


_LANES_HINT = "write lanes: all, or the instrument's lane numbers as a list, e.g. lanes: [1, 2, 3, 4]"
_REGEX_HINT = "write a Python regular expression; in YAML, quote it with single quotes: '...'"


def _no_duplicates(values: list[str], what: str) -> list[str]:
    seen: set[str] = set()
    for v in values:
        if v in seen:
            raise argument_error(f"{what} {v!r} is listed twice", f"list each {what} once: remove one {v}")
        seen.add(v)
    return values


def _check_lanes(value: Any) -> Any:
    """``all`` or a list of distinct lane numbers from 0 (one error per mistake, not one for
    each form of the union)."""
    if isinstance(value, str):
        if value != "all":
            close = difflib.get_close_matches(value.strip().lower(), ["all"], n=1, cutoff=0.6)
            raise argument_error(f"lanes: expected all or a list of lane numbers, got {value!r}"
                                 + ("; did you mean 'all'?" if close else ""), _LANES_HINT)
        return value
    if not isinstance(value, list):
        raise argument_error(f"lanes: expected all or a list of lane numbers, got {value!r}", _LANES_HINT)
    for lane in value:
        if isinstance(lane, bool) or not isinstance(lane, int):
            raise argument_error(f"lanes: {lane!r} is not a lane number", _LANES_HINT)
        if lane < 0:
            raise argument_error(f"lanes: lane numbers start at 0, got {lane}", _LANES_HINT)
    twice = next((lane for i, lane in enumerate(value) if lane in value[:i]), None)
    if twice is not None:
        raise argument_error(f"lanes: lane {twice} is listed twice", f"list each lane once: remove one {twice}")
    return value


def _unit_dimension(unit: str | None, field: str = "unit") -> str | None:
    if not unit:
        return None
    from labctl.units import parse_quantity

    try:
        return parse_quantity(f"1 {unit}").dimension
    except LabctlError as err:
        raise argument_error(f"{field}: {unit!r} is not a unit", err.hint or "e.g. V, mA, degC, W") from None


def supply_range_problems(fixture: Any, signal: str, values: list[tuple[str, str, float | None, str]]
                          ) -> list[tuple[str, str, str]]:
    """``(argument, message, hint)`` for each of ``values`` (argument, profile property, value,
    unit) outside the range the input supply's profile gives on its channel: the named
    ``signal`` (VIN), else channel 1 of ``psu``, as the check finds it at run time."""
    role, channel = "psu", "1"
    if signal in fixture.channels:
        ref = fixture.channel(signal)
        role, channel = ref.role, ref.channel
    profile = _profile_of(fixture, role)
    if profile is None:
        return []
    binding = fixture.roles[role]
    try:
        ch = profile.channel_id(channel, role)
    except LabctlError:
        return []  # a missing channel is reported by the fixture's own checks
    out = []
    for argument, prop_name, value, unit in values:
        prop = profile.properties.get(prop_name)
        span = prop.outside(value, ch) if prop is not None and value is not None else None
        if span is not None:
            out.append((argument, f"{argument} {value:g} {unit} is outside {span}, "
                        f"what {role} ({binding.driver}) takes on channel {ch}",
                        "the supply would refuse it when the step runs: give a value in its range"))
    return out


def _profile_of(fixture: Any, role: str) -> Any:
    """The driver profile of the fixture's ``role``, or None (no such role, or a profile that
    does not load: the fixture's own checks report those)."""
    from labctl.instruments.profile import load_profile

    binding = fixture.roles.get(role)
    if binding is None:
        return None
    try:
        return load_profile(binding.driver)
    except (LabctlError, OSError):
        return None


def dmm_role_for(fixture: Any, rail: str, rails: list[str], kind_of: Any, reads_ac: Any) -> str | None:
    """The multimeter role probing ``rail`` (docs/checks.md power.rails ``via: dmm``), or None:
    a multimeter the rail's fixture channel is wired to, a role whose ``signal`` option names
    the rail, or the ``dmm`` role with no ``signal`` option when it is the only rail measured
    and its channel cannot read AC volts. ``kind_of(role)``: the role's interface
    (``multimeter`` …); ``reads_ac()``: the rail's channel reads AC volts. The run and
    ``labctl validate`` both decide by this."""
    if rail in fixture.channels:
        ref = fixture.channel(rail)
        if kind_of(ref.role) == "multimeter":
            return ref.role
    for name, binding in fixture.roles.items():
        if str(binding.options.get("signal", "")).upper() == rail.upper():
            return name
    if "dmm" in fixture.roles and len(rails) == 1 and "signal" not in fixture.roles["dmm"].options \
            and not reads_ac():
        return "dmm"
    return None


def _static_kind(fixture: Any, role: str) -> str:
    """The interface a role of the fixture serves by default (its profile's first role)."""
    profile = _profile_of(fixture, role)
    return profile.roles[0] if profile is not None and profile.roles else ""


def lane_problems(fixture: Any, lanes: Any, role: str = "bert") -> list[tuple[str, str, str]]:
    """``lanes`` listed that the ``role`` instrument's profile has no channel for (a run could
    only stop at them with an ERROR)."""
    profile = _profile_of(fixture, role)
    if lanes == "all" or profile is None or not profile.channels.ids:
        return []
    ids = profile.channels.ids
    missing = [lane for lane in lanes if str(lane) not in ids]
    if not missing:
        return []
    return [("lanes", f"{role} ({fixture.roles[role].driver}) has no lane {', '.join(map(str, missing))}: "
             f"its lanes are {', '.join(ids)}",
             f"list lanes of {role} (e.g. lanes: [{', '.join(ids[:4])}]) or write lanes: all")]


def _regex(pattern: str, field: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise argument_error(f"{field} is not a valid regex: {err}", _REGEX_HINT) from None


# ------------------------------------------------------------------------------------------
# power


@register_check("power.on", roles=("psu",))
class PowerOnArgs(CheckArgs):
    """Switch the input supply on and record the inrush current peak."""

    channel: SignalName = Field("VIN", description="named input channel of the supply")
    voltage: Voltage = Field(description="input voltage, e.g. 12 V")
    current_limit: Current = Field(description="supply current limit, e.g. 25 A")
    ovp: Voltage | None = Field(None, description="supply over-voltage protection level (default: voltage x 1.1 + 0.2 V)")
    ocp: bool = Field(True, description="supply over-current protection: the output turns off at the current limit")
    inrush_window: Duration = Field(0.1, description="how long to sample the inrush current")
    settle: Duration = Field(0.5, description="wait after switching on before measuring")
    ESTABLISHES_STATE = True  # the board is powered afterwards

    channel_fields = ("channel",)

    def fixture_problems(self, fixture: Any) -> list[tuple[str, str, str]]:
        # what the supply would refuse when the step runs (docs/checks.md power.on): said now
        ovp = self.ovp.to("V") if self.ovp is not None else None
        return supply_range_problems(fixture, self.channel, [
            ("voltage", "voltage", self.voltage.to("V"), "V"),
            ("current_limit", "current_limit", self.current_limit.to("A"), "A"),
            ("ovp", "ovp_level", ovp, "V")])

    MEASURES = {
        "inrush_peak": Measure("current", "A", "highest input current in the inrush window"),
        "input_current": Measure("current", "A", "input current after settling"),
        "input_voltage": Measure("voltage", "V", "input voltage after settling"),
        "ovp_level": Measure("voltage", "V", "over-voltage protection the supply was given before switching on"),
        "ocp_current": Measure("current", "A", "current at which the supply's own OCP turns the output off (0: OCP off)"),
        "ocp_delay": Measure("time", "s", "how long the supply's OCP tolerates the current limit (read back; 0: trips at once)"),
    }

    def estimate_seconds(self) -> float:
        return self.inrush_window + self.settle + 1.0


class _PerRailArgs(CheckArgs):
    """Arguments of a check that measures each of ``rails`` through the role named by ``via``
    (subclasses declare both fields)."""

    channel_fields = ("rails",)

    @field_validator("rails", check_fields=False)
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        return _no_duplicates(v, "rail")

    def roles(self) -> list[str]:
        return [self.via]  # type: ignore[attr-defined]


@register_check("power.rails")
class PowerRailsArgs(_PerRailArgs):
    """Measure each rail's voltage (via DMM, DAQ or DUT telemetry) against nominal ± tol."""

    rails: list[SignalName] = Field(min_length=1, description="named rail channels")
    via: Literal["dmm", "daq", "dut"] = Field("daq", description="the role that measures")
    samples: int = Field(1, ge=1, le=10000, description="readings averaged per rail")

    def measurements(self) -> dict[str, Measure]:
        return {r: Measure("voltage", "V", f"DC voltage of {r}") for r in self.rails}

    def fixture_problems(self, fixture: Any) -> list[tuple[str, str, str]]:
        # via: dmm reads each rail on the multimeter probing it; one probing none stops the run
        if self.via != "dmm":
            return []

        def reads_ac(rail: str) -> bool:
            if rail not in fixture.channels:
                return False
            role = fixture.channel(rail).role
            profile = _profile_of(fixture, role)
            return _static_kind(fixture, role) == "multimeter" or (
                profile is not None and "ac_voltage" in profile.properties)

        unprobed = [r for r in self.rails if dmm_role_for(fixture, r, self.rails, lambda role: _static_kind(fixture, role),
                                                          lambda r=r: reads_ac(r)) is None]
        if not unprobed:
            return []
        return [("rails", f"no multimeter probes {', '.join(unprobed)} (via: dmm)",
                 f"measure {'it' if len(unprobed) == 1 else 'them'} via: daq, or name the rail a multimeter "
                 f"probes with `options: {{signal: {unprobed[0]}}}` on its role")]

    def estimate_seconds(self) -> float:
        return 0.2 * len(self.rails) * self.samples


@register_check("power.ripple")
class PowerRippleArgs(_PerRailArgs):
    """AC ripple and noise (peak-to-peak) of each rail in a measurement bandwidth."""

    rails: list[SignalName] = Field(min_length=1)
    bandwidth: Frequency = Field("20 MHz", description="measurement bandwidth")
    via: Literal["dmm", "daq", "scope"] = "dmm"

    def measurements(self) -> dict[str, Measure]:
        return {r: Measure("voltage", "mV", f"ripple of {r}, peak to peak") for r in self.rails}

    def estimate_seconds(self) -> float:
        return 1.0 * len(self.rails)


@register_check("power.sequencing", roles=("psu", "daq"))
class PowerSequencingArgs(CheckArgs):
    """Power-good order of the rails and the delay between consecutive rails."""

    order: list[SignalName] = Field(min_length=2, description="rails in the expected power-up order")
    threshold: Ratio = Field(0.9, description="a rail is up at this fraction of its final value")
    gap_min: Duration = Field(0.0, description="shortest allowed delay between consecutive rails")
    ESTABLISHES_STATE = True  # may cycle the input; the board is powered afterwards
    gap_max: Duration = Field(0.1, description="longest allowed delay between consecutive rails")
    timeout: Duration = Field(5.0, description="give up when the last rail is not up by then")

    channel_fields = ("order",)

    @field_validator("order")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        return _no_duplicates(v, "rail")

    @model_validator(mode="after")
    def _window(self) -> PowerSequencingArgs:
        if self.gap_min > self.gap_max:
            raise argument_error(f"gap_min ({self.gap_min:g} s) is larger than gap_max ({self.gap_max:g} s)",
                                 f"make gap_min at most gap_max, e.g. gap_min: {self.gap_max:g} s, "
                                 f"or gap_max: {self.gap_min:g} s")
        if not 0 < self.threshold <= 1:
            raise argument_error(f"threshold must be between 0 and 100 %, got {self.threshold * 100:.4g} %",
                                 "give the fraction of its final voltage at which a rail is up, e.g. threshold: 90 %")
        return self

    def measurements(self) -> dict[str, Measure]:
        out = {"order": Measure(None, None, "observed order, comma-separated", text=True)}
        for a, b in zip(self.order, self.order[1:], strict=False):
            out[f"{a}->{b}"] = Measure("time", "ms", f"delay from {a} up to {b} up")
        return out

    def estimate_seconds(self) -> float:
        return min(self.timeout, 2.0) + 1.0


@register_check("power.efficiency", roles=("psu", "load"))
class PowerEfficiencyArgs(CheckArgs):
    """Input versus output power at load steps; the efficiency curve is recorded."""

    input: SignalName = Field("VIN", description="named input channel")
    load_steps: list[Current] = Field(min_length=1, description="load currents, e.g. [5 A, 10 A, 20 A]")
    dwell: Duration = Field(2.0, description="settling time at each step")

    channel_fields = ("input",)
    MEASURES = {
        "efficiency": Measure("ratio", "%", "lowest efficiency over the load steps"),
        "input_power": Measure("power", "W", "input power at the highest step"),
    }

    def estimate_seconds(self) -> float:
        return len(self.load_steps) * (self.dwell + 0.5)


@register_check("power.budget", roles=("psu", "dut"))
class PowerBudgetArgs(CheckArgs):
    """Total input power while the DUT runs a workload."""

    workload: str = Field("idle", description="DUT workload name")
    duration: Duration = Field(10.0, description="averaging time")

    MEASURES = {
        "input_power": Measure("power", "W", "mean input power"),
        "peak_power": Measure("power", "W", "highest input power"),
    }

    def estimate_seconds(self) -> float:
        return self.duration + 1.0


@register_check("power.perf_per_watt", roles=("psu", "dut"))
class PerfPerWattArgs(CheckArgs):
    """DUT throughput counter divided by input power at a stated load."""

    workload: str = Field("inference", description="DUT workload name")
    load: Ratio = Field(1.0, description="workload intensity, e.g. 100 %")
    duration: Duration = Field(30.0, description="measurement window")
    counter: str = Field("throughput", description="DUT throughput counter name")
    throughput_unit: str = Field("TOPS", description="unit of the counter, e.g. TOPS")

    MEASURES = {
        "perf_per_watt": Measure("perf_per_watt", "TOPS/W", "throughput / input power"),
        "throughput": Measure("throughput", "TOPS", "mean throughput"),
        "input_power": Measure("power", "W", "mean input power"),
    }

    @field_validator("throughput_unit")
    @classmethod
    def _unit(cls, v: str) -> str:
        if _unit_dimension(v, "throughput_unit") != "throughput":
            raise argument_error(f"throughput_unit {v!r} is not a throughput unit",
                                 "write the unit of the DUT's counter, e.g. throughput_unit: TOPS (or GOPS)")
        return v

    def estimate_seconds(self) -> float:
        return self.duration + 2.0


# ------------------------------------------------------------------------------------------
# thermal


@register_check("thermal.soak", roles=("chamber",))
class ThermalSoakArgs(CheckArgs):
    """Chamber to a setpoint at a ramp rate, then stable within ±band for a hold time."""

    setpoint: Temperature = Field(description="target temperature, e.g. 85 degC")
    ramp_rate: TemperatureRate = Field("5 degC/min", description="chamber ramp rate")
    band: TemperatureDelta = Field("0.5 degC", description="stable when within ± this")
    hold: Duration = Field(300.0, description="how long it must stay within the band")
    timeout: Duration = Field(3600.0, description="give up after this long")
    sensor: str = Field("chamber", description="'chamber' (its own sensor) or a named channel")
    ESTABLISHES_STATE = True  # the chamber stays at the setpoint

    MEASURES = {
        "temperature": Measure("temperature", "degC", "mean temperature over the hold"),
        "settle_time": Measure("time", "s", "time until the band was reached"),
    }

    def channels(self) -> list[str]:
        return [] if self.sensor == "chamber" else [self.sensor]

    @model_validator(mode="after")
    def _sane(self) -> ThermalSoakArgs:
        if self.ramp_rate.magnitude <= 0:
            raise argument_error(f"ramp_rate must be positive, got {self.ramp_rate}",
                                 "give the chamber's ramp rate, e.g. ramp_rate: 5 degC/min")
        if self.hold > self.timeout:
            raise argument_error(f"hold ({self.hold:g} s) is longer than timeout ({self.timeout:g} s)",
                                 "give a timeout longer than the ramp and the hold, e.g. timeout: "
                                 f"{math.ceil(self.estimate_seconds() * 1.5 / 60)} min, or a shorter hold")
        return self

    def estimate_seconds(self) -> float:
        rate = self.ramp_rate.to("K/s")
        return abs(self.setpoint.to("degC") - ROOM_TEMPERATURE_C) / rate + self.hold

    def time_warnings(self) -> list[tuple[str, str]]:
        from labctl.plan.loaded import format_seconds

        est = self.estimate_seconds()
        if est <= self.timeout:
            return []
        return [("timeout", f"timeout {format_seconds(self.timeout)} is shorter than the {format_seconds(est)} the "
                            f"ramp from room temperature and the {format_seconds(self.hold)} hold take")]


@register_check("thermal.under_load", roles=("dut", "psu"))
class ThermalUnderLoadArgs(CheckArgs):
    """Workload on until die temperature settles (dT/dt below a rate); measure temperatures
    and the thermal resistance θ = (T_die − T_reference) / P_in."""

    workload: str = Field("stress", description="DUT workload name")
    load: Ratio = Field(1.0, description="workload intensity")
    settle_rate: TemperatureRate = Field("0.2 degC/min", description="settled when |dT/dt| is below")
    settle_window: Duration = Field(60.0, description="dT/dt is judged over this window")
    timeout: Duration = Field(1800.0)
    telemetry: list[str] = Field(["die_temp", "hbm_temp", "vrm_temp"], description="DUT sensors")
    sensors: list[SignalName] = Field([], description="thermocouple channels, e.g. TC_LID")
    reference: SignalName = Field("TC_INLET", description="ambient reference for θ")
    ESTABLISHES_STATE = True  # the workload stays on

    channel_fields = ("sensors", "reference")

    def measurements(self) -> dict[str, Measure]:
        out = {t: Measure("temperature", "degC", f"DUT telemetry {t}") for t in self.telemetry}
        out.update({s: Measure("temperature", "degC", f"thermocouple {s}") for s in self.sensors})
        out["theta"] = Measure("thermal_resistance", "K/W", "(die − reference) / input power")
        out["input_power"] = Measure("power", "W", "input power when settled")
        out["settle_time"] = Measure("time", "s", "time until settled")
        return out

    def estimate_seconds(self) -> float:
        return self.settle_window * 5


@register_check("thermal.throttle", roles=("dut", "chamber"))
class ThermalThrottleArgs(CheckArgs):
    """Throttling asserts at its threshold and recovers below threshold − hysteresis."""

    workload: str = "stress"
    threshold: Temperature = Field(description="expected throttle temperature")
    hysteresis: TemperatureDelta = Field("5 degC", description="recovery below threshold − this")
    timeout: Duration = Field(1200.0)

    MEASURES = {
        "throttle_temp": Measure("temperature", "degC", "die temperature when throttling asserted"),
        "recovery_temp": Measure("temperature", "degC", "die temperature when it recovered"),
        "recovery_time": Measure("time", "s", "from assert to recovery"),
    }


class RampSegment(CheckArgs):
    to: Temperature = Field(description="segment end temperature")
    rate: TemperatureRate = Field(description="ramp rate")
    hold: Duration = Field(0.0, description="hold at the end temperature")


@register_check("thermal.ramp", roles=("chamber",))
class ThermalRampArgs(CheckArgs):
    """A temperature profile (ramp/hold segments) with the time series recorded."""

    profile: list[RampSegment] = Field(min_length=1)
    ESTABLISHES_STATE = True  # the chamber stays at the last segment's temperature
    sample_every: Duration = Field(10.0, description="time-series sampling period")
    sensors: list[SignalName] = Field([], description="thermocouple channels to record")

    channel_fields = ("sensors",)
    MEASURES = {
        "max_overshoot": Measure(
            "temperature", "degC", "largest overshoot past a segment end (a difference)", delta=True
        ),
        "max_rate": Measure("temperature_rate", "degC/min", "fastest observed rate"),
    }

    def estimate_seconds(self) -> float:
        t, total = ROOM_TEMPERATURE_C, 0.0
        for seg in self.profile:
            end = seg.to.to("degC")
            total += abs(end - t) / seg.rate.to("K/s") + seg.hold
            t = end
        return total


# ------------------------------------------------------------------------------------------
# link

PATTERNS = Literal["PRBS7", "PRBS9", "PRBS11", "PRBS15", "PRBS23", "PRBS31", "PRBS13Q", "PRBS31Q", "SSPRQ"]


@register_check("link.training", roles=("dut",))
class LinkTrainingArgs(CheckArgs):
    """Every lane trains to the expected speed, width and state; retrain N times."""

    ESTABLISHES_STATE = True  # later link steps need the trained link

    lanes: Lanes = Field("all", description=_LANES_DOC)
    speed: TransferRate = Field(description="expected speed, e.g. 32 GT/s")
    width: Literal[1, 2, 4, 8, 16, 32] | None = Field(None, description="expected link width (x16 -> 16)")
    state: str = Field("L0", description="expected LTSSM state")
    retrain: int = Field(0, ge=0, le=100000, description="extra retrain cycles")
    timeout: Duration = Field(10.0, description="per training attempt")

    MEASURES = {
        "speed": Measure("transfer_rate", "GT/s", "trained speed (slowest lane)"),
        "width": Measure("ratio", None, "trained width"),
        "state": Measure(None, None, "LTSSM state", text=True),
        "success_ratio": Measure("ratio", "%", "successful retrains / attempts"),
    }

    def estimate_seconds(self) -> float:
        return (1 + self.retrain) * 0.5


@register_check("link.ber")
class LinkBerArgs(CheckArgs):
    """PRBS bit-error ratio per lane; the test length comes from the target BER and confidence
    (zero errors in N = −ln(1−CL)/BER bits) and the verdict is on the BER upper bound."""

    lanes: Lanes = Field("all", description=_LANES_DOC)
    pattern: PATTERNS = Field("PRBS31", description="test pattern")
    line_rate: DataRate = Field(description="line rate, e.g. 56 Gbps")
    target_ber: Ratio = Field(1e-12, description="BER to demonstrate, e.g. 1e-12")
    confidence: Ratio = Field(0.95, description="confidence level, e.g. 95 %")
    max_duration: Duration | None = Field(None, description="refuse plans whose test would be longer")
    via: Literal["bert", "dut"] = Field("bert", description="BERT instrument or DUT's own PRBS checker")

    MEASURES = {
        "ber": Measure("ratio", None, "BER upper bound at the confidence level"),
        "errors": Measure("ratio", None, "error count"),
        "bits": Measure("ratio", None, "bits compared"),
    }

    @model_validator(mode="after")
    def _sane(self) -> LinkBerArgs:
        if not 0 < self.target_ber < 1:
            raise argument_error(f"target_ber must be between 0 and 1, got {self.target_ber:g}",
                                 "give the bit-error ratio to demonstrate, e.g. target_ber: 1e-12")
        if not 0 < self.confidence < 1:
            raise argument_error(f"confidence must be between 0 and 100 % (exclusive), got {self.confidence * 100:.4g} %",
                                 "give the confidence level, e.g. confidence: 95 %")
        if self.max_duration is not None and self.estimate_seconds() > self.max_duration:
            raise argument_error(
                f"proving BER < {self.target_ber:g} at {self.confidence:.0%} confidence takes "
                f"{self.estimate_seconds():.0f} s at {self.line_rate}, more than max_duration "
                f"({self.max_duration:g} s)",
                f"raise max_duration to at least {math.ceil(self.estimate_seconds())} s, or relax "
                "target_ber or confidence",
            )
        return self

    def roles(self) -> list[str]:
        return [self.via, "dut"] if self.via == "bert" else ["dut"]

    def fixture_problems(self, fixture: Any) -> list[tuple[str, str, str]]:
        return lane_problems(fixture, self.lanes) if self.via == "bert" else []

    def estimate_seconds(self) -> float:
        from labctl.checks.ber import test_duration

        return test_duration(self.target_ber, self.confidence, self.line_rate.to("bit/s"))


@register_check("link.margin", roles=("bert",))
class LinkMarginArgs(CheckArgs):
    """Eye height and width per lane at a BER contour."""

    lanes: Lanes = Field("all", description=_LANES_DOC)
    pattern: PATTERNS = "PRBS31"
    target_ber: Ratio = Field(1e-12, description="the eye contour's BER")

    MEASURES = {
        "eye_height": Measure("voltage", "mV", "vertical eye opening"),
        "eye_width": Measure("ratio", "UI", "horizontal eye opening in unit intervals"),
    }

    def fixture_problems(self, fixture: Any) -> list[tuple[str, str, str]]:
        return lane_problems(fixture, self.lanes)

    def estimate_seconds(self) -> float:
        return 5.0


@register_check("link.bathtub", roles=("bert",))
class LinkBathtubArgs(CheckArgs):
    """BER against sampling phase (or voltage) per lane; the opening at the target BER."""

    lanes: Lanes = Field("all", description=_LANES_DOC)
    axis: Literal["phase", "voltage"] = "phase"
    points: int = Field(41, ge=3, le=10001, description="sweep points")
    dwell: Duration = Field(1.0, description="gate time per point")
    target_ber: Ratio = 1e-12

    def fixture_problems(self, fixture: Any) -> list[tuple[str, str, str]]:
        return lane_problems(fixture, self.lanes)

    def measurements(self) -> dict[str, Measure]:
        if self.axis == "voltage":
            return {"opening": Measure("voltage", "mV", "opening at target BER")}
        return {"opening": Measure("ratio", "UI", "opening at target BER")}

    def estimate_seconds(self) -> float:
        return self.points * self.dwell


# ------------------------------------------------------------------------------------------
# generic


@register_check("measure")
class MeasureArgs(CheckArgs):
    """Read any role property (``role: psu, property: ch1.current``) and judge it."""

    role: str = Field(description="fixture role, e.g. psu, dmm, dut")
    property: str = Field(description="what to read, e.g. voltage, ch1.current, die_temp")
    channel: SignalName | None = Field(None, description="named channel to read on that role")
    unit: str | None = Field(None, description="unit of the reading, e.g. V, degC (sets its dimension)")
    samples: int = Field(1, ge=1, le=100000)
    interval: Duration = Field(0.0, description="between samples")
    statistic: Literal["mean", "min", "max", "last"] = "mean"

    channel_fields = ("channel",)
    role_fields = ("role",)

    @field_validator("unit")
    @classmethod
    def _unit(cls, v: str | None) -> str | None:
        _unit_dimension(v)  # refuses an unknown unit, with a hint
        return v

    def measurements(self) -> dict[str, Measure]:
        return {"value": Measure(_unit_dimension(self.unit), self.unit, f"{self.role}.{self.property}")}

    def fixture_problems(self, fixture: Any) -> list[tuple[str, str, str]]:
        # a named channel (``channel: VDD_CORE`` or ``property: VDD_CORE.voltage``) is read on the
        # role it is wired to: on another role the run could only stop with an ERROR
        head = self.property.rsplit(".", 1)[0] if "." in self.property else None
        out = []
        for field, name in (("channel", self.channel), ("property", head)):
            ref = fixture.channel(name) if name and name in fixture.channels else None
            if ref is not None and ref.role != self.role:
                out.append((field, f"channel {name} is wired to role {ref.role}, not {self.role}",
                            f"write role: {ref.role}, or read a channel of {self.role}"))
        return out

    def estimate_seconds(self) -> float:
        return self.samples * (0.1 + self.interval)


@register_check("scpi")
class ScpiArgs(CheckArgs):
    """Raw SCPI on a role's instrument: writes, then an optional query parsed and judged."""

    role: str = Field(description="fixture role whose instrument receives the commands")
    write: list[str] = Field([], description="commands sent first, in order")
    query: str | None = Field(None, description="query whose reply is recorded")
    parse: Literal["float", "int", "text", "regex"] = "float"
    pattern: str | None = Field(None, description="regex with one group (parse: regex)")
    unit: str | None = Field(None, description="unit of the parsed number")

    role_fields = ("role",)

    @field_validator("write", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    def establishes_state(self) -> bool:
        return bool(self.write)  # writes configure the instrument; a bare query only reads

    @model_validator(mode="after")
    def _consistent(self) -> ScpiArgs:
        if self.parse == "regex":
            if not self.pattern:
                raise argument_error("parse: regex needs a pattern",
                                     "add a pattern with one group, e.g. pattern: 'V=(\\S+)'")
            _regex(self.pattern, "pattern")
        if not self.write and not self.query:
            raise argument_error("give write commands, a query, or both",
                                 "e.g. query: 'MEAS:VOLT?', or write: ['OUTP ON']")
        _unit_dimension(self.unit)
        return self

    def measurements(self) -> dict[str, Measure]:
        if not self.query:
            return {}
        text = self.parse == "text" or (self.parse == "regex" and not self.unit)
        dim = None if text else _unit_dimension(self.unit)
        return {"value": Measure(dim, self.unit, f"reply to {self.query}", text=text)}


@register_check("console", roles=("dut",))
class ConsoleArgs(CheckArgs):
    """Send a line on the DUT console, expect a regex, extract named numbers."""

    send: str | None = Field(None, description="line to send (without newline)")
    expect: str = Field(description="regex the reply must match")
    timeout: Duration = 5.0
    extract: dict[str, str | None] = Field(
        {}, description="named groups of expect -> unit of the number (null for text)"
    )

    @model_validator(mode="after")
    def _groups(self) -> ConsoleArgs:
        rx = _regex(self.expect, "expect")
        for name, unit in self.extract.items():
            if name not in rx.groupindex:
                groups = ", ".join(rx.groupindex) or "none"
                raise argument_error(f"extract {name!r} is not a named group of expect (groups: {groups})",
                                     f"name the group in expect: (?P<{name}>...)")
            _unit_dimension(unit, f"extract {name}")
        return self

    def measurements(self) -> dict[str, Measure]:
        out = {"reply": Measure(None, None, "the matched reply", text=True)}
        for name, unit in self.extract.items():
            out[name] = Measure(_unit_dimension(unit), unit, f"extracted {name}", text=unit is None)
        return out

    def estimate_seconds(self) -> float:
        return 0.5


@register_check("prompt")
class PromptArgs(CheckArgs):
    """Ask the operator (headless: answered from --answers FILE, or the step fails)."""

    message: str
    kind: Literal["confirm", "input", "choice"] = "confirm"
    choices: list[str] = []
    timeout: Duration | None = None

    MEASURES = {"answer": Measure(None, None, "the operator's answer", text=True)}

    @model_validator(mode="after")
    def _choices(self) -> PromptArgs:
        if self.kind == "choice" and len(self.choices) < 2:
            raise argument_error("kind: choice needs at least two choices",
                                 "list the answers, e.g. choices: [pass, fail]")
        if self.kind != "choice" and self.choices:
            raise argument_error("choices only apply to kind: choice",
                                 "add kind: choice, or remove choices:")
        return self


@register_check("wait")
class WaitArgs(CheckArgs):
    """Wait (through the engine's clock, so the simulated lab's time scale applies)."""

    duration: Duration
    reason: str = ""

    def estimate_seconds(self) -> float:
        return self.duration


_TARGET = re.compile(r"^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)+$")


@register_check("set")
class SetArgs(CheckArgs):
    """Set a role property: ``target: psu.ch1.voltage``, ``value: 12 V``."""

    target: str = Field(description="role.property or role.channel.property")
    value: Any = Field(description="the value to set (a quantity, number, text or on/off)")

    ESTABLISHES_STATE = True

    @field_validator("target")
    @classmethod
    def _target(cls, v: str) -> str:
        if not _TARGET.match(v):
            raise argument_error(f"target {v!r} is not role.property",
                                 "write role.property or role.channel.property, e.g. target: psu.ch1.voltage")
        return v

    def roles(self) -> list[str]:
        return [self.target.split(".", 1)[0]]

    def estimate_seconds(self) -> float:
        return 0.2
