"""Keysight E36312A triple-output DC power supply (CH1 6 V/5 A, CH2-3 25 V/1 A).

CH1 feeds the board's VIN; CH2 and CH3 are open. CV/CC behaviour, OVP and OCP trips as the
manual has them: a trip turns the output off (``OUTP?`` reads 0, ``…:PROT:TRIP?`` 1); an output
cannot be switched on while tripped; ``OUTP:PROT:CLE`` clears the trip once its cause is gone
and the output stays off until switched on again. OCP trips when the output would go into
constant current (CH1 from the board's draw, CH2/CH3 from their load resistors) for longer
than its delay (below).

Each output has a questionable status register (``STAT:QUES[:EVEN]? / :COND? / :ENAB / :PTR /
:NTR``, addressed like the other commands by ``(@n)`` or the selected output): bit 0 (1) output
disabled by over-voltage protection, bit 1 (2) by over-current protection, as long as the trip
stands; a trip latches its event, ``*CLS`` or reading clears it, and an enabled event sets bit 3
(QUES, 8) of ``*STB?``. ``CURR:PROT:DEL`` (0 to 0.255 s, 50 ms after *RST) is how long the
output may sit at its current limit before OCP trips, counted from the last settings change
(``CURR:PROT:DEL:STAR SCH``, the default: output on, voltage or current set) or from entering
constant current (``CCTR``); kept per output and read back.
"""

from __future__ import annotations

from collections.abc import Callable

from labctl.sim.emulators import emulator
from labctl.sim.emulators.base import BenchInstrument
from labctl.sim.physics.bench import Bench
from labctl.sim.physics.supply import PsuChannel
from labctl.sim.scpi import Call, ScpiError, scpi
from labctl.sim.scpi.status import QuestionableStatus, StatusRegister
from labctl.sim.scpi.values import nr3, parse_choice

_NAMES = {"CH1": 1, "CH2": 2, "CH3": 3, "P6V": 1, "P25V": 2, "N25V": 3, "OUT1": 1, "OUT2": 2, "OUT3": 3}
V_NOISE = 0.0004
I_NOISE = 0.0003
#: Simulated seconds between two conversions of the readback ADC: MEASure/FETCh answer the last
#: conversion (the outputs as solved then, with their noise) for at most this long, unless a command
#: changed the bench since or something happened in between (VIN ramp, a rail of the power-up
#: sequence, …: :meth:`Bench.refresh`).
READBACK_PERIOD = 0.05
#: questionable status bits of an output: disabled by over-voltage (OV) / over-current (OC) protection
QUES_OV, QUES_OC = 1, 2
#: ``CURR:PROT:DEL``: the over-current protection delay, seconds (0 to 0.255, 50 ms after *RST)
OCP_DELAY_MAX, OCP_DELAY_DEFAULT = 0.255, 0.05
OCP_DELAY_STARTS = ["SCHange", "CCTRans"]  # the delay runs from a settings change / entry into CC


@emulator("keysight-e36312a")
class E36312A(QuestionableStatus, BenchInstrument):
    vendor = "Keysight Technologies"
    model = "E36312A"
    firmware = "2.1.0-1.0.4-1.12"
    default_serial = "MY59002391"
    options = "0"
    #: setpoints go this far beyond the rating (6.18 V / 5.15 A, 25.75 V / 1.03 A, as the
    #: driver profile's ranges); the E3631A's channels carry theirs in their ratings
    over_range = 1.03
    #: ``CURR:PROT:DEL`` after *RST; supplies without an OCP delay (DP800, E3631A) trip at once
    ocp_delay_default = OCP_DELAY_DEFAULT

    def reset(self) -> None:
        self.selected = 1
        self._judged = -1  # Bench.solves when the outputs were last judged for OVP/OCP trips
        self._readings: dict[tuple[str, str], tuple[int, str]] = {}  # (V|I|P, unit) -> (Bench.solves, reply)
        for n in (2, 3):  # fixture option `ch2_load_ohms: 10` wires a resistor to CH2
            ohms = self.options_cfg.get(f"ch{n}_load_ohms")
            if ohms is not None:
                self.bench.psu_loads[n] = float(ohms)
        with self.bench.lock:
            for ch in self.bench.psu.values():
                ch.reset()
                ch.ocp_delay = self.ocp_delay_default
        if getattr(self, "ques", None) is None:  # status registers outlive *RST (IEEE 488.2)
            self.ques = {n: StatusRegister() for n in self.bench.psu}
        self._latch_questionable()

    # -- helpers ------------------------------------------------------------------------
    def _channels(self, call: Call) -> list[PsuChannel]:
        numbers = call.unit.channel_list
        if numbers is None and call.args and call.args[-1].upper() in _NAMES:
            numbers = [_NAMES[call.args[-1].upper()]]  # MEAS:VOLT? P6V (E3631A style)
        if numbers is None:
            numbers = [self.selected]
        if not numbers:
            raise ScpiError(-109, "empty channel list")
        out = []
        for n in numbers:
            if n not in self.bench.psu:
                raise ScpiError(-222, f"no channel {n}")
            out.append(self.bench.psu[n])
        return out

    def _check_ovp(self, ch: PsuChannel) -> None:
        if ch.on and ch.over_voltage:
            ch.ovp_tripped = True
        if ch.ovp_tripped or ch.ocp_tripped:
            ch.on = False  # a trip turns the output off; it stays off until cleared and switched on
        self._latch_questionable()

    def sync(self, max_age: float = 0.0) -> Bench:
        bench = self.bench
        if max_age > 0:
            bench.refresh(max_age)
        else:
            bench.update()
        if bench.solves != self._judged:  # (a reading within the readback period: judged on this solve)
            self._judge_trips(bench)
        self._latch_questionable()  # (the physics trips CH1's OCP itself)
        return bench

    def changed(self) -> None:
        with self.bench.lock:  # a setting took effect at the model's present: the OCP delay starts there
            for ch in self.bench.psu.values():
                ch.note_settings(self.bench.t)
        super().changed()

    def _judge_trips(self, bench: Bench) -> None:
        tripped = False
        for ch in bench.psu.values():
            if ch.sourcing and ch.ocp_trips(ch.i_out, bench.t):
                ch.ocp_tripped = True
            if ch.on and (ch.ovp_tripped or ch.ocp_tripped):
                ch.on = False
                tripped = True
        if tripped:
            bench.update()  # solve again with the tripped outputs off
        self._judged = bench.solves
        self._latch_questionable()

    # -- questionable status (QuestionableStatus's hooks) ------------------------------------
    def _latch_questionable(self) -> None:
        """Each output's trips into its questionable register (an edge latches its event)."""
        for n, ch in self.bench.psu.items():
            self.ques[n].update((QUES_OV if ch.ovp_tripped else 0) | (QUES_OC if ch.ocp_tripped else 0))

    def questionable_for(self, call: Call | None) -> list[StatusRegister]:
        if call is None:
            return list(self.ques.values())
        return [self.ques[ch.number] for ch in self._channels(call)]

    def refresh_questionable(self) -> None:
        with self.bench.lock:
            self.sync()

    # -- channel selection ------------------------------------------------------------------
    @scpi("INSTrument[:SELect]")
    def inst_select(self, call: Call) -> None:
        word = call.arg(0).upper()
        if word not in _NAMES:
            raise ScpiError(-224, f"no output {word}")
        self.selected = _NAMES[word]

    @scpi("INSTrument[:SELect]?")
    def inst_select_q(self, call: Call) -> str:
        return f"CH{self.selected}"

    @scpi("INSTrument:NSELect")
    def inst_nselect(self, call: Call) -> None:
        n = int(call.number(0, minimum=1, maximum=3, default=1))
        self.selected = n

    @scpi("INSTrument:NSELect?")
    def inst_nselect_q(self, call: Call) -> str:
        return str(self.selected)

    @scpi("SYSTem:CHANnel[:COUNt]?")
    def chan_count(self, call: Call) -> str:
        return "3"

    # -- levels -------------------------------------------------------------------------
    @scpi("[SOURce:]VOLTage[:LEVel][:IMMediate][:AMPLitude]")
    def volt(self, call: Call) -> None:
        with self.bench.lock:
            self.sync()
            for ch in self._channels(call):
                ch.v_set = call.number(0, minimum=ch.v_min, maximum=ch.v_max * self.over_range, default=0.0)
                self._check_ovp(ch)
            self.sync()

    @scpi("[SOURce:]VOLTage[:LEVel][:IMMediate][:AMPLitude]?")
    def volt_q(self, call: Call) -> str:
        chans = self._channels(call)
        if call.has(0):
            return ",".join(nr3(call.number(0, minimum=c.v_min, maximum=c.v_max * self.over_range, default=0.0)) for c in chans)
        return ",".join(nr3(c.v_set) for c in chans)

    @scpi("[SOURce:]CURRent[:LEVel][:IMMediate][:AMPLitude]")
    def curr(self, call: Call) -> None:
        with self.bench.lock:
            self.sync()
            for ch in self._channels(call):
                ch.i_set = call.number(0, minimum=0.0, maximum=ch.i_max * self.over_range, default=ch.i_max)
            self.sync()

    @scpi("[SOURce:]CURRent[:LEVel][:IMMediate][:AMPLitude]?")
    def curr_q(self, call: Call) -> str:
        chans = self._channels(call)
        if call.has(0):
            return ",".join(nr3(call.number(0, minimum=0.0, maximum=c.i_max * self.over_range, default=c.i_max)) for c in chans)
        return ",".join(nr3(c.i_set) for c in chans)

    @scpi("APPLy")
    def apply(self, call: Call) -> None:
        name = call.arg(0).upper()
        if name not in _NAMES:
            raise ScpiError(-224, f"no output {name}")
        ch = self.bench.psu[_NAMES[name]]
        with self.bench.lock:
            self.sync()
            if call.has(1):
                ch.v_set = call.number(1, minimum=ch.v_min, maximum=ch.v_max * self.over_range, default=0.0)
            if call.has(2):
                ch.i_set = call.number(2, minimum=0.0, maximum=ch.i_max * self.over_range, default=ch.i_max)
            self._check_ovp(ch)
            self.sync()

    @scpi("APPLy?")
    def apply_q(self, call: Call) -> str:
        """``APPL? [CH1|CH2|CH3|(@n)]``: the named output's settings, else the selected one's."""
        if call.has(0) and call.unit.channel_list is None and call.arg(0).upper() not in _NAMES:
            raise ScpiError(-224, f"no output {call.arg(0)}")
        ch = self._channels(call)[0]
        return f'"{ch.v_set:.6f},{ch.i_set:.6f}"'

    # -- protection ---------------------------------------------------------------------
    @scpi("[SOURce:]VOLTage:PROTection[:LEVel]")
    def ovp(self, call: Call) -> None:
        with self.bench.lock:
            for ch in self._channels(call):
                ch.ovp_level = call.number(0, minimum=0.0, maximum=_ovp_top(ch), default=_ovp_top(ch))
                self._check_ovp(ch)
            self.sync()

    @scpi("[SOURce:]VOLTage:PROTection[:LEVel]?")
    def ovp_q(self, call: Call) -> str:
        """The OVP level of each output, or with ``MIN|MAX|DEF`` that limit."""
        chans = self._channels(call)
        if call.has(0):
            return ",".join(nr3(call.number(0, minimum=0.0, maximum=_ovp_top(c), default=_ovp_top(c))) for c in chans)
        return ",".join(nr3(c.ovp_level) for c in chans)

    @scpi("[SOURce:]VOLTage:PROTection:TRIPped?")
    def ovp_trip_q(self, call: Call) -> str:
        with self.bench.lock:
            self.sync()
            return ",".join(str(int(c.ovp_tripped)) for c in self._channels(call))

    @scpi("[SOURce:]CURRent:PROTection:STATe")
    def ocp(self, call: Call) -> None:
        with self.bench.lock:
            for ch in self._channels(call):
                ch.ocp_enabled = call.boolean(0)
            self.sync()  # an output already in constant current trips at once

    @scpi("[SOURce:]CURRent:PROTection:STATe?")
    def ocp_q(self, call: Call) -> str:
        return ",".join(str(int(c.ocp_enabled)) for c in self._channels(call))

    @scpi("[SOURce:]CURRent:PROTection:TRIPped?")
    def ocp_trip_q(self, call: Call) -> str:
        with self.bench.lock:
            self.sync()
            return ",".join(str(int(c.ocp_tripped)) for c in self._channels(call))

    @scpi("[SOURce:]CURRent:PROTection:DELay[:TIME]")
    def ocp_delay_set(self, call: Call) -> None:
        for ch in self._channels(call):
            ch.ocp_delay = call.number(0, minimum=0.0, maximum=OCP_DELAY_MAX, default=OCP_DELAY_DEFAULT)

    @scpi("[SOURce:]CURRent:PROTection:DELay[:TIME]?")
    def ocp_delay_q(self, call: Call) -> str:
        """The delay of each output, or with ``MIN|MAX`` the shortest/longest."""
        chans = self._channels(call)
        if call.has(0):
            value = call.number(0, minimum=0.0, maximum=OCP_DELAY_MAX, default=OCP_DELAY_DEFAULT)
            return ",".join(nr3(value) for _ in chans)
        return ",".join(nr3(c.ocp_delay) for c in chans)

    @scpi("[SOURce:]CURRent:PROTection:DELay:STARt")
    def ocp_delay_start_set(self, call: Call) -> None:
        for ch in self._channels(call):
            ch.ocp_delay_from_cc = parse_choice(call.arg(0), OCP_DELAY_STARTS) == "CCTR"

    @scpi("[SOURce:]CURRent:PROTection:DELay:STARt?")
    def ocp_delay_start_q(self, call: Call) -> str:
        return ",".join("CCTR" if c.ocp_delay_from_cc else "SCH" for c in self._channels(call))

    @scpi("OUTPut:PROTection:CLEar", "[SOURce:]VOLTage:PROTection:CLEar", "[SOURce:]CURRent:PROTection:CLEar")
    def prot_clear(self, call: Call) -> None:
        with self.bench.lock:
            self.sync()  # a trip since the last command latches its event before it is cleared
            for ch in self._channels(call):
                if ch.ocp_tripped or ch.ovp_tripped:
                    ch.on = False  # a tripped output stays off until it is enabled again
                ch.ocp_tripped = False
                ch.ovp_tripped = ch.over_voltage  # the cause must be removed first
            self.sync()

    # -- output -------------------------------------------------------------------------
    @scpi("OUTPut[:STATe]")
    def outp(self, call: Call) -> None:
        with self.bench.lock:
            self.sync()
            for ch in self._channels(call):
                ch.on = call.boolean(0)
                self._check_ovp(ch)
            self.sync()

    @scpi("OUTPut[:STATe]?")
    def outp_q(self, call: Call) -> str:
        call.no_args()  # (``OUTP? MAX`` is -108)
        with self.bench.lock:
            self.sync()
            return ",".join(str(int(c.on and c.sourcing)) for c in self._channels(call))

    @scpi("STATus:QUEStionable:INSTrument:ISUMmary#[:CONDition]?")
    def isum(self, call: Call) -> str:
        """Bit 0 (1): constant current; bit 1 (2): constant voltage; 0 when off/tripped."""
        n = call.suffixes[0]
        if n not in self.bench.psu:
            raise ScpiError(-114)
        with self.bench.lock:
            self.sync()
            ch = self.bench.psu[n]
            if not ch.sourcing:
                return "+0"
            return "+1" if ch.cc_mode else "+2"

    # -- measurements -------------------------------------------------------------------
    @scpi("MEASure[:SCALar]:VOLTage[:DC]?", "FETCh[:SCALar]:VOLTage[:DC]?")
    def meas_v(self, call: Call) -> str:
        return self._readback(call, "V")

    @scpi("MEASure[:SCALar]:CURRent[:DC]?", "FETCh[:SCALar]:CURRent[:DC]?")
    def meas_i(self, call: Call) -> str:
        return self._readback(call, "I")

    @scpi("MEASure[:SCALar]:POWer[:DC]?")
    def meas_p(self, call: Call) -> str:
        return self._readback(call, "P")

    def _readback(self, call: Call, kind: str) -> str:
        """The readback ADC's last conversion of ``call``'s channels: a reading is converted
        (solved, with its noise) at most once per :data:`READBACK_PERIOD` of simulated time, and
        afresh after any change to the bench or across a transient (:meth:`Bench.refresh`)."""
        bench = self.bench
        with bench.lock:
            bench.refresh(READBACK_PERIOD)
            if bench.solves != self._judged:
                self._judge_trips(bench)
            key = (kind, call.unit.raw)
            found = self._readings.get(key)
            if found is not None and found[0] == bench.solves:
                return found[1]
            text = self._convert(kind, self._channels(call), bench.rng.gauss)
            if len(self._readings) >= 64:
                self._readings.clear()
            self._readings[key] = (bench.solves, text)
            return text

    def _convert(self, kind: str, chans: list[PsuChannel], gauss: Callable[[float, float], float]) -> str:
        """One conversion of ``chans``: their voltage (V), current (I) or power (P)."""
        return ",".join([nr3(self._sample(kind, c, gauss)) for c in chans])

    @staticmethod
    def _sample(kind: str, c: PsuChannel, gauss: Callable[[float, float], float]) -> float:
        """One reading of ``c``: voltage and current with the ADC's noise; power as solved. An
        output that is off (or tripped) delivers no current: its current and power read 0 (its
        voltage, ≈ 0 V, keeps a tenth of the noise)."""
        if kind == "V":
            return c.v_out + gauss(0.0, V_NOISE if c.sourcing else V_NOISE / 10)
        if not c.sourcing:
            return 0.0
        if kind == "I":
            return c.i_out + gauss(0.0, I_NOISE)
        return c.v_out * c.i_out

    @scpi("OUTPut:PAIR")
    def pair(self, call: Call) -> None:
        if parse_choice(call.arg(0), ["OFF", "PARallel", "SERies"]) != "OFF":
            raise ScpiError(-221, "output pairing is not wired on this bench")


def _ovp_top(ch: PsuChannel) -> float:
    """The highest OVP level an output takes (its ``MAX``, and its default): 110 % of its range."""
    return max(abs(ch.v_max), abs(ch.v_min)) * 1.1
