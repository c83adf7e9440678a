"""Rigol DP832 triple-output supply (CH1/CH2 30 V/3 A, CH3 5 V/3 A), CH1 feeds the board.

The DP800 Programming Guide's forms: the channel in the header (``:SOUR2:VOLT 3``; without
``<n>`` the channel selected by ``:INST:NSEL n``) or as a first argument (``:OUTP CH1,ON``,
``:OUTP:OCP:VAL? CH1``; without it, the selected channel). States read ``ON``/``OFF`` (the
output's state, whatever its setpoint), alarms and trips ``YES``/``NO``; ``:OUTP:MODE? CH1``
-> ``CV``/``CC``/``UR``; ``:APPL? CH1`` -> ``CH1:30V/3A,5.000,1.000``; ``:MEAS:ALL? CH1`` ->
``5.0012,0.8123,4.062`` (volts, amps, watts).

Protection as on the DP800: OVP and OCP each have a level and a state (both off at power-on:
``:OUTP:OVP CH1,ON``, ``:OUTP:OCP:VAL CH1,1.5``, or ``:SOUR1:VOLT:PROT:STAT ON``); OCP trips
when the output current reaches its own level, not at the current limit. A trip turns the
output off until cleared (``:OUTP:OCP:CLEAR CH1``, ``:SOUR1:VOLT:PROT:CLE``) and switched on
again. The trip physics is the E36312A's (:meth:`E36312A.sync`).
"""

from __future__ import annotations

from collections.abc import Callable

from labctl.sim.emulators import emulator
from labctl.sim.emulators.e36312a import _NAMES, E36312A
from labctl.sim.physics.supply import PsuChannel, dp832_channels
from labctl.sim.scpi import Call, ScpiError, scpi

_OVP_MAX = {1: 33.0, 2: 33.0, 3: 5.5}  # V, DP832 OVP ranges
_OCP_MAX = 3.3  # A
_I_DEFAULT = 3.0  # A, every channel's current setting at power-on (guide, table 2-1)
_RATING = {1: "30V/3A", 2: "30V/3A", 3: "5V/3A"}  # the label of :APPLy?
_TOP: dict[str, Callable[[PsuChannel], float]] = {
    "ovp_level": lambda ch: _OVP_MAX[ch.number],
    "ocp_level": lambda ch: _OCP_MAX,
}


def _fixed(value: float, places: int) -> str:
    """``5.0012``: a reading with ``places`` decimals (never ``-0.0000``)."""
    return f"{round(value, places) + 0.0:.{places}f}"


@emulator("rigol-dp832")
class DP832(E36312A):
    vendor = "RIGOL TECHNOLOGIES"
    model = "DP832"
    firmware = "00.01.14"
    default_serial = "DP8C000000001"
    ocp_delay_default = 0.0  # no OCP delay: the protection trips at once
    over_range = 1.0  # the channels' 32 V / 3.2 A (5.3 V) are the programmable limits already

    def reset(self) -> None:
        with self.bench.lock:
            self.bench.psu = dp832_channels()
        super().reset()
        with self.bench.lock:
            for ch in self.bench.psu.values():
                ch.i_set = _I_DEFAULT
                ch.ovp_enabled = False
                ch.ovp_level = _OVP_MAX[ch.number]
                ch.ocp_level = _OCP_MAX

    # -- which channel: SOURce<n>, a leading CHn, (@n), or the selected one --------------------
    def _channels(self, call: Call) -> list[PsuChannel]:
        n = call.given[0] if call.given else None  # [:SOURce[<n>]]
        if n is None:
            return super()._channels(call)
        if n not in self.bench.psu:
            raise ScpiError(-114)
        return [self.bench.psu[n]]

    def _target(self, call: Call) -> tuple[list[PsuChannel], int]:
        """``[CHn,]<values>``: the channels addressed and the index of the first value."""
        if call.has(0) and call.args[0].upper() in _NAMES:
            return [self.bench.psu[_NAMES[call.args[0].upper()]]], 1
        return self._channels(call), 0

    def _switch(self, call: Call, attr: str) -> None:
        """``[CHn,]{ON|OFF}`` to ``attr`` of the channels (a trip it causes acts at once)."""
        chans, i = self._target(call)
        state = call.boolean(i)
        with self.bench.lock:
            self.sync()
            for ch in chans:
                setattr(ch, attr, state)
                self._check_ovp(ch)
            self.sync()

    def _words(self, call: Call, attr: str, yes: str = "ON", no: str = "OFF") -> str:
        with self.bench.lock:
            self.sync()
            return ",".join(yes if getattr(c, attr) else no for c in self._target(call)[0])

    def _limit(self, call: Call, attr: str) -> None:
        """``[CHn,]<level>`` to the OVP or OCP level (``MIN`` 0.01, ``MAX``/``DEF`` the top)."""
        chans, i = self._target(call)
        with self.bench.lock:
            for ch in chans:
                top = _TOP[attr](ch)
                setattr(ch, attr, call.number(i, minimum=0.01, maximum=top, default=top))
                self._check_ovp(ch)
            self.sync()  # an output already past its new level trips at once

    def _limit_q(self, call: Call, attr: str, places: int) -> str:
        """``[CHn][,MIN|MAX]``: the level, or its bounds."""
        chans, i = self._target(call)
        out = []
        for ch in chans:
            top = _TOP[attr](ch)
            value = call.number(i, minimum=0.01, maximum=top) if call.has(i) else getattr(ch, attr)
            out.append(f"{value:.{places}f}")
        return ",".join(out)

    # -- [:SOURce[<n>]] levels (the E36312A's handlers, with the channel in the header) --------
    @scpi("[SOURce#:]VOLTage[:LEVel][:IMMediate][:AMPLitude]")
    def volt(self, call: Call) -> None:
        super().volt(call)

    @scpi("[SOURce#:]VOLTage[:LEVel][:IMMediate][:AMPLitude]?")
    def volt_q(self, call: Call) -> str:
        return super().volt_q(call)

    @scpi("[SOURce#:]CURRent[:LEVel][:IMMediate][:AMPLitude]")
    def curr(self, call: Call) -> None:
        super().curr(call)

    @scpi("[SOURce#:]CURRent[:LEVel][:IMMediate][:AMPLitude]?")
    def curr_q(self, call: Call) -> str:
        return super().curr_q(call)

    # -- protection: a level and a state each; :SOURce and :OUTPut forms of one setting -------
    @scpi("[SOURce#:]VOLTage:PROTection[:LEVel]", "OUTPut:OVP:VALue")
    def ovp(self, call: Call) -> None:
        self._limit(call, "ovp_level")

    @scpi("[SOURce#:]VOLTage:PROTection[:LEVel]?")
    def ovp_q(self, call: Call) -> str:
        return super().ovp_q(call)

    @scpi("OUTPut:OVP:VALue?")
    def ovp_value_q(self, call: Call) -> str:
        return self._limit_q(call, "ovp_level", 3)

    @scpi("[SOURce#:]CURRent:PROTection[:LEVel]", "OUTPut:OCP:VALue")
    def ocp_level(self, call: Call) -> None:
        self._limit(call, "ocp_level")

    @scpi("[SOURce#:]CURRent:PROTection[:LEVel]?")
    def ocp_level_q(self, call: Call) -> str:
        return ",".join(f"{c.ocp_level:.3f}" for c in self._channels(call))

    @scpi("OUTPut:OCP:VALue?")
    def ocp_value_q(self, call: Call) -> str:
        return self._limit_q(call, "ocp_level", 4)

    @scpi("[SOURce#:]VOLTage:PROTection:STATe", "OUTPut:OVP[:STATe]")
    def ovp_state(self, call: Call) -> None:
        self._switch(call, "ovp_enabled")

    @scpi("[SOURce#:]VOLTage:PROTection:STATe?", "OUTPut:OVP[:STATe]?")
    def ovp_state_q(self, call: Call) -> str:
        return self._words(call, "ovp_enabled")

    @scpi("[SOURce#:]CURRent:PROTection:STATe", "OUTPut:OCP[:STATe]")
    def ocp(self, call: Call) -> None:
        self._switch(call, "ocp_enabled")

    @scpi("[SOURce#:]CURRent:PROTection:STATe?", "OUTPut:OCP[:STATe]?")
    def ocp_q(self, call: Call) -> str:
        return self._words(call, "ocp_enabled")

    @scpi(
        "OUTPut:OVP:ALAR?",
        "OUTPut:OVP:QUEStion?",
        "[SOURce#:]VOLTage:PROTection:TRIPped?",
        "[SOURce#:]VOLTage:PROTection:QUEStion?",
    )
    def ovp_trip_q(self, call: Call) -> str:
        return self._words(call, "ovp_tripped", "YES", "NO")

    @scpi(
        "OUTPut:OCP:ALAR?",
        "OUTPut:OCP:QUEStion?",
        "[SOURce#:]CURRent:PROTection:TRIPped?",
        "[SOURce#:]CURRent:PROTection:QUEStion?",
    )
    def ocp_trip_q(self, call: Call) -> str:
        return self._words(call, "ocp_tripped", "YES", "NO")

    @scpi("OUTPut:OVP:CLEar", "[SOURce#:]VOLTage:PROTection:CLEar")
    def ovp_clear(self, call: Call) -> None:
        with self.bench.lock:
            for ch in self._target(call)[0]:
                ch.ovp_tripped = ch.over_voltage  # the cause must be removed first
            self.sync()

    @scpi("OUTPut:OCP:CLEar", "[SOURce#:]CURRent:PROTection:CLEar")
    def ocp_clear(self, call: Call) -> None:
        with self.bench.lock:
            for ch in self._target(call)[0]:
                ch.ocp_tripped = False
            self.sync()

    # -- output --------------------------------------------------------------------------
    @scpi("OUTPut[:STATe]")
    def outp(self, call: Call) -> None:
        self._switch(call, "on")

    @scpi("OUTPut[:STATe]?")
    def outp_q(self, call: Call) -> str:
        return self._words(call, "on")  # a trip turns it off

    @scpi("OUTPut:MODE?")
    def mode_q(self, call: Call) -> str:
        with self.bench.lock:
            self.sync()
            return ",".join("UR" if not c.sourcing else ("CC" if c.cc_mode else "CV") for c in self._target(call)[0])

    # -- APPLy ----------------------------------------------------------------------------
    @scpi("APPLy")
    def apply(self, call: Call) -> None:
        """``:APPLy [CHn,][<volt>[,<curr>]]``: a channel named becomes the selected one; one value
        is the voltage. Both values are checked before either is set."""
        chans, i = self._target(call)
        ch = chans[0]
        volts = call.number(i, minimum=ch.v_min, maximum=ch.v_max, default=0.0) if call.has(i) else None
        amps = call.number(i + 1, minimum=0.0, maximum=ch.i_max, default=_I_DEFAULT) if call.has(i + 1) else None
        with self.bench.lock:
            self.selected = ch.number if i else self.selected
            self.sync()
            ch.v_set = ch.v_set if volts is None else volts
            ch.i_set = ch.i_set if amps is None else amps
            self._check_ovp(ch)
            self.sync()

    @scpi("APPLy?")
    def apply_q(self, call: Call) -> str:
        """``:APPLy? [CHn[,VOLTage|CURRent]]``: ``CH1:30V/3A,5.000,1.000``, or one setting."""
        chans, i = self._target(call)
        ch = chans[0]
        if call.has(i):
            return f"{ch.v_set if call.choice(['VOLTage', 'CURRent'], i) == 'VOLT' else ch.i_set:.3f}"
        return f"CH{ch.number}:{_RATING[ch.number]},{ch.v_set:.3f},{ch.i_set:.3f}"

    # -- MEASure [CHn] --------------------------------------------------------------------
    @scpi("MEASure[:SCALar][:VOLTage][:DC]?", "FETCh[:SCALar]:VOLTage[:DC]?")
    def meas_v(self, call: Call) -> str:
        return self._readback(call, "V")

    @scpi("MEASure[:SCALar]:POWEr[:DC]?", "MEASure[:SCALar]:POWer[:DC]?")
    def meas_p(self, call: Call) -> str:
        return self._readback(call, "P")

    @scpi("MEASure:ALL[:DC]?")
    def meas_all(self, call: Call) -> str:
        return self._readback(call, "ALL")

    def _convert(self, kind: str, chans: list[PsuChannel], gauss: Callable[[float, float], float]) -> str:
        if kind != "ALL":
            return super()._convert(kind, chans, gauss)
        out = []
        for c in chans:  # one conversion: voltage, current and their product
            v, i = self._sample("V", c, gauss), self._sample("I", c, gauss)
            out.append(f"{_fixed(v, 4)},{_fixed(i, 4)},{_fixed(v * i, 3)}")
        return ",".join(out)
