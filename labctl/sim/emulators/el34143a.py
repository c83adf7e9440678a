"""Keysight EL34143A DC electronic load (150 V, 60 A, 350 W), on the board's VDD_AUX header."""

from __future__ import annotations

from labctl.sim.emulators import emulator
from labctl.sim.emulators.base import BenchInstrument
from labctl.sim.scpi import Call, ScpiError, scpi
from labctl.sim.scpi.values import nr3, parse_choice

MODES = ["CURRent", "VOLTage", "POWer", "RESistance"]
LIMITS = {"CURR": (0.0, 61.2), "VOLT": (0.0, 153.0), "POW": (0.0, 357.0), "RES": (0.05, 30000.0)}
RANGES = {"CURR": [0.612, 6.12, 61.2], "VOLT": [15.3, 153.0], "POW": [8.16, 35.7, 357.0], "RES": [30.0, 300.0, 30000.0]}


@emulator("keysight-el34143a")
class EL34143A(BenchInstrument):
    vendor = "Keysight Technologies"
    model = "EL34143A"
    firmware = "A.01.02-01.00-01.00"
    default_serial = "MY61001234"

    def reset(self) -> None:
        self.ranges = {k: v[-1] for k, v in RANGES.items()}
        self.sense = "INT"
        self.remote = "REM"
        with self.bench.lock:
            self.bench.load.reset()

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
            self.bench.load.on = call.boolean(0)
            self.sync()

    @scpi("INPut[:STATe]?", "OUTPut[:STATe]?")
    def inp_q(self, call: Call) -> str:
        return str(int(self.bench.load.on))

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
