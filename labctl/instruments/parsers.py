"""Reply parsers named by profiles: float, int, bool, enum, regex, csv, kv, block, str.

Each takes the reply text and the property spec (for ``values``, ``pattern``, ``item``)
and returns a Python value, or raises :class:`ReplyParseError` with a short reason.
"""

from __future__ import annotations

import math
import re
from typing import Any

TRUE_WORDS = {"1", "ON", "TRUE", "YES", "+1"}
FALSE_WORDS = {"0", "OFF", "FALSE", "NO", "+0"}


class ReplyParseError(ValueError):
    """The reply does not have the shape the profile declares."""


#: the most characters of a reply an error message quotes (the session log keeps it whole)
QUOTED_MAX = 200


def quoted(text: str) -> str:
    """``text`` as an error message quotes it: its repr, cut at :data:`QUOTED_MAX` characters
    with its length said (a 5 MB garbage reply must not become three 5 MB lines of output and
    a 5 MB step message in the store)."""
    if len(text) <= QUOTED_MAX:
        return repr(text)
    return f"{text[:QUOTED_MAX]!r}… ({len(text):,} characters)"


def _not_a_numeral(text: str) -> bool:
    """What Python's number parsing takes but no instrument sends: a digit group separator
    (``0.7_5`` would read 0.75) or a digit of another script (``５``)."""
    return "_" in text or not text.isascii()


def to_float(text: str) -> float:
    try:
        if _not_a_numeral(text):
            raise ValueError(text)
        value = float(text) if '"' not in text else float(text.strip().strip('"'))  # float() strips blanks
    except ValueError:
        raise ReplyParseError(f"expected a number, got {quoted(text)}") from None
    if not math.isfinite(value):  # NaN passes no limit check by failing it: never a value
        raise ReplyParseError(f"expected a number, got {quoted(text)} (not a finite number)")
    return value


def to_int(text: str) -> int:
    s = text.strip().strip('"')
    if _not_a_numeral(s):
        raise ReplyParseError(f"expected an integer, got {quoted(text)}")
    try:
        return int(s, 0) if s.lower().startswith(("0x", "0b")) else int(s)
    except ValueError:
        pass
    try:
        f = float(s)
    except ValueError:
        raise ReplyParseError(f"expected an integer, got {quoted(text)}") from None
    if f != int(f):
        raise ReplyParseError(f"expected an integer, got {quoted(text)}")
    return int(f)


def to_bool(text: str, values: dict[str, Any] | None = None) -> bool:
    s = text.strip().strip('"').upper()
    if values:
        for wire, val in values.items():
            if str(wire).upper() == s:
                return bool(val)
    if s in TRUE_WORDS:
        return True
    if s in FALSE_WORDS:
        return False
    try:
        number = float(s) if not _not_a_numeral(s) else math.nan
    except ValueError:
        number = math.nan
    if number in (0.0, 1.0):  # "+1.00000000E+00"; an overload marker or NaN is no boolean
        return number == 1.0
    raise ReplyParseError(f"expected a boolean (1/0, ON/OFF), got {quoted(text)}")


def to_str(text: str) -> str:
    s = text.strip()
    if len(s) >= 2 and s[0] == s[-1] == '"':
        s = s[1:-1]
    return s


ITEM_TYPES = {"float": to_float, "int": to_int, "str": to_str, "bool": to_bool}


def convert(text: str, item: str) -> Any:
    return ITEM_TYPES[item](text)


def parse_enum(text: str, values: dict[str, Any]) -> Any:
    s = to_str(text).upper()
    for wire, val in values.items():
        if str(wire).upper() == s:
            return val
    raise ReplyParseError(f"expected one of {sorted(map(str, values))}, got {quoted(text)}")


def parse_block(text: str) -> str:
    """IEEE 488.2 definite-length block ``#214(@101,102,103)`` → its payload."""
    s = text.strip()
    if not s.startswith("#") or len(s) < 2 or not s[1].isdigit():
        return s
    ndigits = int(s[1])
    if ndigits == 0:
        return s[2:]
    try:
        length = int(s[2 : 2 + ndigits])
    except ValueError:
        raise ReplyParseError(f"bad block header in {quoted(text)}") from None
    return s[2 + ndigits : 2 + ndigits + length]


def parse_regex(text: str, pattern: str, item: str) -> Any:
    m = re.search(pattern, text)
    if not m:
        raise ReplyParseError(f"reply {quoted(text)} does not match /{pattern}/")
    named = {k: v for k, v in m.groupdict().items() if v is not None}
    if named and set(named) != {"value"}:
        return {k: convert(v, item) for k, v in named.items()}
    raw = named.get("value", m.group(1) if m.groups() else m.group(0))
    return convert(raw, item)


_KV = re.compile(r"([A-Za-z_][\w.\-]*)\s*[=:]\s*(\"[^\"]*\"|[^\s,;]+)")


def parse_kv(text: str, item: str) -> dict[str, Any]:
    """``lid=45.2 hbm=61.0`` (or ``a: 1, b: 2``) → ``{"lid": 45.2, "hbm": 61.0}``."""
    pairs = _KV.findall(text)
    if not pairs:
        raise ReplyParseError(f"expected key=value pairs, got {quoted(text)}")
    return {k: convert(v, item) for k, v in pairs}


def parse_table(text: str, item: str) -> dict[str, Any]:
    """Lines ``NAME VALUE [UNIT]`` → ``{NAME: VALUE}`` (a value that does not convert stays text)."""
    out: dict[str, Any] = {}
    to_item = ITEM_TYPES[item]
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        try:
            out[parts[0]] = to_item(parts[1])
        except ReplyParseError:
            out[parts[0]] = parts[1]
    if not out:
        raise ReplyParseError(f"expected lines of NAME VALUE [UNIT], got {quoted(text)}")
    return out


def parse_records(text: str, pattern: str, item: str) -> list[dict[str, Any]]:
    """Each line matching ``pattern`` → a dict of its named groups (digits converted)."""
    rx = re.compile(pattern)
    out = []
    for line in text.splitlines():
        m = rx.search(line)
        if m:
            rec = {}
            for key, raw in m.groupdict().items():
                if raw is None:
                    rec[key] = None
                    continue
                try:
                    rec[key] = convert(raw, item)
                except ReplyParseError:
                    rec[key] = raw
            out.append(rec)
    return out


def parse_reply(text: str, kind: str, *, values: dict[str, Any] | None = None, pattern: str | None = None,
                item: str = "float", separator: str = ",") -> Any:
    if kind == "float":
        if values and to_str(text) in values:  # a word that stands for a value ("-------": no data)
            return values[to_str(text)]
        return to_float(text)
    if kind == "int":
        return to_int(text)
    if kind == "bool":
        return to_bool(text, values)
    if kind == "enum":
        return parse_enum(text, values or {})
    if kind == "str":
        return to_str(text)
    if kind == "csv":
        body = text.strip()
        if not body:
            return []
        return [convert(p, item) for p in body.split(separator)]
    if kind == "regex":
        return parse_regex(text, pattern or "(.*)", item)
    if kind == "kv":
        return parse_kv(text, item)
    if kind == "table":
        return parse_table(text, item)
    if kind == "records":
        return parse_records(text, pattern or "(?P<line>.*)", item)
    if kind == "lines":
        return [line for line in text.splitlines() if line.strip()]
    if kind == "block":
        return parse_block(text)
    raise ReplyParseError(f"unknown parser {kind!r}")
