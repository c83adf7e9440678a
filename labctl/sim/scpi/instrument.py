"""Base class of every SCPI emulator: dispatch, IEEE 488.2 common commands, error queue."""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

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
MAX_PLANS = 1024  # program messages remembered per instrument


class Plan(NamedTuple):
    """A parsed program message: each unit with what executes it; ``changes``: a unit is a
    setting (not a query), so the message may change the instrument's or the bench's state."""

    steps: list[tuple[Unit, Callable[[], str | None]]]
    changes: bool
    single: Callable[[], str | None] | None = None  # the message is one query: what answers it


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
        self.log: deque[str] = deque(maxlen=200)  # last commands, for tests and debugging
        self._plans: dict[str, Plan] = {}  # program message -> its units and their handlers
        self._resolved: dict[tuple, tuple[str, tuple[int | None, ...]]] = {}  # header -> handler, suffixes
        self.reset()

    # -- hooks for emulators -------------------------------------------------------------
    def reset(self) -> None:
        """``*RST``: settings to their defaults."""

    def before_change(self) -> None:
        """A message that may change settings is about to run (nothing by default)."""

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
        line = line.strip()
        if not line:
            return None
        with self.lock:
            self.commands_seen += 1
            self.log.append(line)
            plan = self._plans.get(line)
            if plan is None:
                try:
                    plan = self._compile(line)
                except ScpiError as err:
                    self.push_error(err.code, err.text)
                    return None
                if len(self._plans) >= MAX_PLANS:
                    self._plans.clear()  # a client sending ever new lines (values in them) starts afresh
                self._plans[line] = plan
            if plan.single is not None and not self.error_rules:  # one query (the usual poll): its reply
                try:
                    return plan.single()
                except Exception as exc:
                    self._failed(plan.steps[0][0], exc)
                    return None
            replies: list[str] = []
            if plan.changes:
                self.before_change()
            try:
                for unit, run in plan.steps:
                    try:
                        if self.error_rules:
                            self._apply_error_rules(unit)
                        reply = run()
                    except Exception as exc:
                        if self._failed(unit, exc):
                            break  # a command error discards the rest of the message
                        continue
                    if unit.query and reply is not None:
                        replies.append(reply)
            finally:
                if plan.changes:
                    self.changed()
            return ";".join(replies) if replies else None

    def _failed(self, unit: Unit, exc: Exception) -> bool:
        """A unit raised: its error in the queue (an emulator bug is an execution error, logged,
        and must not kill the server). True for a command error (-1xx)."""
        if isinstance(exc, ScpiError):
            self.push_error(exc.code, exc.text)
            return -200 < exc.code <= -100
        log.error("emulator %s failed on %r", self.model, unit.raw, exc_info=exc)
        self.push_error(-200, f"Execution error; {type(exc).__name__}")
        return False

    def changed(self) -> None:
        """A message with a setting in it was executed (hook: bench-backed emulators tell the bench)."""

    def _compile(self, line: str) -> Plan:
        """The units of ``line``, each with what executes it: its handler found in the tree, a
        common command's function, or the header's error (raised when the unit's turn comes, so
        the units before it still execute). A line is parsed and resolved once; the same line
        again (a client polls the same few queries) is only executed."""
        units = parse_message(line)
        steps = [(unit, self._dispatcher(unit)) for unit in units]
        single = steps[0][1] if len(units) == 1 and units[0].query else None
        return Plan(steps, any(not u.query for u in units), single)

    def _dispatcher(self, unit: Unit) -> Callable[[], str | None]:
        try:
            if unit.common:
                return functools.partial(self._common_function(unit), self, unit.params)
            handler, suffixes, relative = self._resolve(unit)
        except ScpiError as err:
            return functools.partial(_fail, err.code, err.detail)
        path = unit.relative_to + unit.nodes if relative else unit.nodes
        return functools.partial(getattr(self, handler), Call(unit, list(suffixes), path))  # handlers only read their call

    def _apply_error_rules(self, unit: Unit) -> None:
        for rule in self.error_rules:
            if self._rule_applies(rule, unit):
                raise ScpiError(int(rule.get("code", -221)), rule.get("message"))

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

    def _resolve(self, unit: Unit) -> tuple[str, tuple[int | None, ...], bool]:
        """The handler of ``unit``'s header, the suffixes and whether the header matched with
        the path of the unit before it (``CURR:RANG 6;LEV 2``) or on its own, remembered per
        header: lines that differ only in their parameters resolve once."""
        key = (tuple(unit.relative_to), tuple(unit.nodes), unit.query)
        found = self._resolved.get(key)
        if found is None:
            handler, suffixes, relative = self._resolve_header(unit)
            found = handler, tuple(suffixes), relative
            if len(self._resolved) < 4096:
                self._resolved[key] = found
        return found

    def _resolve_header(self, unit: Unit) -> tuple[str, list[int | None], bool]:
        candidates = [unit.relative_to + unit.nodes]
        if unit.relative_to:
            candidates.append(unit.nodes)
        known_other_kind = False
        for at, nodes in enumerate(candidates):
            for pattern, handler in self._table:
                suffixes = pattern.match(nodes)
                if suffixes is None:
                    continue
                if pattern.query == unit.query:
                    return handler, suffixes, at == 0 and bool(unit.relative_to)
                known_other_kind = True
        if known_other_kind and unit.query:
            raise ScpiError(-113, "no query form")
        for nodes in candidates:
            bare = [Node(n.name, None) for n in nodes]
            if bare != nodes and any(p.query == unit.query and p.match(bare) is not None for p, _ in self._table):
                raise ScpiError(-114)
        raise ScpiError(-113)

    # -- IEEE 488.2 common commands (table: name -> method) --------------------------------
    def _common_function(self, unit: Unit) -> Callable[[Any, list[str]], str | None]:
        name = unit.common or ""
        handler = COMMON.get(name)
        if handler is None:
            raise ScpiError(-113)
        if unit.params and name not in TAKES_PARAMETER:
            raise ScpiError(-108)
        return handler

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

    #: the SCPI version the instrument conforms to (``SYST:VERS?``)
    scpi_version = "1999.0"

    @scpi("SYSTem:VERSion?")
    def _syst_version(self, call: Call) -> str:
        return self.scpi_version

    @scpi("SYSTem:DATE?")
    def _syst_date(self, call: Call) -> str:
        """The instrument's calendar (its clock is the host's): ``2026,12,07``."""
        return time.strftime("%Y,%m,%d")

    @scpi("SYSTem:TIME?")
    def _syst_time(self, call: Call) -> str:
        return time.strftime("%H,%M,%S")

    @scpi("DISPlay[:WINDow]:TEXT[:DATA]", "DISPlay[:WINDow]:TEXT:CLEar")
    def _display_text(self, call: Call) -> None:
        """A message on the front panel: nobody reads the simulated one."""
        return None

    @scpi("SYSTem:REMote", "SYSTem:LOCal", "SYSTem:RWLock", "SYSTem:BEEPer[:IMMediate]")
    def _syst_accept(self, call: Call) -> None:
        return None


def _fail(code: int, detail: str | None) -> None:
    """A unit whose header does not resolve: its error, raised when its turn comes."""
    raise ScpiError(code, detail)


COMMON = {
    "*IDN?": ScpiInstrument._c_idn,
    "*RST": ScpiInstrument._c_rst,
    "*CLS": lambda self, p: self._c_cls(p),  # an emulator may clear its own queues too
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
