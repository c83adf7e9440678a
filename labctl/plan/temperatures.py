"""The plan language's rule for comparing temperatures (docs/plans.md, "Quantities and units").

A degC value is a point on a scale, but a plan also writes differences in degC
(``${die_max - 10 degC}``), and kelvin is how people write a rise (``10 K``). So a
comparison of two temperatures in units with different zero points (K, degC, degF) has two
answers: ``10 K > 5 degC`` is false for the temperatures (-263.15 degC against 5 degC) and true
for the differences (10 K against 5 K). labctl refuses to guess: temperatures are compared in
one unit. A difference (``±0.5 degC``, ``10 delta_degC``, a rate's worth) compares with
any temperature unit, which is then read as a difference, as in ``+`` and ``-``.

Every comparison path uses :func:`mixed_scales`: ``when:`` and ``${…}`` comparisons
(:mod:`labctl.plan.expr`), limits against a measurement (:mod:`labctl.plan.loaded`) and safety
interlock bounds (:mod:`labctl.plan.crosschecks`).
"""

from __future__ import annotations

from typing import Any

from labctl.units import Quantity, display_symbol

#: unit (as parsed) -> the unit of its scale's zero point
_ZERO_POINTS = {"degC": "degC", "celsius": "degC", "degree_Celsius": "degC",
                "degF": "degF", "fahrenheit": "degF", "degree_Fahrenheit": "degF"}


def scale_of(value: Any) -> str | None:
    """``degC``, ``degF`` or ``K`` for a temperature on a scale; None for a difference or for
    anything that is not a temperature (kelvin and its prefixes share one zero point)."""
    if not isinstance(value, Quantity) or value.delta or not value.unit:
        return None
    if value.unit in _ZERO_POINTS:
        return _ZERO_POINTS[value.unit]
    if value.unit.startswith("delta_") or value.dimension != "temperature":
        return None
    return "K"


def mixed_scales(left: Any, right: Any, op: str = "vs") -> tuple[str, str] | None:
    """``(why, what to write)`` when ``left`` and ``right`` are temperatures in units with
    different zero points (the comparison would have two answers); None when they compare."""
    a, b = scale_of(left), scale_of(right)
    if a is None or b is None or a == b:
        return None
    scale = "degC" if "degC" in (a, b) else b  # temperatures in the plan's usual scale
    why = (f"{a} and {b} have different zero points: as temperatures this is "
           f"{_point_in(left, scale)} {op} {_point_in(right, scale)}, as differences "
           f"{_diff_in(left, 'K')} {op} {_diff_in(right, 'K')}")
    unit = display_symbol(left.unit)
    hint = (f"write both sides in {unit}, as you mean it: {_point_in(right, left.unit)} "
            f"(the temperature {right}) or {_diff_in(right, left.unit)} (a difference of {right})")
    return why, hint


def _point_in(q: Quantity, unit: str) -> str:
    return f"{_num(q.to(unit))} {display_symbol(unit)}"


def _diff_in(q: Quantity, unit: str) -> str:
    return f"{_num(Quantity(q.magnitude, q.unit, delta=True).to(unit))} {display_symbol(unit)}"


def _num(x: float) -> str:
    return f"{round(x, 6):g}"


def off_scale(value: Any, unit: str, reading: str) -> tuple[str, str] | None:
    """``(why, what to write)`` when ``value``, a bound on a temperature read in ``unit``
    (``reading``: "die_temp is measured in"), is a temperature in a unit with another zero
    point (``max: 378 K`` on a degC reading): a K bound is as often meant as a rise."""
    a, b = scale_of(value), scale_of(Quantity(0.0, unit))
    if a is None or b is None or a == b:
        return None
    shown = display_symbol(unit)
    why = f"{value} is in {a}, but {reading} {shown}, a scale with another zero point"
    hint = (f"write it in {shown}: the temperature {value} is {_point_in(value, unit)}; "
            "a difference belongs in tol: or marginal:")
    return why, hint
