"""Synthetic report data for tests and ``bench/report_scaling.py``: a population of runs of a
plan with rails, sequencing, BER per lane and corner, soak temperatures, efficiency and
perf-per-watt, built directly as frames (no plan is run)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from labctl.report.population import Population

T0 = pd.Timestamp("2026-11-20T08:00:00Z")
CORNERS = ["temp=0 degC", "temp=25 degC", "temp=85 degC"]  # as the record writes a corner
LANES = 4


def _spec() -> list[tuple[str, str, dict, str, float, float, float | None, float | None]]:
    """(step, measurement, labels, unit, mean, sigma, low, high) of one corner."""
    rows = [("rails", "VDD_CORE", {"rail": "VDD_CORE"}, "V", 0.75, 0.004, 0.7275, 0.7725),
            ("rails", "VDD_IO", {"rail": "VDD_IO"}, "V", 1.8, 0.006, 1.746, 1.854),
            ("ripple", "VDD_CORE", {"rail": "VDD_CORE"}, "mV", 11.0, 1.5, None, 20.0),
            ("sequencing", "VDD_CORE->VDD_IO", {"rail": "VDD_IO"}, "ms", 2.0, 0.1, 1.0, 5.0),
            ("sequencing", "VDD_IO->VDD_DDR", {"rail": "VDD_DDR"}, "ms", 1.5, 0.08, 1.0, 5.0),
            ("efficiency", "efficiency", {"load": "10 A"}, "%", 88.0, 0.6, 85.0, None),
            ("efficiency", "efficiency", {"load": "30 A"}, "%", 91.0, 0.5, 85.0, None),
            ("perf", "perf_per_watt", {}, "TOPS/W", 2.4, 0.05, 2.0, None),
            ("soak", "temperature", {"sensor": "die"}, "degC", 70.0, 1.2, None, 95.0)]
    rows += [("ber", "ber", {"lane": str(i)}, "", 2e-13 * (1 + i), 5e-14, None, 1e-12) for i in range(LANES)]
    return rows


def synthetic_data(runs: int = 20, measurements_per_run: int | None = None, *, seed: int = 1,
                   serials: list[str] | None = None, operator: str = "alice",
                   samples_per_run: int = 60) -> Population:
    """``runs`` runs over about runs/1.2 DUTs (some DUTs retested), each with every spec row at
    every corner; ``measurements_per_run`` pads with extra rails to reach that size."""
    rng = np.random.default_rng(seed)
    spec = _spec()
    if measurements_per_run:
        extra = max(0, measurements_per_run // len(CORNERS) - len(spec))
        spec += [("rails", f"AUX{i}", {"rail": f"AUX{i}"}, "V", 1.0, 0.01, 0.95, 1.05) for i in range(extra)]
    n_duts = max(1, int(runs / 1.2))
    duts = serials or [f"EVT-{i:04d}" for i in range(n_duts)]
    run_ids = [f"run-{i:05d}" for i in range(runs)]
    run_duts = [duts[i % len(duts)] for i in range(runs)]
    started = [T0 + pd.Timedelta(minutes=30 * i) for i in range(runs)]
    per_run = len(spec) * len(CORNERS)
    total = runs * per_run
    # Columns built by repetition: run-level fields repeat per_run times, spec fields tile.
    rep = np.repeat(np.arange(runs), per_run)
    spec_idx = np.tile(np.repeat(np.arange(len(spec)), len(CORNERS)), runs)
    corner_idx = np.tile(np.tile(np.arange(len(CORNERS)), len(spec)), runs)
    means = np.array([s[4] for s in spec])[spec_idx]
    sigmas = np.array([s[5] for s in spec])[spec_idx]
    drift = (rep / max(1, runs - 1)) * 2 * sigmas * (spec_idx == 0)  # VDD_CORE drifts by 2 σ
    values = means + drift + rng.standard_normal(total) * sigmas
    lows = np.array([np.nan if s[6] is None else s[6] for s in spec])[spec_idx]
    highs = np.array([np.nan if s[7] is None else s[7] for s in spec])[spec_idx]
    verdict = np.where((values < np.nan_to_num(lows, nan=-np.inf)) | (values > np.nan_to_num(highs, nan=np.inf)),
                       "FAIL", "PASS")
    labels = [", ".join(f"{k}={v}" for k, v in s[2].items()) for s in spec]
    frame = pd.DataFrame({
        "run_id": np.array(run_ids, dtype=object)[rep], "plan": "accelerator-evt", "plan_version": "1.2",
        "station": np.where(rep % 2 == 0, "bench-1", "bench-2"), "dut": np.array(run_duts, dtype=object)[rep],
        "operator": operator, "corner": np.array(CORNERS, dtype=object)[corner_idx],
        "step": np.array([s[0] for s in spec], dtype=object)[spec_idx], "attempt": 1, "final": True,
        "measurement": np.array([s[1] for s in spec], dtype=object)[spec_idx],
        "labels": np.array(labels, dtype=object)[spec_idx], "value": values,
        "unit": np.array([s[3] for s in spec], dtype=object)[spec_idx], "low": lows, "high": highs,
        "verdict": verdict, "time": np.array(started, dtype=object)[rep],
    })
    bad_runs = set(frame.loc[frame["verdict"] == "FAIL", "run_id"])
    runs_df = pd.DataFrame({
        "run": run_ids, "plan": "accelerator-evt", "version": "1.2",
        "station": ["bench-1" if i % 2 == 0 else "bench-2" for i in range(runs)], "DUT": run_duts,
        "operator": operator, "started": started, "ended": [t + pd.Timedelta(minutes=25) for t in started],
        "outcome": ["failed" if r in bad_runs else "passed" for r in run_ids],
        "message": ["a limit was missed" if r in bad_runs else "" for r in run_ids], "labctl_version": "0.1.0",
    })
    steps = frame.rename(columns={"run_id": "run"}).groupby(["run", "step"], sort=False).agg(
        failed=("verdict", lambda v: (v == "FAIL").any())).reset_index()
    steps = steps.assign(corner="", attempt=1, outcome=np.where(steps["failed"], "FAIL", "PASS"),
                         duration=30.0, message=np.where(steps["failed"], "a limit was missed", "")).drop(columns="failed")
    t = np.arange(samples_per_run)
    samp = []
    for i, r in enumerate(run_ids):
        curve = 25 + 45 * (1 - np.exp(-t / 12)) + rng.standard_normal(len(t)) * 0.3
        samp.append(pd.DataFrame({"run": r, "step": "soak", "series": "die", "value": curve, "unit": "degC",
                                  "time": started[i] + pd.to_timedelta(t * 10, unit="s")}))
    samples = pd.concat(samp, ignore_index=True) if samp else pd.DataFrame()
    return Population(measurements=frame, runs=runs_df, steps=steps, samples=samples)
