"""Charts of the HTML report as inline SVG, drawn with matplotlib (no pyplot: no global figure
state), sized to print on A4/Letter.

Text in the SVG is written as text (``svg.fonttype: none``) and escaped by matplotlib's SVG
writer; math parsing is off so that a ``$`` in a DUT serial is printed, not interpreted.
Callers aggregate before plotting: a chart never receives a million points.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from labctl.analysis.capability import index_text

PASS, FAIL, MARGINAL, ACCENT, GREY = "#2e7d32", "#c62828", "#ef8f00", "#1f5fa8", "#777777"
RC = {"svg.fonttype": "none", "svg.hashsalt": "labctl", "text.parse_math": False, "font.size": 8,
      "axes.titlesize": 9, "axes.spines.top": False, "axes.spines.right": False,
      "axes.grid": True, "grid.color": "#dddddd", "grid.linewidth": 0.5, "font.family": "sans-serif",
      "legend.fontsize": 7, "legend.frameon": False}
_PROLOGUE = re.compile(r"^.*?(?=<svg)", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)


def _figure(width: float = 6.4, height: float = 2.6):
    from matplotlib.figure import Figure

    # Fixed margins: a constrained layout costs more than the drawing itself.
    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=0.8 / width, right=1 - 0.25 / width, bottom=0.55 / height, top=1 - 0.3 / height)
    return fig


def to_svg(fig) -> str:
    """The figure as an ``<svg>`` element for inlining (no XML prologue, DOCTYPE or metadata)."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context(RC):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = _METADATA.sub("", _PROLOGUE.sub("", buf.getvalue(), count=1))
    return svg.replace("<svg ", '<svg role="img" class="chart" ', 1)


def render(draw, *args, width: float = 6.4, height: float = 2.6, **kwargs) -> str:
    """Draw with ``draw(fig, *args, **kwargs)`` under the report's style and return the SVG."""
    import matplotlib

    with matplotlib.rc_context(RC):
        fig = _figure(width, height)
        draw(fig, *args, **kwargs)
        return to_svg(fig)


def _limit_lines(ax, low: float | None, high: float | None, vertical: bool = True) -> None:
    line = ax.axvline if vertical else ax.axhline
    for value, name in ((low, "LSL"), (high, "USL")):
        if value is not None and np.isfinite(value):
            line(value, color=FAIL, linestyle="--", linewidth=1, label=f"{name} {value:.4g}")


def distribution(fig, values: np.ndarray, low: float | None, high: float | None, title: str,
                 unit: str, cpk: float | None) -> None:
    """Histogram of one characteristic across DUTs with its limits, mean and Cpk."""
    ax = fig.add_subplot()
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    lo = [v for v in (low, high, values.min() if len(values) else None) if v is not None and np.isfinite(v)]
    hi = [v for v in (low, high, values.max() if len(values) else None) if v is not None and np.isfinite(v)]
    span = (max(hi) - min(lo)) or abs(max(hi)) or 1.0
    counts, edges = np.histogram(values, bins=min(40, max(5, int(np.sqrt(len(values))) + 1)),
                                 range=(min(lo) - 0.05 * span, max(hi) + 0.05 * span))
    ax.stairs(counts, edges, fill=True, color=ACCENT, alpha=0.8)  # one artist, not a patch per bin
    _limit_lines(ax, low, high)
    if len(values):
        ax.axvline(float(values.mean()), color=GREY, linewidth=1, label=f"mean {values.mean():.4g}")
    cpk_text = f"Cpk {index_text(cpk, '.2f')}" + (" (σ = 0)" if cpk is not None and np.isinf(cpk) else "")
    ax.set_title(f"{title}   n={len(values)}   {cpk_text}", loc="left")
    ax.set_xlabel(unit or "value")
    ax.set_ylabel("count")
    ax.legend(loc="upper right")


def pareto(fig, causes: Sequence[str], counts: Sequence[int], cumulative: Sequence[float]) -> None:
    """Failure Pareto: runs failed per cause, worst first, with the cumulative share."""
    ax = fig.add_subplot()
    x = np.arange(len(causes))
    ax.bar(x, counts, color=FAIL, alpha=0.85)
    ax.set_xticks(x, [c if len(c) <= 38 else c[:36] + "…" for c in causes], rotation=30, ha="right")
    ax.set_ylabel("runs failed")
    ax2 = ax.twinx()
    ax2.plot(x, np.asarray(cumulative) * 100, color=GREY, marker="o", markersize=3)
    ax2.set_ylim(0, 105)
    ax2.set_ylabel("cumulative %")
    ax2.grid(False)
    fig.subplots_adjust(bottom=0.45, right=0.9)


def trend(fig, series: pd.DataFrame, low: float | None, high: float | None, title: str, unit: str) -> None:
    """A characteristic over time: each value (or per-bin mean with min–max band) and the limits."""
    ax = fig.add_subplot()
    t = pd.to_datetime(series["time"]).dt.tz_localize(None)
    if (series["min"] != series["max"]).any():
        ax.fill_between(t, series["min"], series["max"], color=ACCENT, alpha=0.2, linewidth=0, label="min–max")
    ax.plot(t, series["mean"], color=ACCENT, marker="o", markersize=2.5, linewidth=0.8, label="value")
    _limit_lines(ax, low, high, vertical=False)
    ax.set_title(title, loc="left")
    ax.set_ylabel(unit or "value")
    ax.legend(loc="upper left")
    fig.autofmt_xdate()


def grouped_bars(fig, frame: pd.DataFrame, x: str, group: str, title: str, unit: str,
                 limit: tuple[float | None, float | None] = (None, None), log: bool = False) -> None:
    """Mean per ``x`` and ``group`` (min–max whiskers): BER per lane and corner, efficiency per
    load and corner, perf-per-watt per corner."""
    ax = fig.add_subplot()
    stats = frame.groupby([x, group], sort=True)["value"].agg(["mean", "min", "max"]).reset_index()
    xs = list(dict.fromkeys(stats[x]))
    groups = list(dict.fromkeys(stats[group]))
    width = 0.8 / max(1, len(groups))
    for i, gname in enumerate(groups):
        s = stats[stats[group] == gname].set_index(x).reindex(xs)
        pos = np.arange(len(xs)) + (i - (len(groups) - 1) / 2) * width
        err = np.vstack([(s["mean"] - s["min"]).to_numpy(), (s["max"] - s["mean"]).to_numpy()])
        ax.bar(pos, s["mean"], width=width * 0.95, yerr=np.nan_to_num(err), capsize=2,
               label=str(gname) or "(no corner)", error_kw={"linewidth": 0.6})
    ax.set_xticks(np.arange(len(xs)), [str(v) for v in xs])
    _limit_lines(ax, *limit, vertical=False)
    if log:
        from matplotlib.ticker import FuncFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0e}"))  # plain text, no mathtext
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.set_title(title, loc="left")
    ax.set_ylabel(unit or "value")
    ax.set_xlabel(x)
    if len(groups) > 1 or limit != (None, None):
        ax.legend(loc="best", ncols=2)


def curves(fig, samples: pd.DataFrame, title: str, unit: str) -> None:
    """Time series (die temperature during a soak, under load): one line per run and series,
    against the time since the series started (seconds, or minutes when longer than two)."""
    ax = fig.add_subplot()
    times = pd.to_datetime(samples["time"])
    span = (times.max() - times.min()).total_seconds() if len(times) else 0.0
    per, x_unit = (60.0, "minutes") if span > 120 else (1.0, "seconds")
    for (label,), s in samples.groupby(["label"], sort=False):
        t = pd.to_datetime(s["time"])
        ax.plot((t - t.min()).dt.total_seconds() / per, s["value"], linewidth=0.9, label=label)
    ax.set_title(title, loc="left")
    ax.set_xlabel(f"{x_unit} (wall clock)")
    ax.set_ylabel(unit)
    if samples["label"].nunique() <= 12:
        ax.legend(loc="best", ncols=2)


def timeline(fig, rails: Sequence[str], starts: Sequence[float], spread: Sequence[float], title: str) -> None:
    """Power sequencing: when each rail came up (ms after the first), mean with min–max whiskers."""
    ax = fig.add_subplot()
    y = np.arange(len(rails))[::-1]
    ax.barh(y, starts, color=ACCENT, alpha=0.25, height=0.5)
    ax.errorbar(starts, y, xerr=np.asarray(spread).T if len(spread) else None, fmt="o", color=ACCENT,
                markersize=4, capsize=3, linewidth=0.8)
    for yy, s in zip(y, starts, strict=True):
        ax.annotate(f"{s:.2f} ms", (s, yy), xytext=(6, 4), textcoords="offset points", fontsize=7)
    ax.set_yticks(y, list(rails))
    fig.subplots_adjust(left=0.18)
    ax.set_xlabel("ms after the first rail")
    ax.set_title(title, loc="left")
