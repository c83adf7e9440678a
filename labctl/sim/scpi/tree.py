"""The command tree of an emulator, declared with a decorator per handler.

``@scpi("[SOURce:]VOLTage[:LEVel][:IMMediate][:AMPLitude]?")`` registers a query handler;
the same pattern without ``?`` registers the setting. Square brackets mark optional nodes;
``#`` after a mnemonic accepts a numeric suffix (``OUTPut#`` matches ``OUTP2``), passed to
the handler in :attr:`Call.suffixes` (1 where the header leaves it out, as SCPI has it) and
:attr:`Call.given` (None there: ``[SOURce#:]VOLTage`` tells ``SOUR2:VOLT`` from ``VOLT``, for
instruments whose left-out suffix means "the selected channel"). Headers match by short form
or long form only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from labctl.sim.scpi.errors import ScpiError
from labctl.sim.scpi.parser import Node, Unit
from labctl.sim.scpi.values import (
    HEADER_UNITS,
    parse_bool,
    parse_choice,
    parse_number,
    parse_string,
)


@dataclass(frozen=True)
class PatternNode:
    mnemonic: str  # long form with the short form in capitals, e.g. "VOLTage"
    optional: bool = False
    suffix: bool = False

    @functools.cached_property
    def short(self) -> str:
        return "".join(ch for ch in self.mnemonic if ch.isupper() or ch.isdigit())

    @functools.cached_property
    def long(self) -> str:
        return self.mnemonic.upper()

    def matches(self, node: Node) -> bool:
        name = node.name
        if name != self.short and name != self.long:
            return False
        return node.suffix is None or self.suffix or node.suffix == 1


@dataclass(frozen=True)
class Pattern:
    text: str
    nodes: tuple[PatternNode, ...]
    query: bool

    def match(self, nodes: list[Node]) -> list[int | None] | None:
        """The suffixes of the ``#`` nodes (None for one the header leaves out) if ``nodes``
        match this pattern, else None."""
        return _match(self.nodes, 0, nodes, 0)


def _match(pat: tuple[PatternNode, ...], i: int, nodes: list[Node], j: int) -> list[int | None] | None:
    if i == len(pat):
        return [] if j == len(nodes) else None
    p = pat[i]
    if j < len(nodes) and p.matches(nodes[j]):
        rest = _match(pat, i + 1, nodes, j + 1)
        if rest is not None:
            return ([nodes[j].suffix] if p.suffix else []) + rest
    if p.optional:
        rest = _match(pat, i + 1, nodes, j)
        if rest is not None:
            return ([None] if p.suffix else []) + rest
    return None


def compile_pattern(text: str) -> Pattern:
    query = text.endswith("?")
    body = text[:-1] if query else text
    nodes: list[PatternNode] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == ":":
            i += 1
            continue
        optional = ch == "["
        if optional:
            end = body.index("]", i)
            token = body[i + 1 : end]
            i = end + 1
        else:
            end = i
            while end < len(body) and body[end] not in ":[":
                end += 1
            token = body[i:end]
            i = end
        token = token.strip(":")
        suffix = token.endswith("#")
        nodes.append(PatternNode(token.rstrip("#"), optional, suffix))
    return Pattern(text, tuple(nodes), query)


def scpi(*patterns: str) -> Callable[[Callable], Callable]:
    """Register a method as the handler of one or more header patterns."""

    def deco(fn: Callable) -> Callable:
        fn._scpi_patterns = tuple(compile_pattern(p) for p in patterns)  # type: ignore[attr-defined]
        return fn

    return deco


def collect_table(cls: type) -> list[tuple[Pattern, str]]:
    """(pattern, method name) pairs of ``cls`` and its bases; subclass entries first. A
    handler a subclass sets to ``None`` is not there (a model without that subsystem)."""
    table: list[tuple[Pattern, str]] = []
    seen: set[str] = set()
    for klass in cls.__mro__:
        for name, attr in vars(klass).items():
            if attr is None:
                seen.add(name)
                continue
            pats = getattr(attr, "_scpi_patterns", None)
            if pats and name not in seen:
                seen.add(name)
                table.extend((p, name) for p in pats)
    return table


@dataclass
class Call:
    """What a handler receives: the unit, its parameters and the header's suffixes."""

    unit: Unit
    given: list[int | None] = field(default_factory=list)  # the ``#`` suffixes; None: left out
    #: the header's nodes as they matched the handler: with the path of the unit before it in
    #: the line when they were read relative to it (``CURR:RANG 6;LEV 2``), else its own
    path: list[Node] = field(default_factory=list)

    @property
    def suffixes(self) -> list[int]:
        """The ``#`` suffixes, 1 for one the header leaves out (``OUTP`` is ``OUTP1``)."""
        return [1 if n is None else n for n in self.given]

    @property
    def params(self) -> list[str]:
        return self.unit.params

    @property
    def channels(self) -> list[int] | None:
        """The trailing channel list ``(@…)`` if the last parameter is one."""
        found = self.unit.channel_list
        return None if found is None else list(found)

    @property
    def args(self) -> list[str]:
        """Parameters without a trailing channel list."""
        return self.unit.args

    def arg(self, i: int) -> str:
        if i >= len(self.args):
            raise ScpiError(-109)
        return self.args[i]

    def has(self, i: int) -> bool:
        return i < len(self.args)

    def number(self, i: int = 0, **bounds: float | None) -> float:
        text = self.arg(i)
        if text[-1:].isalpha():  # a unit suffix: it must be the header's unit (``VOLT 5 A`` is -131)
            return parse_number(text, unit=self.header_unit(), **bounds)
        return parse_number(text, **bounds)

    def header_unit(self) -> str | None:
        """The unit the header's numeric parameter is in (:data:`HEADER_UNITS`), None if it does not say."""
        for node in reversed(self.path):
            unit = HEADER_UNITS.get(node.name)
            if unit is not None:
                return unit
        return None

    def boolean(self, i: int = 0) -> bool:
        return parse_bool(self.arg(i))

    def choice(self, choices: list[str], i: int = 0) -> str:
        return parse_choice(self.arg(i), choices)

    def string(self, i: int = 0) -> str:
        return parse_string(self.arg(i))

    def no_args(self, allowed: int = 0) -> None:
        if len(self.args) > allowed:
            raise ScpiError(-108)
