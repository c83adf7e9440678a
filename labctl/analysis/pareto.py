"""Failure Pareto: what fails most, counted once per run, with the cumulative share.

A cause is a measurement that missed its limits (step, measurement, labels), a step that
ended in error, or a step that failed without a measurement out of its limits (``(failed)``).
Every attempt counts: an intermittent failure that passed on retry still shows here.
"""

from __future__ import annotations

import pandas as pd


def without_failing_measurement(steps: pd.DataFrame, failing: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``steps`` whose (run, step) has no row in ``failing`` (measurements that
    missed their limits): a step that failed or errored with nothing out of limits to show
    for it (a reply that did not match, an instrument that did not answer)."""
    keys = failing[["run", "step"]].drop_duplicates()
    both = steps.merge(keys, on=["run", "step"], how="left", indicator=True)
    return both[both["_merge"] == "left_only"].drop(columns="_merge")


def pareto(df: pd.DataFrame, steps: pd.DataFrame | None = None, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Causes ranked by the number of runs they failed in: cause, step, measurement, labels,
    runs, duts, share, cumulative (shares of all failure occurrences).

    ``df`` is a prepared frame built with ``last_attempt=False``; ``steps`` (optional) adds
    steps that ended in ERROR, and steps that FAILed with no measurement out of its limits;
    ``runs`` (run, DUT) names the DUT of a run that errored before it measured anything (else
    the DUT is taken from ``df``)."""
    fails = df[df["verdict"] == "FAIL"][["run", "DUT", "step", "measurement", "labels"]]
    parts = [fails]
    if steps is not None and len(steps):
        dut_of = (runs if runs is not None else df)[["run", "DUT"]].drop_duplicates("run")
        errs = steps[steps["outcome"] == "ERROR"][["run", "step"]]
        failed = without_failing_measurement(steps[steps["outcome"] == "FAIL"][["run", "step"]].drop_duplicates(), fails)
        for rows, cause in ((errs, "(error)"), (failed, "(failed)")):
            rows = rows.merge(dut_of, on="run", how="left")
            rows["measurement"], rows["labels"] = cause, ""
            parts.append(rows)
    allf = pd.concat(parts, ignore_index=True).drop_duplicates(["run", "step", "measurement", "labels"])
    cols = ["cause", "step", "measurement", "labels", "runs", "duts", "share", "cumulative"]
    if allf.empty:
        return pd.DataFrame(columns=cols)
    g = allf.groupby(["step", "measurement", "labels"], sort=False)
    out = pd.DataFrame({"runs": g["run"].nunique(), "duts": g["DUT"].nunique()}).reset_index()
    out = out.sort_values(["runs", "duts", "step"], ascending=[False, False, True], kind="stable")
    out["share"] = out["runs"] / out["runs"].sum()
    out["cumulative"] = out["share"].cumsum()
    out["cause"] = out["step"] + " / " + out["measurement"] + out["labels"].map(lambda v: f" [{v}]" if v else "")
    return out[cols].reset_index(drop=True)
