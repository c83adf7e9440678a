"""Keysight (HP/Agilent) E3631A triple-output supply: +6 V/5 A, +25 V/1 A, -25 V/1 A.

Outputs are selected first (``INST:SEL P6V`` or ``INST:NSEL 1``) and then set without a
channel list; ``MEAS:VOLT? P25V`` names the output; the output switch is global (all three
together). pymeasure's driver also sends ``OUTPut 1, (@n)``, accepted per channel. P6V feeds
the board like the E36312A's CH1.
"""

from __future__ import annotations

from labctl.sim.emulators import emulator
from labctl.sim.emulators.e36312a import E36312A
from labctl.sim.physics.supply import e3631a_channels
from labctl.sim.scpi import Call, scpi


@emulator("keysight-e3631a")
class E3631A(E36312A):
    vendor = "HEWLETT-PACKARD"
    model = "E3631A"
    firmware = "2.1-5.0-1.0"
    default_serial = "0"
    over_range = 1.0  # (its channels' ratings are the programmable limits already)
    ocp_delay_default = 0.0  # no OCP delay: the protection trips at once

    def reset(self) -> None:
        with self.bench.lock:
            self.bench.psu = e3631a_channels()
        self.tracking = False
        super().reset()

    @scpi("OUTPut[:STATe]")
    def outp(self, call: Call) -> None:
        if call.channels is not None:  # pymeasure's per-channel form
            super().outp(call)
            return
        on = call.boolean(0)
        with self.bench.lock:
            self.sync()
            for ch in self.bench.psu.values():
                ch.on = on
                self._check_ovp(ch)
            self.sync()

    @scpi("OUTPut:TRACk[:STATe]")
    def track(self, call: Call) -> None:
        self.tracking = call.boolean(0)
        if self.tracking:
            with self.bench.lock:
                self.bench.psu[3].v_set = -self.bench.psu[2].v_set

    @scpi("OUTPut:TRACk[:STATe]?")
    def track_q(self, call: Call) -> str:
        return str(int(self.tracking))
