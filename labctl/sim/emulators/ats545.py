"""inTEST ThermoStream ATS-545 thermal forcing system on a serial line (ATS mnemonics).

Queries answer one line; settings answer nothing. An unknown mnemonic or a bad number sets
``*ESR?`` bit 32 (CME); an out-of-range value sets bit 16 (EXE) and is ignored. Ranges, register
bits and replies follow PyMeasure's Temptronic driver (``pymeasure/instruments/temptronic/``,
written from the ATS Interface & Applications Manuals: ATS-545 Rev B, ATS-5x5 Rev E).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from labctl.sim.emulators import emulator
from labctl.sim.emulators.base import LineInstrument

# name -> (attribute on ChamberAir or self, minimum, maximum, reply format)
SETTINGS: dict[str, tuple[str, float, float, str]] = {
    "SETP": ("setpoint", -99.9, 225.0, "{:.1f}"),
    "RAMP": ("ramp", 0.0, 9999.0, "{:.1f}"),  # K/min; 0 holds the dynamic setpoint where it is
    "WNDW": ("window", 0.1, 9.9, "{:.1f}"),
    "SOAK": ("soak", 0.0, 9999.0, "{:.0f}"),
    "ULIM": ("upper_limit", 25.0, 225.0, "{:.1f}"),  # the air limits: SETP must lie between them
    "LLIM": ("lower_limit", -80.0, 25.0, "{:.1f}"),  # ATS-545: -80..25 (-99..25 on the ATS-5x5)
    "HEAD": ("head_down", 0, 1, "{:d}"),
    "FLOW": ("flow", 0, 1, "{:d}"),
    "COOL": ("compressor", 0, 1, "{:d}"),
    "SETN": ("self.setn", 0, 17, "{:d}"),
    "DUTM": ("self.dut_mode", 0, 1, "{:d}"),
    "DSNS": ("self.dut_sensor", 0, 2, "{:d}"),
    "DUTC": ("self.dut_constant", 20, 500, "{:d}"),
    "ADMD": ("self.air_dut_max", 10, 300, "{:d}"),
    "TTIM": ("self.max_test_time", 0, 9999, "{:d}"),
    "CYCC": ("self.cycle_count", 0, 9999, "{:d}"),
    "LRNM": ("self.learn_mode", 0, 1, "{:d}"),
}
ESR_EXE, ESR_CME = 16, 32
LOWEST_AIR = -80.0  # the ATS-545's LLIM floor, its power-on lower air limit

# AUXC? bits (auxiliary condition register): bit -> what sets it
AUXC_BITS: dict[int, Callable[[ATS545], bool]] = {}  # filled below the class


@emulator("intest-ats545")
class ATS545(LineInstrument):
    model = "ATS-545"
    default_serial = "ATS-545-0042"
    firmware = "4.3.0"

    def reset(self) -> None:
        self.esr = 0
        self.setn = 0
        self.setpoints = [self.bench.chamber.room] * 18
        self.dut_mode = 0
        self.dut_sensor = 0
        self.dut_constant = 100
        self.air_dut_max = 50
        self.max_test_time = 0
        self.cycle_count = 0
        self.learn_mode = 0
        self.tesr = 0  # TESR? events, latched until read
        self.tecr_seen = 0  # TECR? as the last command saw it (TESR? latches its rising bits)
        with self.bench.lock:
            self.bench.update()
            self.bench.chamber.reset()
            self.bench.chamber.lower_limit = LOWEST_AIR

    def _target(self, attr: str) -> tuple[Any, str]:
        if attr.startswith("self."):
            return self, attr[5:]
        return self.bench.chamber, attr

    def handle(self, line: str) -> str | None:
        word, _, arg = line.strip().partition(" ")
        word = word.upper()
        b = self.bench
        with b.lock:
            b.update()
            self._latch_events()
            if word in QUERIES:
                return QUERIES[word](self)
            if word.endswith("?") and word[:-1] in SETTINGS:
                return self._get(word[:-1])
            if word in SETTINGS:
                self._set(word, arg.strip())
                return None
            if word in ACTIONS:
                ACTIONS[word](self)
                return None
        self.esr |= ESR_CME
        return None

    def _get(self, word: str) -> str:
        attr, _lo, _hi, fmt = SETTINGS[word]
        obj, name = self._target(attr)
        value = getattr(obj, name)
        return fmt.format(int(value) if fmt == "{:d}" else float(value))

    def _latch_events(self) -> None:
        """TESR? holds each TECR? bit that came on since it was last read (seen at each command)."""
        tecr = self.bench.chamber.tecr
        self.tesr |= tecr & ~self.tecr_seen
        self.tecr_seen = tecr

    def _tesr(self) -> str:
        value, self.tesr = self.tesr, 0  # reading clears it
        return str(value)

    def _auxc(self) -> str:
        return str(sum(1 << bit for bit, on in AUXC_BITS.items() if on(self)))

    def _temp(self) -> str:
        """TEMP?: the controlled temperature, the DUT's in DUT mode (DUTM 1), else the air's."""
        return _dut_temp(self) if self.dut_mode else _air_temp(self)

    def _clear_esr(self) -> None:
        self.esr = 0

    def _clear_errors(self) -> None:
        self.bench.chamber.error_word = 0

    def _set(self, word: str, arg: str) -> None:
        attr, lo, hi, fmt = SETTINGS[word]
        try:
            value = float(arg)
        except ValueError:
            self.esr |= ESR_CME
            return
        if not lo <= value <= hi:
            self.esr |= ESR_EXE
            return
        chamber = self.bench.chamber
        if word == "SETP":
            if not chamber.lower_limit <= value <= chamber.upper_limit:  # outside LLIM..ULIM: refused
                self.esr |= ESR_EXE
                return
            self.setpoints[self.setn] = value
            chamber.setpoint = value
            return
        obj, name = self._target(attr)
        setattr(obj, name, bool(round(value)) if isinstance(getattr(obj, name), bool) else
                int(round(value)) if fmt == "{:d}" else value)
        if word == "SETN":
            chamber.setpoint = self.setpoints[self.setn]

    def _esr(self) -> str:
        value, self.esr = self.esr, 0
        return str(value)


def _flow(self: ATS545) -> str:
    return "12.0" if self.bench.chamber.active else "0.0"


def _air_temp(self: ATS545) -> str:
    return f"{self.bench.chamber.air + self.bench.noise(0.05):.1f}"


def _dut_temp(self: ATS545) -> str:
    return f"{self.bench.board_point('LID') + self.bench.noise(0.05):.1f}"


AUXC_BITS.update({
    2: lambda s: not s.bench.chamber.head_down,  # head: 0 lower, 1 upper
    3: lambda s: not s.bench.chamber.compressor,  # compressor: 0 on, 1 off
    4: lambda s: bool(s.dut_mode),  # sense mode: 0 air, 1 DUT
    5: lambda s: s.bench.chamber.flow,  # flow: 0 off, 1 on
    6: lambda s: True,  # TS status: 0 start-up, 1 ready
    8: lambda s: True,  # mode: 0 programming, 1 manual (the operator screen)
})


QUERIES: dict[str, Callable[[ATS545], str]] = {
    "*IDN?": lambda s: f"inTEST Thermal Solutions,{s.model},{s.serial},{s.firmware}",
    "*ESR?": ATS545._esr,
    "*OPC?": lambda s: "1",
    "TEMP?": ATS545._temp,
    "TMPA?": _air_temp,
    "TMPD?": _dut_temp,
    "SETD?": lambda s: f"{s.bench.chamber.dynamic_setpoint:.1f}",
    "TECR?": lambda s: str(s.bench.chamber.tecr),
    "TESR?": ATS545._tesr,
    "AUXC?": ATS545._auxc,
    "EROR?": lambda s: str(s.bench.chamber.error_word),
    "WHAT?": lambda s: "10",  # manual (ATS-545; 5 on the ATS-5x5), 0 program, 63 after power-up
    "FLWR?": _flow,
    "FLRL?": _flow,
    "CYCL?": lambda s: "0",
}

ACTIONS: dict[str, Callable[[ATS545], None]] = {
    "*RST": ATS545.reset,
    "*CLS": ATS545._clear_esr,
    "CLER": ATS545._clear_errors,
    # accepted, nothing to simulate: remote/local/lockout, operator screen, cycling controls
    **dict.fromkeys(("%RM", "%GL", "%LL", "RSTO", "NEXT", "RMPC", "RMPS", "CYCL", "SFIL", "CFIL"),
                    lambda self: None),
}
