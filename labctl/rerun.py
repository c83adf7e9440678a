"""Re-running steps of a finished run on the board now on the fixture (the bring-up loop:
rework a board, re-run what failed, compare).

A re-run is a **new run** that references the earlier one (``runs.rerun_of``): same plan
file, same parameters, same station and DUT serial (a different board on the fixture is
refused), running only the chosen steps — by default the steps that failed or errored —
after the steps that establish the board's state (labctl.engine.replay.rerun_selection).
Teardown and the safe state run as always.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from labctl.errors import LabctlError, UsageError
from labctl.launch import RunRequest


@dataclass(frozen=True)
class RerunPlan:
    request: RunRequest
    steps: tuple[str, ...]  # the chosen step keys or ids, as asked
    notes: tuple[str, ...]  # the first says what is re-run; the others are also in request.notes (the run's log)


def failed_steps(store: Any, run_id: str) -> list[str]:
    """``group/key`` of the steps whose final attempt failed or errored (teardown aside)."""
    from labctl.store import query
    from labctl.store.store import split_step_key

    keys = [split_step_key(s["step_key"])[0] for s in query.step_rows(store, run_id)
            if s["final"] and s["outcome"] in ("FAIL", "ERROR") and s["group"] != "teardown"]
    return list(dict.fromkeys(keys))


def plan_rerun(run_id: str, steps: Collection[str] | None = None, *, db: str | None = None,
               fixture: str | None = None, answers: str | None = None, store: Any = None) -> RerunPlan:
    """The request for re-running ``steps`` (step ids or ``group/key``; None: the failed
    ones) of run ``run_id``. Raises a one-line error when that cannot be done."""
    from labctl.launch import resolve_fixture
    from labctl.plan.loader import load_plan
    from labctl.resources import resolve_data_path
    from labctl.store import open_store, query

    own = store is None
    store = open_store(db) if own else store
    try:
        run_id = query.find_run(store, run_id)
        run = query.run_detail(store, run_id)["run"]
        chosen = list(steps) if steps else failed_steps(store, run_id)
    finally:
        if own:
            store.close()
    if run["outcome"] == "running":
        raise UsageError(f"cannot re-run steps of run {run_id}: it is still running", hint="wait for it to end")
    if not chosen:
        raise UsageError(f"run {run_id} has no failed step to re-run",
                         hint="name the steps to re-run (labctl rerun RUN --step STEP_ID)")
    station = resolve_fixture(fixture, []).station
    if station != run["station"]:
        raise UsageError(f"cannot re-run run {run_id} on station {station}: it ran on station {run['station']}",
                         hint="pass --fixture with that station's file")
    plan_path = run["plan_path"]
    if not resolve_data_path(plan_path, "testplans").exists():
        raise UsageError(f"cannot re-run run {run_id}: its plan file {plan_path} is gone",
                         hint="restore the plan file at that path")
    overrides = {k: str(v) for k, v in (run["parameters"] or {}).items()}
    loaded = load_plan(plan_path, overrides)
    from labctl.engine.replay import rerun_selection

    planned = [ps for ps in loaded.expand() if ps.group in ("setup", "steps")]
    try:
        rerun_selection(planned, chosen, loaded)  # an unknown step is refused before anything is powered
    except LabctlError as err:
        raise UsageError(f"cannot re-run run {run_id}: {err.message}", hint=err.hint) from None
    notes = [f"re-run of run {run_id} (steps {', '.join(chosen)})"]
    if loaded.sha256 != run["plan_hash"]:
        notes.append(f"plan {plan_path} changed since run {run_id} (hash {run['plan_hash'][:12]} -> "
                     f"{loaded.sha256[:12]}): the re-run uses the plan as it is now")
    req = RunRequest(plan=plan_path, fixture=fixture, dut=run["dut_serial"], overrides=overrides, db=db,
                     answers=answers, rerun_of=run_id, only_steps=frozenset(chosen), notes=tuple(notes[1:]))
    return RerunPlan(req, tuple(chosen), tuple(notes))
