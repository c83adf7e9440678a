"""Comparison of two populations (two board revisions, stations, plan versions…): per
characteristic, the mean shift in σ units and Welch's two-sample t-test, flagged when the
distributions differ.

A characteristic is flagged when Welch's p-value is below ``alpha`` (0.01) and the means are
at least half a pooled σ apart: significant and large enough to matter. Each population
needs two values or more to be tested.
"""

from __future__ import annotations

import fnmatch

import numpy as np
import pandas as pd

from labctl.analysis.frames import KEY

ALPHA = 0.01
MIN_SHIFT = 0.5


def split(df: pd.DataFrame, column: str, a: str, b: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of population A and of B: ``column`` equal to the value, or matching it when it
    holds ``*``/``?`` wildcards (``DUT=REVA-*,REVB-*``)."""
    def pick(pattern: str) -> pd.Series:
        values = df[column].astype(str)
        if any(ch in pattern for ch in "*?["):
            return values.map(lambda v: fnmatch.fnmatchcase(v, pattern))
        return values == pattern

    return df[pick(a)], df[pick(b)]


def compare(df: pd.DataFrame, column: str, a: str, b: str, *, alpha: float = ALPHA) -> pd.DataFrame:
    """Per characteristic measured in both populations: n/mean/std of A and B, ``shift_sigma``
    ((mean B − mean A) / pooled σ), Welch's ``t`` and ``p``, and ``differs``; flagged first,
    then by p-value."""
    from scipy import stats

    keys = [k for k in KEY if k != column]
    pa, pb = split(df[df["value"].notna()], column, a, b)
    sa = pa.groupby(keys)["value"].agg(n_a="count", mean_a="mean", std_a="std")
    sb = pb.groupby(keys)["value"].agg(n_b="count", mean_b="mean", std_b="std")
    out = sa.join(sb, how="inner").reset_index()
    cols = keys + ["n_a", "mean_a", "std_a", "n_b", "mean_b", "std_b", "shift_sigma", "t", "p", "differs"]
    if out.empty:
        return pd.DataFrame(columns=cols)
    va, vb = out["std_a"] ** 2, out["std_b"] ** 2
    pooled = np.sqrt(((out["n_a"] - 1) * va + (out["n_b"] - 1) * vb) / (out["n_a"] + out["n_b"] - 2))
    out["shift_sigma"] = (out["mean_b"] - out["mean_a"]) / pooled.where(pooled > 0)
    se2a, se2b = va / out["n_a"], vb / out["n_b"]
    se = np.sqrt(se2a + se2b)
    out["t"] = (out["mean_b"] - out["mean_a"]) / se.where(se > 0)
    dof = (se2a + se2b) ** 2 / (se2a ** 2 / (out["n_a"] - 1) + se2b ** 2 / (out["n_b"] - 1))
    out["p"] = 2 * stats.t.sf(out["t"].abs(), dof)
    # Two populations of 2+ values without spread differ exactly when their means differ; a
    # population of one value has no σ: no test, never flagged.
    both_const = (out["std_a"] == 0) & (out["std_b"] == 0)
    # Two populations without spread differ exactly when their means differ.
    out.loc[both_const, "p"] = np.where(out.loc[both_const, "mean_a"] != out.loc[both_const, "mean_b"], 0.0, 1.0)
    out.loc[both_const & (out["mean_a"] != out["mean_b"]), "shift_sigma"] = np.inf * np.sign(
        out["mean_b"] - out["mean_a"])
    out["differs"] = (out["p"] < alpha) & (out["shift_sigma"].abs() >= MIN_SHIFT)
    out = out.sort_values(["differs", "p"], ascending=[False, True], na_position="last", kind="stable")
    return out[cols].reset_index(drop=True)
