"""Keysight EL34143A DC electronic load (150 V, 60 A, 350 W), on the board's VDD_AUX header.

Slew rates (``CURR|VOLT:SLEW[:BOTH]|:POS|:NEG``) are kept and read back; the simulated input steps
at once. Protection: over-voltage (always armed), over-current and over-power (``…:PROT:STAT ON``,
with a ``…:PROT:DEL`` the condition must last) turn the input off (``INP?`` 0, ``…:PROT:TRIP?``
1, questionable bits OV 1, OC 2, OP 8); the input cannot be switched on while tripped;
``INP:PROT:CLE`` clears a trip whose cause is gone and the input stays off until switched on.
A delay is judged when the load is next addressed (the emulator runs between commands only).
"""

from __future__ import annotations

from dataclasses import dataclass

from labctl.sim.emulators import emulator
from labctl.sim.emulators.base import BenchInstrument
from labctl.sim.physics.bench import Bench
from labctl.sim.scpi import Call, ScpiError, scpi
from labctl.sim.scpi.status import QuestionableStatus, StatusRegister
from labctl.sim.scpi.values import nr1, nr3, parse_choice

MODES = ["CURRent", "VOLTage", "POWer", "RESistance"]
LIMITS = {"CURR": (0.0, 61.2), "VOLT": (0.0, 153.0), "POW": (0.0, 357.0), "RES": (0.05, 30000.0)}
RANGES = {"CURR": [0.612, 6.12, 61.2], "VOLT": [15.3, 153.0], "POW": [8.16, 35.7, 357.0], "RES": [30.0, 300.0, 30000.0]}
#: slew rate limits, A/s (CURR) and V/s (VOLT); *RST sets the fastest
SLEW_LIMITS = {"CURR": (1.0, 2.5e6), "VOLT": (1.0, 1.0e6)}
PROTECTION_DELAY_MAX = 60.0  # s
QUES_OV, QUES_OC, QUES_OP = 1, 2, 8


@dataclass
class Protection:
    """One protection of the input: its level, whether it is armed, its delay, its trip."""

    bit: int
    level: float
    enabled: bool = False
    delay: float = 0.0
    tripped: bool = False
    over_since: float | None = None  # simulated time the input went beyond the level

    def judge(self, value: float, now: float) -> bool:
        """``value`` at ``now``: True when this trips (beyond the level for the delay)."""
        if not self.enabled or value <= self.level:
            self.over_since = None
            return False
        if self.over_since is None:
            self.over_since = now
        if now - self.over_since >= self.delay - 1e-9:
            self.tripped = True
        return self.tripped


def _protections() -> dict[str, Protection]:
    """After *RST: OVP armed at the top of the voltage rating, OCP/OPP off at theirs."""
    return {"VOLT": Protection(QUES_OV, LIMITS["VOLT"][1], enabled=True),
            "CURR": Protection(QUES_OC, LIMITS["CURR"][1]),
            "POW": Protection(QUES_OP, LIMITS["POW"][1])}


@emulator("keysight-el34143a")
class EL34143A(QuestionableStatus, BenchInstrument):
    vendor = "Keysight Technologies"
    model = "EL34143A"
    firmware = "A.01.02-01.00-01.00"
    default_serial = "MY61001234"

    def reset(self) -> None:
        self.ranges = {k: v[-1] for k, v in RANGES.items()}
        self.sense = "INT"
        self.remote = "REM"
        self.slew = {(f, edge): SLEW_LIMITS[f][1] for f in SLEW_LIMITS for edge in ("POS", "NEG")}
        self.protection = _protections()
        if getattr(self, "ques", None) is None:  # status registers outlive *RST (IEEE 488.2)
            self.ques = StatusRegister()
        with self.bench.lock:
            self.bench.load.reset()
        self.ques.update(0)

    # -- protection ---------------------------------------------------------------------
    def sync(self, max_age: float = 0.0) -> Bench:
        bench = super().sync(max_age)
        self._judge_trips(bench)
        return bench

    def _judge_trips(self, bench: Bench) -> None:
        """The solved operating point against the protections: a trip turns the input off."""
        load, prot = bench.load, self.protection
        values = {"VOLT": load.v_in, "CURR": load.i_in, "POW": load.v_in * load.i_in}
        if not load.on:
            for p in prot.values():
                p.over_since = None  # nothing flows: no delay runs
        elif any([prot[f].judge(values[f], bench.t) for f in prot]):
            load.on = False
            bench.update()  # solve again with the input off
        self.ques.update(sum(p.bit for p in prot.values() if p.tripped))

    def questionable_for(self, call: Call | None) -> list[StatusRegister]:
        if call is not None:
            self._check_channel(call)
        return [self.ques]

    def refresh_questionable(self) -> None:
        with self.bench.lock:
            self.sync()

    def _check_channel(self, call: Call) -> None:
        chans = call.channels
        if chans is not None and any(c != 1 for c in chans):
            raise ScpiError(-222, "the EL34143A has one channel, (@1)")

    # -- input and mode -----------------------------------------------------------------
    @scpi("INPut[:STATe]", "OUTPut[:STATe]")
    def inp(self, call: Call) -> None:
        self._check_channel(call)
        with self.bench.lock:
            self.sync()
            tripped = any(p.tripped for p in self.protection.values())
            self.bench.load.on = call.boolean(0) and not tripped  # a tripped input stays off
            self.sync()

    @scpi("INPut[:STATe]?", "OUTPut[:STATe]?")
    def inp_q(self, call: Call) -> str:
        with self.bench.lock:
            return str(int(self.sync().load.on))  # (a protection delay may have run out)

    @scpi("[SOURce:]MODE", "[SOURce:]FUNCtion")
    def mode(self, call: Call) -> None:
        self._check_channel(call)
        with self.bench.lock:
            self.sync()
            self.bench.load.mode = parse_choice(call.arg(0), MODES)
            self.sync()

    @scpi("[SOURce:]MODE?", "[SOURce:]FUNCtion?")
    def mode_q(self, call: Call) -> str:
        return self.bench.load.mode

    # -- levels (one handler per function, via the header's first node) ----------------------
    def _func(self, call: Call) -> str:
        for node in call.path or call.unit.nodes:
            for m in MODES:
                if node.name in (m.upper(), "".join(c for c in m if c.isupper())):
                    return "".join(c for c in m if c.isupper())
        raise ScpiError(-113)

    @scpi(*(f"[SOURce:]{m}[:LEVel][:IMMediate][:AMPLitude]" for m in MODES))
    def level(self, call: Call) -> None:
        self._check_channel(call)
        f = self._func(call)
        lo, hi = LIMITS[f]
        with self.bench.lock:
            self.sync()
            self.bench.load.levels[f] = call.number(0, minimum=lo, maximum=hi, default=lo if f != "RES" else hi)
            self.sync()

    @scpi(*(f"[SOURce:]{m}[:LEVel][:IMMediate][:AMPLitude]?" for m in MODES))
    def level_q(self, call: Call) -> str:
        """The setting, or with ``MIN|MAX`` the lowest/highest programmable level (it answered
        the setting whatever was asked)."""
        f = self._func(call)
        if call.has(0):
            return nr3(LIMITS[f][0] if call.choice(["MINimum", "MAXimum"]) == "MIN" else LIMITS[f][1])
        return nr3(self.bench.load.levels[f])

    @scpi(*(f"[SOURce:]{m}:RANGe" for m in MODES))
    def rng(self, call: Call) -> None:
        f = self._func(call)
        want = call.number(0, minimum=0.0, maximum=RANGES[f][-1], default=RANGES[f][-1])
        self.ranges[f] = next(r for r in RANGES[f] if r >= want - 1e-9)

    @scpi(*(f"[SOURce:]{m}:RANGe?" for m in MODES))
    def rng_q(self, call: Call) -> str:
        """The range, or with ``MIN|MAX`` the lowest/highest one."""
        f = self._func(call)
        if call.has(0):
            return nr3(RANGES[f][0] if call.choice(["MINimum", "MAXimum"]) == "MIN" else RANGES[f][-1])
        return nr3(self.ranges[f])

    # -- slew rates (kept; the simulated input steps at once) -------------------------------
    def _slew_func(self, call: Call) -> str:
        f = self._func(call)
        if f not in SLEW_LIMITS:
            raise ScpiError(-113)
        return f

    def _slew_edges(self, call: Call) -> tuple[str, ...]:
        names = {n.name for n in call.path or call.unit.nodes}
        if names & {"POS", "POSITIVE"}:
            return ("POS",)
        if names & {"NEG", "NEGATIVE"}:
            return ("NEG",)
        return ("POS", "NEG")

    @scpi(*(f"[SOURce:]{m}:SLEW{edge}" for m in ("CURRent", "VOLTage")
            for edge in ("[:BOTH]", ":POSitive[:IMMediate]", ":NEGative[:IMMediate]")))
    def slew_set(self, call: Call) -> None:
        self._check_channel(call)
        f = self._slew_func(call)
        lo, hi = SLEW_LIMITS[f]
        value = call.number(0, minimum=lo, maximum=hi, default=hi)
        for edge in self._slew_edges(call):
            self.slew[f, edge] = value

    @scpi(*(f"[SOURce:]{m}:SLEW{edge}?" for m in ("CURRent", "VOLTage")
            for edge in ("[:BOTH]", ":POSitive[:IMMediate]", ":NEGative[:IMMediate]")))
    def slew_q(self, call: Call) -> str:
        """The rising (``:POS``, and the plain query) or falling (``:NEG``) slew rate, or with
        ``MIN|MAX`` the slowest/fastest."""
        f = self._slew_func(call)
        if call.has(0):
            lo, hi = SLEW_LIMITS[f]
            return nr3(lo if call.choice(["MINimum", "MAXimum"]) == "MIN" else hi)
        return nr3(self.slew[f, self._slew_edges(call)[0]])

    # -- protection settings ------------------------------------------------------------
    @scpi(*(f"[SOURce:]{m}:PROTection[:LEVel]" for m in ("CURRent", "VOLTage", "POWer")))
    def prot_level(self, call: Call) -> None:
        self._check_channel(call)
        f = self._func(call)
        with self.bench.lock:
            self.sync()
            self.protection[f].level = call.number(0, minimum=0.0, maximum=LIMITS[f][1], default=LIMITS[f][1])
            self.sync()  # a level below the present operating point trips (after its delay)

    @scpi(*(f"[SOURce:]{m}:PROTection[:LEVel]?" for m in ("CURRent", "VOLTage", "POWer")))
    def prot_level_q(self, call: Call) -> str:
        f = self._func(call)
        if call.has(0):
            return nr3(0.0 if call.choice(["MINimum", "MAXimum"]) == "MIN" else LIMITS[f][1])
        return nr3(self.protection[f].level)

    @scpi("[SOURce:]CURRent:PROTection:STATe", "[SOURce:]POWer:PROTection:STATe")
    def prot_state(self, call: Call) -> None:
        self._check_channel(call)
        with self.bench.lock:
            self.sync()
            self.protection[self._func(call)].enabled = call.boolean(0)
            self.sync()

    @scpi("[SOURce:]CURRent:PROTection:STATe?", "[SOURce:]POWer:PROTection:STATe?")
    def prot_state_q(self, call: Call) -> str:
        return nr1(self.protection[self._func(call)].enabled)

    @scpi("[SOURce:]CURRent:PROTection:DELay[:TIME]", "[SOURce:]POWer:PROTection:DELay[:TIME]")
    def prot_delay(self, call: Call) -> None:
        self._check_channel(call)
        with self.bench.lock:
            self.sync()
            self.protection[self._func(call)].delay = call.number(0, minimum=0.0, maximum=PROTECTION_DELAY_MAX, default=0.0)

    @scpi("[SOURce:]CURRent:PROTection:DELay[:TIME]?", "[SOURce:]POWer:PROTection:DELay[:TIME]?")
    def prot_delay_q(self, call: Call) -> str:
        if call.has(0):
            return nr3(0.0 if call.choice(["MINimum", "MAXimum"]) == "MIN" else PROTECTION_DELAY_MAX)
        return nr3(self.protection[self._func(call)].delay)

    @scpi(*(f"[SOURce:]{m}:PROTection:TRIPped?" for m in ("CURRent", "VOLTage", "POWer")))
    def prot_tripped_q(self, call: Call) -> str:
        with self.bench.lock:
            self.sync()
            return nr1(self.protection[self._func(call)].tripped)

    @scpi("INPut:PROTection:CLEar", "OUTPut:PROTection:CLEar")
    def prot_clear(self, call: Call) -> None:
        """Clear the trips whose cause is gone (the input stays off until switched on): with the
        input off no current or power flows, so OCP/OPP clear; OVP while the input voltage is
        still above its level stays."""
        self._check_channel(call)
        with self.bench.lock:
            b = self.sync()
            for f, p in self.protection.items():
                p.over_since = None
                if not (f == "VOLT" and b.load.v_in > p.level):
                    p.tripped = False
            self.sync()

    @scpi("[SOURce:]VOLTage:SENSe[:SOURce]")
    def vsense(self, call: Call) -> None:
        self.sense = parse_choice(call.arg(0), ["INTernal", "EXTernal"])

    @scpi("[SOURce:]VOLTage:SENSe[:SOURce]?")
    def vsense_q(self, call: Call) -> str:
        return self.sense

    @scpi("SYSTem:COMMunicate:RLSTate")
    def rlst(self, call: Call) -> None:
        self.remote = parse_choice(call.arg(0), ["REMote", "LOCal", "RWLock"])

    @scpi("SYSTem:COMMunicate:RLSTate?")
    def rlst_q(self, call: Call) -> str:
        return self.remote

    # -- measurements -------------------------------------------------------------------
    @scpi("MEASure[:SCALar]:VOLTage[:DC]?", "FETCh[:SCALar]:VOLTage[:DC]?")
    def meas_v(self, call: Call) -> str:
        self._check_channel(call)
        with self.bench.lock:
            b = self.sync()
            return nr3(b.load.v_in + b.noise(0.0005))

    @scpi("MEASure[:SCALar]:CURRent[:DC]?", "FETCh[:SCALar]:CURRent[:DC]?")
    def meas_i(self, call: Call) -> str:
        self._check_channel(call)
        with self.bench.lock:
            b = self.sync()
            return nr3(b.load.i_in + b.noise(0.0005) if b.load.on else 0.0)  # input off: it sinks nothing

    @scpi("MEASure[:SCALar]:POWer[:DC]?", "FETCh[:SCALar]:POWer[:DC]?")
    def meas_p(self, call: Call) -> str:
        self._check_channel(call)
        with self.bench.lock:
            b = self.sync()
            return nr3(b.load.v_in * b.load.i_in + b.noise(0.001) if b.load.on else 0.0)
