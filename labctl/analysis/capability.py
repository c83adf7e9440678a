"""Process capability per measured characteristic: Cp and Cpk against the limits.

Cp = (USL − LSL) / 6σ and Cpk = min(USL − μ, μ − LSL) / 3σ with the sample standard deviation
(ddof = 1). With only one limit, Cp is undefined and Cpk is the one-sided index of that limit
(Cpu = (USL − μ)/3σ or Cpl = (μ − LSL)/3σ). Cpk ≥ 1.33 is capable, 1.0–1.33 marginal, < 1.0
not capable.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from labctl.analysis.frames import KEY

CAPABLE = 1.33
MINIMUM = 1.0


def rating(cpk: float) -> str:
    """``capable`` (≥ 1.33), ``marginal`` (1.0–1.33), ``not capable`` (< 1.0) or ``-``."""
    if cpk is None or np.isnan(cpk):
        return "-"
    return "capable" if cpk >= CAPABLE else "marginal" if cpk >= MINIMUM else "not capable"


def capability(df: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """One row per characteristic (``KEY`` plus ``by``) with limits: n, mean, std, min, max,
    low, high, Cp, Cpk, the side Cpk rests on, fails and its rating; worst Cpk first.

    ``df`` is a :func:`labctl.analysis.frames.prepare`-d frame. Characteristics without a numeric
    limit, or with fewer than two values, get NaN indices."""
    keys = KEY + [b for b in (by or []) if b not in KEY]
    d = df[df["value"].notna() & (df["low"].notna() | df["high"].notna())]
    if d.empty:
        return pd.DataFrame(columns=keys + ["n", "mean", "std", "min", "max", "low", "high", "cp", "cpk",
                                            "side", "fails", "rating"])
    g = d.groupby(keys, sort=False, dropna=False)
    out = g["value"].agg(n="count", mean="mean", std="std", min="min", max="max")
    out["low"] = g["low"].min()
    out["high"] = g["high"].max()
    out["fails"] = g["verdict"].agg(lambda v: int((v == "FAIL").sum()))
    out = out.reset_index()
    three_sigma = 3 * out["std"].where(out["std"] > 0)
    upper = (out["high"] - out["mean"]) / three_sigma
    lower = (out["mean"] - out["low"]) / three_sigma
    out["cp"] = (out["high"] - out["low"]) / (2 * three_sigma)
    out["cpk"] = np.fmin(upper, lower)  # fmin: the one defined side when only one limit exists
    out["side"] = np.where(upper.isna() & lower.isna(), "",
                           np.where(lower.isna() | (upper <= lower), "USL", "LSL"))
    out["rating"] = out["cpk"].map(rating)
    return out.sort_values("cpk", na_position="last", kind="stable").reset_index(drop=True)
