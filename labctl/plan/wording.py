"""pydantic's errors in a plan author's words: what is wrong and what to write instead, for
:func:`labctl.plan.source.pydantic_errors`."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

_WHOLE = ("expected a whole number", "write a whole number, without quotes or a unit (e.g. 4)")
_NUMBER = ("expected a number", "write a number (e.g. 0.5)")
_BOOL = ("expected true or false", "write true or false (yes, no, on and off are words, not booleans)")
_MAPPING = ("expected a mapping (key: value lines)", "write key: value lines below it, or {key: value, …}")
#: error type -> (what was expected, what to write)
_TYPES = {
    "string_type": ("expected text", "write text; quote what YAML would read as a number or true/false"),
    "int_type": _WHOLE, "int_parsing": _WHOLE, "int_from_float": _WHOLE,
    "float_type": _NUMBER, "float_parsing": _NUMBER,
    "bool_type": _BOOL, "bool_parsing": _BOOL,
    "list_type": ("expected a list (- item lines or [a, b])", "write a list: [a, b], or one '- item' line per item"),
    "dict_type": _MAPPING, "model_type": _MAPPING, "model_attributes_type": _MAPPING,
}
_BOUNDS = {"greater_than_equal": ("≥", "ge"), "greater_than": (">", "gt"),
           "less_than_equal": ("≤", "le"), "less_than": ("<", "lt")}


def explain(e: dict[str, Any]) -> tuple[str, str | None]:
    """(what is wrong, what to write instead or None) for one of pydantic's ``errors()``."""
    from labctl.plan.source import suggest  # (source words its errors with this module)

    etype = e["type"]
    ctx = e.get("ctx") or {}
    got = e.get("input")
    if etype == "literal_error":
        expected = ctx.get("expected", "")
        close = suggest(str(got), re.findall(r"'([^']*)'", expected)) if isinstance(got, str) else None
        return (f"expected {expected}, got {got!r}" + (f"; did you mean {close!r}?" if close else ""),
                f"write one of {expected}")
    if etype in _BOUNDS:
        sym, key = _BOUNDS[etype]
        return f"must be {sym} {ctx.get(key)}, got {got!r}", f"give a value {sym} {ctx.get(key)}"
    if etype == "too_short":
        return (f"needs at least {ctx.get('min_length')} item(s), got {ctx.get('actual_length')}",
                f"give at least {ctx.get('min_length')} item(s)")
    if etype == "too_long":
        return (f"takes at most {ctx.get('max_length')} item(s), got {ctx.get('actual_length')}",
                f"give at most {ctx.get('max_length')} item(s)")
    if etype == "string_pattern_mismatch":
        return (f"{got!r} is not a valid name (letters, digits, _ . -; starting with a letter or _)",
                "use letters, digits, _ . - and start with a letter or _ (e.g. rails_loaded)")
    if etype in _TYPES:
        expected, hint = _TYPES[etype]
        shown = "a mapping" if isinstance(got, dict) else "a list" if isinstance(got, list) else repr(got)
        if isinstance(got, dt.date):  # YAML reads 2024-01-01 as a date
            shown = f"the date {got.isoformat()}"
            hint = f'quote it: "{got.isoformat()}" (YAML reads an unquoted date as a date)'
        return f"{expected}, got {shown}", _fitted_hint(etype, got) or hint
    msg = str(e["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    return msg, None


def _fitted_hint(etype: str, got: Any) -> str | None:
    """The value as it should be written, for a short scalar where a list or text is wanted."""
    if not isinstance(got, str | int | float) or len(str(got)) > 40:
        return None
    written = str(got).lower() if isinstance(got, bool) else str(got)
    if etype == "list_type":
        return f"write a list: [{written}]"
    if etype == "string_type":
        return f"quote it to make it text: '{written}'"
    return None
