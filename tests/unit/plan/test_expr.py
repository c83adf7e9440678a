"""The safe expression language: arithmetic with units, comparisons, templates, no eval."""

from __future__ import annotations

import pytest

from labctl.errors import ExpressionError
from labctl.plan.expr import Template, evaluate_text, names, parse
from labctl.units import Quantity, parse_quantity

ENV = {
    "vin": parse_quantity("12 V"),
    "lanes": 8,
    "ambient": parse_quantity("25 degC"),
    "die_max": parse_quantity("105 degC"),
    "quick": False,
    "pattern": "PRBS31",
    "tol": parse_quantity("5 %"),
}


@pytest.mark.parametrize(
    ("text", "unit", "value"),
    [
        ("vin * 0.95", "V", 11.4),
        ("vin * (1 - tol)", "V", 11.4),
        ("vin * 5 %", "V", 0.6),
        ("vin + 250 mV", "V", 12.25),
        ("(vin - 2 V) / 2", "V", 5.0),
        ("-vin", "V", -12.0),
        ("die_max - 10 degC", "degC", 95.0),
        ("ambient + 20 degC", "degC", 45.0),
        ("ambient - 5 K", "degC", 20.0),
        ("1.5 degC/min * 2", "K/min", 3.0),
        ("vin / 2 A", "ohm", 6.0),
    ],
)
def test_arithmetic_with_units(text, unit, value):
    result = evaluate_text(text, ENV)
    assert isinstance(result, Quantity)
    assert result.to(unit) == pytest.approx(value)


def test_plain_numbers_and_precedence():
    assert evaluate_text("lanes * 2 + 1", ENV) == 17
    assert evaluate_text("lanes * (2 + 1)", ENV) == 24
    assert evaluate_text("1e-12 * 3", ENV) == pytest.approx(3e-12)
    assert evaluate_text("7 / 2", ENV) == 3.5


def test_comparisons_and_logic():
    assert evaluate_text("ambient >= 25 degC and not quick", ENV) is True
    assert evaluate_text("ambient > 25 degC or quick", ENV) is False
    assert evaluate_text("vin == 12000 mV", ENV) is True
    assert evaluate_text('pattern == "PRBS31"', ENV) is True
    assert evaluate_text("pattern != 'PRBS7'", ENV) is True
    assert evaluate_text("not (lanes < 4)", ENV) is True


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("vin + 2 A", "cannot compute 12 V + 2 A: the units do not match", 4),
        ("vinn * 2", "undefined parameter 'vinn'", 0),
        ("vin *", "expression ends too early", 5),
        ("(vin", "missing ')'", 4),
        ("vin $ 2", "unexpected character '$' in expression", 4),
        ("vin 2", "unexpected '2' in expression", 4),
        ("lanes / 0", "division by zero", 6),
        ("pattern * 2", "cannot apply '*' to text 'PRBS31' and 2", 8),
        ("", "empty expression", 0),
        # and, or, not take true or false: each was read by its truthiness
        ("not lanes", "'not' takes true or false, but 8 is a number", 4),
        ("quick or pattern", "'or' takes true or false, but 'PRBS31' is text", 9),
        ("vin and true", "'and' takes true or false, but 12 V is a voltage", 0),
        # both sides are evaluated: a mistake behind a false is found at validation
        ("quick and lanez > 2", "undefined parameter 'lanez'", 10),
    ],
)
def test_errors_say_what_and_where(text, message, column):
    with pytest.raises(ExpressionError) as e:
        evaluate_text(text, ENV)
    assert e.value.message == message
    assert e.value.column == column
    assert e.value.hint or "undefined" in message  # and what to do (the plan loader adds "did you mean")


def test_no_python_escape_hatches():
    for text in ("__import__('os')", "vin.__class__", "open('x')", "[1, 2]", "lambda: 1"):
        with pytest.raises(ExpressionError):
            evaluate_text(text, ENV)


def test_names_lists_every_reference_with_its_offset():
    assert names(parse("a + b * (c - 1 V)")) == [("a", 0), ("b", 4), ("c", 9)]


def test_templates_keep_type_or_interpolate():
    whole = Template("${vin * 2}").render(ENV)
    assert whole == Quantity(24.0, "V")
    assert Template("lane ${lanes - 1} at ${vin}").render(ENV) == "lane 7 at 12 V"
    with pytest.raises(ExpressionError) as e:
        Template("x ${vin + 1 A} y").render(ENV)
    assert e.value.column == 8  # offset of '+' inside the whole string
    with pytest.raises(ExpressionError, match="unclosed") as e:
        Template("${vin").render(ENV)
    assert e.value.hint == "close it with '}': ${vin * 0.95}"


@pytest.mark.parametrize(
    ("text", "message", "column", "hint"),
    [  # pint's own words were shown: "Cannot compare PlainQuantity and <class 'int'>"
        ("ambient >= 25", "cannot compare 25 degC >= 25: 25 is a bare number and 25 degC is a temperature",
         11, "give the number a unit, e.g. 25 degC"),
        ("vin > -3", "cannot compare 12 V > -3: -3 is a bare number and 12 V is a voltage",
         6, "give the number a unit, e.g. -3 V"),
        ("lanes < vin", "cannot compare 8 < 12 V: 8 is a bare number and 12 V is a voltage",
         6, "give the number a unit, e.g. 8 V"),
        ("vin + 2", "cannot compute 12 V + 2: 2 is a bare number and 12 V is a voltage",
         6, "give the number a unit, e.g. 2 V"),
        # these were silently false (pint's == across units)
        ("vin == 12", "cannot compare 12 V == 12: 12 is a bare number and 12 V is a voltage",
         7, "give the number a unit, e.g. 12 V"),
        ("vin == 12 A", "cannot compare 12 V == 12 A: 12 V is a voltage and 12 A is a current",
         4, "both sides of a comparison need the same kind of unit"),
        ("vin > true", "cannot compare 12 V > true: true is a condition and 12 V is a voltage", 6, None),
        ("quick + 1", "cannot compute false + 1: false is a condition and 1 is a number", 6, None),
    ],
)
def test_mixed_kinds_are_said_in_our_words_with_a_hint(text, message, column, hint):
    with pytest.raises(ExpressionError) as e:
        evaluate_text(text, ENV)
    assert e.value.message == message
    assert e.value.column == column
    assert e.value.hint and (hint is None or e.value.hint == hint)
    assert "PlainQuantity" not in e.value.message and "class" not in e.value.message



def test_a_temperature_difference_stays_a_difference_and_a_rate_stays_a_rate():
    total = evaluate_text("10 delta_degC + 5 delta_degC", {})
    assert (total.magnitude, total.delta) == (15.0, True)
    assert evaluate_text("10 delta_degC + 5 delta_degC > 12 K", {}) is True
    assert str(evaluate_text("1.5 degC/min * 2", {})) == "3 degC/min"
