"""The shape the analytics work on: a normalised copy of the measurements frame.

The record's measurements frame holds a measurement's identity spread over several columns
(step, measurement name, labels, corner, unit). Analytics group by that identity again and
again, so :func:`prepare` turns it into hashable text columns once, adds the numeric limits
(``low``/``high``) and keeps the last attempt of each step, which is what a retried step's
verdict rests on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

# A measured characteristic: the same quantity measured on every DUT.
KEY = ["plan", "step", "measurement", "labels", "corner", "unit"]
# Fields the analytics may group or split by, and the frame column each one is.
FIELDS = {"plan": "plan", "version": "version", "plan_version": "version", "step": "step", "dut": "DUT", "station": "station",
          "corner": "corner", "date": "date", "run": "run", "operator": "operator"}


def text_of(value: Any) -> str:
    """A mapping or sequence as the text a person reads and a group-by can use."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, Mapping):
        return ",".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _limit(limits: Any, side: str) -> float:
    """The numeric ``low`` or ``high`` of a limits value (a mapping, or an object with attributes)."""
    if limits is None:
        return math.nan
    v = limits.get(side) if isinstance(limits, Mapping) else getattr(limits, side, None)
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else math.nan


def _texts(column: pd.Series) -> pd.Series:
    """A text column as plain Python strings ("" for missing; mappings and sequences as text).

    Distinct values are converted once: columns repeat a handful of values a million times,
    and converting Arrow-backed strings one by one costs seconds."""
    cat = column.astype("category") if column.dtype != object else None
    if cat is None:
        keys = column.map(lambda v: repr(v) if isinstance(v, Mapping | list | tuple) else v)
        codes, _ = pd.factorize(keys, use_na_sentinel=True)
        firsts = pd.Series(range(len(column))).groupby(codes).first()
        texts = np.array([text_of(column.iloc[i]) for i in firsts.drop(-1, errors="ignore")], dtype=object)
    else:
        codes = cat.cat.codes.to_numpy()
        texts = np.array([text_of(v) for v in cat.cat.categories], dtype=object)
    out = np.append(texts, "").take(np.where(codes < 0, len(texts), codes))
    return pd.Series(out, index=column.index, dtype=object)


# The record's frame (labctl.report.record.FRAME_COLUMNS) -> the short names used here.
RENAME = {"run_id": "run", "plan_version": "version", "dut": "DUT"}
TEXT = ("run", "plan", "version", "station", "DUT", "operator", "corner", "step", "measurement", "labels", "unit",
        "verdict")
USED = TEXT + ("name", "limits", "attempt", "final", "value", "value_text", "low", "high", "time")


def prepare(frame: pd.DataFrame, *, last_attempt: bool = True) -> pd.DataFrame:
    """A copy of the measurements frame ready for grouping: text ``labels``/``corner``, numeric
    ``low``/``high`` (NaN where a side has no limit), a ``date`` column, and (by default) only
    the attempt that counts of each step in each run (``final``; else the last attempt)."""
    df = frame.rename(columns=RENAME)
    df = df[[c for c in USED if c in df.columns]].copy()
    if "measurement" not in df.columns:
        df["measurement"] = df["name"] if "name" in df.columns else df["step"]
    for col in TEXT:
        df[col] = _texts(df[col]) if col in df.columns else ""
    for side in ("low", "high"):
        if side not in df.columns:
            df[side] = [_limit(x, side) for x in df["limits"]] if "limits" in df.columns else math.nan
        df[side] = pd.to_numeric(df[side], errors="coerce")
    df["value"] = pd.to_numeric(df["value"], errors="coerce")
    df["time"] = pd.to_datetime(df["time"], utc=True) if "time" in df.columns else pd.NaT
    # the day as the date filters read it (``--since 2026-11-30``: local time), not the UTC day.
    # UTC offsets and their changes (daylight saving) fall on quarter hours, so a local midnight
    # never falls inside a quarter hour of UTC: each quarter hour holding a time is converted
    # once (the machine's zone is converted value by value, a few hundred, not 100,000, of them)
    codes, quarters = pd.factorize(df["time"].dt.floor("15min"))
    days = pd.DatetimeIndex(quarters).tz_convert(_local_zone()).strftime("%Y-%m-%d")
    df["date"] = np.append(np.asarray(days, dtype=object), "").take(np.where(codes < 0, len(days), codes))
    return final_only(df) if last_attempt else df


def final_only(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of the attempt that counts of each step (``final``; else the last attempt)."""
    if "final" in df.columns:
        return df[df["final"].astype(bool)]
    if "attempt" in df.columns and len(df):
        return df[df["attempt"] == df.groupby(["run", "step", "corner"], sort=False)["attempt"].transform("max")]
    return df


def field_column(field: str) -> str:
    """The frame column behind a ``--by``/``--compare`` field name (case-insensitive)."""
    from labctl.errors import UsageError

    col = FIELDS.get(field.lower())
    if col is None:
        raise UsageError(f"unknown field {field!r}", hint=f"use one of: {', '.join(FIELDS)}")
    return col


def _local_zone() -> Any:
    """This machine's time zone (``$TZ`` or the system's, with its daylight saving), as the date
    filters use it."""
    from dateutil import tz

    return tz.tzlocal()
