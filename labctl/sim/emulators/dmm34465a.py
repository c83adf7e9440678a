"""Keysight 34465A 6.5-digit DMM, across VDD_CORE at the die sense point.

Answers the connect/snapshot queries of QCoDeS' and pymeasure's drivers: per-function
RANGe[:AUTO], RESolution, NPLC, ZERO:AUTO, APERture[:ENABled]; TRIGger/SAMPle settings;
DISPlay; SYSTem:LFRequency?; SYST:LIC:CAT?; *OPT?.
"""

from __future__ import annotations

from dataclasses import dataclass

from labctl.sim.emulators import emulator
from labctl.sim.emulators.base import BenchInstrument, nr1s
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
NPLCS = [0.001, 0.002, 0.006, 0.02, 0.06, 0.2, 1.0, 10.0, 100.0]


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

    @property
    def resolution(self) -> float:
        return self.range * 3e-6 * (10.0 / max(self.nplc, 0.001)) ** 0.5


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


@emulator("keysight-34465a")
class K34465A(BenchInstrument):
    vendor = "Keysight Technologies"
    model = "34465A"
    firmware = "A.03.01-03.15-03.01-00.52-03-02"
    default_serial = "MY59008389"
    options = "0,0,DIG,MEM,0"

    def reset(self) -> None:
        self.function = "VOLT"
        self.settings = {k: FuncSettings(range=RANGES[k][2] if k.startswith("VOLT") else RANGES[k][-3]) for k in FUNCS}
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
            return [self._read_one(key) for _ in range(min(n, 10000))]

    @staticmethod
    def _fmt(values: list[float]) -> str:
        return ",".join(nr3(v) for v in values)

    # -- MEASure / CONFigure / READ / INIT / FETCh --------------------------------------------
    def _configure(self, key: str, call: Call) -> None:
        st = self.settings[key]
        if call.has(0):
            word = call.arg(0).upper()
            if word in ("AUTO", "DEF", "DEFAULT"):
                st.auto = True
            else:
                st.range = _pick_range(key, call.number(0, minimum=0.0, maximum=RANGES[key][-1], default=RANGES[key][2]))
                st.auto = False
        self.function = key
        self.readings = []
        self.sample_count = 1
        self.trigger_count = 1.0
        self.trigger_source = "IMM"

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
        st.range = _pick_range(key, call.number(0, minimum=0.0, maximum=RANGES[key][-1], default=RANGES[key][2]))
        st.auto = False

    @scpi(*each(":RANGe", True))
    def range_q(self, call: Call) -> str:
        return nr3(self.settings[_func_key(call)].range)

    @scpi(*each(":RANGe:AUTO"))
    def auto_set(self, call: Call) -> None:
        st = self.settings[_func_key(call)]
        st.auto = True if call.arg(0).upper() == "ONCE" else call.boolean(0)

    @scpi(*each(":RANGe:AUTO", True))
    def auto_q(self, call: Call) -> str:
        return str(int(self.settings[_func_key(call)].auto))

    @scpi(*each(":RESolution"))
    def res_set(self, call: Call) -> None:
        call.number(0, minimum=0.0, maximum=1e9, default=0.0)

    @scpi(*each(":RESolution", True))
    def res_q(self, call: Call) -> str:
        return nr3(self.settings[_func_key(call)].resolution)

    @scpi(*each(":NPLCycles"))
    def nplc_set(self, call: Call) -> None:
        value = call.number(0, minimum=NPLCS[0], maximum=NPLCS[-1], default=10.0)
        st = self.settings[_func_key(call)]
        st.nplc = min(NPLCS, key=lambda n: abs(n - value))
        st.aperture_enabled = False  # integration time in PLC again

    @scpi(*each(":NPLCycles", True))
    def nplc_q(self, call: Call) -> str:
        return nr3(self.settings[_func_key(call)].nplc)

    @scpi(*each(":ZERO:AUTO"))
    def zero_set(self, call: Call) -> None:
        self.settings[_func_key(call)].autozero = True if call.arg(0).upper() == "ONCE" else call.boolean(0)

    @scpi(*each(":ZERO:AUTO", True))
    def zero_q(self, call: Call) -> str:
        return str(int(self.settings[_func_key(call)].autozero))

    @scpi(*each(":APERture"))
    def ap_set(self, call: Call) -> None:
        st = self.settings[_func_key(call)]
        st.aperture = call.number(0, minimum=2e-5, maximum=2.0, default=0.2)
        st.aperture_enabled = True

    @scpi(*each(":APERture", True))
    def ap_q(self, call: Call) -> str:
        return nr3(self.settings[_func_key(call)].aperture)

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
        self.trigger_count = call.number(0, minimum=1, maximum=1e6, default=1)

    @scpi("TRIGger:COUNt?")
    def trig_count_q(self, call: Call) -> str:
        return nr3(self.trigger_count)

    @scpi("TRIGger:DELay")
    def trig_delay(self, call: Call) -> None:
        self.trigger_delay = call.number(0, minimum=0.0, maximum=3600.0, default=0.0)
        self.trigger_auto_delay = False

    @scpi("TRIGger:DELay?")
    def trig_delay_q(self, call: Call) -> str:
        if call.has(0):
            return nr3(call.number(0, minimum=0.0, maximum=3600.0, default=0.0))
        return nr3(self.trigger_delay)

    @scpi("TRIGger:DELay:AUTO")
    def trig_auto(self, call: Call) -> None:
        self.trigger_auto_delay = call.boolean(0)

    @scpi("TRIGger:DELay:AUTO?")
    def trig_auto_q(self, call: Call) -> str:
        return str(int(self.trigger_auto_delay))

    @scpi("TRIGger:LEVel")
    def trig_level(self, call: Call) -> None:
        self.trigger_level = call.number(0, minimum=-1000.0, maximum=1000.0, default=0.0)

    @scpi("TRIGger:LEVel?")
    def trig_level_q(self, call: Call) -> str:
        return nr3(self.trigger_level)

    @scpi("TRIGger:SLOPe")
    def trig_slope(self, call: Call) -> None:
        self.trigger_slope = parse_choice(call.arg(0), ["POSitive", "NEGative"])

    @scpi("TRIGger:SLOPe?")
    def trig_slope_q(self, call: Call) -> str:
        return self.trigger_slope

    @scpi("SAMPle:COUNt")
    def samp_count(self, call: Call) -> None:
        self.sample_count = int(call.number(0, minimum=1, maximum=1e6, default=1))

    @scpi("SAMPle:COUNt?")
    def samp_count_q(self, call: Call) -> str:
        return nr1s(self.sample_count)

    @scpi("SAMPle:COUNt:PRETrigger")
    def pretrig(self, call: Call) -> None:
        self.pretrigger = int(call.number(0, minimum=0, maximum=2e6, default=0))

    @scpi("SAMPle:COUNt:PRETrigger?")
    def pretrig_q(self, call: Call) -> str:
        return nr1s(self.pretrigger)

    @scpi("SAMPle:SOURce")
    def samp_src(self, call: Call) -> None:
        self.sample_source = parse_choice(call.arg(0), ["IMMediate", "TIMer"])

    @scpi("SAMPle:SOURce?")
    def samp_src_q(self, call: Call) -> str:
        return self.sample_source

    @scpi("SAMPle:TIMer")
    def samp_timer(self, call: Call) -> None:
        self.sample_timer = call.number(0, minimum=1e-4, maximum=3600.0, default=1.0)

    @scpi("SAMPle:TIMer?")
    def samp_timer_q(self, call: Call) -> str:
        if call.has(0):
            return nr3(call.number(0, minimum=1e-4, maximum=3600.0, default=1.0))
        return nr3(self.sample_timer)

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
    """The 34461A answers the same command set here (no DIG/MEM options)."""

    model = "34461A"
    firmware = "A.02.14-02.40-02.14-00.49-02-01"
    default_serial = "MY53220001"
    options = "0,0"
