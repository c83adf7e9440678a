"""Lane signal quality: Q factor -> BER, eye size, and Poisson error arrivals."""

from __future__ import annotations

import math
import random

from labctl.sim.physics import constants as K
from labctl.sim.physics.dut import LaneParams


def lane_q(lane: LaneParams, die_temp: float, vio: float, vio_nominal: float = 0.90) -> float:
    """Q factor of one lane at a die temperature and IO rail voltage."""
    rise = die_temp - 25.0
    if lane.temp_scale and rise > 0:
        rise = lane.temp_scale * (1.0 - math.exp(-rise / lane.temp_scale))
    q = lane.q0 * (1.0 - lane.tempco * rise)
    under = max(0.0, 1.0 - vio / vio_nominal) if vio_nominal > 0 else 1.0
    q *= max(0.0, 1.0 - K.Q_VIO_SENS * under)
    return max(0.0, q)


def ber_from_q(q: float) -> float:
    """BER = 0.5 * erfc(Q / sqrt(2))."""
    return 0.5 * math.erfc(q / math.sqrt(2.0))


def eye_height_mv(q: float) -> float:
    return K.EYE_MV_PER_Q * q


def eye_width_ui(q: float) -> float:
    return min(0.7, K.EYE_UI_PER_Q * q)


def _closure(opening: float, q: float) -> float:
    """Half-width at which Q falls to 0 when the eye contour at Q_EYE is ``opening`` wide."""
    return opening / 2 / (1.0 - K.Q_EYE / q) if q > K.Q_EYE * 1.05 else opening / 2


def sampled_q(q: float, phase_ui: float = 0.0, threshold_mv: float = 0.0) -> float:
    """Q of a lane sampled ``phase_ui`` off the eye centre and ``threshold_mv`` off its middle.

    Q falls linearly with the offset on each axis (the dual-Dirac picture), to 0 at a
    half-width chosen so that the eye's opening at BER 1e-3 (Q_EYE) is the eye width/height
    the BERT reports; the phase half-width is at most 0.5 UI."""
    if q <= 0:
        return 0.0
    half_w = min(0.5, _closure(eye_width_ui(q), q))
    half_h = _closure(eye_height_mv(q), q)
    return q * max(0.0, 1.0 - abs(phase_ui) / half_w) * max(0.0, 1.0 - abs(threshold_mv) / half_h)


def poisson(rng: random.Random, lam: float) -> int:
    """A Poisson-distributed count with mean ``lam`` (Knuth for small, normal for large)."""
    if lam <= 0:
        return 0
    if lam < 30:
        limit = math.exp(-lam)
        k, p = 0, rng.random()
        while p > limit:
            k += 1
            p *= rng.random()
        return k
    return max(0, round(rng.gauss(lam, math.sqrt(lam))))


class ErrorArrivals:
    """The bit errors of one lane's checker as a Poisson process in expected errors.

    ``add(lam)`` returns the errors among bits whose expected count is ``lam``. The arrivals
    are drawn once, as exponential gaps in expected errors, so the count over a measurement
    depends only on the expected errors it accumulated, never on how the simulation sliced
    its time (how often instruments were polled, how loaded the machine was): a seeded lab
    counts the same errors run after run. Beyond ``_MANY`` expected errors in one slice
    (a lane far out of spec) the count is drawn at once, where slicing no longer matters."""

    _MANY = 1000.0

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._left = self._rng.expovariate(1.0)  # expected errors until the next arrival

    def add(self, lam: float) -> int:
        if lam <= 0:
            return 0
        if lam > self._MANY:
            return poisson(self._rng, lam)
        count = 0
        while lam >= self._left:
            lam -= self._left
            count += 1
            self._left = self._rng.expovariate(1.0)
        self._left -= lam
        return count
