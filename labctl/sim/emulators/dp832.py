"""Rigol DP832 triple-output supply (CH1/CH2 30 V/3 A, CH3 5 V/3 A), CH1 feeds the board.

Commands select the channel first (``:INST:NSEL 1;:SOUR:VOLT:LEV:IMM:AMPL 5``); states read
``ON``/``OFF``; ``:OUTP:MODE? CH1`` -> ``CV``/``CC``/``UR``; ``:OUTP:OVP:QUES? CH1`` -> ``YES``/``NO``.

Protection as on the DP800: OVP and OCP each have a level and a state (both off at power-on:
``:SOUR:VOLT:PROT:STAT ON``, ``:SOUR:CURR:PROT:LEV 1.5``); OCP trips when the output current
reaches its own level, not at the current limit. A trip turns the output off until cleared
(``:SOUR:VOLT:PROT:CLE``, ``:OUTP:OVP:CLE CH1``) and switched on again.
"""

from __future__ import annotations

from labctl.sim.emulators import emulator
from labctl.sim.emulators.e36312a import _NAMES, E36312A
from labctl.sim.physics.supply import PsuChannel, dp832_channels
from labctl.sim.scpi import Call, ScpiError, scpi

_OVP_MAX = {1: 33.0, 2: 33.0, 3: 5.5}  # V, DP832 OVP ranges
_OCP_MAX = 3.3  # A


@emulator("rigol-dp832")
class DP832(E36312A):
    vendor = "RIGOL TECHNOLOGIES"
    model = "DP832"
    firmware = "00.01.14"
    default_serial = "DP8C000000001"

    def reset(self) -> None:
        with self.bench.lock:
            self.bench.psu = dp832_channels()
        super().reset()
        with self.bench.lock:
            for ch in self.bench.psu.values():
                ch.ovp_enabled = False
                ch.ovp_level = _OVP_MAX[ch.number]
                ch.ocp_level = _OCP_MAX

    # -- protection: a level and a state each ----------------------------------------------
    @scpi("[SOURce:]VOLTage:PROTection:STATe")
    def ovp_state(self, call: Call) -> None:
        with self.bench.lock:
            for ch in self._channels(call):
                ch.ovp_enabled = call.boolean(0)
                self._check_ovp(ch)
            self.sync()

    @scpi("[SOURce:]VOLTage:PROTection:STATe?")
    def ovp_state_q(self, call: Call) -> str:
        return ",".join("ON" if c.ovp_enabled else "OFF" for c in self._channels(call))

    @scpi("[SOURce:]CURRent:PROTection:STATe?")
    def ocp_q(self, call: Call) -> str:
        return ",".join("ON" if c.ocp_enabled else "OFF" for c in self._channels(call))

    @scpi("[SOURce:]CURRent:PROTection[:LEVel]")
    def ocp_level(self, call: Call) -> None:
        with self.bench.lock:
            for ch in self._channels(call):
                ch.ocp_level = call.number(0, minimum=0.01, maximum=_OCP_MAX, default=_OCP_MAX)
            self.sync()  # an output already above the new level trips at once

    @scpi("[SOURce:]CURRent:PROTection[:LEVel]?")
    def ocp_level_q(self, call: Call) -> str:
        return ",".join(f"{c.ocp_level:.3f}" for c in self._channels(call))

    @scpi("[SOURce:]VOLTage:PROTection:QUEStion?", "[SOURce:]CURRent:PROTection:QUEStion?")
    def prot_source_q(self, call: Call) -> str:
        with self.bench.lock:
            self.sync()
            ch = self.bench.psu[self.selected]
            tripped = ch.ocp_tripped if call.unit.nodes[-3].name.upper().startswith("CURR") else ch.ovp_tripped
            return "YES" if tripped else "NO"

    @scpi("OUTPut:OVP:CLEar", "OUTPut:OCP:CLEar")
    def prot_clear_named(self, call: Call) -> None:
        with self.bench.lock:
            ch = self._named(call)
            ch.ocp_tripped = False
            ch.ovp_tripped = ch.over_voltage
            ch.on = False
            self.sync()

    def _named(self, call: Call) -> PsuChannel:
        if call.args:
            name = call.args[0].upper()
            if name not in _NAMES:
                raise ScpiError(-224, f"no channel {name}")
            return self.bench.psu[_NAMES[name]]
        return self.bench.psu[self.selected]

    @scpi("OUTPut[:STATe]?")
    def outp_q(self, call: Call) -> str:
        with self.bench.lock:
            self.sync()
            return ",".join("ON" if c.on and c.sourcing else "OFF" for c in self._channels(call))

    @scpi("OUTPut:MODE?")
    def mode_q(self, call: Call) -> str:
        with self.bench.lock:
            self.sync()
            ch = self._named(call)
            return "UR" if not ch.sourcing else ("CC" if ch.cc_mode else "CV")

    @scpi("OUTPut:OVP:QUEStion?", "OUTPut:OCP:QUEStion?")
    def prot_q(self, call: Call) -> str:
        with self.bench.lock:
            self.sync()
            ch = self._named(call)
            tripped = ch.ocp_tripped if call.unit.nodes[-2].name.startswith("OCP") else ch.ovp_tripped
            return "YES" if tripped else "NO"
