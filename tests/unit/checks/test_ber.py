"""BER duration and verdict follow the Poisson formulas (worked numbers)."""

from __future__ import annotations

import math

import pytest

from labctl.checks import ber


def test_zero_errors_is_minus_ln_one_minus_cl():
    assert ber.bits_required(1e-12, 0.95) == pytest.approx(2.995732e12, rel=1e-6)
    assert ber.bits_required(1e-12, 0.99) == pytest.approx(4.605170e12, rel=1e-6)


@pytest.mark.parametrize(("errors", "factor"), [(1, 4.744), (2, 6.296), (3, 7.754)])
def test_errors_need_more_bits_at_95_percent(errors, factor):
    assert ber.bits_required(1e-12, 0.95, errors=errors) == pytest.approx(factor * 1e12, rel=1e-3)


def test_duration_at_line_rate():
    # 3.0e12 bits at 20 Gb/s is about 150 s; at 56 Gb/s about 53.5 s.
    assert ber.test_duration(1e-12, 0.95, 20e9) == pytest.approx(149.79, rel=1e-3)
    assert ber.test_duration(1e-12, 0.95, 56e9) == pytest.approx(53.50, rel=1e-3)


def test_upper_bound_is_inverse_of_duration():
    bits = ber.bits_required(1e-12, 0.95, errors=2)
    assert ber.ber_upper_bound(bits, 2, 0.95) == pytest.approx(1e-12, rel=1e-9)


def test_upper_bound_with_errors_exceeds_raw_ratio():
    # 5 errors in 1e12 bits: raw ratio 5e-12, but the 95 % upper bound is 10.51e-12.
    assert ber.ber_upper_bound(1e12, 5, 0.95) == pytest.approx(10.513e-12, rel=1e-3)


def test_confidence_definition_holds():
    lam = ber.poisson_lambda_for(4, 0.9)
    assert 1 - ber.poisson_cdf(4, lam) == pytest.approx(0.9, abs=1e-9)


def test_large_error_counts_are_stable():
    lam = ber.poisson_lambda_for(2000, 0.95)
    assert 2000 < lam < 2000 + 3 * math.sqrt(2000)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5])
def test_bad_confidence_is_rejected(bad):
    with pytest.raises(ValueError, match="confidence"):
        ber.bits_required(1e-12, bad)


def test_no_bits_means_unknown():
    with pytest.raises(ValueError, match="no bits"):
        ber.ber_upper_bound(0, 0, 0.95)
