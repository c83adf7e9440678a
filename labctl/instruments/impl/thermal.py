"""Thermal chamber / forcing system served by a profile."""

from __future__ import annotations

from typing import Any

from labctl.instruments.impl.base import RoleImpl


class ProfileThermalChamber(RoleImpl):
    kind = "thermal_chamber"

    @property
    def ambient(self) -> float:
        return float(self.driver.variables.get("ambient", 25.0))

    def set_setpoint(self, degc: float) -> None:
        self._set("setpoint", degc)

    def setpoint(self) -> float:
        return self._get("setpoint")

    def temperature(self) -> float:
        return self._get("temperature")

    def set_ramp_rate(self, k_per_min: float) -> None:
        self._set("ramp_rate", k_per_min)

    def set_window(self, kelvin: float) -> None:
        self._set("window", kelvin)

    def set_soak(self, seconds: float) -> None:
        self._set("soak", seconds)

    def at_temperature(self) -> bool:
        return bool(self._get("at_temperature"))

    def start(self) -> None:
        self.driver.call("start")

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "temperature": self.temperature(),
            "setpoint": self.setpoint(),
            "at_temperature": self.at_temperature(),
        }
        for extra in ("dynamic_setpoint", "dut_temperature", "error_word"):
            if self.has(extra):
                out[extra] = self._get(extra)
        return out
