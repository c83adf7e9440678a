"""Keysight DAQ970A data acquisition system with a DAQM901A 20-channel multiplexer in slot 1.

Default wiring (overridden by the fixture's ``channels:`` naming ``daq@(@NNN)``):
101 TC_LID, 102 TC_HBM, 103 TC_VRM, 104 TC_INLET (type K thermocouples on board points),
111 VDD_CORE, 112 VDD_HBM, 113 VDD_IO, 114 VDD_AUX (DC volts). ``TC_<POINT>`` names a
thermocouple point (LID, HBM, VRM, INLET, DIE); a rail name wires that rail's voltage.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from labctl.sim.emulators import emulator
from labctl.sim.emulators.base import BenchInstrument, nr1s
from labctl.sim.physics.constants import RAIL_NAMES
from labctl.sim.scpi import Call, ScpiError, scpi
from labctl.sim.scpi.values import (
    OVERLOAD,
    definite_block,
    format_channel_list,
    nr3,
    parse_choice,
)

DEFAULT_WIRING = {
    "101": "TC_LID", "102": "TC_HBM", "103": "TC_VRM", "104": "TC_INLET",
    "111": "VDD_CORE", "112": "VDD_HBM", "113": "VDD_IO", "114": "VDD_AUX",
}
SLOT1 = range(101, 123)
#: channels of each plug-in module (DAQM901A: 20 two-wire + 2 current; DAQM908A: 40 single-ended)
MODULE_CHANNELS = {"DAQM901A": 22, "DAQM908A": 40}
TC_UV_PER_C = 40.7e-6
TC_TYPES = ["B", "E", "J", "K", "N", "R", "S", "T"]
#: the type a thermocouple channel reads after *RST and with ``DEF`` (the DAQ970A's default)
TC_DEFAULT = "J"
#: Seebeck coefficients near 0–100 degC, uV/degC (NIST ITS-90 tables, averaged): the wired
#: thermocouples are type K; a channel set to another type converts their voltage by its own
TC_SEEBECK_UV = {"B": 0.5, "E": 63.0, "J": 52.0, "K": 40.7, "N": 28.0, "R": 6.5, "S": 6.4, "T": 43.0}
WIRED_TC = "K"
#: alarm limits: -1.0E+15 … +1.0E+15, 0 by default (DAQ970A guide, CALCulate:LIMit); the same
#: bounds hold a scaling gain and offset (CALCulate:SCALe)
LIMIT_MAX = 1.0e15
#: a custom unit label (CALCulate:SCALe:UNIT) has at most this many characters
SCALE_UNIT_CHARS = 4
#: the alarm queue holds the first 20 alarms; later ones are lost
ALARM_QUEUE_SIZE = 20
#: STATus:ALARm register bits (DAQ970A guide, Alarm Register)
ALARM1_EVENT, QUEUE_NOT_EMPTY, QUEUE_OVERFLOW, ALARM1_ON, LOWER_LIMIT, UPPER_LIMIT = 1, 16, 32, 64, 4096, 8192
NO_ALARM, LO, HI = 0, 1, 2
#: the most sweeps one scan takes (TRIG:COUN; the 34970A's 50,000; INF is refused: no emulated
#: scan is endless)
MAX_SWEEPS = 50_000
#: readings the memory holds (the oldest go first when a scan takes more)
MAX_READINGS = 1_000_000


@dataclass
class ChanCfg:
    func: str = "VOLT"  # TEMP | VOLT | VOLT:AC | RES
    tc_type: str = TC_DEFAULT
    unit: str = "C"
    nplc: float = 1.0
    range: float = 10.0
    rjun: str = "INT"
    delay: float = 0.0
    auto_delay: bool = True  # ROUT:CHAN:DEL:AUTO (a delay set for the channel turns it off)
    auto_range: bool = True  # VOLT:RANG:AUTO (a fixed range turns it off)
    auto_zero: bool = True  # ZERO:AUTO ON|OFF (ONCE zeroes once, then leaves it OFF)
    auto_impedance: bool = False  # INP:IMP:AUTO (>10 GOhm on the low ranges)
    transducer: str = "TC"  # TEMP:TRAN:TYPE TC|RTD|FRTD|THER
    lower: float = 0.0  # alarm limits and their states
    upper: float = 0.0
    lower_on: bool = False
    upper_on: bool = False
    gain: float = 1.0  # Mx+B scaling (CALCulate:SCALe): reading = gain × measured + offset
    offset: float = 0.0
    scale_unit: str = ""  # the label in place of the measurement's unit ("": its own)
    scale_on: bool = False

    def scaling_off(self) -> None:
        """A new configuration of the channel: no scaling, gain 1, offset 0, its own unit."""
        self.gain, self.offset, self.scale_unit, self.scale_on = 1.0, 0.0, "", False

    def scaled(self, value: float, unit: str) -> tuple[float, str]:
        """The reading as Mx+B scaling gives it (an overload stays an overload)."""
        if not self.scale_on or abs(value) >= OVERLOAD:
            return value, unit
        return self.gain * value + self.offset, self.scale_unit or unit

    def alarms_off(self, clear_limits: bool = False) -> None:
        self.lower_on = self.upper_on = False
        if clear_limits:
            self.lower = self.upper = 0.0

    def alarm(self, value: float) -> int:
        """The alarm a reading raises: HI above an enabled upper limit, LO below an enabled lower one."""
        if self.upper_on and value > self.upper:
            return HI
        if self.lower_on and value < self.lower:
            return LO
        return NO_ALARM


@dataclass
class ChanStats:
    """A channel's scan statistics: its readings since the scan started or CALC:AVER:CLE."""

    count: int = 0
    total: float = 0.0
    low: float = 0.0
    high: float = 0.0
    low_at: float = 0.0  # epoch seconds of the minimum / maximum
    high_at: float = 0.0

    def add(self, value: float, at: float) -> None:
        if not self.count or value < self.low:
            self.low, self.low_at = value, at
        if not self.count or value > self.high:
            self.high, self.high_at = value, at
        self.count += 1
        self.total += value


@dataclass
class _TimedScan:
    """A scan paced by the trigger timer: sweep ``done`` of ``count`` is due at
    ``start + done * timer`` simulated seconds."""

    chans: list[int]
    start: float
    timer: float
    count: int
    done: int = 0

    @property
    def end(self) -> float:
        return self.start + (self.count - 1) * self.timer


def date_time(at: float | None) -> str:
    """``2018,02,03,10,10,38.625``: the date and time of day the alarm queue and the
    statistics' times use (``0,0,0,0,0,0`` for none)."""
    if at is None:
        return "0,0,0,0,0,0"
    t = time.localtime(at)
    seconds = t.tm_sec + (at - int(at))
    return f"{t.tm_year:04d},{t.tm_mon:02d},{t.tm_mday:02d},{t.tm_hour:02d},{t.tm_min:02d},{seconds:06.3f}"


@emulator("keysight-daq970a")
class DAQ970A(BenchInstrument):
    vendor = "Keysight Technologies"
    model = "DAQ970A"
    firmware = "A.01.02-01.00-01.01-00.02-01-01"
    default_serial = "MY58012345"
    options = "DAQM901A,0,0"

    def __init__(self, **kw: Any) -> None:
        modules = list((kw.get("options") or {}).get("modules") or ["DAQM901A"])[:3]
        for name in modules:
            if name not in MODULE_CHANNELS:
                raise ValueError(f"DAQ970A module {name!r}: one of {', '.join(MODULE_CHANNELS)}")
        self.modules = modules
        self.channels = [100 * (i + 1) + n for i, name in enumerate(modules) for n in range(1, MODULE_CHANNELS[name] + 1)]
        self.options = ",".join([*modules, "0", "0"][:max(3, len(modules))])
        #: channel -> the bay (board) wired to it, in a rack; other channels read ``bench``
        self.bays: dict[str, Any] = {}
        self._solved = set()
        # the alarm queue and the alarm status register outlive *RST (cleared by *CLS)
        self.alarm_queue: list[str] = []
        self.alarm_event = 0
        #: channel -> times its relay closed (kept, as the module's own count, through *RST)
        self.relay_cycles: dict[int, int] = {}
        super().__init__(**kw)

    def sync(self) -> Any:
        """Bring the physics up to now; each other board this DAQ reads is solved at this
        instant when one of its channels is read (``_board``)."""
        self._solved: set[int] = set()
        return super().sync()

    def _board(self, ch: int) -> Any:
        bay = self.bays.get(str(ch))
        if bay is None:
            return self.bench
        if id(bay) not in self._solved:
            bay.solve_electrical(bay.t)
            self._solved.add(id(bay))
        return bay

    def reset(self) -> None:
        self.cfg = {ch: ChanCfg() for ch in self.channels}
        self.scan: list[int] = []
        self.fmt = {"ALAR": False, "CHAN": False, "TIME": False, "UNIT": False}
        self.time_type = "REL"
        self.trigger_source = "IMM"
        self.trigger_count = 1
        self.trigger_timer = 1.0
        self.readings: list[str] = []
        self.closed: set[int] = set()  # channels closed by ROUT:CLOS
        self.armed = False
        self._timed: _TimedScan | None = None  # a scan paced by TRIG:SOUR TIM, while it runs
        self.monitor_channel: int | None = None
        self.monitor_on = False
        self._new_scan()
        if not self.wiring:
            self.wiring = dict(DEFAULT_WIRING)

    # -- channels -----------------------------------------------------------------------
    def _chans(self, call: Call, required: bool = True) -> list[int]:
        chans = call.channels
        if chans is None:
            if required:
                raise ScpiError(-109, "channel list missing")
            return list(self.scan)
        for ch in chans:
            if ch not in self.cfg:
                raise ScpiError(-241 if 200 <= ch < 400 else -222, f"no channel {ch}")
        return chans

    def _targets(self, call: Call, in_scan: bool = False) -> list[int]:
        """The channel list, or the scan list when it is left out; ``in_scan``: each channel
        must be in the scan list (the statistics)."""
        chans = self._chans(call, required=False)
        if not chans:
            raise ScpiError(-221, "scan list is empty")
        if in_scan:
            for ch in chans:
                if ch not in self.scan:
                    raise ScpiError(-221, f"channel {ch} is not in the scan list")
        return chans

    def _new_scan(self) -> None:
        """A scan starts (INIT, READ?, MEASure?, *RST): the statistics are cleared, the alarm
        output unlatched, and a reading outside a limit is a crossing again."""
        self.stats: dict[int, ChanStats] = {}
        self.crossed: dict[int, int] = {}
        self.alarm_latched = False

    def _value(self, ch: int) -> tuple[float, str]:
        """One reading of a channel in its configured function: (value, unit)."""
        b = self._board(ch)
        cfg = self.cfg[ch]
        signal = self.wiring.get(str(ch), "")
        point = signal[3:].upper() if signal.upper().startswith("TC_") else None
        rail = signal.upper() if signal.upper() in RAIL_NAMES else None
        if cfg.func == "TEMP":
            if point is None:
                return OVERLOAD, cfg.unit
            c = b.board_point(point)
            if cfg.tc_type != WIRED_TC:  # the K wire's voltage read through another type's table
                room = b.chamber.room  # (the reference junction, in the instrument, at room temperature)
                c = room + (c - room) * TC_SEEBECK_UV[WIRED_TC] / TC_SEEBECK_UV[cfg.tc_type]
            c += b.noise(0.03)
            return {"C": c, "F": c * 9 / 5 + 32, "K": c + 273.15}[cfg.unit], cfg.unit
        if cfg.func == "VOLT":
            if rail:
                v = b.board.rails[rail].voltage + b.noise(25e-6)
            elif point:
                v = TC_UV_PER_C * (b.board_point(point) - b.chamber.room) + b.noise(1e-6)
            else:
                v = b.noise(5e-6)
            if abs(v) > cfg.range * 1.2:
                return OVERLOAD, "VDC"
            return v, "VDC"
        if cfg.func == "VOLT:AC":
            return ((b.ripple_rms(rail) if rail else 0.0) + abs(b.noise(2e-5))), "VAC"
        return OVERLOAD, "OHM"

    def _evaluate(self, ch: int, value: float, unit: str, at: float) -> int:
        """Statistics and alarm limits on one scanned reading; its alarm (0, LO 1, HI 2). An
        alarm enters the queue when the reading crosses a limit, not while it stays outside."""
        self.stats.setdefault(ch, ChanStats()).add(value, at)
        alarm = self.cfg[ch].alarm(value)
        if alarm and alarm != self.crossed.get(ch, NO_ALARM):
            self.alarm_latched = True
            self.alarm_event |= ALARM1_EVENT | (UPPER_LIMIT if alarm == HI else LOWER_LIMIT)
            if len(self.alarm_queue) < ALARM_QUEUE_SIZE:
                self.alarm_queue.append(f"{value:.8E} {unit},{date_time(at)},{ch},{alarm},1")
                self.alarm_event |= QUEUE_NOT_EMPTY
            else:
                self.alarm_event |= QUEUE_OVERFLOW
        self.crossed[ch] = alarm
        return alarm

    def _reading(self, ch: int) -> tuple[float, str]:
        """One reading of a channel as it is reported: closes its relay, measures, scales
        (alarms and statistics see the scaled value)."""
        self.relay_cycles[ch] = self.relay_cycles.get(ch, 0) + 1
        value, unit = self._value(ch)
        return self.cfg[ch].scaled(value, unit)

    def _sweep(self, chans: list[int], t0: float, k: int) -> list[str]:
        """One sweep of ``chans``, stamped ``k`` trigger intervals after the model's present
        (a scan started at ``t0``)."""
        out = []
        clock = self.bench.clock
        at = clock.time() - (clock.monotonic() - self.bench.t) + k * self.trigger_timer  # epoch of the sweep
        for ch in chans:
            value, unit = self._reading(ch)
            alarm = self._evaluate(ch, value, unit, at)
            fields = [nr3(value) + (f" {unit}" if self.fmt["UNIT"] else "")]
            if self.fmt["TIME"]:  # REL: seconds since the scan started; ABS: date and time of day
                if self.time_type == "REL":
                    fields.append(f"{self.bench.t - t0 + k * self.trigger_timer:013.3f}")
                else:
                    fields.append(date_time(at))
            if self.fmt["CHAN"]:
                fields.append(str(ch))
            if self.fmt["ALAR"]:
                fields.append(str(alarm))
            out.append(",".join(fields))
        return out

    def _scan_all(self, chans: list[int] | None = None) -> list[str]:
        chans = self.scan if chans is None else chans
        if not chans:
            raise ScpiError(-221, "scan list is empty")
        self.closed.clear()  # a scan opens the relays closed by hand first
        with self.bench.lock:
            t0 = self.sync().t
            out: list[str] = []
            count = max(1, self.trigger_count)
            kept = min(count, max(1, MAX_READINGS // len(chans)))  # a full memory keeps the newest
            for k in range(count - kept, count):
                out += self._sweep(chans, t0, k)
            return out

    # -- CONFigure / MEASure / READ ----------------------------------------------------
    def _configure(self, call: Call, func: str) -> list[int]:
        chans = self._chans(call)
        args = call.args
        for ch in chans:
            c = self.cfg[ch]
            c.func = func
            c.alarms_off(clear_limits=True)  # a new configuration clears the channel's limits ...
            c.scaling_off()  # ... and its scaling
            if func == "TEMP":
                if args:
                    parse_choice(args[0], ["TCouple", "RTD", "FRTD", "THERmistor", "DEFault"])
                if len(args) > 1 and args[1].upper() not in ("DEF", "DEFAULT"):
                    c.tc_type = parse_choice(args[1], TC_TYPES)
                else:
                    c.tc_type = TC_DEFAULT
            elif args and args[0].upper() not in ("AUTO", "DEF", "DEFAULT"):
                c.range = call.number(0, minimum=0.0, maximum=300.0)
                c.auto_range = False
            else:
                c.auto_range = True
        self.scan = _scan_list(chans)
        self.fmt = dict.fromkeys(self.fmt, False)
        self.trigger_count = 1
        return self.scan

    @scpi("CONFigure:TEMPerature")
    def conf_temp(self, call: Call) -> None:
        self._configure(call, "TEMP")

    @scpi("CONFigure:VOLTage[:DC]")
    def conf_volt(self, call: Call) -> None:
        self._configure(call, "VOLT")

    @scpi("CONFigure:VOLTage:AC")
    def conf_vac(self, call: Call) -> None:
        self._configure(call, "VOLT:AC")

    @scpi("CONFigure:RESistance", "CONFigure:FRESistance")
    def conf_res(self, call: Call) -> None:
        self._configure(call, "RES")

    def _scan_now(self, chans: list[int] | None = None) -> str:
        """A scan started by READ? or MEASure?: like INIT, it clears the reading memory and
        leaves its own readings there (they kept an earlier INIT's)."""
        self.armed = False
        self._stop_timed()
        self._new_scan()
        self.readings = self._scan_all(chans)
        return ",".join(self.readings)

    @scpi("MEASure:TEMPerature?")
    def meas_temp(self, call: Call) -> str:
        return self._scan_now(self._configure(call, "TEMP"))

    @scpi("MEASure:VOLTage[:DC]?")
    def meas_volt(self, call: Call) -> str:
        return self._scan_now(self._configure(call, "VOLT"))

    @scpi("MEASure:RESistance?", "MEASure:FRESistance?")
    def meas_res(self, call: Call) -> str:
        return self._scan_now(self._configure(call, "RES"))

    @scpi("MEASure:VOLTage:AC?")
    def meas_vac(self, call: Call) -> str:
        return self._scan_now(self._configure(call, "VOLT:AC"))

    @scpi("CONFigure?")
    def conf_q(self, call: Call) -> str:
        parts = []
        for ch in self._chans(call, required=False):
            c = self.cfg[ch]
            parts.append(f"TEMP TC,{c.tc_type}" if c.func == "TEMP" else f"{c.func} {nr3(c.range)},{nr3(3e-6 * c.range)}")
        return '"' + ",".join(parts) + '"'

    @scpi("READ?")
    def read(self, call: Call) -> str:
        if self._paced():  # INITiate and FETCh? of a scan that takes its time
            self._new_scan()
            self._start_timed()
            self.wait_pending()
            return ",".join(self.readings)
        return self._scan_now()

    @scpi("INITiate[:IMMediate]")
    def init(self, call: Call) -> None:
        self._new_scan()
        self._stop_timed()
        if self.trigger_source == "BUS":
            self.armed, self.readings = True, []
        elif self._paced():
            self._start_timed()
        else:
            self.readings = self._scan_all()

    def trigger(self) -> None:
        if self.armed:
            self.readings = self._scan_all()
            self.armed = False

    # -- scans paced by the trigger timer ------------------------------------------------
    def _paced(self) -> bool:
        """``TRIG:SOUR TIM`` with more than one sweep, ``TRIG:TIM`` apart: the scan takes
        ``(count - 1) * timer`` seconds of the model's time, as on the instrument."""
        return self.trigger_source == "TIM" and self.trigger_count > 1 and self.trigger_timer > 0

    def _start_timed(self) -> None:
        """The first sweep now, each next one when the model reaches its time (Bench.at)."""
        if not self.scan:
            raise ScpiError(-221, "scan list is empty")
        self.armed = False
        self.readings = []
        with self.bench.lock:
            start = self.sync().t
            self._timed = _TimedScan(list(self.scan), start, self.trigger_timer, self.trigger_count)
            self._timed_sweep(self._timed, start)

    def _timed_sweep(self, scan: _TimedScan, now: float) -> None:
        if self._timed is not scan:  # aborted, or another scan started
            return
        self._solved = set()
        self.readings += self._sweep(scan.chans, scan.start, 0)
        if len(self.readings) > MAX_READINGS:  # a full memory keeps the newest
            del self.readings[:len(self.readings) - MAX_READINGS]
        scan.done += 1
        if scan.done < scan.count:
            self.bench.at(scan.start + scan.done * scan.timer, lambda t: self._timed_sweep(scan, t))
        else:
            self._timed = None

    def _stop_timed(self) -> None:
        self._timed = None  # its pending sweep finds itself stale and does nothing

    def wait_pending(self) -> None:
        """``*OPC?``, ``*WAI``, ``FETCh?`` and ``READ?`` wait for a paced scan to end: the
        reply comes when the last sweep has been taken, as on the instrument."""
        scan = self._timed
        clock = self.bench.clock
        while scan is not None and self._timed is scan:
            with self.bench.lock:
                self.sync()
                left = scan.end - self.bench.t
            if self._timed is not scan:
                break
            # a manual clock moves by its sleep; a scaled one is slept in short stretches
            clock.sleep(left if hasattr(clock, "advance") else min(max(left, 0.0), 0.05 * getattr(clock, "scale", 1.0)))

    @scpi("FETCh?")
    def fetch(self, call: Call) -> str:
        self.wait_pending()
        with self.bench.lock:  # (a paced scan's sweeps are added under it)
            if not self.readings:
                raise ScpiError(-230, "no readings in memory")
            return ",".join(self.readings)

    def _take_due_sweeps(self) -> None:
        """The sweeps of a paced scan due by now, into the reading memory (nothing to do
        without one)."""
        if self._timed is not None:
            with self.bench.lock:
                self.sync()

    @scpi("ABORt")
    def abort(self, call: Call) -> None:
        self.armed = False
        self._take_due_sweeps()  # the sweeps due by now are taken and stay in memory
        self._stop_timed()

    @scpi("DATA:POINts?")
    def points(self, call: Call) -> str:
        self._take_due_sweeps()
        return nr1s(len(self.readings))

    @scpi("DATA:REMove?")
    def remove(self, call: Call) -> str:
        n = int(call.number(0, minimum=1))
        self._take_due_sweeps()
        with self.bench.lock:  # (a paced scan's sweeps are added under it)
            if n > len(self.readings):
                raise ScpiError(-222, "not that many readings")
            out, self.readings = self.readings[:n], self.readings[n:]
        return ",".join(out)

    # -- ROUTe --------------------------------------------------------------------------
    @scpi("ROUTe:SCAN")
    def route_scan(self, call: Call) -> None:
        self.scan = _scan_list(self._chans(call))

    @scpi("ROUTe:SCAN?")
    def route_scan_q(self, call: Call) -> str:
        return definite_block(format_channel_list(self.scan))

    @scpi("ROUTe:SCAN:SIZE?")
    def route_size(self, call: Call) -> str:
        return nr1s(len(self.scan))

    @scpi("ROUTe:MONitor[:CHANnel]")
    def mon(self, call: Call) -> None:
        chans = self._chans(call)
        self.monitor_channel = chans[0] if chans else None

    @scpi("ROUTe:MONitor[:CHANnel]?")
    def mon_q(self, call: Call) -> str:
        return definite_block(format_channel_list([] if self.monitor_channel is None else [self.monitor_channel]))

    @scpi("ROUTe:MONitor:STATe")
    def mon_state(self, call: Call) -> None:
        self.monitor_on = call.boolean(0)

    @scpi("ROUTe:MONitor:STATe?")
    def mon_state_q(self, call: Call) -> str:
        return str(int(self.monitor_on))

    @scpi("ROUTe:MONitor:DATA?")
    def mon_data(self, call: Call) -> str:
        if self.monitor_channel is None or not self.monitor_on:
            raise ScpiError(-221, "monitor is off")
        with self.bench.lock:
            self.sync()
            return nr3(self._reading(self.monitor_channel)[0])

    @scpi("ROUTe:CHANnel:DELay")
    def chan_delay(self, call: Call) -> None:
        for ch in self._chans(call):
            self.cfg[ch].delay = call.number(0, minimum=0.0, maximum=60.0, default=0.0)
            self.cfg[ch].auto_delay = False

    @scpi("ROUTe:CHANnel:DELay:AUTO")
    def chan_delay_auto(self, call: Call) -> None:
        for ch in self._chans(call):
            self.cfg[ch].auto_delay = call.boolean(0)

    @scpi("ROUTe:CHANnel:DELay:AUTO?")
    def chan_delay_auto_q(self, call: Call) -> str:
        return ",".join(str(int(self.cfg[ch].auto_delay)) for ch in self._chans(call))

    # -- relays closed by hand (a scan or a monitor reading opens them again) ----------------
    @scpi("ROUTe:CLOSe")
    def route_close(self, call: Call) -> None:
        for ch in self._chans(call):
            if ch not in self.closed:
                self.closed.add(ch)
                self.relay_cycles[ch] = self.relay_cycles.get(ch, 0) + 1

    @scpi("ROUTe:OPEN")
    def route_open(self, call: Call) -> None:
        for ch in self._chans(call):
            self.closed.discard(ch)

    @scpi("ROUTe:CLOSe?")
    def route_close_q(self, call: Call) -> str:
        return ",".join(str(int(ch in self.closed)) for ch in self._chans(call))

    @scpi("ROUTe:OPEN?")
    def route_open_q(self, call: Call) -> str:
        return ",".join(str(int(ch not in self.closed)) for ch in self._chans(call))

    @scpi("ROUTe:CHANnel:DELay?")
    def chan_delay_q(self, call: Call) -> str:
        return ",".join(nr3(self.cfg[ch].delay) for ch in self._chans(call))

    # -- SENSe per channel ----------------------------------------------------------------
    @scpi("[SENSe:]TEMPerature:TRANsducer:TCouple:TYPE")
    def tc_type(self, call: Call) -> None:
        word = call.arg(0).strip().upper()
        t = TC_DEFAULT if word in ("DEF", "DEFAULT") else parse_choice(call.arg(0), TC_TYPES)
        for ch in self._chans(call):
            if self.cfg[ch].tc_type != t:
                self.cfg[ch].alarms_off()  # a new probe type turns the channel's alarms off
            self.cfg[ch].tc_type = t

    @scpi("[SENSe:]TEMPerature:TRANsducer:TCouple:TYPE?")
    def tc_type_q(self, call: Call) -> str:
        return ",".join(self.cfg[ch].tc_type for ch in self._chans(call))

    @scpi("[SENSe:]TEMPerature:TRANsducer:TCouple:RJUNction:TYPE")
    def rjun(self, call: Call) -> None:
        r = parse_choice(call.arg(0), ["INTernal", "EXTernal", "FIXed"])
        for ch in self._chans(call):
            self.cfg[ch].rjun = r

    @scpi("[SENSe:]TEMPerature:TRANsducer:TCouple:RJUNction:TYPE?")
    def rjun_q(self, call: Call) -> str:
        return ",".join(self.cfg[ch].rjun for ch in self._chans(call))

    @scpi("[SENSe:]TEMPerature:TRANsducer:TYPE")
    def tran_type(self, call: Call) -> None:
        kind = parse_choice(call.arg(0), ["TCouple", "RTD", "FRTD", "THERmistor"])
        for ch in self._chans(call):
            self.cfg[ch].func = "TEMP"
            self.cfg[ch].transducer = kind

    @scpi("[SENSe:]TEMPerature:TRANsducer:TYPE?")
    def tran_type_q(self, call: Call) -> str:
        return ",".join(self.cfg[ch].transducer for ch in self._chans(call))

    @scpi("[SENSe:]TEMPerature:NPLCycles", "[SENSe:]VOLTage[:DC]:NPLCycles")
    def nplc(self, call: Call) -> None:
        value = call.number(0, minimum=0.02, maximum=200.0, default=1.0)
        for ch in self._chans(call):
            self.cfg[ch].nplc = value

    @scpi("[SENSe:]TEMPerature:NPLCycles?", "[SENSe:]VOLTage[:DC]:NPLCycles?")
    def nplc_q(self, call: Call) -> str:
        return ",".join(nr3(self.cfg[ch].nplc) for ch in self._chans(call))

    @scpi("[SENSe:]VOLTage[:DC]:RANGe")
    def vrange(self, call: Call) -> None:
        value = call.number(0, minimum=0.0, maximum=300.0, default=10.0)
        for ch in self._chans(call):
            self.cfg[ch].range = next(r for r in (0.1, 1.0, 10.0, 100.0, 300.0) if r >= value * 0.999)
            self.cfg[ch].auto_range = False

    @scpi("[SENSe:]VOLTage[:DC]:RANGe?")
    def vrange_q(self, call: Call) -> str:
        return ",".join(nr3(self.cfg[ch].range) for ch in self._chans(call))

    @scpi("[SENSe:]ZERO:AUTO", "[SENSe:]TEMPerature:ZERO:AUTO", "[SENSe:]VOLTage[:DC]:ZERO:AUTO")
    def zero_auto(self, call: Call) -> None:
        word = call.arg(0).strip().upper()
        on = False if word == "ONCE" else call.boolean(0)  # ONCE zeroes now, then leaves it off
        for ch in self._chans(call, required=False):
            self.cfg[ch].auto_zero = on

    @scpi("[SENSe:]ZERO:AUTO?", "[SENSe:]TEMPerature:ZERO:AUTO?", "[SENSe:]VOLTage[:DC]:ZERO:AUTO?")
    def zero_auto_q(self, call: Call) -> str:
        return ",".join(str(int(self.cfg[ch].auto_zero)) for ch in self._chans(call))

    @staticmethod
    def _switch(call: Call) -> str:
        """The channel setting an ``…:AUTO`` header names: input impedance or autorange."""
        return "auto_impedance" if (call.path or call.unit.nodes)[0].name.startswith("INP") else "auto_range"

    @scpi("INPut:IMPedance:AUTO", "[SENSe:]VOLTage[:DC]:RANGe:AUTO")
    def switch(self, call: Call) -> None:
        on = call.boolean(0)
        for ch in self._chans(call, required=False):
            setattr(self.cfg[ch], self._switch(call), on)

    @scpi("INPut:IMPedance:AUTO?", "[SENSe:]VOLTage[:DC]:RANGe:AUTO?")
    def switch_q(self, call: Call) -> str:
        return ",".join(str(int(getattr(self.cfg[ch], self._switch(call)))) for ch in self._chans(call))

    @scpi("[SENSe:]TEMPerature:TRANsducer:TCouple:CHECk")
    def tc_check(self, call: Call) -> None:
        self._chans(call, required=False)

    @scpi("UNIT:TEMPerature")
    def unit(self, call: Call) -> None:
        u = parse_choice(call.arg(0), ["C", "CEL", "F", "FAR", "K"])
        u = {"CEL": "C", "FAR": "F"}.get(u, u)
        for ch in self._chans(call, required=False) or list(self.cfg):
            if self.cfg[ch].unit != u:
                self.cfg[ch].alarms_off()  # so do new temperature units
            self.cfg[ch].unit = u

    @scpi("UNIT:TEMPerature?")
    def unit_q(self, call: Call) -> str:
        chans = self._chans(call, required=False) or [101]
        return ",".join(self.cfg[ch].unit for ch in chans)

    # -- FORMat, TRIGger, SYSTem --------------------------------------------------------------
    @scpi("FORMat:READing:ALARm", "FORMat:READing:CHANnel", "FORMat:READing:TIME", "FORMat:READing:UNIT")
    def form(self, call: Call) -> None:
        self.fmt[call.unit.nodes[-1].name[:4]] = call.boolean(0)

    @scpi("FORMat:READing:ALARm?", "FORMat:READing:CHANnel?", "FORMat:READing:TIME?", "FORMat:READing:UNIT?")
    def form_q(self, call: Call) -> str:
        return str(int(self.fmt[call.unit.nodes[-1].name[:4]]))

    @scpi("FORMat:READing:TIME:TYPE")
    def form_time(self, call: Call) -> None:
        self.time_type = parse_choice(call.arg(0), ["ABSolute", "RELative"])

    @scpi("FORMat:READing:TIME:TYPE?")
    def form_time_q(self, call: Call) -> str:
        return self.time_type

    @scpi("TRIGger:SOURce")
    def trig_src(self, call: Call) -> None:
        self.trigger_source = parse_choice(call.arg(0), ["IMMediate", "BUS", "EXTernal", "TIMer",
                                                         "ALARm1", "ALARm2", "ALARm3", "ALARm4"])

    @scpi("TRIGger:SOURce?")
    def trig_src_q(self, call: Call) -> str:
        return self.trigger_source

    @scpi("TRIGger:COUNt")
    def trig_count(self, call: Call) -> None:
        self.trigger_count = int(call.number(0, minimum=1, maximum=MAX_SWEEPS, default=1))

    @scpi("TRIGger:COUNt?")
    def trig_count_q(self, call: Call) -> str:
        return nr3(self.trigger_count)

    @scpi("TRIGger:TIMer")
    def trig_timer(self, call: Call) -> None:
        self.trigger_timer = call.number(0, minimum=0.0, maximum=359999.0, default=1.0)

    @scpi("TRIGger:TIMer?")
    def trig_timer_q(self, call: Call) -> str:
        return nr3(self.trigger_timer)

    @scpi("SYSTem:RELay:CYCLes?")
    def relay_cycles_q(self, call: Call) -> str:
        """How many times each listed channel's relay has closed (a scan or a monitor reading
        closes it once)."""
        return ",".join(nr1s(self.relay_cycles.get(ch, 0)) for ch in self._chans(call))

    @scpi("SYSTem:RELay:CYCLes:CLEar")
    def relay_cycles_clear(self, call: Call) -> None:
        for ch in self._chans(call):
            self.relay_cycles.pop(ch, None)

    # -- Mx+B scaling ----------------------------------------------------------------------
    @scpi("CALCulate:SCALe:GAIN", "CALCulate:SCALe:OFFSet")
    def scale_value(self, call: Call) -> None:
        gain = call.unit.nodes[-1].name.startswith("GAIN")
        value = call.number(0, minimum=-LIMIT_MAX, maximum=LIMIT_MAX, default=1.0 if gain else 0.0)
        for ch in self._targets(call):
            setattr(self.cfg[ch], "gain" if gain else "offset", value)

    @scpi("CALCulate:SCALe:GAIN?", "CALCulate:SCALe:OFFSet?")
    def scale_value_q(self, call: Call) -> str:
        side = "gain" if call.unit.nodes[-1].name.startswith("GAIN") else "offset"
        return ",".join(nr3(getattr(self.cfg[ch], side)) for ch in self._targets(call))

    @scpi("CALCulate:SCALe:UNIT")
    def scale_unit(self, call: Call) -> None:
        label = call.string(0)
        if not 1 <= len(label) <= SCALE_UNIT_CHARS or not label.isprintable() or "," in label:
            raise ScpiError(-224, f"a unit label is 1 to {SCALE_UNIT_CHARS} characters")
        for ch in self._targets(call):
            self.cfg[ch].scale_unit = label

    @scpi("CALCulate:SCALe:UNIT?")
    def scale_unit_q(self, call: Call) -> str:
        return ",".join(f'"{self.cfg[ch].scale_unit or self._value_unit(ch)}"' for ch in self._targets(call))

    def _value_unit(self, ch: int) -> str:
        c = self.cfg[ch]
        return {"TEMP": c.unit, "VOLT": "VDC", "VOLT:AC": "VAC"}.get(c.func, "OHM")

    @scpi("CALCulate:SCALe[:STATe]")
    def scale_state(self, call: Call) -> None:
        on = call.boolean(0)
        for ch in self._targets(call):
            self.cfg[ch].scale_on = on
            self.crossed.pop(ch, None)

    @scpi("CALCulate:SCALe[:STATe]?")
    def scale_state_q(self, call: Call) -> str:
        return ",".join(str(int(self.cfg[ch].scale_on)) for ch in self._targets(call))

    @scpi("SYSTem:CTYPe?")
    def ctype(self, call: Call) -> str:
        slot = int(call.number(0, minimum=100, maximum=300))
        i = slot // 100 - 1
        if slot % 100 == 0 and i < len(self.modules):  # the module the fixture put in that slot
            return f"Keysight Technologies,{self.modules[i]},{self.serial}-{i + 1},1.0"
        return "Keysight Technologies,0,0,0"

    # -- alarm limits, the alarm queue, scan statistics ------------------------------------
    @staticmethod
    def _upper(call: Call) -> bool:
        """UPPer or LOWer in the header."""
        return any(n.name in ("UPP", "UPPER") for n in call.unit.nodes)

    @scpi("CALCulate:LIMit:UPPer", "CALCulate:LIMit:LOWer")
    def limit(self, call: Call) -> None:
        value = call.number(0, minimum=-LIMIT_MAX, maximum=LIMIT_MAX, default=0.0)
        for ch in self._targets(call):
            setattr(self.cfg[ch], "upper" if self._upper(call) else "lower", value)
            self.crossed.pop(ch, None)

    @scpi("CALCulate:LIMit:UPPer?", "CALCulate:LIMit:LOWer?")
    def limit_q(self, call: Call) -> str:
        if call.args:  # MIN|MAX|DEF instead of a channel list
            word = call.choice(["MINimum", "MAXimum", "DEFault"])
            return nr3({"MIN": -LIMIT_MAX, "MAX": LIMIT_MAX, "DEF": 0.0}[word])
        side = "upper" if self._upper(call) else "lower"
        return ",".join(nr3(getattr(self.cfg[ch], side)) for ch in self._targets(call))

    @scpi("CALCulate:LIMit:UPPer:STATe", "CALCulate:LIMit:LOWer:STATe")
    def limit_state(self, call: Call) -> None:
        on = call.boolean(0)
        for ch in self._targets(call):
            setattr(self.cfg[ch], "upper_on" if self._upper(call) else "lower_on", on)
            self.crossed.pop(ch, None)

    @scpi("CALCulate:LIMit:UPPer:STATe?", "CALCulate:LIMit:LOWer:STATe?")
    def limit_state_q(self, call: Call) -> str:
        side = "upper_on" if self._upper(call) else "lower_on"
        return ",".join(str(int(getattr(self.cfg[ch], side))) for ch in self._targets(call))

    @scpi("SYSTem:ALARm?")
    def alarm_q(self, call: Call) -> str:
        """The oldest alarm, removed: ``2.41286927E+01 C,2018,02,03,10,10,38.625,101,1,1``
        (reading with unit, date, time of day, channel, 1 LO | 2 HI, alarm number); 0 for
        each field when the queue is empty."""
        if not self.alarm_queue:
            return ",".join(["0"] * 10)
        return self.alarm_queue.pop(0)

    @scpi("STATus:ALARm[:EVENt]?")
    def alarm_event_q(self, call: Call) -> str:
        value, self.alarm_event = self.alarm_event, 0
        return nr1s(value)

    @scpi("STATus:ALARm:CONDition?")
    def alarm_cond_q(self, call: Call) -> str:
        return nr1s((QUEUE_NOT_EMPTY if self.alarm_queue else 0) | (ALARM1_ON if self.alarm_latched else 0))

    def _c_cls(self, p: list[str]) -> None:
        super()._c_cls(p)
        self.alarm_queue.clear()
        self.alarm_event = 0

    def _stats(self, call: Call) -> list[ChanStats]:
        return [self.stats.get(ch, ChanStats()) for ch in self._targets(call, in_scan=True)]

    @scpi("CALCulate:AVERage:AVERage?")
    def stat_average(self, call: Call) -> str:
        return ",".join(nr3(s.total / s.count if s.count else 0.0) for s in self._stats(call))

    @scpi("CALCulate:AVERage:MINimum?")
    def stat_min(self, call: Call) -> str:
        return ",".join(nr3(s.low) for s in self._stats(call))

    @scpi("CALCulate:AVERage:MAXimum?")
    def stat_max(self, call: Call) -> str:
        return ",".join(nr3(s.high) for s in self._stats(call))

    @scpi("CALCulate:AVERage:PTPeak?")
    def stat_ptp(self, call: Call) -> str:
        return ",".join(nr3(s.high - s.low) for s in self._stats(call))

    @scpi("CALCulate:AVERage:COUNt?")
    def stat_count(self, call: Call) -> str:
        return ",".join(nr3(s.count) for s in self._stats(call))

    @scpi("CALCulate:AVERage:MINimum:TIME?")
    def stat_min_time(self, call: Call) -> str:
        return ",".join(date_time(s.low_at if s.count else None) for s in self._stats(call))

    @scpi("CALCulate:AVERage:MAXimum:TIME?")
    def stat_max_time(self, call: Call) -> str:
        return ",".join(date_time(s.high_at if s.count else None) for s in self._stats(call))

    @scpi("CALCulate:AVERage:CLEar")
    def stat_clear(self, call: Call) -> None:
        for ch in self._targets(call, in_scan=True):
            self.stats.pop(ch, None)


def _scan_list(channels: list[int]) -> list[int]:
    """A channel list as the instrument scans it: ascending, each channel once (the 34980A
    manual: ``(@2001,1003,1001,1003)`` scans 1001, 1003, 2001; a range given downwards,
    ``(@1009:1001)``, is scanned upwards)."""
    return sorted(set(channels))
