"""Power supply and electronic load served by profiles."""

from __future__ import annotations

from labctl.errors import InstrumentError
from labctl.instruments.impl.base import RoleImpl


class ProfilePowerSupply(RoleImpl):
    kind = "power_supply"

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
        self._set("output", bool(on), channel)

    def output(self, channel: str) -> bool:
        return self._get("output", channel)

    def measure_voltage(self, channel: str) -> float:
        return self._get("measured_voltage", channel)

    def measure_current(self, channel: str) -> float:
        return self._get("measured_current", channel)

    def protection_tripped(self, channel: str) -> bool | None:
        return self._get("protection_tripped", channel) if self.has("protection_tripped") else None


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
