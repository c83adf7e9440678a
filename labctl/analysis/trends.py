"""Drift and trends: a characteristic's statistics per group (DUT, station, corner, date…) and
its drift over time.

Drift is the least-squares slope of value against time; it is flagged when the slope is
significant (p < 0.01, t-test of the correlation, at least ``MIN_DRIFT_POINTS`` values) and
the change it predicts over the observed span exceeds one standard deviation of the
characteristic (a shift a quality engineer would want explained).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from labctl.analysis.frames import KEY

DAY = 86400.0
MIN_DRIFT_POINTS = 5
DRIFT_ALPHA = 0.01


def by_group(df: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per characteristic and value of ``column``: n, mean, std, min, max, fails, and the group
    mean's shift from the characteristic's overall mean in σ units (``shift_sigma``)."""
    d = df[df["value"].notna()]
    d = d.assign(_fail=d["verdict"].eq("FAIL"))  # summed per group: a function a group costs ~0.1 ms
    keys = [k for k in KEY if k != column] + [column]
    g = d.groupby(keys, sort=True)
    out = g["value"].agg(n="count", mean="mean", std="std", min="min", max="max")
    out["fails"] = g["_fail"].sum().astype(int)
    out = out.reset_index()
    base = [k for k in KEY if k != column]
    overall = d.groupby(base)["value"].agg(all_mean="mean", all_std="std").reset_index()
    out = out.merge(overall, on=base, how="left")
    out["shift_sigma"] = (out["mean"] - out["all_mean"]) / out["all_std"].where(out["all_std"] > 0)
    return out.drop(columns=["all_mean", "all_std"])


def drift(df: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Per characteristic (and ``by`` column): n, span_days, slope per day, the change over the
    span in σ units (``drift_sigma``), the slope's p-value and ``flag`` (significant and
    |drift_sigma| > 1)."""
    from scipy import stats

    d = df[df["value"].notna() & df["time"].notna()]
    keys = KEY + ([by] if by and by not in KEY else [])
    cols = keys + ["n", "span_days", "slope_per_day", "drift_sigma", "p", "flag"]
    if d.empty:
        return pd.DataFrame(columns=cols)
    t = (d["time"] - d["time"].min()).dt.total_seconds() / DAY
    d = d.assign(t=t, tv=t * d["value"], tt=t * t, vv=d["value"] * d["value"])
    g = d.groupby(keys, sort=False)
    s = g.agg(n=("value", "count"), mt=("t", "mean"), mv=("value", "mean"), mtv=("tv", "mean"),
              mtt=("tt", "mean"), mvv=("vv", "mean"), tmin=("t", "min"), tmax=("t", "max"),
              sd=("value", "std")).reset_index()
    var_t = s["mtt"] - s["mt"] ** 2
    var_v = s["mvv"] - s["mv"] ** 2
    r = ((s["mtv"] - s["mt"] * s["mv"]) / np.sqrt((var_t * var_v).where((var_t > 1e-12) & (var_v > 0)))).clip(-1, 1)
    dof = s["n"] - 2
    t_stat = r * np.sqrt(dof / (1 - r * r).clip(lower=1e-300))
    p = pd.Series(2 * stats.t.sf(t_stat.abs(), dof.where(dof > 0)), index=s.index)
    s["p"] = p.where(s["n"] >= 3)  # shown from three values (a slope has a test then) ...
    s["span_days"] = s["tmax"] - s["tmin"]
    s["slope_per_day"] = ((s["mtv"] - s["mt"] * s["mv"]) / var_t.where(var_t > 1e-12)).where(s["n"] >= 3)
    s["drift_sigma"] = s["slope_per_day"] * s["span_days"] / s["sd"].where(s["sd"] > 0)
    s["flag"] = (s["n"] >= MIN_DRIFT_POINTS) & (s["p"] < DRIFT_ALPHA) & (s["drift_sigma"].abs() > 1.0)  # ... flagged from five
    return s[cols].sort_values("drift_sigma", key=lambda v: -v.abs(), na_position="last",
                               kind="stable").reset_index(drop=True)


def series(rows: pd.DataFrame, max_points: int = 200) -> pd.DataFrame:
    """One characteristic's values (``rows``) over time for a trend chart: every value when
    there are few, else per-bin mean/min/max over ``max_points`` time bins (a report never
    plots a million points)."""
    d = rows[rows["value"].notna()].sort_values("time")
    if len(d) <= max_points:
        return pd.DataFrame({"time": d["time"], "mean": d["value"], "min": d["value"], "max": d["value"],
                             "DUT": d["DUT"]}).reset_index(drop=True)
    bins = pd.cut(d["time"].astype("int64"), max_points, labels=False)
    g = d.groupby(bins)
    return pd.DataFrame({"time": g["time"].min(), "mean": g["value"].mean(), "min": g["value"].min(),
                         "max": g["value"].max(), "DUT": ""}).reset_index(drop=True)
