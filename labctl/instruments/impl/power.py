"""Power supply and electronic load served by profiles."""

from __future__ import annotations

from labctl.errors import InstrumentError
from labctl.instruments.impl.base import RoleImpl

#: default over-voltage protection: setpoint x OVP_RATIO + OVP_MARGIN volts (docs/checks.md)
OVP_RATIO = 1.1
OVP_MARGIN = 0.2


class ProfilePowerSupply(RoleImpl):
    """A supply served by a profile. Switching an output on first programs the supply's own
    protection (profiles with ``ovp_level``/``ocp_enabled``), so the hardware keeps protecting
    the board whatever happens to labctl: OVP at the plan's ``ovp`` or setpoint x 1.1 + 0.2 V,
    OCP on (unless the plan says ``ocp: false``) at the current limit, with no delay where the
    supply has one (``ocp_delay``: the E36300 tolerates 50 ms at the limit by default, longer
    than a board's inrush). Supplies whose OVP is
    armed apart (``ovp_enabled``) or whose OCP trips at a level of its own (``ocp_level``, the
    DP800) get those programmed too: armed, and the OCP level at the current limit."""

    kind = "power_supply"

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self._wanted: dict[str, dict[str, float | bool | None]] = {}
        self._programmed: dict[str, dict[str, float | bool]] = {}

    def set_protection(self, channel: str, ovp: float | None = None, ocp: bool | None = None) -> None:
        """What the plan asks for on ``channel``; programmed when its output is switched on."""
        self._wanted[self.driver.channel(channel)] = {"ovp": ovp, "ocp": ocp}

    def protection(self, channel: str) -> dict[str, float | bool]:
        """What was programmed before the output last went on: ovp_level (V), ocp_enabled,
        current_limit (A); empty when the profile has no programmable protection."""
        return dict(self._programmed.get(self.driver.channel(channel), {}))

    def program_protection(self, channel: str) -> dict[str, float | bool]:
        ch = self.driver.channel(channel)
        wanted = self._wanted.get(ch, {})
        done: dict[str, float | bool] = {}
        if self.has("ovp_level"):
            ovp = wanted.get("ovp")
            if ovp is None:
                ovp = abs(float(self.voltage(ch))) * OVP_RATIO + OVP_MARGIN
                limits = self.profile.properties["ovp_level"].limits(ch)
                ovp = min(ovp, limits[1]) if limits else ovp
            self._set("ovp_level", float(ovp), ch)
            done["ovp_level"] = float(self._get("ovp_level", ch))
            if self.has("ovp_enabled"):  # supplies whose OVP has a state of its own (DP800)
                self._set("ovp_enabled", True, ch)
                if not self._get("ovp_enabled", ch):
                    raise InstrumentError(f"the supply did not arm its over-voltage protection on {channel}",
                                          instrument=self.name, hint="check the supply's protection menu")
        if self.has("ocp_enabled"):
            ocp = True if wanted.get("ocp") is None else bool(wanted.get("ocp"))
            if ocp and self.has("ocp_level"):  # a trip level of its own (DP800): the current limit
                limit = float(self.current_limit(ch))
                bounds = self.profile.properties["ocp_level"].limits(ch)
                level = min(max(limit, bounds[0]), bounds[1]) if bounds else limit
                self._set("ocp_level", level, ch)
            if ocp and self.has("ocp_delay"):  # trip at the limit, not after the default delay (E36300: 50 ms)
                self._set("ocp_delay", 0.0, ch)
                done["ocp_delay"] = float(self._get("ocp_delay", ch))
            self._set("ocp_enabled", ocp, ch)
            done["ocp_enabled"] = bool(self._get("ocp_enabled", ch))
        if done:
            done["current_limit"] = float(self.current_limit(ch))
        self._programmed[ch] = done
        return done

    @property
    def channels(self) -> list[str]:
        return list(self.profile.channels.ids)

    def set_voltage(self, channel: str, volts: float) -> None:
        self._set("voltage", volts, channel)

    def voltage(self, channel: str) -> float:
        return self._get("voltage", channel)

    def set_current_limit(self, channel: str, amps: float) -> None:
        self._set("current_limit", amps, channel)

    def current_limit(self, channel: str) -> float:
        return self._get("current_limit", channel)

    def set_output(self, channel: str, on: bool) -> None:
        if on:
            self.program_protection(channel)
        self._set("output", bool(on), channel)

    def output(self, channel: str) -> bool:
        return self._get("output", channel)

    def measure_voltage(self, channel: str) -> float:
        return self._get("measured_voltage", channel)

    def measure_current(self, channel: str) -> float:
        return self._get("measured_current", channel)

    def protection_tripped(self, channel: str) -> bool | None:
        names = [n for n in ("protection_tripped", "ovp_tripped", "ocp_tripped") if self.has(n)]
        return any(bool(self._get(n, channel)) for n in names) if names else None


_LEVEL = {"CC": "level_cc", "CV": "level_cv", "CR": "level_cr", "CP": "level_cp"}


class ProfileElectronicLoad(RoleImpl):
    kind = "electronic_load"

    def set_mode(self, mode: str) -> None:
        self._set("mode", _mode(mode))

    def mode(self) -> str:
        return self._get("mode")

    def set_level(self, value: float, mode: str | None = None) -> None:
        self._set(_LEVEL[_mode(mode or self.mode())], value)

    def level(self, mode: str | None = None) -> float:
        return self._get(_LEVEL[_mode(mode or self.mode())])

    def set_input(self, on: bool) -> None:
        self._set("input", bool(on))

    def input(self) -> bool:
        return self._get("input")

    def measure_voltage(self) -> float:
        return self._get("measured_voltage")

    def measure_current(self) -> float:
        return self._get("measured_current")

    def measure_power(self) -> float:
        return self._get("measured_power")


def _mode(mode: str) -> str:
    m = str(mode).upper()
    if m not in _LEVEL:
        raise InstrumentError(f"unknown load mode {mode!r}", hint="use CC, CV, CR or CP")
    return m
