"""Yield: first-pass and final, per plan and per step.

First-pass yield = DUTs that passed on their first run / DUTs; final yield = DUTs whose last
run passed / DUTs (a DUT is counted once per plan, its runs ordered by start time). Per step,
a DUT passes a step in a run when every corner of it passed; first pass also asks that it
passed on its first attempt (a retry that passed is not a first pass; a step replayed or run
again by ``labctl resume`` is no retry).
"""

from __future__ import annotations

import pandas as pd

PASSED_RUN = "passed"
PASSED_STEP = "PASS"
RETRIED = ("FAIL", "ERROR")  # the outcomes after which a step is tried again (plan key retries)


def _rates(per_dut: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    g = per_dut.groupby(keys, sort=True)
    out = pd.DataFrame({"duts": g.size(), "first_pass": g["first_ok"].sum(), "final_pass": g["last_ok"].sum()})
    out["first_pass_yield"] = out["first_pass"] / out["duts"]
    out["final_yield"] = out["final_pass"] / out["duts"]
    return out.reset_index()


def run_yield(runs: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """First-pass and final yield per plan (and ``by`` columns, e.g. ``station``): duts,
    first_pass, final_pass, first_pass_yield, final_yield, runs.

    ``runs`` has one row per run: run, plan, DUT, started, outcome. Runs still running are left out.
    """
    keys = ["plan"] + [b for b in (by or []) if b != "plan"]
    r = runs[runs["outcome"] != "running"].sort_values("started", kind="stable")
    if r.empty:
        return pd.DataFrame(columns=keys + ["duts", "first_pass", "final_pass", "first_pass_yield",
                                            "final_yield", "runs"])
    ok = r["outcome"] == PASSED_RUN
    g = r.assign(ok=ok).groupby(keys + ([] if "DUT" in keys else ["DUT"]), sort=False)
    per_dut = pd.DataFrame({"first_ok": g["ok"].first(), "last_ok": g["ok"].last()}).reset_index()
    out = _rates(per_dut, keys)
    return out.merge(r.groupby(keys).size().rename("runs").reset_index(), on=keys)


def step_yield(steps: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """First-pass and final yield per plan and step, over the DUTs that ran the step.

    ``steps`` has one row per step execution: run, step, corner, attempt, outcome; ``runs``
    gives each run its plan, DUT and start time. Skipped steps do not count.
    """
    s = steps[steps["outcome"].notna()]
    s = s.merge(runs[["run", "plan", "DUT", "started"]], on="run")
    corner = s["corner"].astype(str) if "corner" in s.columns else ""
    s = s.assign(corner=corner)
    # The verdict of each corner is its final attempt's (without ``final``: its last attempt's).
    # First pass also needs that no attempt before it failed or errored: a retry is not a first
    # pass, but a resume's replay of a finished step, or a step cut off by a crash and run
    # again, is no retry.
    if "final" in s.columns:
        counts = s["final"].astype(bool)
        retried = ~counts & s["outcome"].isin(RETRIED)
    else:
        counts = s["attempt"] == s.groupby(["run", "step", "corner"], sort=False)["attempt"].transform("max")
        retried = s["attempt"] > 1
    s = s.assign(ok=counts & (s["outcome"] == PASSED_STEP), retried=retried,
                 skipped=counts & (s["outcome"] == "SKIPPED"))
    # a corner whose final word is SKIPPED (``when:`` false) was not run: it does not count,
    # also when an earlier session of the run recorded it ABORTED, not run, before a resume
    skipped = s.groupby(["run", "step", "corner"], sort=False)["skipped"].transform("any")
    s = s[~skipped & (s["outcome"] != "SKIPPED")]
    if s.empty:
        return pd.DataFrame(columns=["plan", "step", "duts", "first_pass", "final_pass",
                                     "first_pass_yield", "final_yield"])
    last = s.groupby(["run", "step", "corner"], sort=False).agg(
        ok=("ok", "any"), retried=("retried", "any"), plan=("plan", "first"), DUT=("DUT", "first"),
        started=("started", "first"))
    last["first_ok"] = last["ok"] & ~last["retried"]
    per_run = last.groupby(["run", "step"]).agg(ok=("ok", "all"), first_ok=("first_ok", "all"),
                                                plan=("plan", "first"), DUT=("DUT", "first"),
                                                started=("started", "first")).reset_index()
    per_run = per_run.sort_values("started", kind="stable")
    g = per_run.groupby(["plan", "step", "DUT"], sort=False)
    per_dut = pd.DataFrame({"first_ok": g["first_ok"].first(), "last_ok": g["ok"].last()}).reset_index()
    out = _rates(per_dut, ["plan", "step"])
    # each plan's steps in the order they ran in that plan, not alphabetical (nor in the order of
    # another plan that has steps of the same name)
    first = s.drop_duplicates(["plan", "step"])
    rank = {k: i for i, k in enumerate(zip(first["plan"], first["step"], strict=True))}
    out["_o"] = [rank[k] for k in zip(out["plan"], out["step"], strict=True)]
    return out.sort_values(["plan", "_o"]).drop(columns="_o").reset_index(drop=True)
