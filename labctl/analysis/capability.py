"""Process capability per measured characteristic: Cp and Cpk against the limits.

Cp = (USL − LSL) / 6σ and Cpk = min(USL − μ, μ − LSL) / 3σ with the sample standard deviation
(ddof = 1). With only one limit, Cp is undefined and Cpk is the one-sided index of that limit
(Cpu = (USL − μ)/3σ or Cpl = (μ − LSL)/3σ). Cpk ≥ 1.33 is capable, 1.0–1.33 marginal, < 1.0
not capable.

When every value is the same (n ≥ 2, σ = 0) the indices have no finite value: Cp and Cpk are
+inf when the value is inside the limits, and the rating says so (``n/a (σ = 0)``: no spread
to rate, often a reading coarser than the limits); Cpk is −inf when it is outside a limit (not
capable) and 0 on a limit. Fewer than two values: NaN and ``-``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from labctl.analysis.frames import KEY

CAPABLE = 1.33
MINIMUM = 1.0
RATINGS = ("capable", "marginal", "not capable")
NO_SPREAD = "n/a (σ = 0)"  # every value the same, inside the limits: Cpk is infinite, nothing to rate


def rating(cpk: float) -> str:
    """``capable`` (≥ 1.33), ``marginal`` (1.0–1.33), ``not capable`` (< 1.0), ``n/a (σ = 0)``
    (+inf: no spread) or ``-`` (undefined)."""
    if cpk is None or np.isnan(cpk):
        return "-"
    if cpk == np.inf:
        return NO_SPREAD
    return "capable" if cpk >= CAPABLE else "marginal" if cpk >= MINIMUM else "not capable"


def index_text(v: float | None, spec: str = ".3g") -> str:
    """Cp or Cpk as a person reads it: ``∞`` / ``-∞`` when σ = 0, ``-`` when undefined."""
    if v is None or np.isnan(v):
        return "-"
    if np.isinf(v):
        return "∞" if v > 0 else "-∞"
    return format(float(v), spec)


def _index(distance: pd.Series, three_sigma: pd.Series, no_spread: pd.Series) -> pd.Series:
    """distance / 3σ; with σ = 0 the limit of that ratio: ±inf, or 0 on the limit itself."""
    with np.errstate(divide="ignore", invalid="ignore"):
        flat = np.sign(distance) * np.inf
    flat = flat.where(distance != 0, 0.0)
    return (distance / three_sigma.where(~no_spread)).where(~no_spread, flat)


def capability(df: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """One row per characteristic (``KEY`` plus ``by``) with limits: n, mean, std, min, max,
    low, high, Cp, Cpk, the side Cpk rests on, fails and its rating; worst Cpk first.

    ``df`` is a :func:`labctl.analysis.frames.prepare`-d frame. Characteristics without a numeric
    limit, or with fewer than two values, get NaN indices."""
    keys = KEY + [b for b in (by or []) if b not in KEY]
    d = df[df["value"].notna() & (df["low"].notna() | df["high"].notna())]
    d = d.assign(_fail=d["verdict"].eq("FAIL"))  # summed per group: a function a group costs ~0.1 ms
    if d.empty:
        return pd.DataFrame(columns=keys + ["n", "mean", "std", "min", "max", "low", "high", "cp", "cpk",
                                            "side", "fails", "rating"])
    g = d.groupby(keys, sort=False, dropna=False)
    out = g["value"].agg(n="count", mean="mean", std="std", min="min", max="max")
    out["low"] = g["low"].min()
    out["high"] = g["high"].max()
    out["fails"] = g["_fail"].sum().astype(int)
    out = out.reset_index()
    # identical values: σ = 0 exactly (pandas' std of equal floats may be 1e-17) and μ the value
    no_spread = (out["n"] >= 2) & (out["min"] == out["max"])
    out.loc[no_spread, "std"] = 0.0
    out.loc[no_spread, "mean"] = out.loc[no_spread, "min"]
    three_sigma = 3 * out["std"].where(out["std"] > 0)
    upper = _index(out["high"] - out["mean"], three_sigma, no_spread)
    lower = _index(out["mean"] - out["low"], three_sigma, no_spread)
    out["cp"] = _index(out["high"] - out["low"], 2 * three_sigma, no_spread)
    out["cpk"] = np.fmin(upper, lower)  # fmin: the one defined side when only one limit exists
    nearer_high = (out["high"] - out["mean"]) <= (out["mean"] - out["low"])
    out["side"] = np.where(upper.isna() & lower.isna(), "",
                           np.where(lower.isna() | (upper.notna() & nearer_high), "USL", "LSL"))
    out["rating"] = out["cpk"].map(rating)
    return out.sort_values("cpk", na_position="last", kind="stable").reset_index(drop=True)
