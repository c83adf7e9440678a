"""SCPI parameter and reply formats: numbers with MIN/MAX/DEF and unit suffixes, booleans,
character data, strings, channel lists, NR1/NR3 replies."""

from __future__ import annotations

import math
import re

from labctl.sim.scpi.errors import ScpiError

OVERLOAD = 9.9e37
NAN = 9.91e37

_NUMBER = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z%]*)$")
_UNITS = {"V", "A", "W", "OHM", "HZ", "S", "C", "K", "F", "PCT", "DB", "UI", "BPS", "CEL", "%"}
_MULT = {"": 1.0, "U": 1e-6, "M": 1e-3, "K": 1e3, "MA": 1e6, "G": 1e9, "N": 1e-9, "P": 1e-12}


def nr3(value: float) -> str:
    """``+2.61920000E+01``: the reply format of Keysight instruments."""
    if math.isnan(value):
        value = NAN
    return f"{value:+.8E}"


def nr1(value: int | bool) -> str:
    return str(int(value))


def parse_number(
    text: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    default: float | None = None,
    unit: str | None = None,
) -> float:
    """A decimal numeric parameter; ``MIN``/``MAX``/``DEF`` map to the given bounds. ``unit``:
    the unit the parameter is in (``V``): a suffix of another unit (``5 A``) is -131."""
    word = text.strip().upper()
    special = {"MIN": minimum, "MINIMUM": minimum, "MAX": maximum, "MAXIMUM": maximum,
               "DEF": default, "DEFAULT": default}
    if word in special:
        value = special[word]
        if value is None:
            raise ScpiError(-224, f"{word} not allowed here")
        return float(value)
    if word in {"INF", "+INF", "INFINITY", "+INFINITY"}:
        if maximum is not None:  # no emulated setting is endless (a trigger count of INF would never end)
            raise ScpiError(-222, f"INF above {maximum:g}")
        return OVERLOAD
    if word in {"-INF", "-INFINITY", "NINF"}:
        if minimum is not None:
            raise ScpiError(-222, f"-INF below {minimum:g}")
        return -OVERLOAD
    m = _NUMBER.match(text.strip())
    if not m:
        raise ScpiError(-104 if not re.match(r"^[+-]?[\d.]", word) else -120, f"not a number: {text!r}")
    value = float(m.group(1))
    suffix = m.group(2).upper()
    if suffix:
        base, multiplier = _unit_of(suffix)
        if unit is not None and base != unit:
            raise ScpiError(-131, f"suffix {m.group(2)!r} is not in {unit}")
        value *= multiplier
    if minimum is not None and value < minimum - 1e-12 * max(1.0, abs(minimum)):
        raise ScpiError(-222, f"{value:g} below {minimum:g}")
    if maximum is not None and value > maximum + 1e-12 * max(1.0, abs(maximum)):
        raise ScpiError(-222, f"{value:g} above {maximum:g}")
    return value


def _unit_of(suffix: str) -> tuple[str, float]:
    """(unit, multiplier) of an upper-cased suffix: ``MV`` is (V, 1e-3)."""
    if suffix in _UNITS:
        return suffix, 1.0
    for unit in sorted(_UNITS, key=len, reverse=True):
        if suffix.endswith(unit):
            prefix = suffix[: -len(unit)]
            if unit in {"HZ", "OHM"} and prefix == "M":
                return unit, 1e6  # MHZ and MOHM are mega (SCPI exception)
            if prefix in _MULT:
                return unit, _MULT[prefix]
    raise ScpiError(-131, f"unknown suffix {suffix!r}")


#: the unit of a numeric parameter by the last header mnemonic that says one (``VOLT:PROT`` in
#: V, ``VOLT:PROT:DEL`` in s); a header with none of these takes any known suffix
HEADER_UNITS = {
    "VOLT": "V", "VOLTAGE": "V", "CURR": "A", "CURRENT": "A", "POW": "W", "POWER": "W",
    "RESISTANCE": "OHM", "FREQ": "HZ", "FREQUENCY": "HZ", "DEL": "S", "DELAY": "S", "TIM": "S", "TIMER": "S",
    "TIME": "S", "APER": "S", "APERTURE": "S", "BAND": "HZ", "BANDWIDTH": "HZ",
}


def parse_bool(text: str) -> bool:
    word = text.strip().upper()
    if word in {"1", "ON"}:
        return True
    if word in {"0", "OFF"}:
        return False
    try:
        return round(float(word)) != 0
    except ValueError:
        raise ScpiError(-224, f"expected ON|OFF|0|1, got {text!r}") from None


def mnemonic_matches(word: str, mnemonic: str) -> bool:
    """``word`` is the short form (upper-case letters) or the long form of ``mnemonic``."""
    short = "".join(ch for ch in mnemonic if ch.isupper() or ch.isdigit())
    w = word.strip().upper()
    return w == short or w == mnemonic.upper()


def parse_choice(text: str, choices: list[str]) -> str:
    """Character data: returns the canonical (short-form upper) choice, e.g. ``CURR``."""
    for choice in choices:
        if mnemonic_matches(text, choice):
            return "".join(ch for ch in choice if ch.isupper() or ch.isdigit())
    raise ScpiError(-224, f"{text!r} is not one of {', '.join(choices)}")


def parse_string(text: str) -> str:
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        return t[1:-1].replace(t[0] * 2, t[0])
    raise ScpiError(-151, f"expected a quoted string, got {text!r}")


def is_channel_list(text: str) -> bool:
    return text.strip().startswith("(@")


#: the most channels one list may name: a DAQ970A's three slots hold 120 (a range past it is
#: refused before it is expanded: ``(@1:100000000)`` must not take the lab's memory)
MAX_CHANNELS = 1000


def parse_channel_list(text: str) -> list[int]:
    """``(@1)``, ``(@101,102)``, ``(@101:110)``, ``(@1:3,5)``; ``(@)`` is the empty list.
    A list naming more than :data:`MAX_CHANNELS` channels is -222 (data out of range)."""
    t = text.strip()
    if not (t.startswith("(@") and t.endswith(")")):
        raise ScpiError(-104, f"expected a channel list like (@101), got {text!r}")
    body = t[2:-1].strip()
    if not body:
        return []
    out: list[int] = []
    for part in body.split(","):
        part = part.strip()
        try:
            if ":" in part:
                a, b = (int(x) for x in part.split(":", 1))
                step = 1 if b >= a else -1
                if len(out) + abs(b - a) + 1 > MAX_CHANNELS:
                    raise ScpiError(-222, f"channel list longer than {MAX_CHANNELS} channels")
                out.extend(range(a, b + step, step))
            else:
                out.append(int(part))
        except ValueError:
            raise ScpiError(-104, f"bad channel {part!r}") from None
        if len(out) > MAX_CHANNELS:
            raise ScpiError(-222, f"channel list longer than {MAX_CHANNELS} channels")
    return out


def format_channel_list(channels: list[int]) -> str:
    return "(@" + ",".join(str(c) for c in channels) + ")"


def definite_block(payload: str) -> str:
    """IEEE 488.2 definite-length block: ``#214(@101,102,103)``."""
    n = str(len(payload))
    return f"#{len(n)}{n}{payload}"
