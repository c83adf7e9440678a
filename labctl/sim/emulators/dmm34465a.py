"""Keysight 34465A 6.5-digit DMM, across VDD_CORE at the die sense point.

Answers the connect/snapshot queries of QCoDeS' and pymeasure's drivers: per-function
RANGe[:AUTO], RESolution, NPLC, ZERO:AUTO, APERture[:ENABled]; TRIGger/SAMPle settings;
DISPlay; SYSTem:LFRequency?; SYST:LIC:CAT?; *OPT?. A setting's query with ``MIN|MAX|DEF``
answers that limit, not the setting; CALCulate:AVERage keeps the statistics of the readings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from labctl.sim.emulators import emulator
from labctl.sim.emulators.base import BenchInstrument, nr1s
from labctl.sim.emulators.daq970a import ChanStats
from labctl.sim.scpi import Call, ScpiError, scpi
from labctl.sim.scpi.values import NAN, OVERLOAD, nr3, parse_choice, parse_string

FUNCS = {  # key -> header pattern (the optional [:DC] marks the DC function)
    "VOLT": "VOLTage[:DC]",
    "VOLT:AC": "VOLTage:AC",
    "CURR": "CURRent[:DC]",
    "CURR:AC": "CURRent:AC",
    "RES": "RESistance",
    "FRES": "FRESistance",
}
RANGES = {
    "VOLT": [0.1, 1.0, 10.0, 100.0, 1000.0],
    "VOLT:AC": [0.1, 1.0, 10.0, 100.0, 750.0],
    "CURR": [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 3.0, 10.0],
    "CURR:AC": [1e-4, 1e-3, 1e-2, 0.1, 1.0, 3.0, 10.0],
    "RES": [100.0, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9],
    "FRES": [100.0, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9],
}
UNITS = {"VOLT": "VDC", "VOLT:AC": "VAC", "CURR": "ADC", "CURR:AC": "AAC", "RES": "OHM", "FRES": "OHM"}
#: the range of each function after *RST, and what ``RANGe DEF`` selects
DEFAULT_RANGE = {k: r[2] if k.startswith("VOLT") else r[-3] for k, r in RANGES.items()}
NPLCS = [0.001, 0.002, 0.006, 0.02, 0.06, 0.2, 1.0, 10.0, 100.0]
DEFAULT_NPLC = 10.0
#: resolution as a fraction of the range at each NPLC (34465A with DIG: 30 ppm at 0.001 PLC to
#: 0.03 ppm at 100 PLC, its data sheet's table, which QCoDeS also uses)
RES_34465A = dict(zip(NPLCS, [30e-6, 15e-6, 6e-6, 3e-6, 1.5e-6, 0.7e-6, 0.3e-6, 0.1e-6, 0.03e-6], strict=True))
RES_34461A = {0.02: 100e-6, 0.2: 10e-6, 1.0: 3e-6, 10.0: 1e-6, 100.0: 0.3e-6}
#: what each setting accepts: (MIN, MAX, DEF), answered by its query with that word
TRIG_COUNT = (1.0, 1e6, 1.0)
TRIG_DELAY = (0.0, 3600.0, 0.0)
TRIG_LEVEL = (-1000.0, 1000.0, 0.0)
SAMP_COUNT = (1, 1_000_000, 1)
PRETRIGGER = (0, 2_000_000, 0)
SAMP_TIMER = (1e-4, 3600.0, 1.0)
APERTURE = (2e-5, 2.0, 0.2)


def each(suffix: str, query: bool = False) -> tuple[str, ...]:
    return tuple(f"[SENSe:]{p}{suffix}{'?' if query else ''}" for p in FUNCS.values())


@dataclass
class FuncSettings:
    range: float
    auto: bool = True
    nplc: float = 10.0
    autozero: bool = True
    aperture: float = 0.2
    aperture_enabled: bool = False
    #: NPLC -> resolution as a fraction of the range (the model's table)
    factors: dict[float, float] = field(default_factory=lambda: RES_34465A)

    @property
    def resolution(self) -> float:
        return self.resolution_at(self.nplc)

    def resolution_at(self, nplc: float) -> float:
        return self.range * self.factors[min(self.factors, key=lambda n: abs(n - nplc))]

    def nplc_for(self, resolution: float) -> float:
        """The shortest integration whose resolution is at least as fine as ``resolution``
        (the finest there is when none is)."""
        meeting = [n for n, f in self.factors.items() if self.range * f <= resolution * 1.0001]
        return min(meeting) if meeting else max(self.factors)


@dataclass
class ReadingStats(ChanStats):
    """CALCulate:AVERage: the DAQ970A's per-channel statistics (count, sum, min, max) with a
    running variance (Welford) for the standard deviation."""

    mean: float = 0.0
    m2: float = 0.0

    def add(self, value: float, at: float = 0.0) -> None:
        super().add(value, at)
        delta = value - self.mean
        self.mean += delta / self.count
        self.m2 += delta * (value - self.mean)

    @property
    def average(self) -> float:
        return self.total / self.count if self.count else 0.0

    @property
    def sdev(self) -> float:
        """The sample standard deviation (n - 1); 0 below two readings."""
        return (max(self.m2, 0.0) / (self.count - 1)) ** 0.5 if self.count > 1 else 0.0


def limit(call: Call, minimum: float, maximum: float, default: float) -> float | None:
    """A setting's query parameter: None without one (the query answers the setting), else
    the limit ``MIN|MAX|DEF`` names; any other word or a number is -224."""
    if not call.has(0):
        return None
    word = call.choice(["MINimum", "MAXimum", "DEFault"])
    return {"MIN": minimum, "MAX": maximum, "DEF": default}[word]


def _func_key(call: Call) -> str:
    names = [n.name for n in call.path or call.unit.nodes]
    for i, n in enumerate(names):
        base = {"VOLT": "VOLT", "VOLTAGE": "VOLT", "CURR": "CURR", "CURRENT": "CURR",
                "RES": "RES", "RESISTANCE": "RES", "FRES": "FRES", "FRESISTANCE": "FRES"}.get(n)
        if base:
            ac = i + 1 < len(names) and names[i + 1] == "AC"
            return f"{base}:AC" if ac else base
    raise ScpiError(-113)


def _pick_range(key: str, value: float) -> float:
    for r in RANGES[key]:
        if r >= value * 0.999:
            return r
    raise ScpiError(-222, f"range {value:g} too large")


def _fit_range(key: str, value: float) -> float:
    """The lowest range that holds ``value`` (the top one for an overload or open input)."""
    return next((r for r in RANGES[key] if r >= abs(value) * 0.999), RANGES[key][-1])


@emulator("keysight-34465a")
class K34465A(BenchInstrument):
    vendor = "Keysight Technologies"
    model = "34465A"
    firmware = "A.03.01-03.15-03.01-00.52-03-02"
    default_serial = "MY59008389"
    options = "0,0,DIG,MEM,0"
    res_factors = RES_34465A  # NPLC -> resolution as a fraction of the range

    def reset(self) -> None:
        self.function = "VOLT"
        self.settings = {k: FuncSettings(range=DEFAULT_RANGE[k], factors=self.res_factors) for k in FUNCS}
        self.trigger_source = "IMM"
        self.trigger_count = 1.0
        self.trigger_delay = 0.0
        self.trigger_auto_delay = True
        self.trigger_level = 0.0
        self.trigger_slope = "NEG"
        self.sample_count = 1
        self.pretrigger = 0
        self.sample_source = "IMM"
        self.sample_timer = 1.0
        self.display_on = True
        self.display_text = ""
        self.readings: list[float] = []
        self.armed = False
        self.stats_on = False
        self.stats = ReadingStats()
        self.signal = str(self.options_cfg.get("signal", "VDD_CORE")).upper() if hasattr(self, "options_cfg") else "VDD_CORE"

    # -- what the probes see --------------------------------------------------------------
    def _read_one(self, key: str) -> float:
        b = self.bench
        rail = b.board.rails.get(self.signal)
        st = self.settings[key]
        if key == "VOLT":
            v = rail.voltage if rail else 0.0
            if st.nplc < 1:
                v += b.ripple_sample(self.signal) * 0.5
            value = v + b.noise(2e-6 + st.resolution)
        elif key == "VOLT:AC":
            value = (b.ripple_rms(self.signal) if rail else 0.0) + abs(b.noise(2e-5))
        elif key in ("CURR", "CURR:AC"):
            value = abs(b.noise(2e-7)) if key == "CURR:AC" else b.noise(2e-7)
        else:
            return OVERLOAD  # open circuit
        if not st.auto and abs(value) > st.range * 1.2:
            return OVERLOAD
        return value

    def _take(self, key: str | None = None) -> list[float]:
        key = key or self.function
        n = max(1, int(self.sample_count)) * max(1, int(min(self.trigger_count, 1e6)))
        with self.bench.lock:
            self.sync()
            values = [self._read_one(key) for _ in range(min(n, 10000))]
        if self.stats_on:
            for v in values:
                self.stats.add(v)
        return values

    @staticmethod
    def _fmt(values: list[float]) -> str:
        return ",".join(nr3(v) for v in values)

    # -- MEASure / CONFigure / READ / INIT / FETCh --------------------------------------------
    def _configure(self, key: str, call: Call) -> None:
        """``CONFigure`` (and ``MEASure?``): every measurement and trigger setting to its default,
        then the range and resolution given: a range left out (or ``AUTO``/``DEF``) is
        autorange, a resolution left out the default integration time; autozero on, the
        trigger immediate, once, with its automatic delay (as the manual says; nothing kept
        from earlier commands)."""
        st = self.settings[key]
        st.auto = True
        if call.has(0) and call.arg(0).upper() not in ("AUTO", "DEF", "DEFAULT"):
            st.range = _pick_range(key, call.number(0, minimum=0.0, maximum=RANGES[key][-1], default=RANGES[key][2]))
            st.auto = False
        # the resolution selects the integration time
        st.nplc = self._nplc_for(st, call, 1) if call.has(1) else DEFAULT_NPLC
        st.aperture_enabled = False
        st.autozero = True
        self.function = key
        self.readings = []
        self.sample_count = 1
        self.trigger_count = 1.0
        self.trigger_source = "IMM"
        self.trigger_auto_delay = True

    @scpi(*(f"MEASure:{p}?" for p in FUNCS.values()))
    def meas(self, call: Call) -> str:
        key = _func_key(call)
        self._configure(key, call)
        self.readings = self._take(key)
        return self._fmt(self.readings)

    @scpi(*(f"CONFigure:{p}" for p in FUNCS.values()))
    def conf(self, call: Call) -> None:
        self._configure(_func_key(call), call)

    @scpi("CONFigure?")
    def conf_q(self, call: Call) -> str:
        st = self.settings[self.function]
        return f'"{self.function} {nr3(st.range)},{nr3(st.resolution)}"'

    @scpi("READ?")
    def read(self, call: Call) -> str:
        """INITiate and FETCh?: the reading memory holds this READ?'s readings (the earlier
        ones are cleared), as after MEASure? (they kept the readings of an earlier INIT)."""
        self.armed = False
        self.readings = self._take()
        return self._fmt(self.readings)

    @scpi("INITiate[:IMMediate]")
    def init(self, call: Call) -> None:
        if self.trigger_source == "BUS":
            self.armed = True
            self.readings = []
        else:
            self.readings = self._take()

    def trigger(self) -> None:
        if self.armed:
            self.readings = self._take()
            self.armed = False

    @scpi("FETCh?")
    def fetch(self, call: Call) -> str:
        if not self.readings:
            raise ScpiError(-230 if not self.armed else -420, "no readings")
        return self._fmt(self.readings)

    @scpi("ABORt")
    def abort(self, call: Call) -> None:
        self.armed = False

    @scpi("DATA:POINts?")
    def points(self, call: Call) -> str:
        return nr1s(len(self.readings))

    @scpi("DATA:REMove?")
    def data_remove(self, call: Call) -> str:
        """``DATA:REMove? <num_readings>[,WAIT]``: the oldest ``num_readings``, erased; the count
        is required, and fewer in memory is an error (unlike ``R?``; all readings are taken by
        the time a query is read here, so WAIT changes nothing)."""
        n = int(call.number(0, minimum=1, maximum=2_000_000))
        if call.has(1):
            call.choice(["WAIT"], 1)
        if n > len(self.readings):
            raise ScpiError(-222, f"{len(self.readings)} readings in memory, {n} asked")
        out, self.readings = self.readings[:n], self.readings[n:]
        return self._fmt(out)

    @scpi("DATA:LAST?")
    def data_last(self, call: Call) -> str:
        """The last reading with its unit, ``+1.73730000E+00 VDC``; 9.91E37 (with the unit)
        when memory is empty."""
        value = self.readings[-1] if self.readings else NAN
        return f"{nr3(value)} {UNITS[self.function]}"

    @scpi("R?")
    def read_remove(self, call: Call) -> str:
        """Up to N of the oldest readings, erased, as a definite-length block: ``#247…``
        (``#``, the count of length digits, the length, the comma-separated readings);
        fewer than asked is no error, an empty memory is ``#10``."""
        n = int(call.number(0, minimum=1, maximum=2_000_000)) if call.has(0) else len(self.readings)
        out, self.readings = self.readings[:n], self.readings[n:]
        body = self._fmt(out)
        return f"#{len(str(len(body)))}{len(body)}{body}"

    # -- FUNCtion -----------------------------------------------------------------------
    @scpi("[SENSe:]FUNCtion[:ON]")
    def func(self, call: Call) -> None:
        text = parse_string(call.arg(0)).upper().replace(":DC", "")
        key = {"VOLTAGE": "VOLT", "CURRENT": "CURR", "RESISTANCE": "RES", "FRESISTANCE": "FRES",
               "VOLTAGE:AC": "VOLT:AC", "CURRENT:AC": "CURR:AC"}.get(text, text)
        if key not in FUNCS:
            raise ScpiError(-224, f"function {text!r} not supported")
        self.function = key

    @scpi("[SENSe:]FUNCtion[:ON]?")
    def func_q(self, call: Call) -> str:
        return f'"{self.function}"'

    # -- per-function settings ----------------------------------------------------------
    @scpi(*each(":RANGe"))
    def range_set(self, call: Call) -> None:
        key = _func_key(call)
        st = self.settings[key]
        st.range = _pick_range(key, call.number(0, minimum=0.0, maximum=RANGES[key][-1], default=DEFAULT_RANGE[key]))
        st.auto = False

    @scpi(*each(":RANGe", True))
    def range_q(self, call: Call) -> str:
        key = _func_key(call)
        value = limit(call, RANGES[key][0], RANGES[key][-1], DEFAULT_RANGE[key])
        return nr3(self.settings[key].range if value is None else value)

    @scpi(*each(":RANGe:AUTO"))
    def auto_set(self, call: Call) -> None:
        """``ON|OFF|1|0``, or ``ONCE``: the range that fits the present signal, then autorange off."""
        key = _func_key(call)
        st = self.settings[key]
        if call.arg(0).upper() != "ONCE":
            st.auto = call.boolean(0)
            return
        with self.bench.lock:
            self.sync()
            st.auto = True  # an autoranged reading does not overload
            value = self._read_one(key)
        st.range = _fit_range(key, value)
        st.auto = False

    @scpi(*each(":RANGe:AUTO", True))
    def auto_q(self, call: Call) -> str:
        return str(int(self.settings[_func_key(call)].auto))

    @staticmethod
    def _nplc_for(st: FuncSettings, call: Call, i: int) -> float:
        """The integration time a resolution parameter asks for: ``MIN`` the finest resolution
        (the longest), ``MAX`` the coarsest, ``DEF`` the default; a value the shortest that
        resolves at least that finely on the present range."""
        word = call.arg(i).upper()
        if word in ("MIN", "MINIMUM"):
            return max(st.factors)
        if word in ("MAX", "MAXIMUM"):
            return min(st.factors)
        if word in ("DEF", "DEFAULT"):
            return DEFAULT_NPLC
        return st.nplc_for(call.number(i, minimum=0.0, maximum=1e9))

    @scpi(*each(":RESolution"))
    def res_set(self, call: Call) -> None:
        """Selects the integration time that gives the resolution (the NPLC follows)."""
        st = self.settings[_func_key(call)]
        st.nplc = self._nplc_for(st, call, 0)
        st.aperture_enabled = False

    @scpi(*each(":RESolution", True))
    def res_q(self, call: Call) -> str:
        """The resolution; with ``MIN|MAX|DEF`` the one at the largest|smallest|default NPLC
        on the present range."""
        st = self.settings[_func_key(call)]
        nplc = limit(call, max(st.factors), min(st.factors), DEFAULT_NPLC)
        return nr3(st.resolution if nplc is None else st.resolution_at(nplc))

    @scpi(*each(":NPLCycles"))
    def nplc_set(self, call: Call) -> None:
        st = self.settings[_func_key(call)]
        value = call.number(0, minimum=min(st.factors), maximum=max(st.factors), default=DEFAULT_NPLC)
        st.nplc = min(st.factors, key=lambda n: abs(n - value))
        st.aperture_enabled = False  # integration time in PLC again

    @scpi(*each(":NPLCycles", True))
    def nplc_q(self, call: Call) -> str:
        st = self.settings[_func_key(call)]
        value = limit(call, min(st.factors), max(st.factors), DEFAULT_NPLC)
        return nr3(st.nplc if value is None else value)

    @scpi(*each(":ZERO:AUTO"))
    def zero_set(self, call: Call) -> None:
        """``ON|OFF|1|0``, or ``ONCE``: one zero measurement now, then autozero off."""
        self.settings[_func_key(call)].autozero = False if call.arg(0).strip().upper() == "ONCE" else call.boolean(0)

    @scpi(*each(":ZERO:AUTO", True))
    def zero_q(self, call: Call) -> str:
        return str(int(self.settings[_func_key(call)].autozero))

    @scpi(*each(":APERture"))
    def ap_set(self, call: Call) -> None:
        st = self.settings[_func_key(call)]
        st.aperture = call.number(0, minimum=APERTURE[0], maximum=APERTURE[1], default=APERTURE[2])
        st.aperture_enabled = True

    @scpi(*each(":APERture", True))
    def ap_q(self, call: Call) -> str:
        value = limit(call, *APERTURE)
        return nr3(self.settings[_func_key(call)].aperture if value is None else value)

    @scpi(*each(":APERture:ENABled"))
    def ape_set(self, call: Call) -> None:
        self.settings[_func_key(call)].aperture_enabled = call.boolean(0)

    @scpi(*each(":APERture:ENABled", True))
    def ape_q(self, call: Call) -> str:
        return str(int(self.settings[_func_key(call)].aperture_enabled))

    # -- trigger and sample -------------------------------------------------------------
    @scpi("TRIGger:SOURce")
    def trig_src(self, call: Call) -> None:
        self.trigger_source = parse_choice(call.arg(0), ["IMMediate", "EXTernal", "BUS", "INTernal"])

    @scpi("TRIGger:SOURce?")
    def trig_src_q(self, call: Call) -> str:
        return self.trigger_source

    @scpi("TRIGger:COUNt")
    def trig_count(self, call: Call) -> None:
        self.trigger_count = call.number(0, minimum=TRIG_COUNT[0], maximum=TRIG_COUNT[1], default=TRIG_COUNT[2])

    @scpi("TRIGger:COUNt?")
    def trig_count_q(self, call: Call) -> str:
        value = limit(call, *TRIG_COUNT)
        return nr3(self.trigger_count if value is None else value)

    @scpi("TRIGger:DELay")
    def trig_delay(self, call: Call) -> None:
        self.trigger_delay = call.number(0, minimum=TRIG_DELAY[0], maximum=TRIG_DELAY[1], default=TRIG_DELAY[2])
        self.trigger_auto_delay = False

    @scpi("TRIGger:DELay?")
    def trig_delay_q(self, call: Call) -> str:
        value = limit(call, *TRIG_DELAY)
        return nr3(self.trigger_delay if value is None else value)

    @scpi("TRIGger:DELay:AUTO")
    def trig_auto(self, call: Call) -> None:
        self.trigger_auto_delay = call.boolean(0)

    @scpi("TRIGger:DELay:AUTO?")
    def trig_auto_q(self, call: Call) -> str:
        return str(int(self.trigger_auto_delay))

    @scpi("TRIGger:LEVel")
    def trig_level(self, call: Call) -> None:
        self.trigger_level = call.number(0, minimum=TRIG_LEVEL[0], maximum=TRIG_LEVEL[1], default=TRIG_LEVEL[2])

    @scpi("TRIGger:LEVel?")
    def trig_level_q(self, call: Call) -> str:
        value = limit(call, *TRIG_LEVEL)
        return nr3(self.trigger_level if value is None else value)

    @scpi("TRIGger:SLOPe")
    def trig_slope(self, call: Call) -> None:
        self.trigger_slope = parse_choice(call.arg(0), ["POSitive", "NEGative"])

    @scpi("TRIGger:SLOPe?")
    def trig_slope_q(self, call: Call) -> str:
        return self.trigger_slope

    @scpi("SAMPle:COUNt")
    def samp_count(self, call: Call) -> None:
        self.sample_count = int(call.number(0, minimum=SAMP_COUNT[0], maximum=SAMP_COUNT[1], default=SAMP_COUNT[2]))

    @scpi("SAMPle:COUNt?")
    def samp_count_q(self, call: Call) -> str:
        value = limit(call, *SAMP_COUNT)
        return nr1s(int(self.sample_count if value is None else value))

    @scpi("SAMPle:COUNt:PRETrigger")
    def pretrig(self, call: Call) -> None:
        self.pretrigger = int(call.number(0, minimum=PRETRIGGER[0], maximum=PRETRIGGER[1], default=PRETRIGGER[2]))

    @scpi("SAMPle:COUNt:PRETrigger?")
    def pretrig_q(self, call: Call) -> str:
        value = limit(call, *PRETRIGGER)
        return nr1s(int(self.pretrigger if value is None else value))

    @scpi("SAMPle:SOURce")
    def samp_src(self, call: Call) -> None:
        self.sample_source = parse_choice(call.arg(0), ["IMMediate", "TIMer"])

    @scpi("SAMPle:SOURce?")
    def samp_src_q(self, call: Call) -> str:
        return self.sample_source

    @scpi("SAMPle:TIMer")
    def samp_timer(self, call: Call) -> None:
        self.sample_timer = call.number(0, minimum=SAMP_TIMER[0], maximum=SAMP_TIMER[1], default=SAMP_TIMER[2])

    @scpi("SAMPle:TIMer?")
    def samp_timer_q(self, call: Call) -> str:
        value = limit(call, *SAMP_TIMER)
        return nr3(self.sample_timer if value is None else value)

    # -- CALCulate:AVERage statistics -------------------------------------------------------
    @scpi("CALCulate:AVERage[:STATe]")
    def stat_state(self, call: Call) -> None:
        """Statistics of every reading taken while ON (READ?, INIT, MEASure?); ON clears them."""
        on = call.boolean(0)
        if on:
            self.stats = ReadingStats()
        self.stats_on = on

    @scpi("CALCulate:AVERage[:STATe]?")
    def stat_state_q(self, call: Call) -> str:
        return str(int(self.stats_on))

    @scpi(*(f"CALCulate:AVERage:{name}?" for name in ("AVERage", "MINimum", "MAXimum", "PTPeak", "SDEViation", "COUNt")))
    def stat_q(self, call: Call) -> str:
        """The statistic the header's last node names (AVER, MIN, MAX, PTP, SDEV, COUN)."""
        s = self.stats
        return nr3({"AVE": s.average, "MIN": s.low, "MAX": s.high, "PTP": s.high - s.low,
                    "SDE": s.sdev, "COU": s.count}[call.unit.nodes[-1].name[:3]])

    @scpi("CALCulate:AVERage:CLEar")
    def stat_clear(self, call: Call) -> None:
        self.stats = ReadingStats()

    # -- system and display -------------------------------------------------------------
    @scpi("SYSTem:LFRequency?")
    def lfreq(self, call: Call) -> str:
        return "+50"

    @scpi("SYSTem:LICense:CATalog?")
    def licenses(self, call: Call) -> str:
        return '"DIG","MEM"'

    @scpi("DISPlay[:WINDow][:STATe]")
    def disp(self, call: Call) -> None:
        self.display_on = call.boolean(0)

    @scpi("DISPlay[:WINDow][:STATe]?")
    def disp_q(self, call: Call) -> str:
        return str(int(self.display_on))

    @scpi("DISPlay[:WINDow]:TEXT[:DATA]")
    def disp_text(self, call: Call) -> None:
        self.display_text = parse_string(call.arg(0))

    @scpi("DISPlay[:WINDow]:TEXT[:DATA]?")
    def disp_text_q(self, call: Call) -> str:
        return f'"{self.display_text}"'

    @scpi("DISPlay[:WINDow]:TEXT:CLEar")
    def disp_clear(self, call: Call) -> None:
        self.display_text = ""


@emulator("keysight-34461a")
class K34461A(K34465A):
    """The 34461A answers the same command set here (no DIG/MEM options; NPLC 0.02 to 100, with
    its own resolutions: 100 ppm of the range at 0.02 PLC to 0.3 ppm at 100)."""

    model = "34461A"
    res_factors = RES_34461A
    firmware = "A.02.14-02.40-02.14-00.49-02-01"
    default_serial = "MY53220001"
    options = "0,0"
