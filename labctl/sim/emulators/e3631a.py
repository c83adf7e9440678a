"""Keysight (HP/Agilent) E3631A triple-output supply: +6 V/5 A, +25 V/1 A, -25 V/1 A.

Outputs are selected first (``INST:SEL P6V`` or ``INST:NSEL 1``; ``INST?`` answers ``P6V``,
``P25V`` or ``N25V``) and then set without a channel list; ``MEAS:VOLT? P25V`` names the
output; the output switch is global (all three together). pymeasure's driver also sends
``OUTPut 1, (@n)``, accepted per channel. P6V feeds the board like the E36312A's CH1.

As the E3631A: *RST sets the current limits to the ratings (5 A, 1 A, 1 A; up to 5.15 A and
1.03 A can be programmed); with tracking on (``OUTP:TRAC ON``) N25V follows every setting of
P25V and the other way round (−V); it has no over-voltage or over-current protection, so those
commands are undefined headers (−113), as is the E36300's ``OUTP:PAIR``. The per-output
``STAT:QUES:INST:ISUM<n>:COND?`` (CV 2, CC 1) is the E36xx family's and stays.
"""

from __future__ import annotations

from labctl.sim.emulators import emulator
from labctl.sim.emulators.e36312a import _NAMES, E36312A
from labctl.sim.physics.supply import e3631a_channels
from labctl.sim.scpi import Call, scpi

_OUTPUT_NAMES = {1: "P6V", 2: "P25V", 3: "N25V"}
_RATED_AMPS = {1: 5.0, 2: 1.0, 3: 1.0}  # the current limits after *RST


@emulator("keysight-e3631a")
class E3631A(E36312A):
    vendor = "HEWLETT-PACKARD"
    model = "E3631A"
    firmware = "2.1-5.0-1.0"
    default_serial = "0"
    over_range = 1.0  # (its channels' ratings are the programmable limits already)
    ocp_delay_default = 0.0  # no OCP delay: the protection trips at once
    scpi_version = "1995.0"  # (the E3631A answers SYST:VERS? with the SCPI of its day)

    def reset(self) -> None:
        with self.bench.lock:
            self.bench.psu = e3631a_channels()
        self.tracking = False
        super().reset()
        with self.bench.lock:
            for n, ch in self.bench.psu.items():
                ch.i_set = _RATED_AMPS[n]

    # the E36300's protection and output pairing: not on this model
    ovp = ovp_q = ovp_trip_q = ocp = ocp_q = ocp_trip_q = None
    ocp_delay_set = ocp_delay_q = ocp_delay_start_set = ocp_delay_start_q = prot_clear = None
    pair = None

    @scpi("INSTrument[:SELect]?")
    def inst_select_q(self, call: Call) -> str:
        return _OUTPUT_NAMES[self.selected]

    def _track(self, changed: set[int]) -> None:
        """With tracking on, N25V follows P25V (and P25V follows N25V) at −V."""
        if not self.tracking:
            return
        psu = self.bench.psu
        if 2 in changed:
            psu[3].v_set = -psu[2].v_set
        elif 3 in changed:
            psu[2].v_set = -psu[3].v_set

    @scpi("[SOURce:]VOLTage[:LEVel][:IMMediate][:AMPLitude]")
    def volt(self, call: Call) -> None:
        with self.bench.lock:
            super().volt(call)
            self._track({ch.number for ch in self._channels(call)})
            self.sync()

    @scpi("APPLy")
    def apply(self, call: Call) -> None:
        with self.bench.lock:
            super().apply(call)
            if call.has(1):
                self._track({_NAMES[call.arg(0).upper()]})
            self.sync()

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
