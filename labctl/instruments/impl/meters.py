"""Multimeter and temperature scanner served by profiles."""

from __future__ import annotations

from collections.abc import Sequence

from labctl.errors import InstrumentError, InstrumentReplyError
from labctl.instruments.impl.base import RoleImpl
from labctl.instruments.roles import DMM_FUNCTIONS as FUNCTIONS


class ProfileMultimeter(RoleImpl):
    kind = "multimeter"

    def measure(self, function: str = "dc_voltage") -> float:
        return self._get(f"measure_{_function(function)}")

    def set_range(self, function: str, value: float | None) -> None:
        f = _function(function)
        if value is None:
            self.driver.call(f"autorange_{f}")
        else:
            self._set(f"range_{f}", value)

    def set_nplc(self, nplc: float) -> None:
        self._set("nplc", nplc)

    def set_sample_count(self, count: int) -> None:
        self._set("sample_count", int(count))

    def read(self) -> list[float]:
        value = self._get("reading")
        return list(value) if isinstance(value, list) else [float(value)]


def _function(function: str) -> str:
    f = function.lower().replace(" ", "_")
    if f not in FUNCTIONS:
        raise InstrumentError(f"unknown multimeter function {function!r}", hint=f"use one of {', '.join(FUNCTIONS)}")
    return f


class ProfileTemperatureScanner(RoleImpl):
    kind = "temperature_scanner"

    def configure_thermocouple(self, channels: Sequence[str], tc_type: str = "K") -> None:
        self.driver.variables["tc_type"] = tc_type
        self.driver.call("configure_thermocouple", channels=list(channels))

    def read_temperature(self, channel: str) -> float:
        return self._get("temperature", channel)

    def scan_temperatures(self, channels: Sequence[str]) -> dict[str, float]:
        return self._scan("temperatures", channels)

    def _scan(self, prop: str, channels: Sequence[str]) -> dict[str, float]:
        """One scan of ``channels``: channel -> reading. A scanner reads its channel list in
        ascending channel order, each channel once, whatever order the list was given in
        (DAQ970A / 34970A ``ROUTe:SCAN``): the list is sent that way, and the readings are
        matched to the channels in that order."""
        chans = scan_order(channels)
        values = self._get(prop, chs=self.driver.channels_text(chans))
        if len(values) != len(chans):
            raise InstrumentReplyError(f"asked {len(chans)} channels, got {len(values)} readings",
                                       instrument=self.name)
        return {c: float(v) for c, v in zip(chans, values, strict=True)}

    def read_voltage(self, channel: str) -> float:
        return self._get("voltage", channel)

    def scan_voltages(self, channels: Sequence[str]) -> dict[str, float]:
        """DC volts of a channel list in one scan (a profile without ``voltages``: one read each)."""
        if "voltages" not in self.driver.profile.properties:
            return {str(c): self.read_voltage(c) for c in channels}
        return self._scan("voltages", channels)


def scan_order(channels: Sequence[str]) -> list[str]:
    """``channels`` as a scanner reads them: each once, in ascending channel number (``111``
    before ``201``; ids that are not numbers after those, as given)."""
    unique = list(dict.fromkeys(str(c) for c in channels))
    return sorted(unique, key=lambda c: (0, int(c), "") if c.isdigit() else (1, 0, c))
