"""The bench: chamber air, PSU, electronic load and the board, advanced together in time.

Every emulator holds the same :class:`Bench`; before it reads anything it calls
:meth:`Bench.update`, which integrates the model up to the clock's present in steps of at
most :data:`MAX_STEP` simulated seconds. All state is guarded by :attr:`Bench.lock`.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from labctl.clock import Clock, RealClock
from labctl.sim.physics import constants as K
from labctl.sim.physics.board import Board
from labctl.sim.physics.chamber import ChamberAir
from labctl.sim.physics.dut import DutParams, stable_seed
from labctl.sim.physics.supply import LoadState, e36312a_channels

if TYPE_CHECKING:
    from labctl.sim.physics.rack import Rack

MAX_STEP = 1.0  # simulated seconds (every node is updated exactly; this bounds coupling error)
MAX_CATCH_UP = 3600.0  # simulated seconds integrated finely after a stall; older time in one step
RAIL_SETTLED_V = 1e-3  # V: a stopped rail still above this is discharging (a transient)

# (t0, t1, the lanes' Q factors when asked for, link trained, board tx PRBS length) -> None
LaneListener = Callable[[float, float, Callable[[], list[float]], bool, int], None]


@dataclass
class Changes:
    """Changes made to a bench from outside its model (commands, faults, DUT swaps)."""

    count: int = 0


class Bench:
    def __init__(self, dut: DutParams, *, clock: Clock | None = None, seed: int = 0, room: float = 25.0,
                 rack: Rack | None = None) -> None:
        self.clock = clock or RealClock()
        self.rack = rack  # a bay of a rack: one chamber and one lock for every board (labctl.sim.physics.rack)
        self.lock = rack.lock if rack is not None else threading.RLock()
        self.seed = seed
        self.rng = random.Random(stable_seed(seed, "noise", dut.serial))
        self.chamber = rack.chamber if rack is not None else ChamberAir(room=room, air=room, setpoint=room,
                                                                        dynamic_setpoint=room)
        self.psu = e36312a_channels()
        self.load = LoadState()
        self.board = Board(dut, ambient=room)
        self.t = self.clock.monotonic()
        self.lane_listeners: list[LaneListener] = []
        self.psu_loads: dict[int, float] = {}  # ohms on PSU channels 2/3 (default: open)
        self.changes = rack.changes if rack is not None else Changes()  # a rack's boards share one count
        self._solved_at = -math.inf  # simulated time of the last solve at the present ...
        self._solved_revision = -1  # ... the revision it saw ...
        self._holds_until = -math.inf  # ... and until when it holds (nothing happens in between)
        self.solves = 0  # how many times the model was solved at the present (update)
        #: (simulated time, order, callback): what an instrument does at a time of its own (a
        #: DAQ's timed scan sweep), called by :meth:`update` at that instant of the model
        self._timers: list[tuple[float, int, Callable[[float], None]]] = []
        self._timer_order = itertools.count()

    # -- DUT handling -------------------------------------------------------------------
    @property
    def dut(self) -> DutParams:
        return self.board.params

    def swap_dut(self, dut: DutParams) -> None:
        """Put another DUT on the fixture (bench settings stay, the new board starts off)."""
        with self.lock:
            self.update()
            self.board = Board(dut, ambient=self.chamber.air)
            self.rng = random.Random(stable_seed(self.seed, "noise", dut.serial))
            self.touch()

    # -- changes from outside -------------------------------------------------------------
    def touch(self) -> None:
        """Something outside the model changed it (a setting, a fault, another DUT): the next
        :meth:`refresh` integrates and solves whatever the age of the last solve. On a rack a
        change counts for every board (the chamber is common)."""
        with self.lock:
            self.changes.count += 1

    @property
    def revision(self) -> int:
        """How many changes were made from outside (:meth:`touch`)."""
        return self.changes.count

    # -- time ---------------------------------------------------------------------------
    def now(self) -> float:
        return self.clock.monotonic()

    def refresh(self, max_age: float) -> bool:
        """:meth:`update`, unless the model was solved less than ``max_age`` simulated seconds ago,
        nothing changed it since (:meth:`touch`) and nothing happens in between (:meth:`settling`):
        what an instrument's readback ADC converting every ``max_age`` seconds reads. True if it
        integrated. Call with :attr:`lock` held."""
        now = self.clock.monotonic()
        if (self._solved_revision == self.changes.count and now < self._holds_until
                and 0.0 <= now - self._solved_at < max_age):
            return False
        self.update()
        return True

    def at(self, t: float, callback: Callable[[float], None]) -> None:
        """Call ``callback(t)`` when the model reaches simulated time ``t`` (at once if it is
        past), with :attr:`lock` held and the model solved at that instant; the callback reads
        the model and must not update it. Call with :attr:`lock` held."""
        heapq.heappush(self._timers, (t, next(self._timer_order), callback))
        self._holds_until = min(self._holds_until, t)

    def _fire_due(self) -> None:
        """Every timer due by :attr:`t`, in time order (a callback may set another)."""
        timers = self._timers
        while timers and timers[0][0] <= self.t:
            _t, _n, callback = heapq.heappop(timers)
            self.solve_electrical(self.t)
            callback(self.t)

    def settling(self, now: float) -> bool:
        """Something happens between the last solve and ``now``: VIN ramping or falling, a stopped
        rail discharging (continuously), a rail of the power-up sequence coming up, the link
        done retraining (at their instants)."""
        return now >= self._holds_until

    def _holds_until_after_solve(self, t: float) -> float:
        """Until when the solve at ``t`` holds if nothing is changed from outside (see :meth:`settling`)."""
        board = self.board
        if board.input.active:
            return t
        for st in board.rails.values():
            if not st.up and st.voltage > RAIL_SETTLED_V:
                return t
        until = board.retrain_until if board.retrain_until > t else math.inf
        if self._timers:
            until = min(until, self._timers[0][0])
        if board.powered and not board.latched:
            for name, st in board.rails.items():
                pg = board.pg_ms.get(name)
                if not st.up and pg is not None and name not in board.params.dead_rails:
                    until = min(until, board.on_since + pg / 1000.0)
        return until

    def update(self) -> float:
        """Integrate the model up to now; returns the simulated time."""
        if self.rack is not None:  # every board of the rack moves with the common chamber
            with self.lock:
                revision = self.changes.count
                self._solved_at = self.rack.update(self)
                if self._timers:  # (in a rack, at the rack's present: a timer is at most a step late)
                    self._fire_due()
                self._solved_revision = revision
                self._holds_until = self._holds_until_after_solve(self._solved_at)
                self.solves += 1
                return self._solved_at
        with self.lock:
            revision = self.changes.count
            now = self.clock.monotonic()
            if now - self.t > MAX_CATCH_UP:
                # a long stall (suspended process): one coarse step, exact for every
                # first-order node, then the last stretch at full resolution
                dt = now - self.t - MAX_CATCH_UP
                self._step(self.t, dt)
                self.t += dt
                self._fire_due()
            timers = self._timers
            while self.t < now:
                dt = min(MAX_STEP, now - self.t)
                if timers and timers[0][0] < self.t + dt:  # stop at the instant a timer is due
                    dt = max(0.0, timers[0][0] - self.t)
                if dt > 0.0:
                    self._step(self.t, dt)
                    self.t += dt
                if timers:
                    self._fire_due()
            self.solve_electrical(self.t)
            self._solved_at, self._solved_revision = self.t, revision
            self._holds_until = self._holds_until_after_solve(self.t)
            self.solves += 1
            return self.t

    def _step(self, t0: float, dt: float) -> None:
        self.chamber.step(dt)
        self.step_board(t0, dt)

    def step_board(self, t0: float, dt: float) -> None:
        """Advance this board (and its supply) by ``dt`` in the chamber's present air."""
        t1 = t0 + dt
        board = self.board
        board.ambient = self.chamber.air
        self.solve_electrical(t1)
        board.step_thermal(dt, t1)
        if self.lane_listeners:
            memo: list[list[float]] = []

            def qs() -> list[float]:  # most steps nobody asks (no gate runs, no checker counts)
                if not memo:
                    memo.append(board.lane_qs(t1) if board.powered else [0.0] * K.LANES)
                return memo[0]

            trained = board.link_trained(t1)
            for listener in list(self.lane_listeners):
                listener(t0, t1, qs, trained, board.tx_prbs)

    # -- electrical network -------------------------------------------------------------
    def solve_electrical(self, now: float) -> None:
        """PSU CH1 -> lead resistance -> board VIN (input capacitance, UVLO on the board's own
        voltage); load on the AUX header; CH2/3 open or into a resistor.

        The model follows CH1's output state as the supply reports it (``sourcing``: on and
        not tripped); it writes back the terminal voltage and current, CC mode, and an OCP
        trip when the channel's OCP is on and the board drives it into its current limit."""
        ch1 = self.psu[1]
        board = self.board
        sourcing = ch1.sourcing
        v_src = ch1.v_set if sourcing else 0.0
        # electronic load on VDD_AUX (rail regulates; the load sees the droop)
        aux_rail = K.RAILS[0]
        board.aux_load = self.load.demand(board.aux_open_voltage(now), aux_rail.load_line, aux_rail.limit_a)
        board.aux_held = self.load.held_voltage(aux_rail.limit_a - K.AUX_BASE)
        p = board.solve_rails(now)
        node = board.input
        v_ss = _board_voltage(v_src, p)
        i_board = p / v_ss if v_ss > 0 else 0.0
        node.advance(now, v_ss, board.params.soft_start_slew, max(0.0, ch1.i_set - i_board) if sourcing else 0.0)
        # UVLO judged on the voltage at the board (after the lead's drop), with hysteresis
        if not board.powered and board.latched is None and node.v >= K.VIN_UVLO:
            board.power_on(node.crossed_at(K.VIN_UVLO, now))
            p = board.solve_rails(now)
        elif board.powered and node.v < K.VIN_UVLO_FALL:  # (this also clears a brown-out/THERMTRIP latch)
            board.power_off(node.crossed_at(K.VIN_UVLO_FALL, now))
            p = board.solve_rails(now)
        # (else the rails stand as just solved: solving them again at the same instant changes nothing)
        aux = board.rails["VDD_AUX"]
        self.load.v_in = aux.voltage
        # the load gets what the rail delivers beyond the board's own AUX draw (all of it but that
        # when the VRM folds back at its limit)
        self.load.i_in = min(board.aux_load, max(0.0, aux.current - K.AUX_BASE)) if self.load.on else 0.0
        self._solve_ch1(now, node.v if node.active else _board_voltage(v_src, p), p)
        for n in (2, 3):
            ch = self.psu[n]
            ohms = self.psu_loads.get(n)
            ch.cc_mode = False
            if not ch.sourcing:
                ch.v_out = ch.i_out = 0.0
            elif ohms is None or ohms <= 0:
                ch.v_out, ch.i_out = ch.v_set, 0.0
            elif ch.v_set / ohms > ch.i_set:  # constant current: the voltage folds back
                ch.cc_mode = True
                ch.v_out, ch.i_out = ch.i_set * ohms, ch.i_set
            else:
                ch.v_out, ch.i_out = ch.v_set, ch.v_set / ohms

    def _solve_ch1(self, now: float, v_b: float, p: float) -> None:
        """CH1's terminal voltage and current: the board's draw plus the inrush; CC, OCP, brown-out."""
        ch1, board, node = self.psu[1], self.board, self.board.input
        ch1.cc_mode = False
        if not ch1.sourcing:
            ch1.v_out, ch1.i_out = 0.0, 0.0
            return
        i = (p / v_b if v_b > 0 else ch1.i_set * 2) if p > 0 else 0.0
        charging = node.charge_a
        if charging and i + charging >= ch1.i_set * 0.999:
            ch1.cc_mode = True  # the input capacitance charges at the current limit
        if ch1.ocp_trips(i, now):
            ch1.ocp_tripped = True
            ch1.cc_mode = False
            ch1.v_out = ch1.i_out = 0.0
            return
        if i > ch1.i_set:
            # constant-power load on a current-limited source collapses: brown-out
            board.latched = "brownout"
            p = board.solve_rails(now)
            i = p / ch1.v_set
        ch1.v_out, ch1.i_out = ch1.v_set, i + charging
        if ch1.cc_mode:
            ch1.v_out, ch1.i_out = min(ch1.v_set, node.v + ch1.i_set * K.LEAD_RESISTANCE), ch1.i_set

    # -- readings -----------------------------------------------------------------------
    def noise(self, sigma: float) -> float:
        return self.rng.gauss(0.0, sigma) if sigma > 0 else 0.0

    def ripple_sample(self, rail: str) -> float:
        """One instantaneous ripple sample (V) of a rail, for ADC-like readings."""
        vpp = self.dut.ripple_mvpp.get(rail, 0.0) / 1000.0
        return vpp / 2 * math.sin(self.rng.uniform(0, 2 * math.pi))

    def ripple_rms(self, rail: str) -> float:
        if not self.board.rails[rail].up:
            return 0.0
        return self.dut.ripple_mvpp.get(rail, 0.0) / 1000.0 / (2 * math.sqrt(2))

    def board_point(self, name: str) -> float:
        """Temperature (degC) at a thermocouple point: LID, HBM, VRM, INLET."""
        b = self.board
        return {"LID": b.lid, "HBM": b.hbm, "VRM": b.vrm, "INLET": self.chamber.air, "DIE": b.die}[name]


def _board_voltage(v_src: float, p: float) -> float:
    """Settled VIN at the board drawing ``p`` watts through the lead (0 when it collapses)."""
    if v_src <= 0:
        return 0.0
    disc = v_src * v_src - 4 * K.LEAD_RESISTANCE * p
    return (v_src + math.sqrt(disc)) / 2 if disc > 0 else 0.0
