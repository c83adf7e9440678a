"""Limit semantics: min/max, nominal ± tol (absolute or %), equals, regex, marginal band."""

from __future__ import annotations

import re

import pytest

from labctl.errors import UnitError
from labctl.plan.limits import ResolvedLimit, resolve
from labctl.plan.model import Limit


def _limit(**kw) -> ResolvedLimit:
    unit = kw.pop("unit", "V")
    dimension = kw.pop("dimension", "voltage")
    delta = kw.pop("delta", False)
    return resolve(Limit.model_validate(kw), unit=unit, dimension=dimension, delta=delta)


def test_nominal_with_relative_tolerance():
    lim = _limit(nominal="0.75 V", tol="3 %")
    assert (lim.lo, lim.hi) == pytest.approx((0.7275, 0.7725))
    assert lim.judge(0.75) == "pass"
    assert lim.judge(0.7275) == "pass"  # bounds are inclusive
    assert lim.judge(0.7274) == "fail"
    assert lim.judge(0.80) == "fail"


def test_nominal_with_absolute_tolerance_in_other_prefix():
    lim = _limit(nominal="750 mV", tol="±25 mV")
    assert (lim.lo, lim.hi) == pytest.approx((0.725, 0.775))
    assert lim.describe() == "0.725 V ≤ x ≤ 0.775 V"


def test_marginal_band_is_a_fraction_of_the_window():
    lim = _limit(nominal="0.75 V", tol="3 %", marginal="10 %")
    assert lim.marginal == pytest.approx(0.0045)
    assert lim.judge(0.75) == "pass"
    assert lim.judge(0.7300) == "marginal"  # within 4.5 mV of the lower edge
    assert lim.judge(0.7700) == "marginal"
    assert lim.judge(0.7800) == "fail"


def test_marginal_band_on_one_sided_limit_and_absolute_band():
    lim = _limit(max="105 degC", marginal="5 degC", unit="degC", dimension="temperature")
    assert lim.hi == 105 and lim.marginal == pytest.approx(5.0)
    assert lim.judge(99) == "pass"
    assert lim.judge(101) == "marginal"
    assert lim.judge(106) == "fail"
    pct = _limit(min="6 TOPS/W", marginal="5 %", unit="TOPS/W", dimension="perf_per_watt")
    assert pct.marginal == pytest.approx(0.3)
    assert pct.judge(6.2) == "marginal"


def test_the_inner_edge_of_a_marginal_band_is_marginal():
    # docs/plans.md: "max: 105 degC, marginal: 5 degC flags 100–105 degC", "6.0–6.3 TOPS/W"
    hot = _limit(max="105 degC", marginal="5 degC", unit="degC", dimension="temperature")
    assert (hot.judge(100.0), hot.judge(99.999), hot.judge(105.0)) == ("marginal", "pass", "marginal")
    pct = _limit(min="6 TOPS/W", marginal="5 %", unit="TOPS/W", dimension="perf_per_watt")
    assert (pct.judge(6.3), pct.judge(6.3001)) == ("marginal", "pass")


def test_marginal_band_cannot_cover_the_window():
    with pytest.raises(UnitError, match="covers the whole window"):
        _limit(min="1 V", max="2 V", marginal="60 %")


def test_temperatures_convert_as_points_and_tolerances_as_differences():
    lim = _limit(nominal="25 degC", tol="±1 degC", unit="K", dimension="temperature")
    assert (lim.lo, lim.hi) == pytest.approx((297.15, 299.15))
    # a limit on a temperature *difference* (overshoot) is a difference too
    delta = _limit(max="2 degC", unit="K", dimension="temperature", delta=True)
    assert delta.hi == pytest.approx(2.0)


def test_ratio_limits():
    lim = _limit(max="1e-12", unit="", dimension="ratio")
    assert lim.judge(9e-13) == "pass" and lim.judge(2e-12) == "fail"
    pct = _limit(min="100 %", unit="%", dimension="ratio")
    assert pct.lo == pytest.approx(100.0)


def test_equals_and_regex():
    assert _limit(equals="L0", unit=None, dimension=None).judge("L0") == "pass"
    assert _limit(equals="L0", unit=None, dimension=None).judge("RCVRY_LOCK") == "fail"
    assert _limit(equals=8, unit="", dimension="ratio").judge(8) == "pass"
    rx = _limit(regex=r"serial \S+", unit=None, dimension=None)
    assert rx.judge("serial SIM-GOLD-0001") == "pass"
    assert rx.judge("no answer") == "fail"


def test_not_a_number_fails():
    lim = _limit(max="1 V")
    assert lim.judge(float("nan")) == "fail"
    assert lim.judge("garbage") == "fail"


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ({"nominal": "1 V"}, "nominal needs tol"),
        ({"tol": "3 %"}, "tol needs nominal"),
        ({"min": "1 V", "nominal": "1 V", "tol": "1 %"}, "either min/max or nominal + tol"),
        ({"equals": 3, "max": "1 V"}, "cannot be combined"),
        ({"marginal": "10 %"}, "a limit needs"),
        ({"regex": "("}, "regex is not valid"),
        ({"min": "2 V", "max": "1 V"}, "min (2 V) is above max (1 V)"),
    ],
)
def test_bad_combinations(limit, message):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=re.escape(message)):
        Limit.model_validate(limit)
