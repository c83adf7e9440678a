"""Limits resolved to numbers in the measurement's unit, and the verdict they give.

``nominal: 0.75 V, tol: 3 %`` becomes ``lo = 0.7275, hi = 0.7725`` (in V); a ``marginal``
band of ``10 %`` of that window makes readings within 4.5 mV of either edge MARGINAL (a pass
that deserves a look). Bounds are inclusive. ``regex`` uses ``re.search``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from labctl.errors import UnitError
from labctl.units import Quantity, display_symbol, format_quantity

Verdict = Literal["pass", "marginal", "fail"]


@dataclass(frozen=True)
class ResolvedLimit:
    """Numeric bounds (or an exact/regex rule) of one measurement, in ``unit``."""

    unit: str = ""
    lo: float | None = None
    hi: float | None = None
    marginal: float = 0.0  # width of the guard band inside [lo, hi], in unit
    equals: Any = None
    regex: str | None = None
    nominal: float | None = None

    def judge(self, value: Any) -> Verdict:
        """``pass``, ``marginal`` (passes, but inside the guard band) or ``fail``."""
        if self.regex is not None:
            return "pass" if re.search(self.regex, str(value)) else "fail"
        if self.equals is not None:
            if isinstance(self.equals, float | int) and isinstance(value, float | int):
                return "pass" if math.isclose(float(value), float(self.equals), rel_tol=1e-12) else "fail"
            return "pass" if str(value) == str(self.equals) else "fail"
        try:
            v = float(value)
        except (TypeError, ValueError):
            return "fail"
        if math.isnan(v):
            return "fail"
        if self.lo is not None and v < self.lo:
            return "fail"
        if self.hi is not None and v > self.hi:
            return "fail"
        if self.marginal > 0:  # the band's inner edge belongs to it (max 105, band 5: 100–105)
            if self.lo is not None and v <= self.lo + self.marginal:
                return "marginal"
            if self.hi is not None and v >= self.hi - self.marginal:
                return "marginal"
        return "pass"

    def describe(self) -> str:
        """``0.7275 V ≤ x ≤ 0.7725 V`` / ``x ≤ 105 degC`` / ``x == 'L0'`` for reports."""
        if self.regex is not None:
            return f"x ~ /{self.regex}/"
        if self.equals is not None:
            return f"x == {self.equals!r}"
        lo = format_quantity(self.lo, self.unit) if self.lo is not None else None
        hi = format_quantity(self.hi, self.unit) if self.hi is not None else None
        text = f"{lo} ≤ x ≤ {hi}" if lo and hi else (f"x ≥ {lo}" if lo else f"x ≤ {hi}")
        if self.marginal:
            text += f" (marginal band {format_quantity(self.marginal, self.unit)})"
        return text

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()
                if not k.startswith("_") and (v is not None and v != 0.0 or k == "unit")}


def _in(q: Quantity, unit: str, delta: bool) -> float:
    if delta and not q.delta:
        q = Quantity(q.magnitude, q.unit, delta=True)
    return q.to(unit)


def resolve(
    limit: Any,
    *,
    unit: str | None,
    dimension: str | None,
    delta: bool = False,
) -> ResolvedLimit:
    """Turn a :class:`~labctl.plan.model.Limit` whose values are all concrete quantities into
    numbers in ``unit`` (the measurement's display unit; the limit's own unit when None)."""
    from labctl.units import parse_quantity

    def q(v: Any, what: str) -> Quantity:
        return parse_quantity(v, None, what=what)

    if limit.regex is not None:
        return ResolvedLimit(unit=unit or "", regex=limit.regex)
    if limit.equals is not None:
        eq = limit.equals
        if isinstance(eq, Quantity) or (isinstance(eq, str) and _numeric(eq) and dimension):
            eqq = q(eq, "equals")
            target = unit if unit is not None else eqq.unit
            return ResolvedLimit(unit=target or "", equals=_in(eqq, target or "", delta))
        return ResolvedLimit(unit=unit or "", equals=eq)
    first = next((v for v in (limit.nominal, limit.min, limit.max) if v is not None), None)
    if first is None:
        raise UnitError("the limit has no value", hint="give min, max or nominal + tol")
    target = unit if unit is not None else q(first, "limit").unit
    target = target or ""
    lo = hi = nominal = None
    if limit.nominal is not None:
        nom = q(limit.nominal, "nominal")
        nominal = _in(nom, target, delta)
        tol = limit.tol
        width = abs(nominal) * tol.to("") if tol.is_ratio else _in(tol, target, True)
        lo, hi = nominal - width, nominal + width
    else:
        if limit.min is not None:
            lo = _in(q(limit.min, "min"), target, delta)
        if limit.max is not None:
            hi = _in(q(limit.max, "max"), target, delta)
    band = 0.0
    if limit.marginal is not None:
        m = limit.marginal
        if m.is_ratio:
            if lo is not None and hi is not None:
                band = (hi - lo) * m.to("")
            else:
                band = abs(lo if lo is not None else hi or 0.0) * m.to("")
        else:
            band = _in(m, target, True)
        if lo is not None and hi is not None and band * 2 >= (hi - lo):
            raise UnitError(
                f"marginal band ({format_quantity(band, target)}) covers the whole window "
                f"({format_quantity(lo, target)} .. {format_quantity(hi, target)})",
                hint="a marginal band is a small guard band inside the limits, e.g. 10 %",
            )
    return ResolvedLimit(unit=target, lo=lo, hi=hi, marginal=band, nominal=nominal)


def _numeric(text: str) -> bool:
    return bool(re.match(r"^\s*[-+]?(\d|\.\d)", text))


def unit_label(unit: str) -> str:
    return display_symbol(unit)
