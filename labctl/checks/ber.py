"""Bit-error-ratio statistics (Poisson): test length for a target BER at a confidence level,
and the BER upper bound a measurement supports.

With ``N`` bits compared and ``k`` errors seen, the confidence that the true BER is below
``ber`` is ``CL = 1 - sum_{i=0..k} (N*ber)^i * exp(-N*ber) / i!``. With zero errors this
gives the familiar ``N = -ln(1 - CL) / ber`` (≈ 3/ber at 95 %).
"""

from __future__ import annotations

import math


def poisson_cdf(k: int, lam: float) -> float:
    """P(X <= k) for X ~ Poisson(lam), summed in a numerically stable way."""
    if lam < 0 or k < 0:
        raise ValueError("poisson_cdf needs k >= 0 and lam >= 0")
    if lam == 0:
        return 1.0
    term = math.exp(-lam)
    total = term
    for i in range(1, k + 1):
        term *= lam / i
        total += term
    if term == 0.0 and k > 0:  # exp(-lam) underflowed: use logs
        total = sum(math.exp(-lam + i * math.log(lam) - math.lgamma(i + 1)) for i in range(k + 1))
    return min(total, 1.0)


def _check_cl(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence level must be between 0 and 1, got {confidence}")


def poisson_lambda_for(errors: int, confidence: float) -> float:
    """The mean ``λ = N·BER`` at which seeing at most ``errors`` errors has probability 1-CL."""
    _check_cl(confidence)
    if errors < 0:
        raise ValueError("errors must be >= 0")
    if errors == 0:
        return -math.log(1.0 - confidence)
    target = 1.0 - confidence
    lo, hi = 0.0, max(1.0, 2.0 * (errors + 1))
    while poisson_cdf(errors, hi) > target:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if poisson_cdf(errors, mid) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * hi:
            break
    return (lo + hi) / 2.0


def bits_required(target_ber: float, confidence: float, errors: int = 0) -> float:
    """Bits to compare so that ``errors`` errors still prove BER < target at ``confidence``."""
    if target_ber <= 0:
        raise ValueError("target BER must be > 0")
    return poisson_lambda_for(errors, confidence) / target_ber


def test_duration(target_ber: float, confidence: float, line_rate_bps: float, errors: int = 0) -> float:
    """Seconds of gated measurement at ``line_rate_bps`` for :func:`bits_required` bits."""
    if line_rate_bps <= 0:
        raise ValueError("line rate must be > 0")
    return bits_required(target_ber, confidence, errors) / line_rate_bps


test_duration.__test__ = False  # a formula, not a pytest test


def ber_upper_bound(bits: float, errors: int, confidence: float) -> float:
    """The BER that ``bits`` compared with ``errors`` errors supports at ``confidence``:
    the true BER is below this value with probability CL."""
    if bits <= 0:
        raise ValueError("no bits compared: the BER is unknown")
    return poisson_lambda_for(errors, confidence) / bits
