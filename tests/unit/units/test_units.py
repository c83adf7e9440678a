"""Quantities as lab engineers write them: parsing, dimensions, conversion, temperatures."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from labctl.errors import UnitError
from labctl.units import (
    Quantity,
    convert,
    parse_duration,
    parse_quantity,
    parse_tolerance,
    to_base,
)


@pytest.mark.parametrize(
    ("text", "unit", "dimension", "base"),
    [
        ("0.75 V", "V", "voltage", 0.75),
        ("750 mV", "V", "voltage", 0.75),
        ("3 %", "", "ratio", 0.03),
        ("5 min", "s", "time", 300.0),
        ("90 s", "s", "time", 90.0),
        ("2 ms", "s", "time", 0.002),
        ("56 Gbps", "bit/s", "data_rate", 56e9),
        ("56 Gbit/s", "bit/s", "data_rate", 56e9),
        ("32 GT/s", "GT/s", "transfer_rate", 32.0),
        ("1e-12", "", "ratio", 1e-12),
        ("20 A", "mA", "current", 20000.0),
        ("350 W", "kW", "power", 0.35),
        ("20 MHz", "Hz", "frequency", 20e6),
        ("10 TOPS/W", "TOPS/W", "perf_per_watt", 10.0),
        ("105 degC", "degC", "temperature", 105.0),
        ("25 °C", "K", "temperature", 298.15),
        ("1.5 degC/min", "K/s", "temperature_rate", 0.025),
        ("0.2 K/W", "K/W", "thermal_resistance", 0.2),
        ("10 uA", "A", "current", 1e-5),
        ("4.7 kohm", "ohm", "resistance", 4700.0),
    ],
)
def test_parse_and_convert(text, unit, dimension, base):
    q = parse_quantity(text)
    assert q.dimension == dimension
    assert math.isclose(q.to(unit), base, rel_tol=1e-9)


def test_bare_number_is_a_ratio_and_floats_pass_through():
    assert parse_quantity(1e-12) == Quantity(1e-12, "")
    assert parse_quantity("0.95").is_ratio


def test_plus_minus_forms_are_tolerances():
    for text in ("±25 mV", "+-25 mV", "+/-25 mV"):
        q = parse_quantity(text)
        assert q.delta and q.to("V") == pytest.approx(0.025)
    assert str(parse_quantity("±25 mV")) == "±25 mV"


def test_temperature_offsets_versus_differences():
    # a temperature is a point on the scale ...
    assert parse_quantity("105 degC").to("K") == pytest.approx(378.15)
    # ... a tolerance on it is a difference: half a kelvin, not 273.65 K
    tol = parse_tolerance("±0.5 degC", "temperature")
    assert tol.to("K") == pytest.approx(0.5)
    assert tol.to("mK") == pytest.approx(500.0)
    assert parse_tolerance("0.5 degC", "temperature").delta


def test_relative_tolerance_stays_relative():
    tol = parse_tolerance("3 %", "voltage")
    assert tol.is_ratio and tol.to("") == pytest.approx(0.03)


def test_wrong_dimension_names_expected_and_got():
    with pytest.raises(UnitError) as e:
        parse_quantity("2 A", "voltage", what="limits.max")
    assert str(e.value) == "limits.max: 2 A is a current, expected a voltage (e.g. 0.75 V, 750 mV)"
    assert e.value.hint and "voltage" in e.value.hint


def test_number_without_unit_where_one_is_needed():
    with pytest.raises(UnitError) as e:
        parse_quantity(12, "voltage")
    assert "has no unit" in str(e.value)
    assert e.value.hint == "add the unit, e.g. '12 V'"


def test_unknown_unit_suggests_a_close_one():
    with pytest.raises(UnitError) as e:
        parse_quantity("3 Vv")
    assert str(e.value) == "unknown unit 'Vv' in '3 Vv'"
    assert "did you mean 'V'" in e.value.hint


def test_data_rate_is_not_a_frequency():
    with pytest.raises(UnitError):
        parse_quantity("56 Gbps", "frequency")


def test_not_a_quantity():
    with pytest.raises(UnitError, match="is not a quantity"):
        parse_quantity("fast")
    with pytest.raises(UnitError):
        parse_quantity(True)
    # digits of another script are not a number here (Python's float reads them)
    with pytest.raises(UnitError, match="is not a quantity"):
        parse_quantity("５ V")
    # a nonzero number written too small for a double is not silently 0
    with pytest.raises(UnitError, match="too small to be told from 0"):
        parse_quantity("5e-400 V")
    assert parse_quantity("0e5 V").magnitude == 0.0


def test_durations():
    assert parse_duration("5 min") == 300.0
    assert parse_duration("90 s") == 90.0
    assert parse_duration(2) == 2.0
    assert parse_duration("2 ms") == pytest.approx(0.002)
    with pytest.raises(UnitError, match="expected a time"):
        parse_duration("5 V")
    with pytest.raises(UnitError, match="negative"):
        parse_duration("-1 s")


def test_helpers():
    assert to_base(750, "mV") == pytest.approx(0.75)
    assert to_base(25, "degC") == pytest.approx(298.15)
    assert convert(750, "mV", "V") == pytest.approx(0.75)
    assert convert(1, "degC", "K", delta=True) == pytest.approx(1.0)
    assert convert(3, "%", "") == pytest.approx(0.03)
    with pytest.raises(UnitError, match="cannot convert"):
        parse_quantity("1 V").to("A")


def test_importing_units_does_not_import_pint():
    code = "import sys, labctl.units; print('pint' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_display_forms():
    from labctl.units import display_symbol, format_quantity, looks_like_quantity

    assert str(parse_quantity("32 GT/s")) == "32 GT/s"
    assert str(parse_quantity("56 Gbps")) == "56 Gbps"
    assert str(parse_quantity("3 %")) == "3 %"
    assert str(parse_quantity("1.5 degC/min")) == "1.5 degC/min"
    assert display_symbol("delta_degC") == "degC"
    assert format_quantity(0.75123, "V") == "0.7512 V"
    assert format_quantity(95, "percent") == "95 %"
    assert looks_like_quantity("0.75 V") and looks_like_quantity("1e-12") and looks_like_quantity("±25 mV")
    assert not looks_like_quantity("PRBS31") and not looks_like_quantity("L0") and not looks_like_quantity("5$")


def test_format_span_reads_like_a_clock_and_never_shows_sixty_seconds():
    from labctl.units import format_span

    assert [format_span(s) for s in (0.04, 42.14, 59.96, 125.3, 3599.4, 3599.6, 7325, -3.5)] == [
        "0.0s", "42.1s", "1m00.0s", "2m05.3s", "59m59.4s", "1h00m00s", "2h02m05s", "-3.5s"]


def test_ran_seconds_is_the_sessions_together_and_unknown_while_one_runs():
    from labctl.units import ran_seconds

    weekend = 2 * 86400
    assert ran_seconds([(0.0, 600.0), (600.0 + weekend, 900.0 + weekend)]) == 900.0
    assert ran_seconds([(0.0, 600.0), (700.0, None)]) is None
    assert ran_seconds([]) is None


@pytest.mark.parametrize("text", ["1 month", "0.5 months"])
def test_a_month_is_no_duration_a_plan_may_hold_for(text):
    """pint reads a month as a twelfth of a year (30.44 days): a plan saying `hold: 1 month`
    meant a calendar month, which has 28 to 31 days. It is refused with what to write."""
    with pytest.raises(UnitError, match="is no fixed time") as info:
        parse_duration(text, what="hold")
    assert str(info.value).startswith(f"hold: {text}") and "30 d" in info.value.hint
