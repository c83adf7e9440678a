"""Failure Pareto: what fails most, counted once per run, with the cumulative share.

A cause is a measurement that missed its limits (step, measurement, labels), a step that
ended in error, or a step that failed without a measurement out of its limits (``(failed)``). Every attempt counts: an intermittent failure
that passed on retry still shows here.
"""

from __future__ import annotations

import pandas as pd


def pareto(df: pd.DataFrame, steps: pd.DataFrame | None = None, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Causes ranked by the number of runs they failed in: cause, step, measurement, labels,
    runs, duts, share, cumulative (shares of all failure occurrences).

    ``df`` is a prepared frame built with ``last_attempt=False``; ``steps`` (optional) adds
    steps that ended in ERROR; ``runs`` (run, DUT) names the DUT of a run that errored before
    it measured anything (else the DUT is taken from ``df``)."""
    fails = df[df["verdict"] == "FAIL"][["run", "DUT", "step", "measurement", "labels"]]
    parts = [fails]
    if steps is not None and len(steps):
        duts = runs if runs is not None else df
        errs = steps[steps["outcome"] == "ERROR"][["run", "step"]].copy()
        errs = errs.merge(duts[["run", "DUT"]].drop_duplicates("run"), on="run", how="left")
        errs["measurement"], errs["labels"] = "(error)", ""
        parts.append(errs)
        # a step that FAILed with no measurement out of its limits (a reply that did not match,
        # a check's own verdict): still a failure, under its step
        measured = set(zip(fails["run"], fails["step"], strict=True))
        failed = steps[steps["outcome"] == "FAIL"][["run", "step"]].drop_duplicates()
        failed = failed[pd.Series([(r, st) not in measured for r, st in zip(failed["run"], failed["step"], strict=True)],
                                  index=failed.index, dtype=bool)]
        if len(failed):
            failed = failed.merge(duts[["run", "DUT"]].drop_duplicates("run"), on="run", how="left")
            failed["measurement"], failed["labels"] = "(failed)", ""
            parts.append(failed)
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
