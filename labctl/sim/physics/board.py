"""The virtual accelerator board: rails (VRMs with efficiency curves), workload, thermal
nodes with time constants, throttling, power-good sequencing and the link."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from labctl.sim.physics import constants as K
from labctl.sim.physics.dut import DutParams
from labctl.sim.physics.link import lane_q
from labctl.sim.physics.vin import InputNode

RAIL_BY_NAME = {r.name: r for r in K.RAILS}
_AUX, _CORE, _IO = (K.RAIL_NAMES.index(name) for name in ("VDD_AUX", "VDD_CORE", "VDD_IO"))  # the link's rails


@dataclass
class RailState:
    voltage: float = 0.0
    current: float = 0.0
    loss: float = 0.0
    up: bool = False
    down_at: float | None = None  # when the rail's VRM stopped (it decays from there)
    v_down: float = 0.0
    i_down: float = 0.0

    def decay(self, now: float, tau_s: float) -> None:
        """A stopped rail: its output capacitance discharges into the load."""
        if self.down_at is None:
            self.voltage = self.current = 0.0
        else:
            k = math.exp(-max(0.0, now - self.down_at) / tau_s)
            self.voltage, self.current = self.v_down * k, self.i_down * k
        self.loss = 0.0


@dataclass
class Board:
    params: DutParams
    ambient: float = 25.0
    powered: bool = False
    on_since: float = 0.0
    off_at: float | None = None  # when VIN last fell below UVLO
    latched: str | None = None  # "brownout" | "thermtrip": off until VIN is cycled
    pg_ms: dict[str, float | None] = field(default_factory=dict)
    workload: float = 0.0
    throttled: bool = False
    throttle_temp: float | None = None  # die temperature when throttling last asserted (since power-up)
    die: float = 25.0
    hbm: float = 25.0
    vrm: float = 25.0
    lid: float = 25.0
    overtemp_s: float = 0.0
    retrain_until: float = 0.0
    tx_prbs: int = K.DEFAULT_PRBS
    ops: float = 0.0
    boots: int = 0  # power-ups so far: what lives on the die (PRBS checkers, counters) starts afresh at each
    aux_load: float = 0.0  # A drawn by the electronic load from the AUX header
    #: the voltage the load holds on the AUX rail when the VRM current-limits (its CR/CV/CP law;
    #: None: the rail folds back to 30 %, as under a CC load it cannot feed)
    aux_held: float | None = None
    rails: dict[str, RailState] = field(default_factory=lambda: {n: RailState() for n in K.RAIL_NAMES})
    p_in: float = 0.0
    input: InputNode = field(default_factory=InputNode)

    def __post_init__(self) -> None:
        for attr in ("die", "hbm", "vrm", "lid"):
            setattr(self, attr, self.ambient)

    # -- power --------------------------------------------------------------------------
    def power_on(self, now: float) -> None:
        self.powered = True
        self.on_since = now
        self.boots += 1
        self.tx_prbs = K.DEFAULT_PRBS  # the die's power-on defaults: TX PRBS31, counters cleared
        self.ops = 0.0
        self.throttled = False
        self.throttle_temp = None
        self.overtemp_s = 0.0
        self.retrain_until = now
        t = 0.0
        self.pg_ms = {}
        for rail in K.RAILS:
            if rail.name in self.params.dead_rails or t is None:
                self.pg_ms[rail.name] = None
                t = None  # the sequencer waits forever for this rail's PGOOD
                continue
            t += self.params.seq_delay_ms[rail.name]
            self.pg_ms[rail.name] = t

    def power_off(self, at: float | None = None) -> None:
        self.powered = False
        self.off_at = at
        self.latched = None
        self.workload = 0.0
        self.pg_ms = {}

    def rail_up(self, name: str, now: float) -> bool:
        if not self.powered or self.latched or name in self.params.dead_rails:
            return False  # (a rail that dies while running drops at once)
        t = self.pg_ms.get(name)
        return t is not None and (now - self.on_since) * 1000.0 >= t

    @property
    def effective_workload(self) -> float:
        return min(self.workload, K.THROTTLE_CAP) if self.throttled else self.workload

    def link_trained(self, now: float) -> bool:
        ups = self.rails_up(now)
        return ups[_AUX] and ups[_CORE] and ups[_IO] and now >= self.retrain_until

    def rails_up(self, now: float) -> list[bool]:
        """:meth:`rail_up` of every rail, in sequencing order (:data:`K.RAILS`)."""
        if not self.powered or self.latched:
            return [False] * len(K.RAILS)
        since_ms = (now - self.on_since) * 1000.0
        dead, pg = self.params.dead_rails, self.pg_ms
        return [name not in dead and (t := pg.get(name)) is not None and since_ms >= t for name in K.RAIL_NAMES]

    # -- electrical ---------------------------------------------------------------------
    def solve_rails(self, now: float) -> float:
        """Rail currents/voltages/VRM losses; returns the power drawn from VIN (W)."""
        p = self.params
        wl = self.workload
        if self.throttled and wl > K.THROTTLE_CAP:
            wl = K.THROTTLE_CAP
        ups = self.rails_up(now)
        link = ups[_AUX] and ups[_CORE] and ups[_IO] and now >= self.retrain_until
        total_in = K.STANDBY_POWER if self.powered else 0.0
        rails = self.rails
        for rail, up in zip(K.RAILS, ups, strict=True):
            name = rail.name
            st = rails[name]
            was_up, st.up = st.up, up
            if not up:
                if was_up:  # the VRM stopped: when VIN fell (board off), else now (trip, fault)
                    off = self.off_at if not self.powered and self.off_at is not None else now
                    st.down_at, st.v_down, st.i_down = min(off, now), st.voltage, st.current
                st.decay(now, rail.decay_ms / 1000.0)
                continue
            st.down_at = None
            v_open = rail.nominal * (1.0 + p.rail_offset[name])
            # the rail's demand (A): CORE = leak(T) + idle + dyn*workload; the rest linear in workload
            if name == "VDD_CORE":
                i = p.leak_25c * math.exp((self.die - 25.0) / K.CORE_LEAK_TEMP_SCALE) + K.CORE_IDLE + K.CORE_DYN_MAX * wl
            elif name == "VDD_IO":
                i = K.IO_BASE + (K.IO_LINK + K.IO_DYN_MAX * wl if link else 0.0)
            elif name == "VDD_HBM":
                i = K.HBM_BASE + K.HBM_DYN_MAX * wl
            else:  # VDD_AUX, and what the electronic load draws from its header
                i = K.AUX_BASE + self.aux_load
            if i > rail.limit_a:  # VRM current limit: the voltage is the load's (fold back under CC)
                i = rail.limit_a
                held = self.aux_held if name == "VDD_AUX" else None
                v = v_open * 0.3 if held is None else max(0.0, min(v_open - rail.load_line * i, held))
            else:
                v = v_open - rail.load_line * i
            st.voltage, st.current = v, i
            st.loss = p.loss_scale * (rail.loss_fixed + rail.loss_a * i + rail.loss_b * i * i)
            total_in += v * i + st.loss
        self.p_in = total_in
        return total_in

    def aux_open_voltage(self, now: float) -> float:
        if not self.rail_up("VDD_AUX", now):
            return 0.0
        return RAIL_BY_NAME["VDD_AUX"].nominal * (1.0 + self.params.rail_offset["VDD_AUX"])

    # -- thermal ------------------------------------------------------------------------
    def step_thermal(self, dt: float, now: float) -> None:
        amb = self.ambient
        rails = self.rails
        core, io, hbm = rails["VDD_CORE"], rails["VDD_IO"], rails["VDD_HBM"]
        p_die = core.voltage * core.current + io.voltage * io.current
        p_hbm = hbm.voltage * hbm.current
        p_loss = sum(r.loss for r in self.rails.values())
        theta = self.params.theta_die
        if self.params.overtemp and self.powered and not self.latched:
            self.overtemp_s += dt
            theta *= 1.0 + K.OVERTEMP_THETA_GAIN * (1.0 - math.exp(-self.overtemp_s / K.OVERTEMP_TAU))
        self.die, self.lid = die_lid_step(self.die, self.lid, amb, p_die, theta, dt)
        hbm_ss = amb + K.THETA_HBM * p_hbm + K.HBM_DIE_COUPLING * (self.die - amb)
        self.hbm += (hbm_ss - self.hbm) * (1.0 - math.exp(-dt / K.TAU_HBM))
        self.vrm += (amb + K.THETA_VRM * p_loss - self.vrm) * (1.0 - math.exp(-dt / K.TAU_VRM))
        if self.powered and not self.latched:
            if self.die >= K.THERMTRIP:
                self.latched = "thermtrip"
            elif self.die >= K.THROTTLE_ON:
                if not self.throttled:  # the controller latches the die temperature it asserted at
                    self.throttle_temp = self.die
                self.throttled = True
            elif self.die < K.THROTTLE_OFF:
                self.throttled = False
            self.ops += self.throughput_tops(now) * 1e12 * dt

    def throughput_tops(self, now: float) -> float:
        if not (self.rail_up("VDD_CORE", now) and self.rail_up("VDD_HBM", now)):
            return 0.0
        return self.params.peak_tops * self.effective_workload

    # -- link ---------------------------------------------------------------------------
    def lane_qs(self, now: float) -> list[float]:
        vio = self.rails["VDD_IO"].voltage
        return [lane_q(lane, self.die, vio) for lane in self.params.lanes]

    def reset(self, now: float) -> None:
        """The console's ``reset``: idle workload, link retrains."""
        self.workload = 0.0
        self.throttled = False
        self.tx_prbs = K.DEFAULT_PRBS
        self.retrain_until = now + K.RETRAIN_S


def die_lid_step(die: float, lid: float, air: float, power: float, theta: float, dt: float) -> tuple[float, float]:
    """Die and lid temperatures ``dt`` seconds on, with ``power`` W into the die and the air at
    ``air``: the chain die -> lid -> air (resistances (1 - LID_FRACTION) and LID_FRACTION of
    ``theta``, the die's and the lid's heat capacities), solved exactly for constant inputs.
    The heat leaves the die through the lid, so a heated die stays at or above the lid and the
    lid between the die and a colder air, however fast the air changes."""
    r_dl, r_la = (1.0 - K.LID_FRACTION) * theta, K.LID_FRACTION * theta
    lid_ss = air + power * r_la
    die_ss = lid_ss + power * r_dl
    # d/dt [die, lid] = A [die - die_ss, lid - lid_ss]
    a, b = -1.0 / (r_dl * K.DIE_HEAT_CAPACITY), 1.0 / (r_dl * K.DIE_HEAT_CAPACITY)
    c, d = 1.0 / (r_dl * K.LID_HEAT_CAPACITY), -(1.0 / r_dl + 1.0 / r_la) / K.LID_HEAT_CAPACITY
    root = math.sqrt((a - d) ** 2 + 4.0 * b * c)  # b*c > 0: two real, distinct, negative eigenvalues
    l1, l2 = (a + d + root) / 2.0, (a + d - root) / 2.0
    e1, e2 = math.exp(l1 * dt), math.exp(l2 * dt)
    # exp(A dt) = (e1 (A - l2 I) - e2 (A - l1 I)) / (l1 - l2)
    y0, y1 = die - die_ss, lid - lid_ss
    m00 = (e1 * (a - l2) - e2 * (a - l1)) / root
    m01 = (e1 - e2) * b / root
    m10 = (e1 - e2) * c / root
    m11 = (e1 * (d - l2) - e2 * (d - l1)) / root
    return die_ss + m00 * y0 + m01 * y1, lid_ss + m10 * y0 + m11 * y1
