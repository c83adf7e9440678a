"""Named DUT variants and faults, and the transport gate that plays instrument faults.

DUT faults change the board model (see :meth:`DutParams.apply_fault`). Instrument faults
act on one role's connection: ``instrument_timeout`` (stops answering), ``disconnect``
(closes the connection), ``garbage_reply`` (replies with junk) and ``scpi_error`` (a
command puts an error in the queue instead of executing).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

DUT_FAULTS = ("marginal_lane", "hot_spot", "dead_rail", "slow_sequencing", "noisy_rail", "overtemp", "no_soft_start")
INSTRUMENT_FAULTS = ("instrument_timeout", "disconnect", "garbage_reply", "scpi_error", "slow_reply")
ALL_FAULTS = DUT_FAULTS + INSTRUMENT_FAULTS

# A named variant is shorthand for a list of faults (plus process corners handled in DutParams).
VARIANTS: dict[str, list[str]] = {
    "golden": [],
    "fast_corner": [],
    "slow_corner": [],
    **{name: [name] for name in DUT_FAULTS},
    "marginal": ["marginal_lane"],
    "hot": ["hot_spot"],
}

DEFAULT_ROLE = {
    "instrument_timeout": "dmm",
    "disconnect": "bert",
    "garbage_reply": "daq",
    "scpi_error": "psu",
    "slow_reply": "daq",
}

GARBAGE = "\x15#?!@garbage\x7f"
#: garbage_reply ``reply:`` kinds: what the instrument sends instead of (or besides) its answer
GARBAGE_KINDS = ("junk", "overload", "nan", "truncated", "extra_line")


def garble(kind: str, reply: str) -> str:
    """The reply as a misbehaving instrument sends it (``kind`` one of GARBAGE_KINDS)."""
    if kind == "overload":
        return "+9.90000000E+37"
    if kind == "nan":
        return "NAN"
    if kind == "truncated":
        return reply[:-2]  # the line loses its last characters (+2.61920000E+01 -> +2.61920000E+)
    if kind == "extra_line":
        return f"{reply}\n{reply}"  # one answer too many: the next query would read a stale one
    return GARBAGE


def describe_dut(variant: str, faults: list[str]) -> str:
    """``golden``, ``marginal_lane``, ``fast_corner + dead_rail``: what is wrong with a board."""
    if not faults:
        return variant
    base = [] if variant == "golden" or VARIANTS.get(variant) else [variant]  # fault-named variants: the faults say it
    return " + ".join([*base, *faults])


def normalize(spec: Any) -> dict[str, Any]:
    """A fault spec (name, dict or pydantic FaultSpec) as ``{"fault": name, **params}``."""
    if isinstance(spec, str):
        data: dict[str, Any] = {"fault": spec}
    elif hasattr(spec, "model_dump"):
        data = dict(spec.model_dump())
    elif isinstance(spec, dict):
        data = dict(spec)
    else:
        raise ValueError(f"a fault is a name or a mapping with 'fault:', got {spec!r}")
    name = str(data.get("fault", "")).strip()
    if name not in ALL_FAULTS:
        raise ValueError(f"unknown fault {name!r}; known: {', '.join(ALL_FAULTS)}")
    data["fault"] = name
    if name in INSTRUMENT_FAULTS:
        data.setdefault("role", DEFAULT_ROLE[name])
    if name == "garbage_reply" and data.get("reply", "junk") not in GARBAGE_KINDS:
        raise ValueError(f"garbage_reply: unknown reply {data['reply']!r}; known: {', '.join(GARBAGE_KINDS)}")
    return data


@dataclass
class ActiveFault:
    kind: str
    after: int = 0  # lines to let through first
    count: int = -1  # how many times it fires (-1: forever)
    persistent: bool = False
    delay: float = 0.0  # wall seconds (slow_reply): instrument timeouts are wall time
    reply: str = "junk"  # garbage_reply: one of GARBAGE_KINDS
    seen: int = 0

    @property
    def due(self) -> bool:
        return self.seen >= self.after and self.count != 0

    def fire(self) -> None:
        if self.count > 0:
            self.count -= 1


@dataclass
class FaultGate:
    """Sits between a transport and an emulator; plays the instrument faults of one role."""

    faults: list[ActiveFault] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    refuse_connections: bool = False

    def add(self, spec: dict[str, Any]) -> None:
        kind = spec["fault"]
        with self.lock:
            self.faults.append(
                ActiveFault(
                    kind=kind,
                    after=int(spec.get("after", 0)),
                    count=int(spec.get("count", 1 if kind in {"garbage_reply", "disconnect"} else -1)),
                    persistent=bool(spec.get("persistent", False)),
                    delay=float(spec.get("delay", 1.0)),
                    reply=str(spec.get("reply", "junk")),
                )
            )

    @property
    def armed(self) -> bool:
        """A fault is waiting or playing: lines go through :meth:`before` and the replies through
        :meth:`after_reply` and :meth:`reply_delay` (with none, a line goes straight through)."""
        return bool(self.faults)

    def clear(self) -> None:
        with self.lock:
            self.faults.clear()
            self.refuse_connections = False

    def before(self) -> str | None:
        """Called for each received line: ``"close"``, ``"swallow"`` or None (process it)."""
        with self.lock:
            for f in self.faults:
                f.seen += 1
            for f in self.faults:
                if f.kind == "disconnect" and f.due:
                    f.fire()
                    if f.persistent:
                        self.refuse_connections = True
                    return "close"
            for f in self.faults:
                if f.kind == "instrument_timeout" and f.due:
                    f.fire()  # ``count: n`` swallows n lines, then the instrument answers again
                    return "swallow"
        return None

    def after_reply(self, reply: str | None) -> str | None:
        if reply is None:
            return None
        with self.lock:
            for f in self.faults:
                if f.kind == "garbage_reply" and f.due:
                    f.fire()
                    return garble(f.reply, reply)
        return reply

    def reply_delay(self) -> float:
        """Wall seconds to hold the next reply back (slow_reply), 0 if none."""
        with self.lock:
            for f in self.faults:
                if f.kind == "slow_reply" and f.due:
                    f.fire()
                    return f.delay
        return 0.0
