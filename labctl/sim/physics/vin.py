"""The board's input node: VIN at the connector, on the bulk input capacitance.

The supply charges the capacitance through the lead. A rise of more than
:data:`~labctl.sim.physics.constants.VIN_STEP_FOLLOW` (power-up, a setpoint raised) is a
ramp at the hot-swap controller's soft-start slew, slower when the supply's current limit
cannot deliver C·dV/dt (the supply runs constant-current meanwhile): that charge current is
the inrush. A fall of more than the same step (output off, setpoint lowered) decays with
:data:`~labctl.sim.physics.constants.INPUT_DISCHARGE_TAU`. Smaller changes (the lead's drop
moving with the load) follow at once. Segments are exact, so a solve at any time gives the
voltage then, and when a threshold was crossed in between.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from labctl.sim.physics import constants as K


@dataclass
class InputNode:
    v: float = 0.0
    # the last segment: a linear ramp (kind "ramp") or an exponential fall ("fall")
    kind: str = ""
    active: bool = False  # the segment is still in progress
    t0: float = 0.0
    v0: float = 0.0
    target: float = 0.0
    slope: float = 0.0  # V/s of a ramp
    current_limited: bool = False  # the ramp is held at the supply's current limit

    @property
    def charge_a(self) -> float:
        """Current (A) into the input capacitance now: the inrush while a ramp runs."""
        return K.INPUT_CAPACITANCE * self.slope if self.active and self.kind == "ramp" else 0.0

    def advance(self, now: float, target: float, slew: float, i_available: float) -> None:
        """Move VIN towards ``target`` (the settled voltage at the board for the present load)
        up to ``now``. ``slew`` is the soft-start dV/dt (V/s); ``i_available`` the current the
        supply can put into the capacitance (its limit less what the board draws)."""
        target = max(0.0, target)
        if self.active:
            if self.kind == "ramp":
                self.v = min(self.target, self.v0 + self.slope * (now - self.t0))
                self.active = self.v < self.target
            else:
                span = self.v0 - self.target
                self.v = self.target + span * math.exp(-(now - self.t0) / K.INPUT_DISCHARGE_TAU)
                self.active = self.v - self.target > 1e-4
                if not self.active:
                    self.v = self.target
        if self.active:
            moved = abs(target - self.target) > K.VIN_STEP_FOLLOW
            if self.kind == "ramp" and target < self.v - K.VIN_STEP_FOLLOW:
                self._fall(now, target)
            elif self.kind == "fall" and target > self.v + K.VIN_STEP_FOLLOW:
                self._ramp(now, target, slew, i_available)
            elif moved:
                (self._ramp(now, target, slew, i_available) if self.kind == "ramp" else self._fall(now, target))
            return
        if target > self.v + K.VIN_STEP_FOLLOW:
            self._ramp(now, target, slew, i_available)
        elif target < self.v - K.VIN_STEP_FOLLOW:
            self._fall(now, target)
        else:
            self.v = target

    def _ramp(self, now: float, target: float, slew: float, i_available: float) -> None:
        self.current_limited = K.INPUT_CAPACITANCE * slew > i_available
        self.slope = max(1e-3, i_available) / K.INPUT_CAPACITANCE if self.current_limited else slew
        self.kind, self.active, self.t0, self.v0, self.target = "ramp", True, now, self.v, target

    def _fall(self, now: float, target: float) -> None:
        self.current_limited = False
        self.kind, self.active, self.t0, self.v0, self.target = "fall", True, now, self.v, target

    def crossed_at(self, level: float, now: float) -> float:
        """When VIN crossed ``level`` in the last segment (``now`` if it did not)."""
        if self.kind == "ramp" and self.v0 < level <= self.target and self.slope > 0:
            return min(now, self.t0 + (level - self.v0) / self.slope)
        if self.kind == "fall" and self.v0 > level > self.target:
            return min(now, self.t0 + K.INPUT_DISCHARGE_TAU * math.log((self.v0 - self.target) / (level - self.target)))
        return now
