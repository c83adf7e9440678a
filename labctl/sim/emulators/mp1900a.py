"""Anritsu MP1900A signal quality analyzer: one error detector (ED) per DUT lane.

``:MODule:ID n`` selects lane n (1-based). Gated PRBS measurement with error count, bit
count, BER, pattern-sync-loss and clock-loss seconds, plus eye height/width. Bits are
compared only while the ED is in sync with the DUT's transmitter (see docs).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from labctl.sim.emulators import emulator
from labctl.sim.emulators.base import BenchInstrument
from labctl.sim.physics import constants as K
from labctl.sim.physics.dut import stable_seed
from labctl.sim.physics.link import (
    ErrorArrivals,
    ber_from_q,
    eye_height_mv,
    eye_width_ui,
    sampled_q,
)
from labctl.sim.scpi import Call, ScpiError, scpi
from labctl.sim.scpi.values import mnemonic_matches, nr3, parse_choice, parse_string

PRBS_LENGTHS = (7, 9, 10, 11, 15, 20, 23, 31)


@dataclass
class EdLane:
    prbs: int = 31
    pattern: str = "PRBS"
    logic: str = "POS"
    bitrate: float = K.LINE_RATE
    period_s: float = 60.0
    mode: str = "SING"
    running: bool = False
    start_t: float = 0.0
    end_t: float = math.inf
    bits: float = 0.0
    errors: int = 0
    psloss_s: float = 0.0
    closs_s: float = 0.0
    threshold: float = 0.0  # V; the simulated eye is centred on 0 V
    clock_delay_mui: float = 0.0  # sampling phase from the eye centre, mUI
    clock_sel: str = "REC"
    starts: int = 0  # measurements started: each draws its own error arrivals
    arrivals: ErrorArrivals | None = None

    def clear(self) -> None:
        self.bits, self.errors, self.psloss_s, self.closs_s = 0.0, 0, 0.0, 0.0


def _dhms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 86400},{s % 86400 // 3600},{s % 3600 // 60},{s % 60}"


@emulator("anritsu-mp1900a")
class MP1900A(BenchInstrument):
    vendor = "ANRITSU"
    model = "MP1900A"
    firmware = "1.00.00"
    default_serial = "6201234567"
    options = "MU195040A,MU195040A,MU195040A,MU195040A"

    def reset(self) -> None:
        self.module = 1
        self.lanes = [EdLane() for _ in range(K.LANES)]
        if self._on_step not in self.bench.lane_listeners:
            self.bench.lane_listeners.append(self._on_step)

    # -- the physics hook (called by the bench with its lock held) ----------------------------
    def _on_step(self, t0: float, t1: float, qs: Callable[[], list[float]], trained: bool, tx_prbs: int) -> None:
        powered = self.bench.board.powered and not self.bench.board.latched
        for i, ed in enumerate(self.lanes):
            if not ed.running:
                continue
            if ed.mode == "REP" and t1 >= ed.start_t + ed.period_s:
                # each period is a measurement of its own: the counts start again at the latest
                # period's start (the results of the periods before it are not read back)
                ed.clear()
                ed.start_t += math.floor((t1 - ed.start_t) / ed.period_s) * ed.period_s
            self._count(i, ed, max(t0, ed.start_t), min(t1, ed.end_t), qs, trained, tx_prbs, powered)

    def _count(self, i: int, ed: EdLane, a: float, b: float, qs: Callable[[], list[float]], trained: bool,
               tx_prbs: int, powered: bool) -> None:
        if b <= a:
            return
        dur = b - a
        synced = (trained and ed.pattern == "PRBS" and ed.logic == "POS" and ed.prbs == tx_prbs
                  and abs(ed.bitrate - K.LINE_RATE) <= 1e-6 * K.LINE_RATE)
        if not powered:
            ed.closs_s += dur
        ber = ber_from_q(sampled_q(qs()[i], ed.clock_delay_mui / 1000.0, ed.threshold * 1000.0))
        if synced and ber < K.SYNC_LOSS_BER:
            bits = ed.bitrate * dur
            ed.bits += bits
            if ed.arrivals is not None:
                ed.errors += ed.arrivals.add(bits * ber)
        else:
            ed.psloss_s += dur

    # -- module selection ---------------------------------------------------------------
    @property
    def ed(self) -> EdLane:
        return self.lanes[self.module - 1]

    @scpi(":MODule:ID")
    def module_id(self, call: Call) -> None:
        n = int(call.number(0, minimum=1, maximum=K.LANES, default=1))
        self.module = n

    @scpi(":MODule:ID?")
    def module_id_q(self, call: Call) -> str:
        return str(self.module)

    # the other two levels of the Anritsu address (unit, module, interface): one mainframe, and one
    # ED interface per simulated module; clients written for the MP1800A/MP1900A select them too
    @scpi(":UENTry:ID", ":INTerface:ID")
    def single_id(self, call: Call) -> None:
        call.number(0, minimum=1, maximum=1, default=1)

    @scpi(":UENTry:ID?", ":INTerface:ID?")
    def single_id_q(self, call: Call) -> str:
        return "1"

    # -- pattern and rate ---------------------------------------------------------------
    @scpi("[:SENSe]:PATTern:TYPE")
    def ptype(self, call: Call) -> None:
        if parse_choice(call.arg(0), ["PRBS", "PPRBs", "DATA", "ZSUBstitution", "MIXData", "SEQuence"]) != "PRBS":
            raise ScpiError(-224, "only PRBS patterns are supported by this ED")
        self.ed.pattern = "PRBS"

    @scpi("[:SENSe]:PATTern:TYPE?")
    def ptype_q(self, call: Call) -> str:
        return self.ed.pattern

    @scpi("[:SENSe]:PATTern:PRBS:LENGth")
    def plen(self, call: Call) -> None:
        n = int(call.number(0, minimum=7, maximum=31, default=31))
        if n not in PRBS_LENGTHS:
            raise ScpiError(-224, f"PRBS length {n} not in {PRBS_LENGTHS}")
        self.ed.prbs = n

    @scpi("[:SENSe]:PATTern:PRBS:LENGth?")
    def plen_q(self, call: Call) -> str:
        return str(self.ed.prbs)

    @scpi("[:SENSe]:PATTern:LOGic")
    def logic(self, call: Call) -> None:
        self.ed.logic = parse_choice(call.arg(0), ["POSitive", "NEGative"])

    @scpi("[:SENSe]:PATTern:LOGic?")
    def logic_q(self, call: Call) -> str:
        return self.ed.logic

    @scpi("[:SENSe]:BITRate")
    def bitrate(self, call: Call) -> None:
        self.ed.bitrate = call.number(0, minimum=1e9, maximum=64.2e9, default=K.LINE_RATE)

    @scpi("[:SENSe]:BITRate?")
    def bitrate_q(self, call: Call) -> str:
        return nr3(self.ed.bitrate)

    # -- gating -------------------------------------------------------------------------
    @scpi("[:SENSe]:MEASure:EALarm:PERiod")
    def period(self, call: Call) -> None:
        if len(call.args) != 4:
            raise ScpiError(-109, "period is d,h,m,s")
        d, h, m, s = (int(call.number(i, minimum=0, maximum=top)) for i, top in enumerate((99, 23, 59, 59)))
        total = d * 86400 + h * 3600 + m * 60 + s
        if total <= 0:
            raise ScpiError(-222, "period must be at least 1 s")
        self.ed.period_s = float(total)

    @scpi("[:SENSe]:MEASure:EALarm:PERiod?")
    def period_q(self, call: Call) -> str:
        return _dhms(self.ed.period_s)

    @scpi("[:SENSe]:MEASure:EALarm:MODE")
    def mode(self, call: Call) -> None:
        self.ed.mode = parse_choice(call.arg(0), ["SINGle", "REPeat", "UNTimed"])

    @scpi("[:SENSe]:MEASure:EALarm:MODE?")
    def mode_q(self, call: Call) -> str:
        return self.ed.mode

    @scpi("[:SENSe]:MEASure:EALarm:UNIT")
    def unit(self, call: Call) -> None:
        """Gating unit: only TIME (the period in d,h,m,s) is simulated."""
        if parse_choice(call.arg(0), ["TIME", "BLOCk", "CLOCk", "ERRor"]) != "TIME":
            raise ScpiError(-224, "only TIME gating is simulated")

    @scpi("[:SENSe]:MEASure:EALarm:UNIT?")
    def unit_q(self, call: Call) -> str:
        return "TIME"

    def _start(self, ed: EdLane) -> None:
        with self.bench.lock:
            now = self.sync().t
            ed.clear()
            ed.starts += 1
            ed.arrivals = ErrorArrivals(stable_seed(self.bench.seed, "bit errors", self.bench.dut.serial, "ED",
                                                    self.lanes.index(ed), ed.starts))
            ed.running = True
            ed.start_t = now
            ed.end_t = now + ed.period_s if ed.mode == "SING" else math.inf

    def _stop(self, ed: EdLane) -> None:
        with self.bench.lock:
            now = self.sync().t
            if ed.running:
                ed.end_t = min(ed.end_t, now)
                ed.running = False

    @scpi("[:SENSe]:MEASure:STARt")
    def start(self, call: Call) -> None:
        self._start(self.ed)

    @scpi("[:SENSe]:MEASure:STOP")
    def stop(self, call: Call) -> None:
        self._stop(self.ed)

    @scpi("[:SENSe]:MEASure:ALL:STARt")
    def start_all(self, call: Call) -> None:
        for ed in self.lanes:
            self._start(ed)

    @scpi("[:SENSe]:MEASure:ALL:STOP")
    def stop_all(self, call: Call) -> None:
        for ed in self.lanes:
            self._stop(ed)

    def _refresh(self) -> float:
        now = self.sync().t
        for ed in self.lanes:
            if ed.running and now >= ed.end_t:
                ed.running = False
        return now

    @scpi("[:SENSe]:MEASure:EALarm:STATe?")
    def state_q(self, call: Call) -> str:
        with self.bench.lock:
            self._refresh()
            return "1" if self.ed.running else "0"

    @scpi("[:SENSe]:MEASure:EALarm:ELAPsed?")
    def elapsed_q(self, call: Call) -> str:
        with self.bench.lock:
            now = self._refresh()
            ed = self.ed
            if ed.start_t == 0.0 and ed.bits == 0 and not ed.running and ed.psloss_s == 0:
                return "0,0,0,0"
            return _dhms(max(0.0, min(now, ed.end_t) - ed.start_t))

    # -- results ------------------------------------------------------------------------
    @scpi(":CALCulate:DATA:EALarm?")
    def results(self, call: Call) -> str:
        """A result as a quoted string, ``"0"``, ``"1.2000E-09"`` (Anritsu's string response data;
        clients strip the quotes: PTCS ``AnritsuMP2100A.py`` takes ``reply[1:-1]``)."""
        item = parse_string(call.arg(0)).upper().replace(" ", "")
        reader = result_reader(item)
        if reader is None:
            raise ScpiError(-224, f"unknown result item {item!r}")
        with self.bench.lock:
            self._refresh()
            return f'"{reader(self.ed)}"'  # <STRING RESPONSE DATA>: the result in quotes

    @scpi(":CALCulate:DATA:EYE?")
    def eye(self, call: Call) -> str:
        item = parse_choice(parse_string(call.arg(0)), ["HEIGht", "WIDTh"])
        with self.bench.lock:
            b = self.sync()
            board = b.board
            q = board.lane_qs(b.t)[self.module - 1] if board.link_trained(b.t) else 0.0
            q *= 1.0 + b.noise(0.01)
            return nr3(eye_height_mv(q) if item == "HEIG" else eye_width_ui(q))

    # -- input settings (accepted and remembered) ----------------------------------------------
    @scpi(":INPut:DATA:THReshold")
    def thr(self, call: Call) -> None:
        value = call.number(len(call.args) - 1, minimum=-3.5, maximum=3.3)
        with self.bench.lock:
            self.sync()
            self.ed.threshold = value

    @scpi(":INPut:DATA:THReshold?")
    def thr_q(self, call: Call) -> str:
        return nr3(self.ed.threshold)

    @scpi(":INPut:CLOCk:SELection")
    def clksel(self, call: Call) -> None:
        self.ed.clock_sel = parse_choice(call.arg(0), ["EXTernal", "RECovered"])

    @scpi(":INPut:CLOCk:SELection?")
    def clksel_q(self, call: Call) -> str:
        return self.ed.clock_sel

    @scpi(":INPut:CLOCk:DELay")
    def clkdelay(self, call: Call) -> None:
        """``:INP:CLOC:DEL <mUI>[,UI]``: the ED's sampling phase, −1000..1000 mUI."""
        if len(call.args) > 1 and call.arg(1).upper() != "UI":
            raise ScpiError(-224, "clock delay unit must be UI (the value in mUI)")
        value = call.number(0, minimum=-1000, maximum=1000)
        with self.bench.lock:
            self.sync()
            self.ed.clock_delay_mui = value

    @scpi(":INPut:CLOCk:DELay?")
    def clkdelay_q(self, call: Call) -> str:
        return f"{self.ed.clock_delay_mui:.0f}"


#: what the ED answers for a result it has no data for (no bit compared yet): dashes, not SCPI's
#: 9.91E37 (clients of the real MP1800A/MP1900A test for "---" or replace "-------")
NO_DATA = "-------"


def _ber(ed: EdLane) -> str:
    return f"{ed.errors / ed.bits:.4E}" if ed.bits > 0 else NO_DATA


def _seconds(value: float) -> str:
    return str(math.ceil(value - 1e-9))


# result item -> reply; each node of an item may be in its long or its short form
RESULTS: dict[tuple[str, ...], Callable[[EdLane], str]] = {
    ("CURRent", "EC", "TOTal"): lambda ed: str(ed.errors),
    ("CURRent", "CC", "TOTal"): lambda ed: str(round(ed.bits)),  # a count: no float residue
    ("CURRent", "ER", "TOTal"): _ber,
    ("CURRent", "AINTerval", "PSLoss"): lambda ed: _seconds(ed.psloss_s),
    ("CURRent", "AINTerval", "CLOSs"): lambda ed: _seconds(ed.closs_s),
}


def result_reader(item: str) -> Callable[[EdLane], str] | None:
    """The reader of a result item such as ``CURRent:EC:TOTal``, ``CURR:EC:TOT`` or
    ``CURR:EC:TOTAL`` (nodes in either form, mixed), or None."""
    words = item.strip(":").split(":")
    for nodes, reader in RESULTS.items():
        if len(nodes) == len(words) and all(mnemonic_matches(w, n) for w, n in zip(words, nodes, strict=True)):
            return reader
    return None
