"""Role interfaces: what checks may ask of a station's instruments.

Checks speak to roles ("the supply", "the chamber"), never to SCPI strings. Each role is a
small :class:`typing.Protocol`; the profile-driven implementations live in
``labctl.instruments.impl`` and a profile's optional Python class may replace them.

Every role has ``safe_state()`` (what the engine's teardown calls: outputs off, load input
off, chamber to ambient, PRBS stopped) and ``drain_errors()`` (the instrument's error queue,
read until empty, as structured entries).

``REQUIREMENTS`` names the profile properties and actions each role needs; a profile that
claims a role without them is rejected when it is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class InstrumentErrorEntry:
    """One entry of an instrument's error queue, e.g. ``-113,"Undefined header"``."""

    code: int
    message: str
    instrument: str = ""

    def __str__(self) -> str:
        who = f"{self.instrument}: " if self.instrument else ""
        return f'{who}{self.code:+d},"{self.message}"'


@dataclass(frozen=True)
class BerResult:
    """Counters of a gated BER run (or of a DUT's PRBS checker)."""

    errors: int
    bits: int
    ber: float
    sync_loss: bool = False
    lane: str | None = None
    duration_s: float | None = None


@dataclass
class SafeStateResult:
    """What one role's ``safe_state()`` did and read back: ``ok`` only when every action was
    sent and every read-back confirmed it; ``wrong_state`` when a read-back showed another
    state (the bench is known unsafe), else ``error`` says what could not be confirmed."""

    role: str
    ok: bool
    actions: list[str] = field(default_factory=list)
    error: str | None = None
    wrong_state: bool = False
    seconds: float = 0.0  # wall time the role's safe state took

    def verdict(self) -> tuple[str, str]:
        """``("PASS", actions)``, ``("FAIL", "NOT SAFE: …")`` (another state was read back) or
        ``("ERROR", "not confirmed: …")``: how the run and the watchdog report it."""
        if self.ok:
            return "PASS", "; ".join(self.actions)
        if self.wrong_state:
            return "FAIL", f"NOT SAFE: {self.error}"
        return "ERROR", f"not confirmed: {self.error}"


LOAD_MODES = ("CC", "CV", "CR", "CP")
DMM_FUNCTIONS = ("dc_voltage", "ac_voltage", "dc_current", "resistance")


@runtime_checkable
class Role(Protocol):
    """What every role offers."""

    name: str

    def safe_state(self) -> list[str]:
        """Put the instrument in its safe state; returns what was done and read back (for the
        record); raises when the state cannot be confirmed (``SafeStateUnconfirmed``)."""
        ...

    def drain_errors(self) -> list[InstrumentErrorEntry]:
        """Read the instrument's error queue until empty (bounded)."""
        ...


@runtime_checkable
class PowerSupply(Role, Protocol):
    """A (multi-channel) DC supply. Safe state: every output off."""

    channels: Sequence[str]

    def set_voltage(self, channel: str, volts: float) -> None: ...
    def voltage(self, channel: str) -> float: ...
    def set_current_limit(self, channel: str, amps: float) -> None: ...
    def current_limit(self, channel: str) -> float: ...
    def set_output(self, channel: str, on: bool) -> None: ...
    def output(self, channel: str) -> bool: ...
    def measure_voltage(self, channel: str) -> float: ...
    def measure_current(self, channel: str) -> float: ...
    def protection_tripped(self, channel: str) -> bool | None:
        """True when OVP/OCP tripped; None when the model cannot tell."""
        ...


@runtime_checkable
class ElectronicLoad(Role, Protocol):
    """A DC electronic load. Modes CC, CV, CR, CP (``LOAD_MODES``). Safe state: input off."""

    def set_mode(self, mode: str) -> None: ...
    def mode(self) -> str: ...
    def set_level(self, value: float, mode: str | None = None) -> None:
        """Set the level of ``mode`` (default: the present mode): A, V, ohm or W."""
        ...
    def set_input(self, on: bool) -> None: ...
    def input(self) -> bool: ...
    def measure_voltage(self) -> float: ...
    def measure_current(self) -> float: ...
    def measure_power(self) -> float: ...


@runtime_checkable
class Multimeter(Role, Protocol):
    """A digital multimeter (functions: ``DMM_FUNCTIONS``). Safe state: measurement aborted."""

    def measure(self, function: str = "dc_voltage") -> float: ...
    def set_range(self, function: str, value: float | None) -> None:
        """``None`` selects autorange."""
        ...
    def set_nplc(self, nplc: float) -> None: ...
    def set_sample_count(self, count: int) -> None: ...
    def read(self) -> list[float]:
        """Trigger and read ``sample_count`` readings of the configured function."""
        ...


@runtime_checkable
class TemperatureScanner(Role, Protocol):
    """A thermocouple scanner (also reads DC volts on its channels). Safe state: scan stopped."""

    def configure_thermocouple(self, channels: Sequence[str], tc_type: str = "K") -> None: ...
    def read_temperature(self, channel: str) -> float: ...
    def scan_temperatures(self, channels: Sequence[str]) -> dict[str, float]: ...
    def read_voltage(self, channel: str) -> float: ...


@runtime_checkable
class ThermalChamber(Role, Protocol):
    """A thermal chamber or forcing system. Safe state: setpoint to ambient, flow off."""

    ambient: float

    def set_setpoint(self, degc: float) -> None: ...
    def setpoint(self) -> float: ...
    def temperature(self) -> float: ...
    def set_ramp_rate(self, k_per_min: float) -> None: ...
    def at_temperature(self) -> bool: ...
    def start(self) -> None:
        """Start forcing air / regulating (after the setpoint is set)."""
        ...
    def status(self) -> Mapping[str, Any]: ...


@runtime_checkable
class LinkTester(Role, Protocol):
    """A BERT / SerDes link tester. Safe state: measurement and pattern stopped."""

    lanes: Sequence[str]

    def configure(self, pattern: str, rate_gbps: float | None = None, lanes: Sequence[str] | None = None) -> None:
        """Set the expected PRBS pattern (``PRBS31`` or ``31``) and the bit rate on ``lanes`` (all)."""
        ...
    def set_gating(self, seconds: float | None) -> None:
        """A single gated measurement of ``seconds`` (None = untimed, until stop())."""
        ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def running(self) -> bool: ...
    def results(self, lane: str | None = None) -> BerResult: ...
    def eye(self, lane: str | None = None) -> dict[str, float]:
        """Eye height (mV) and width (UI or ps, see the profile), as far as the model measures them."""
        ...


@runtime_checkable
class DutConsole(Role, Protocol):
    """The DUT's debug console. Safe state: PRBS generators stopped, load off."""

    def send(self, command: str) -> str: ...
    def expect(self, command: str, pattern: str) -> Any: ...
    def identify(self) -> dict[str, str]: ...
    def sensors(self) -> dict[str, float]: ...
    def power_good(self) -> dict[str, bool]: ...
    def link_status(self, lane: str | None = None) -> dict[str, Any]: ...
    def prbs_start(self, pattern: str, lanes: Sequence[str] | None = None) -> None: ...
    def prbs_stop(self) -> None: ...
    def prbs_counters(self) -> dict[str, BerResult]: ...
    def set_load(self, percent: float) -> None: ...
    def perf(self) -> dict[str, float]: ...


ROLE_TYPES: dict[str, type] = {
    "power_supply": PowerSupply,
    "electronic_load": ElectronicLoad,
    "multimeter": Multimeter,
    "temperature_scanner": TemperatureScanner,
    "thermal_chamber": ThermalChamber,
    "link_tester": LinkTester,
    "dut_console": DutConsole,
}

# Profile properties/actions a role implementation needs ("?" = optional, used when present).
REQUIREMENTS: dict[str, dict[str, tuple[str, ...]]] = {
    "power_supply": {
        "properties": ("voltage", "current_limit", "output", "measured_voltage", "measured_current"),
        "optional": ("protection_tripped",),
    },
    "electronic_load": {
        "properties": ("mode", "input", "measured_voltage", "measured_current", "measured_power",
                       "level_cc", "level_cv", "level_cr", "level_cp"),
    },
    "multimeter": {
        "properties": ("measure_dc_voltage", "measure_ac_voltage", "measure_dc_current",
                       "measure_resistance", "nplc", "sample_count", "reading"),
    },
    "temperature_scanner": {
        "properties": ("temperature", "temperatures", "voltage"),
        "actions": ("configure_thermocouple",),
    },
    "thermal_chamber": {
        "properties": ("setpoint", "temperature", "ramp_rate", "at_temperature"),
        "actions": ("start",),
    },
    "link_tester": {
        "properties": ("pattern", "rate", "running", "error_count", "bit_count"),
        "actions": ("start", "stop", "gating"),
    },
    "dut_console": {
        "properties": ("board_identity", "sensors", "power_good", "link_status", "prbs_counters", "load", "perf"),
        "actions": ("prbs_start", "prbs_stop"),
    },
}
