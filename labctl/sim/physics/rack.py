"""A rack: several boards in one chamber, advanced together in time.

Each board is a :class:`~labctl.sim.physics.bench.Bench` *bay* (its own supply, load,
noise and lane listeners) sharing the rack's chamber air and lock. Whichever emulator asks,
:meth:`Rack.update` integrates the chamber once per time step, with the heat of every
board in its balance, then every board in that step's air.
"""

from __future__ import annotations

import threading

from labctl.clock import Clock, RealClock, ScaledClock
from labctl.sim.physics.bench import MAX_CATCH_UP, MAX_STEP, Bench, Changes
from labctl.sim.physics.chamber import ChamberAir
from labctl.sim.physics.dut import DutParams

#: Wall seconds a rack may lag behind the clock before an instrument's question integrates
#: every board again. With N boards each answering its own commands, integrating all N boards
#: for every command of any board made the lab's CPU grow as N² (16 boards at x600: most of a
#: core). An answer is then as of at most 2 ms of wall time ago (x the time scale in simulated
#: time), less than a socket round trip's own jitter; every node still integrates exactly,
#: and a manual clock (tests) is never lagged.
QUANTUM_WALL_S = 0.002


class Rack:
    def __init__(self, duts: dict[str, DutParams], *, clock: Clock | None = None, seed: int = 0,
                 room: float = 25.0) -> None:
        """``duts``: slot id -> the DUT in that slot (in slot order)."""
        self.clock = clock or RealClock()
        self.lock = threading.RLock()
        self.chamber = ChamberAir(room=room, air=room, setpoint=room, dynamic_setpoint=room)
        self.t = self.clock.monotonic()
        self.changes = Changes()  # made from outside (Bench.touch): one count for every board of the rack
        self.bays: dict[str, Bench] = {slot: Bench(dut, clock=self.clock, seed=seed, room=room, rack=self)
                                       for slot, dut in duts.items()}
        for bay in self.bays.values():
            bay.t = self.t
        real = isinstance(self.clock, ScaledClock | RealClock)
        self.quantum = QUANTUM_WALL_S * getattr(self.clock, "scale", 1.0) if real else 0.0

    def bay(self, slot: str) -> Bench:
        return self.bays[slot]

    @property
    def heat(self) -> float:
        """W the boards put into the chamber's air (what they draw from their supplies)."""
        return sum(bay.board.p_in for bay in self.bays.values())

    def update(self, bay: Bench | None = None) -> float:
        """Integrate the chamber and every board up to now; returns the simulated time.

        Every time step solves every board; at the present instant only ``bay`` (the board
        an instrument asks about) is solved again, or every board when None: an instrument
        of one slot does not pay for the others'."""
        with self.lock:
            now = self.clock.monotonic()
            if bay is not None and now - self.t < self.quantum:
                bay.solve_electrical(self.t)
                return self.t
            if now - self.t > MAX_CATCH_UP:
                self._step(now - self.t - MAX_CATCH_UP)
            while self.t < now:
                self._step(min(MAX_STEP, now - self.t))
            for b in [bay] if bay is not None else self.bays.values():
                b.solve_electrical(self.t)
            return self.t

    def _step(self, dt: float) -> None:
        self.chamber.heat_load = self.heat
        self.chamber.step(dt)
        for bay in self.bays.values():
            bay.step_board(self.t, dt)
            bay.t = self.t + dt
        self.t += dt
