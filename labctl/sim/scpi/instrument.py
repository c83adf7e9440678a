"""Base class of every SCPI emulator: dispatch, IEEE 488.2 common commands, error queue."""

from __future__ import annotations

import logging
import threading
from typing import Any, ClassVar

from labctl.sim.scpi.errors import (
    ESR_CME,
    ESR_OPC,
    ESR_PON,
    ESR_QYE,
    STB_EAV,
    STB_ESB,
    STB_MSS,
    ErrorQueue,
    ScpiError,
    esr_bit,
)
from labctl.sim.scpi.parser import Node, Unit, parse_message
from labctl.sim.scpi.tree import Call, Pattern, collect_table, scpi

log = logging.getLogger(__name__)


class ScpiInstrument:
    """An emulated SCPI instrument: feed it lines with :meth:`process`, get replies back."""

    vendor: ClassVar[str] = "labctl"
    model: ClassVar[str] = "SCPI"
    firmware: ClassVar[str] = "1.0"
    default_serial: ClassVar[str] = "0"
    options: ClassVar[str] = "0"
    _table: ClassVar[list[tuple[Pattern, str]]] = []

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls._table = collect_table(cls)

    def __init__(self, *, serial: str | None = None, bench: Any = None, role: str = "") -> None:
        self.serial = serial or self.default_serial
        self.bench = bench
        self.role = role
        self.errors = ErrorQueue()
        self.esr = ESR_PON
        self.ese = 0
        self.sre = 0
        self.lock = threading.RLock()
        self.error_rules: list[dict[str, Any]] = []  # scpi_error faults
        self.commands_seen = 0
        self.log: list[str] = []  # last commands, for tests and debugging
        self.reset()

    # -- hooks for emulators -------------------------------------------------------------
    def reset(self) -> None:
        """``*RST``: settings to their defaults."""

    def wait_pending(self) -> None:
        """``*WAI`` / ``*OPC?``: wait for pending operations (none by default)."""

    def trigger(self) -> None:
        """``*TRG``."""

    @property
    def idn(self) -> str:
        return f"{self.vendor},{self.model},{self.serial},{self.firmware}"

    # -- the error queue ----------------------------------------------------------------
    def push_error(self, code: int, text: str | None = None) -> None:
        self.errors.push(code, text)
        self.esr |= esr_bit(code)

    # -- dispatch -----------------------------------------------------------------------
    def process(self, line: str) -> str | None:
        """Execute one program message; return the reply line (without ``\\n``) or None."""
        line = line.rstrip("\r\n").strip()
        if not line:
            return None
        with self.lock:
            self.commands_seen += 1
            self.log.append(line)
            del self.log[:-200]
            try:
                units = parse_message(line)
            except ScpiError as err:
                self.push_error(err.code, err.text)
                return None
            replies: list[str] = []
            for unit in units:
                try:
                    reply = self._execute(unit)
                except ScpiError as err:
                    self.push_error(err.code, err.text)
                    if err.code > -200 and err.code <= -100:
                        break  # a command error discards the rest of the message
                    continue
                except Exception as exc:  # an emulator bug must not kill the server
                    log.exception("emulator %s failed on %r", self.model, unit.raw)
                    self.push_error(-200, f"Execution error; {type(exc).__name__}")
                    continue
                if unit.query and reply is not None:
                    replies.append(reply)
            return ";".join(replies) if replies else None

    def _execute(self, unit: Unit) -> str | None:
        for rule in self.error_rules:
            if self._rule_applies(rule, unit):
                raise ScpiError(int(rule.get("code", -221)), rule.get("message"))
        if unit.common:
            return self._common(unit)
        handler, suffixes = self._resolve(unit)
        return getattr(self, handler)(Call(unit, suffixes))

    def _rule_applies(self, rule: dict[str, Any], unit: Unit) -> bool:
        match = str(rule.get("match", "")).upper().lstrip(":")
        header = unit.raw.upper().lstrip(":")
        if header.startswith("SYST") and "ERR" in header:
            return False
        if unit.common and not match:
            return False
        if not header.startswith(match):
            return False
        if unit.query and not rule.get("queries", False):
            return False
        remaining = rule.get("count", -1)
        if remaining == 0:
            return False
        if remaining > 0:
            rule["count"] = remaining - 1
        return True

    def _resolve(self, unit: Unit) -> tuple[str, list[int]]:
        """The handler of ``unit``'s header (and the suffixes), remembered per header: a client
        asks the same few headers over and over."""
        key = (tuple(unit.relative_to), tuple(unit.nodes), unit.query)
        cache = self.__dict__.setdefault("_resolved", {})
        found = cache.get(key)
        if found is None:
            found = self._resolve_header(unit)
            if len(cache) < 4096:
                cache[key] = found
        return found[0], list(found[1])

    def _resolve_header(self, unit: Unit) -> tuple[str, list[int]]:
        candidates = [unit.relative_to + unit.nodes]
        if unit.relative_to:
            candidates.append(unit.nodes)
        known_other_kind = False
        for nodes in candidates:
            for pattern, handler in self._table:
                suffixes = pattern.match(nodes)
                if suffixes is None:
                    continue
                if pattern.query == unit.query:
                    return handler, suffixes
                known_other_kind = True
        if known_other_kind and unit.query:
            raise ScpiError(-113, "no query form")
        for nodes in candidates:
            bare = [Node(n.name, None) for n in nodes]
            if bare != nodes and any(p.query == unit.query and p.match(bare) is not None for p, _ in self._table):
                raise ScpiError(-114)
        raise ScpiError(-113)

    # -- IEEE 488.2 common commands (table: name -> method) --------------------------------
    def _common(self, unit: Unit) -> str | None:
        name = unit.common or ""
        handler = COMMON.get(name)
        if handler is None:
            raise ScpiError(-113)
        if unit.params and name not in TAKES_PARAMETER:
            raise ScpiError(-108)
        return handler(self, unit.params)

    def _c_idn(self, p: list[str]) -> str:
        return self.idn

    def _c_rst(self, p: list[str]) -> None:
        self.reset()

    def _c_cls(self, p: list[str]) -> None:
        self.errors.clear()
        self.esr = 0

    def _c_opc(self, p: list[str]) -> None:
        self.wait_pending()
        self.esr |= ESR_OPC

    def _c_opc_q(self, p: list[str]) -> str:
        self.wait_pending()
        return "1"

    def _c_wai(self, p: list[str]) -> None:
        self.wait_pending()

    def _c_esr_q(self, p: list[str]) -> str:
        value, self.esr = self.esr, 0
        return str(value)

    @staticmethod
    def _mask(p: list[str]) -> int:
        if not p:
            raise ScpiError(-109)
        value = int(float(p[0]))
        if not 0 <= value <= 255:
            raise ScpiError(-222)
        return value

    def _c_ese(self, p: list[str]) -> None:
        self.ese = self._mask(p)

    def _c_sre(self, p: list[str]) -> None:
        self.sre = self._mask(p)

    def _c_stb_q(self, p: list[str]) -> str:
        return str(self.status_byte())

    def _c_trg(self, p: list[str]) -> None:
        self.trigger()

    def _c_nothing(self, p: list[str]) -> None:
        return None

    def status_byte(self) -> int:
        stb = 0
        if len(self.errors):
            stb |= STB_EAV
        if self.esr & self.ese:
            stb |= STB_ESB
        if stb & self.sre:
            stb |= STB_MSS
        return stb

    # -- SYSTem subsystem shared by all ------------------------------------------------
    @scpi("SYSTem:ERRor[:NEXT]?")
    def _syst_err(self, call: Call) -> str:
        return self.errors.pop_formatted()

    @scpi("SYSTem:ERRor:COUNt?")
    def _syst_err_count(self, call: Call) -> str:
        return str(len(self.errors))

    @scpi("SYSTem:VERSion?")
    def _syst_version(self, call: Call) -> str:
        return "1999.0"

    @scpi("SYSTem:REMote", "SYSTem:LOCal", "SYSTem:RWLock", "SYSTem:BEEPer[:IMMediate]")
    def _syst_accept(self, call: Call) -> None:
        return None


COMMON = {
    "*IDN?": ScpiInstrument._c_idn,
    "*RST": ScpiInstrument._c_rst,
    "*CLS": ScpiInstrument._c_cls,
    "*OPC": ScpiInstrument._c_opc,
    "*OPC?": ScpiInstrument._c_opc_q,
    "*WAI": ScpiInstrument._c_wai,
    "*ESR?": ScpiInstrument._c_esr_q,
    "*ESE": ScpiInstrument._c_ese,
    "*ESE?": lambda self, p: str(self.ese),
    "*SRE": ScpiInstrument._c_sre,
    "*SRE?": lambda self, p: str(self.sre),
    "*STB?": ScpiInstrument._c_stb_q,
    "*TST?": lambda self, p: "+0",
    "*TRG": ScpiInstrument._c_trg,
    "*OPT?": lambda self, p: self.options,
    "*SAV": ScpiInstrument._c_nothing,
    "*RCL": ScpiInstrument._c_nothing,
    "*PSC": ScpiInstrument._c_nothing,
}
TAKES_PARAMETER = {"*ESE", "*SRE", "*SAV", "*RCL", "*PSC"}

__all__ = ["ScpiInstrument", "ScpiError", "ESR_CME", "ESR_QYE"]
