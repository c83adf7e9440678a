"""Split a SCPI program message into program message units.

``SOUR:VOLT 1.5,(@1);CURR 0.2,(@1);:OUTP ON,(@1:3);*OPC?`` becomes four units. A unit has a
header (a list of mnemonic nodes, each with an optional numeric suffix), a query flag and
raw parameter strings. Header paths follow the SCPI compound rule: a header after ``;``
without a leading ``:`` is relative to the parent node of the previous header.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from labctl.sim.scpi.errors import ScpiError
from labctl.sim.scpi.values import is_channel_list, parse_channel_list

_MNEMONIC = re.compile(r"^([A-Za-z][A-Za-z_]*?)(\d*)$")
_COMMON = re.compile(r"^\*[A-Za-z]{2,4}\??$")
MAX_MNEMONIC = 12


@dataclass(frozen=True)
class Node:
    name: str  # upper-cased mnemonic without suffix
    suffix: int | None = None


@dataclass
class Unit:
    """One program message unit, e.g. ``VOLT? (@1)``."""

    nodes: list[Node]
    query: bool
    params: list[str] = field(default_factory=list)
    common: str | None = None  # e.g. "*IDN?" for common commands
    absolute: bool = False
    raw: str = ""
    relative_to: list[Node] = field(default_factory=list)

    @functools.cached_property
    def channel_list(self) -> tuple[int, ...] | None:
        """The trailing channel list ``(@…)`` if the last parameter is one (parsed once: a
        parsed message is executed again each time a client sends the same line)."""
        if self.params and is_channel_list(self.params[-1]):
            return tuple(parse_channel_list(self.params[-1]))
        return None

    @functools.cached_property
    def args(self) -> list[str]:
        """Parameters without a trailing channel list."""
        if self.params and is_channel_list(self.params[-1]):
            return self.params[:-1]
        return self.params

    @property
    def header(self) -> str:
        if self.common:
            return self.common
        text = ":".join(n.name + (str(n.suffix) if n.suffix is not None else "") for n in self.nodes)
        return text + ("?" if self.query else "")


def split_outside(text: str, sep: str) -> list[str]:
    """Split ``text`` at ``sep`` where not inside quotes or parentheses."""
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    start = 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if quote:
        raise ScpiError(-151, "unterminated string")
    parts.append(text[start:])
    return parts


def _parse_header(header: str) -> tuple[list[Node], bool, str | None, bool]:
    if _COMMON.match(header):
        return [], header.endswith("?"), header.upper(), False
    absolute = header.startswith(":")
    body = header[1:] if absolute else header
    query = body.endswith("?")
    if query:
        body = body[:-1]
    if not body:
        raise ScpiError(-102, "empty header")
    nodes: list[Node] = []
    for part in body.split(":"):
        m = _MNEMONIC.match(part)
        if not m:
            raise ScpiError(-102 if not part else -101, f"bad header node {part!r}")
        if len(m.group(1)) > MAX_MNEMONIC:
            raise ScpiError(-112)
        suffix = int(m.group(2)) if m.group(2) else None
        nodes.append(Node(m.group(1).upper(), suffix))
    return nodes, query, None, absolute


def parse_message(message: str) -> list[Unit]:
    """Parse one program message (one line, without terminator) into units.

    Raises :class:`ScpiError` (-102 and friends) on a syntax error; the caller executes
    nothing of a message that does not parse. One trailing ``;`` is taken (``a;;b`` is -102).
    """
    units: list[Unit] = []
    prefix: list[Node] = []
    chunks = split_outside(message, ";")
    if len(chunks) > 1 and not chunks[-1].strip() and chunks[-2].strip():
        chunks = chunks[:-1]  # one ';' before the terminator (`VOLT? (@1);`), as instruments take it
    for chunk in chunks:
        chunk = chunk.strip()
        if not chunk:
            if units or message.strip():
                raise ScpiError(-102, "empty command between ';'")
            continue
        head, _, rest = chunk.partition(" ")
        if "\t" in head:
            head, _, more = head.partition("\t")
            rest = more + " " + rest
        nodes, query, common, absolute = _parse_header(head.strip())
        rest = rest.strip()
        params = [p.strip() for p in split_outside(rest, ",")] if rest else []
        if any(p == "" for p in params):
            raise ScpiError(-103, "empty parameter")
        unit = Unit(nodes, query, params, common, absolute, chunk)
        if common is None:
            unit.relative_to = [] if absolute else list(prefix)
            prefix = (unit.relative_to + nodes)[:-1]
        units.append(unit)
    return units
