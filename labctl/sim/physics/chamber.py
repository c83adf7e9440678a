"""The thermal forcing system's air (inTEST ThermoStream-like): ramp, first-order settling,
window + soak "at temperature" logic."""

from __future__ import annotations

import math
from dataclasses import dataclass

from labctl.sim.physics import constants as K


@dataclass
class ChamberAir:
    room: float = 25.0
    air: float = 25.0
    setpoint: float = 25.0
    dynamic_setpoint: float = 25.0
    ramp: float = 9999.0  # K/min
    window: float = 1.0  # +- degC
    soak: float = 30.0  # s
    flow: bool = True
    head_down: bool = True
    compressor: bool = True
    upper_limit: float = 225.0
    lower_limit: float = -99.9
    in_window_for: float = 0.0  # s the air has been inside the window
    error_word: int = 0
    broken: bool = False  # a fault: heater/compressor failed
    heat_load: float = 0.0  # W the boards in the chamber put into its air (a rack's sum)
    capacity: float = K.CHAMBER_CAPACITY_W  # W of board heat the air handler removes at its setpoint

    def reset(self) -> None:
        self.setpoint = self.room
        self.ramp = 9999.0
        self.window = 1.0
        self.soak = 30.0
        self.flow = True
        self.head_down = True
        self.compressor = True
        self.upper_limit, self.lower_limit = 225.0, -99.9

    @property
    def active(self) -> bool:
        return self.flow and self.head_down and not self.broken

    def step(self, dt: float) -> None:
        if dt <= 0:
            return
        if self.active:
            sp = min(self.upper_limit, max(self.lower_limit, self.setpoint))
            delta = sp - self.dynamic_setpoint
            max_move = self.ramp / 60.0 * dt
            self.dynamic_setpoint += max(-max_move, min(max_move, delta))
            target = self.dynamic_setpoint
            if not self.compressor:
                target = max(target, self.room)
            # heat beyond what the air handler can remove warms the air above its setpoint
            target += max(0.0, self.heat_load - self.capacity) * K.CHAMBER_OVERLOAD_K_PER_W
        else:
            target = self.room
            self.dynamic_setpoint = self.air
        self.air += (target - self.air) * (1.0 - math.exp(-dt / K.AIR_TAU))
        if self.active and abs(self.air - self.setpoint) <= self.window:
            self.in_window_for += dt
        else:
            self.in_window_for = 0.0

    @property
    def at_temperature(self) -> bool:
        return self.active and self.in_window_for >= self.soak and abs(self.air - self.setpoint) <= self.window

    @property
    def tecr(self) -> int:
        """TECR? bits: 1 at temperature, 2 not at temperature."""
        return 1 if self.at_temperature else 2
