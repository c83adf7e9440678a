"""Rigol DP832 triple-output supply (CH1/CH2 30 V/3 A, CH3 5 V/3 A), CH1 feeds the board.

Commands select the channel first (``:INST:NSEL 1;:SOUR:VOLT:LEV:IMM:AMPL 5``); states read
``ON``/``OFF``; ``:OUTP:MODE? CH1`` -> ``CV``/``CC``/``UR``; ``:OUTP:OVP:QUES? CH1`` -> ``YES``/``NO``.
"""

from __future__ import annotations

from labctl.sim.emulators import emulator
from labctl.sim.emulators.e36312a import _NAMES, E36312A
from labctl.sim.physics.supply import PsuChannel, dp832_channels
from labctl.sim.scpi import Call, ScpiError, scpi


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
