"""The HTML report: one self-contained file (inline CSS and SVG charts, no script, no network
request) that reads on screen and prints (A4/Letter, a page per run).

Built from :class:`Population` (frames made from the typed run record) in three steps:
the analytics compute, the charts draw aggregated figures, and a jinja2 template with
autoescape on renders every user-, plan- or DUT-supplied string as text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from labctl import __version__
from labctl.analysis import capability as cap
from labctl.analysis.frames import KEY, final_only, prepare
from labctl.analysis.pareto import pareto, without_failing_measurement
from labctl.analysis.trends import drift, series
from labctl.analysis.yields import run_yield, step_yield
from labctl.report import charts
from labctl.report.population import Population
from labctl.units import format_span

if TYPE_CHECKING:
    from labctl.report.formats import ExportOptions
    from labctl.report.record import RunRecord

MAX_DISTRIBUTIONS = 12  # distribution charts, worst Cpk first
MAX_TRENDS = 6  # trend charts, strongest drift first
MAX_FAILURE_ROWS = 500  # failing measurements listed at the top
MAX_LISTED = 20_000  # above this many measurements (steps), run details list failures and marginals (steps that did not pass) only
MAX_TABLE_ROWS = 1_000  # rows of the yield and capability tables: the lowest yields, the worst Cpk
MAX_CURVE_RUNS = 12  # runs overlaid in the thermal chart
MAX_RUN_CHARTS = 10  # per-run thermal charts only for reports of at most this many runs


# ----------------------------------------------------------------------------- formatting

def num(v: Any, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, int | np.integer):
        return str(v)
    v = float(v)
    return f"{v:.{digits}g}" if v != 0 else "0"


def pct(v: Any) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * float(v):.1f} %"


def limits_text(low: float, high: float, unit: str) -> str:
    lo, hi = (x if x is not None and not math.isnan(x) else None for x in (low, high))
    if lo is None and hi is None:
        return "-"
    if lo is not None and hi is not None:
        return f"{num(lo)} … {num(hi)} {unit}".strip()
    return (f"≥ {num(lo)}" if lo is not None else f"≤ {num(hi)}") + (f" {unit}" if unit else "")


def when(t: Any) -> str:
    if t is None or (isinstance(t, float) and math.isnan(t)) or t is pd.NaT:
        return "-"
    ts = pd.Timestamp(t, unit="s") if isinstance(t, int | float) else pd.Timestamp(t)
    if ts.tzinfo is None:
        ts = ts.tz_localize(UTC)
    return ts.tz_convert(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def margins(df: pd.DataFrame) -> pd.Series:
    """Distance to the nearest limit as a share of the limit span (two-sided) or of the limit's
    magnitude (one-sided); negative outside the limits."""
    lo, hi, v = df["low"], df["high"], df["value"]
    to_low, to_high = v - lo, hi - v
    nearest = np.fmin(to_low, to_high)
    span = (hi - lo).where(lo.notna() & hi.notna())
    one = np.where(to_low.isna(), hi.abs(), lo.abs())
    scale = span.fillna(pd.Series(one, index=df.index)).replace(0, np.nan)
    return nearest / scale


# ----------------------------------------------------------------------------- sections

def _scope(data: Population) -> dict[str, Any]:
    r = data.runs
    started = pd.to_datetime(r["started"], utc=True, unit="s" if r["started"].dtype.kind in "if" else None)
    plans = r.groupby(["plan", "version"]).size().reset_index()
    return {
        "plans": [f"{p} {v}".strip() for p, v in zip(plans["plan"], plans["version"], strict=True)],
        "stations": sorted(r["station"].dropna().astype(str).unique()),
        "duts": sorted(r["DUT"].dropna().astype(str).unique()),
        "operators": sorted(r["operator"].dropna().astype(str).unique()) if "operator" in r else [],
        "first": when(started.min()) if len(r) else "-", "last": when(started.max()) if len(r) else "-",
        "versions": sorted(r["labctl_version"].dropna().astype(str).unique()) if "labctl_version" in r else [],
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"), "labctl": __version__,
        "runs": len(r), "measurements": len(final_only(data.measurements)),
    }


def _summary(data: Population, fy: pd.DataFrame) -> dict[str, Any]:
    counts = data.runs["outcome"].value_counts()
    order = ["passed", "failed", "error", "aborted", "interrupted", "running"]
    final = final_only(data.measurements)  # each step once, by its final attempt, as the failures list it
    verdicts = final["verdict"].value_counts() if len(final) else pd.Series(dtype=int)
    overall = "passed" if len(data.runs) and counts.get("passed", 0) == len(data.runs) else (
        "failed" if counts.get("failed", 0) else next((o for o in order[2:] if counts.get(o)), "passed"))
    return {"outcomes": [(o, int(counts.get(o, 0))) for o in order if counts.get(o, 0)],
            "verdicts": [(v, int(verdicts.get(v, 0))) for v in ("PASS", "MARGINAL", "FAIL", "NONE")
                         if verdicts.get(v, 0)],
            "overall": overall, "yields": fy.to_dict("records")}


def _failures(m: pd.DataFrame) -> tuple[list[dict[str, Any]], int]:
    bad = m[m["verdict"] == "FAIL"]
    rows = bad.head(MAX_FAILURE_ROWS)
    return _measurement_rows(rows), len(bad)


def _failed_steps(steps: pd.DataFrame, m: pd.DataFrame, runs: pd.DataFrame) -> list[dict[str, Any]]:
    """Steps whose final attempt FAILed or ended in ERROR with no measurement of theirs out of its
    limits (a reply that did not match, an instrument that did not answer): failures the
    measurement list cannot show."""
    if not len(steps):
        return []
    final = steps[steps["final"] & steps["outcome"].isin(["FAIL", "ERROR"])]
    rows = without_failing_measurement(final, m[m["verdict"] == "FAIL"])
    rows = rows.merge(runs[["run", "DUT"]].drop_duplicates("run"), on="run", how="left").head(MAX_FAILURE_ROWS)
    return [{"run": r.run, "DUT": r.DUT, "step": r.step, "corner": r.corner, "outcome": r.outcome,
             "message": r.message, "attempt": r.attempt} for r in rows.itertuples(index=False)]


def _measurement_rows(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """Table rows of measurements (value, limits, margin as text), computed column-wise."""
    if not len(rows):
        return []
    text = rows["value_text"].astype(object) if "value_text" in rows else pd.Series("-", index=rows.index)
    values = [num(v) if v == v else (t if isinstance(t, str) else "-") for v, t in zip(rows["value"], text, strict=True)]
    # the numeric range where there is one, else the record's own words (== "x", ~ /regex/)
    described = rows["limits"].astype(object) if "limits" in rows else pd.Series("", index=rows.index)
    limits = [limits_text(lo, hi, u) if lo == lo or hi == hi else (d if isinstance(d, str) and d else "-")
              for lo, hi, u, d in zip(rows["low"], rows["high"], rows["unit"], described, strict=True)]
    t = pd.DataFrame({"run": rows["run"], "DUT": rows["DUT"], "step": rows["step"], "corner": rows["corner"],
                      "measurement": rows["measurement"], "labels": rows["labels"], "value": values,
                      "unit": rows["unit"], "limits": limits, "margin": [pct(x) for x in margins(rows)],
                      "verdict": rows["verdict"],
                      "attempt": rows["attempt"] if "attempt" in rows else 1})
    return t.to_dict("records")


def _capability(m: pd.DataFrame, groups: dict) -> tuple[list[dict[str, Any]], list[str], int]:
    """The capability table's rows (the worst Cpk first, at most MAX_TABLE_ROWS), the
    distribution charts, and how many characteristics the table leaves out."""
    c = cap.capability(m)
    rows, svgs = [], []
    for i, r in enumerate(c.head(MAX_TABLE_ROWS).itertuples(index=False)):
        rows.append({"step": r.step, "measurement": r.measurement, "labels": r.labels, "corner": r.corner,
                     "n": int(r.n), "mean": num(r.mean), "std": num(r.std), "min": num(r.min), "max": num(r.max),
                     "limits": limits_text(r.low, r.high, r.unit), "cp": cap.index_text(r.cp), "cpk": cap.index_text(r.cpk),
                     "rating": r.rating, "rated": r.rating in cap.RATINGS, "fails": int(r.fails), "unit": r.unit})
        if i < MAX_DISTRIBUTIONS and r.n >= 2:
            key = tuple(getattr(r, k) for k in KEY)
            values = m["value"].to_numpy()[groups[key]]
            svgs.append(charts.render(charts.distribution, values, r.low, r.high, _title(r), r.unit, r.cpk))
    return rows, svgs, len(c) - len(rows)


def _step_yield_rows(sy: pd.DataFrame) -> tuple[list[dict[str, Any]], int]:
    """The yield table's rows: every step, or of more than MAX_TABLE_ROWS the lowest final and
    first-pass yields; and how many the table leaves out."""
    if len(sy) <= MAX_TABLE_ROWS:
        return sy.to_dict("records"), 0
    lowest = sy.sort_values(["final_yield", "first_pass_yield"], kind="stable").head(MAX_TABLE_ROWS)
    return lowest.to_dict("records"), len(sy) - MAX_TABLE_ROWS


def _title(r: Any) -> str:
    extra = ", ".join(x for x in (r.labels, r.corner) if x)
    return f"{r.step} / {r.measurement}" + (f" [{extra}]" if extra else "")


def _trends(m: pd.DataFrame, groups: dict) -> tuple[list[dict[str, Any]], list[str]]:
    d = drift(m)
    d = d[d["n"] >= 3]
    rows, svgs = [], []
    for i, r in enumerate(d.head(200).itertuples(index=False)):
        rows.append({"title": _title(r), "n": int(r.n), "span": num(r.span_days, 3),
                     "slope": num(r.slope_per_day), "unit": r.unit, "drift": num(r.drift_sigma, 3),
                     "p": num(r.p, 2), "flag": bool(r.flag)})
        if i < MAX_TRENDS:
            key = tuple(getattr(r, k) for k in KEY)
            values = m.iloc[groups[key]]
            s = series(values)
            lim = values[["low", "high"]].iloc[0]
            svgs.append(charts.render(charts.trend, s, lim["low"], lim["high"],
                                      f"{_title(r)}  drift {num(r.drift_sigma, 2)} σ over the span", r.unit))
    return rows, svgs


def _label(labels: str, name: str) -> str:
    """One label's value from the labels text ("lane=3, rail=VDD_IO")."""
    for part in labels.split(","):
        k, _, v = part.partition("=")
        if k.strip() == name:
            return v.strip()
    return ""


def _domain_charts(m: pd.DataFrame) -> list[dict[str, Any]]:
    """BER per lane and corner, efficiency and perf-per-watt per corner, the sequencing timeline."""
    out = []
    ber = m[(m["measurement"] == "ber") & m["value"].notna()]
    if len(ber):
        ber = ber.assign(lane=ber["labels"].map(lambda s: _label(s, "lane") or s),
                         corner=ber["corner"].replace("", "nominal"))
        high = ber["high"].dropna()
        out.append({"title": "Bit error rate per lane and corner (upper bound at the confidence level)",
                    "svg": charts.render(charts.grouped_bars, ber, "lane", "corner", "BER per lane and corner",
                                         "BER", limit=(None, high.min() if len(high) else None), log=True)})
    for name, unit_title in (("efficiency", "Power efficiency per load and corner"),
                             ("perf_per_watt", "Performance per watt per corner")):
        d = m[(m["measurement"] == name) & m["value"].notna()]
        if not len(d):
            continue
        x = "load" if d["labels"].str.contains("load=").any() else "step"
        d = d.assign(load=d["labels"].map(lambda s: _label(s, "load") or "-"), corner=d["corner"].replace("", "nominal"))
        out.append({"title": unit_title, "svg": charts.render(
            charts.grouped_bars, d, x, "corner", unit_title, d["unit"].iloc[0],
            limit=(d["low"].min(), d["high"].max()))})
    seq = m[m["measurement"].str.contains("->", regex=False) & (m["unit"] == "ms") & m["value"].notna()]
    if len(seq):
        out.append({"title": "Power sequencing timeline", "svg": _sequencing_svg(seq)})
    return out


def _sequencing_svg(seq: pd.DataFrame) -> str:
    # Each "A->B" measurement is B's delay after A; chain them from the first rail.
    first_step = seq["step"].iloc[0]
    seq = seq[seq["step"] == first_step]
    pairs = list(dict.fromkeys(seq["measurement"]))
    per_run = seq.pivot_table(index="run", columns="measurement", values="value", aggfunc="mean")
    rails = [pairs[0].split("->")[0]]
    at = pd.DataFrame({rails[0]: np.zeros(len(per_run))}, index=per_run.index)
    for p in pairs:
        a, b = p.split("->", 1)
        if a in at.columns and b not in at.columns:
            at[b] = at[a] + per_run[p]
            rails.append(b)
    mean, lo, hi = at.mean(), at.min(), at.max()
    spread = [(mean[r] - lo[r], hi[r] - mean[r]) for r in rails]
    return charts.render(charts.timeline, rails, [float(mean[r]) for r in rails], spread,
                         f"{first_step}: rails up (mean of {len(per_run)} runs, min–max)",
                         height=0.5 + 0.35 * len(rails) + 0.8)


def _thermal(samples: pd.DataFrame, runs: pd.DataFrame) -> str | None:
    if samples is None or not len(samples):
        return None
    s = samples[samples["unit"] == "degC"]
    if not len(s):
        return None
    chosen = _runs_to_plot(runs)
    s = s[s["run"].isin(chosen)]
    s = s.merge(runs[["run", "DUT"]], on="run", how="left")
    s = s.assign(label=s["DUT"].astype(str) + " " + s["step"].astype(str) + " " + s["series"].astype(str))
    s = _thin(s, "label", 300)
    return charts.render(charts.curves, s, f"Temperatures during soaks and under load ({len(chosen)} runs)",
                         "degC", height=3.0)


def _runs_to_plot(runs: pd.DataFrame) -> list[str]:
    """Failing runs first, then the latest, up to MAX_CURVE_RUNS."""
    r = runs.assign(bad=runs["outcome"] != "passed").sort_values(["bad", "started"], ascending=[False, False])
    return r["run"].head(MAX_CURVE_RUNS).tolist()


def _thin(s: pd.DataFrame, by: str, points: int) -> pd.DataFrame:
    """At most ``points`` samples per series (evenly spaced)."""
    idx = s.groupby(by, sort=False).cumcount()
    size = s.groupby(by, sort=False)[by].transform("size")
    step = np.maximum(1, size // points)
    return s[(idx % step) == 0]


def _run_details(data: Population, m: pd.DataFrame, m_all: pd.DataFrame) -> list[dict[str, Any]]:
    """One section per run, failing runs first: context, steps, and its measurements of every
    attempt (``m_all``: a retried attempt's too; failing and marginal first; only those when the
    report holds more than MAX_LISTED measurements). The fail/marginal counts of the runs table
    take each step's final attempt (``m``), as the summary does."""
    listed_all = len(m_all) <= MAX_LISTED
    rank = m_all["verdict"].map({"FAIL": 0, "MARGINAL": 1}).fillna(2)
    shown = m_all.assign(_rank=rank)
    if not listed_all:
        shown = shown[shown["_rank"] < 2]
    rows = _measurement_rows(shown.sort_values(["run", "_rank"], kind="stable"))
    by_run: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_run.setdefault(row["run"], []).append(row)
    totals = m_all.groupby("run").size()
    counts = m.groupby(["run", "verdict"]).size()
    per_run_counts: dict[str, dict[str, int]] = {}
    for (run, verdict), n in counts.items():
        per_run_counts.setdefault(run, {})[verdict] = int(n)
    steps: dict[str, list[dict[str, Any]]] = {}
    steps_hidden: dict[str, int] = {}
    if len(data.steps):
        st = data.steps
        if len(st) > MAX_LISTED:  # the steps that did not pass only (a page of 100,000 rows is read by no one)
            passed = st["outcome"].isin(["PASS", "SKIPPED"])
            steps_hidden = {run: int(n) for run, n in st[passed].groupby("run").size().items()}
            st = st[~passed]
        st = st.assign(outcome=st["outcome"].fillna("running"),
                       duration=[num(x, 3) for x in st["duration"]],
                       # a time-scaled simulated bench: the simulated time beside the wall time
                       duration_sim=[_sim_time(x) for x in st["duration_sim"]],
                       message=st["message"].fillna(""))
        for row in st.to_dict("records"):
            steps.setdefault(row["run"], []).append(row)
    samples = dict(tuple(data.samples.groupby("run", sort=False))) \
        if len(data.samples) and len(data.runs) <= MAX_RUN_CHARTS else {}
    runs = data.runs.assign(bad=data.runs["outcome"] != "passed").sort_values(
        ["bad", "started"], ascending=[False, True])
    out = []
    for r in runs.to_dict("records"):
        thermal = None
        sm = samples.get(r["run"])
        if sm is not None and len(sm := sm[sm["unit"] == "degC"]):
            sm = _thin(sm.assign(label=sm["step"].astype(str) + " " + sm["series"].astype(str)), "label", 300)
            thermal = charts.render(charts.curves, sm, "Temperatures", "degC", height=2.4)
        listed = by_run.get(r["run"], [])
        count = per_run_counts.get(r["run"], {})
        out.append({
            "id": r["run"], "plan": f"{r['plan']} {r['version']}".strip(), "station": r["station"], "DUT": r["DUT"],
            "operator": r.get("operator") or "-", "started": when(r["started"]), "ended": when(r.get("ended")),
            "outcome": r["outcome"], "message": r.get("message") or "", "steps": steps.get(r["run"], []),
            "measurements": listed, "hidden": int(totals.get(r["run"], 0)) - len(listed), "counts": count,
            "steps_hidden": steps_hidden.get(r["run"], 0),
            "thermal": thermal,
            "details": data.details.get(r["run"], {}),
        })
    return out


def build_context(data: Population) -> dict[str, Any]:
    """Everything the template shows, computed (tables as lists of dicts, charts as SVG text)."""
    m_all = prepare(data.measurements, last_attempt=False)
    m = final_only(m_all)
    runs = data.runs.copy()
    fy = run_yield(runs) if len(runs) else pd.DataFrame()
    sy = step_yield(data.steps, runs) if len(data.steps) and len(runs) else pd.DataFrame()
    p = pareto(m_all, data.steps if len(data.steps) else None, runs)
    failures, n_failures = _failures(m)
    groups = m.groupby(KEY, sort=False, dropna=False).indices  # characteristic -> row positions
    cap_rows, dist_svgs, cap_hidden = _capability(m, groups)
    yield_rows, yield_hidden = _step_yield_rows(sy)
    trend_rows, trend_svgs = _trends(m, groups)
    return {
        "title": data.title, "scope": _scope(data), "summary": _summary(data, fy),
        "failures": failures, "n_failures": n_failures,
        "failed_steps": _failed_steps(data.steps, m, runs),
        "step_yield": yield_rows, "step_yield_hidden": yield_hidden,
        "pareto": p.head(30).to_dict("records"),
        "pareto_svg": charts.render(charts.pareto, p["cause"].head(15).tolist(), p["runs"].head(15).tolist(),
                                    p["cumulative"].head(15).tolist(), height=3.0) if len(p) else None,
        "capability": cap_rows, "capability_hidden": cap_hidden, "distributions": dist_svgs,
        "capable": cap.CAPABLE, "minimum": cap.MINIMUM,
        "trends": trend_rows, "trend_svgs": trend_svgs,
        "domain": _domain_charts(m), "thermal": _thermal(data.samples, runs),
        "runs": _run_details(data, m, m_all), "listed_all": len(m_all) <= MAX_LISTED, "max_listed": MAX_LISTED,
        "steps_listed_all": len(data.steps) <= MAX_LISTED,
    }


def environment():
    """The jinja2 environment of the report templates (autoescape on for every template)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("labctl.report", "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["pct"] = pct
    env.filters["num"] = num
    return env


def render_html(data: Population) -> str:
    from markupsafe import Markup

    ctx = build_context(data)
    # The SVG comes from matplotlib, whose SVG writer escapes every text it draws.
    for k in ("distributions", "trend_svgs"):
        ctx[k] = [Markup(s) for s in ctx[k]]
    for k in ("pareto_svg", "thermal"):
        ctx[k] = Markup(ctx[k]) if ctx[k] else None
    for d in ctx["domain"]:
        d["svg"] = Markup(d["svg"])
    for r in ctx["runs"]:
        r["thermal"] = Markup(r["thermal"]) if r["thermal"] else None
    return environment().get_template("report.html.j2").render(**ctx)


def write_report(data: Population, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(render_html(data), encoding="utf-8")
    return p


def write_html(records: Sequence[RunRecord], path: Path, options: ExportOptions) -> None:
    """The ``html`` report format (labctl.report.formats): one file for all the runs given."""
    from labctl.report.population import population

    write_report(population(records, title=options.title), path)


def write_runs_report(db: str | None, run_ids: Sequence[str], path: str | Path) -> str:
    """The HTML report of these stored runs (``db`` as ``--db``), read back from the store as
    records; returns the file's absolute path (what ``labctl run --report`` and the demo print)."""
    from labctl.report.formats import export
    from labctl.report.record import load_records

    return str(export(load_records(db, list(run_ids)), "html", path).resolve())


def _sim_time(seconds: Any) -> str:
    """A step's simulated duration as ``labctl runs show`` writes it; empty off a simulated bench."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return ""
    return format_span(seconds)


