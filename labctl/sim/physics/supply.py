"""Bench power: the PSU channels and the electronic load's settings (physical state only;
the emulators own the SCPI)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class PsuChannel:
    number: int
    v_max: float
    i_max: float
    v_min: float = 0.0  # negative outputs (E3631A N25V) run from v_min to 0
    v_set: float = 0.0
    i_set: float = 0.0
    on: bool = False
    ovp_level: float = 0.0
    ovp_enabled: bool = True  # E36300: OVP is always armed; DP800: `VOLT:PROT:STAT`, off at power-on
    ocp_enabled: bool = False
    ocp_level: float | None = None  # None: OCP trips at the current limit (E36300); DP800: its own level
    ovp_tripped: bool = False
    ocp_tripped: bool = False
    v_out: float = 0.0  # terminal voltage after the last solve
    i_out: float = 0.0
    cc_mode: bool = False
    ocp_delay: float = 0.0  # s the trip condition is tolerated (E36300 `CURR:PROT:DEL`); 0: trips at once
    ocp_delay_from_cc: bool = False  # the delay runs from entering the trip condition, not from a settings change
    changed_at: float = -math.inf  # when output, voltage or current limit last changed (as first seen)
    trip_condition_since: float | None = None  # since when the output is at its OCP trip point
    _settings: tuple[bool, float, float] | None = None

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.v_set = 0.0
        self.i_set = self.i_max
        self.on = False
        self.ovp_level = max(abs(self.v_max), abs(self.v_min)) * 1.1
        self.ovp_enabled = True
        self.ocp_enabled = False
        self.ocp_level = None
        self.ovp_tripped = self.ocp_tripped = False
        self.v_out = self.i_out = 0.0
        self.cc_mode = False
        self.ocp_delay, self.ocp_delay_from_cc = 0.0, False
        self.changed_at, self.trip_condition_since, self._settings = -math.inf, None, None

    @property
    def sourcing(self) -> bool:
        return self.on and not (self.ovp_tripped or self.ocp_tripped)

    @property
    def over_voltage(self) -> bool:
        """OVP armed and the setpoint above its level."""
        return self.ovp_enabled and abs(self.v_set) > self.ovp_level

    def over_current(self, amps: float) -> bool:
        """OCP armed and the output at its trip point: the current limit (E36300: OCP trips
        instead of regulating; ``amps`` above it or the output in constant current) or, with an
        OCP level of its own (DP800), the output current reaching that level."""
        if not self.ocp_enabled:
            return False
        if self.ocp_level is None:
            return self.cc_mode or amps > self.i_set
        delivered = self.i_set if self.cc_mode else min(amps, self.i_set)
        return delivered >= self.ocp_level

    def note_settings(self, now: float) -> None:
        """Output, voltage or current limit changed since last noted: the OCP delay (settings
        change) starts at ``now``. The emulator notes them after each setting command."""
        settings = (self.on, self.v_set, self.i_set)
        if settings != self._settings:
            self._settings, self.changed_at = settings, now

    def ocp_trips(self, amps: float, now: float) -> bool:
        """The over-current protection trips at ``now``: the output is at its trip point
        (:meth:`over_current`) and past the OCP delay. The delay runs from the last settings
        change (output switched on, voltage or current limit set: the E36300's ``SCHange``, so a
        board's inrush into the current limit right after switching on is tolerated) or, with
        :attr:`ocp_delay_from_cc` (``CCTRans``), from entering the trip point."""
        self.note_settings(now)
        if not self.over_current(amps):
            self.trip_condition_since = None
            return False
        if self.trip_condition_since is None:
            self.trip_condition_since = now
        since = self.trip_condition_since if self.ocp_delay_from_cc else self.changed_at
        return now - since >= self.ocp_delay - 1e-9


def e36312a_channels() -> dict[int, PsuChannel]:
    return {1: PsuChannel(1, 6.0, 5.0), 2: PsuChannel(2, 25.0, 1.0), 3: PsuChannel(3, 25.0, 1.0)}


def dp832_channels() -> dict[int, PsuChannel]:
    return {1: PsuChannel(1, 32.0, 3.2), 2: PsuChannel(2, 32.0, 3.2), 3: PsuChannel(3, 5.3, 3.2)}


def e3631a_channels() -> dict[int, PsuChannel]:
    """P6V, P25V and N25V (the last one negative), with the E3631A's 3 % over-range."""
    return {1: PsuChannel(1, 6.18, 5.15), 2: PsuChannel(2, 25.75, 1.03), 3: PsuChannel(3, 0.0, 1.03, v_min=-25.75)}


@dataclass
class LoadState:
    """EL34143A input settings and the last solved operating point."""

    on: bool = False
    mode: str = "CURR"  # CURR | VOLT | POW | RES
    levels: dict[str, float] = field(default_factory=lambda: {"CURR": 0.0, "VOLT": 0.0, "POW": 0.0, "RES": 1000.0})
    v_in: float = 0.0
    i_in: float = 0.0

    def reset(self) -> None:
        self.on = False
        self.mode = "CURR"
        self.levels = {"CURR": 0.0, "VOLT": 0.0, "POW": 0.0, "RES": 1000.0}

    def held_voltage(self, i_in: float) -> float | None:
        """The input voltage the load holds when a current-limited source gives it ``i_in``
        (its regulation law: CR ``I·R``, CV its level); None in CC and CP, where a source that
        cannot give the level collapses (and off)."""
        if not self.on or i_in <= 0:
            return None
        if self.mode == "RES":
            return i_in * max(self.levels["RES"], 1e-3)
        if self.mode == "VOLT":
            return self.levels["VOLT"]
        return None

    def demand(self, v_open: float, r_source: float, i_limit: float) -> float:
        """Current the load sinks from a source of open-circuit ``v_open`` behind ``r_source``."""
        if not self.on or v_open <= 0.05:
            return 0.0
        lvl = self.levels[self.mode]
        if self.mode == "CURR":
            i = lvl
        elif self.mode == "RES":
            i = v_open / (max(lvl, 1e-3) + r_source)
        elif self.mode == "POW":
            disc = v_open * v_open - 4 * r_source * lvl
            i = (v_open - disc**0.5) / (2 * r_source) if disc >= 0 else i_limit * 2
        else:  # VOLT: sink whatever pulls the source down to the level
            i = max(0.0, (v_open - lvl) / r_source)
        return max(0.0, i)
