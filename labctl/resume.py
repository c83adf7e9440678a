"""``labctl resume RUN_ID``: continue an interrupted run in the same record.

The bench may be in any state (made safe by pre-flight or by hand, or a fresh simulated
lab), so before the cut-off step the finished steps that establish state are replayed in
order and the other finished steps are kept (labctl.engine.replay); the step that was cut
off runs again as a new attempt, then the rest, then teardown. Steps that were aborted run
again. The verdict counts the kept outcomes, as an uninterrupted run would have.

A plan file that changed since the run started (hash) refuses to resume unless ``--force``;
a forced resume says so in the run's log.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from labctl.errors import UsageError
from labctl.launch import RunOutput, RunRequest, execute


@dataclass
class Resumable:
    """An interrupted run checked and ready to continue (:func:`prepare_resume`)."""

    info: Any  # the store's ResumeInfo
    plan_path: str
    overrides: dict[str, str]
    finished: dict[str, str]  # step key -> earlier outcome (kept or replayed)
    first_attempt: dict[str, int]
    notes: list[str] = field(default_factory=list)
    #: step key -> attempts left of a step cut off between its retries (see prepare_resume)
    attempts_left: dict[str, int] = field(default_factory=dict)


def prepare_resume(run_id: str, *, force: bool = False, db: str | None = None,
                   fixture: str | None = None, store: Any = None) -> Resumable:
    """Check that the run can continue on this fixture with its plan; what it resumes from.
    ``store``: the results store already open (the caller closes it), else ``db`` is opened."""
    if store is None:
        from labctl.store import open_store

        with open_store(db) as opened:  # marks runs of dead processes interrupted
            return prepare_resume(run_id, force=force, db=db, fixture=fixture, store=opened)
    from labctl.plan.loader import load_plan

    info = store.resume_info(run_id)
    target = store.display_url
    from labctl.store.spool import unsynced_records

    waiting = unsynced_records(run_id)
    if waiting:
        path, n = waiting
        raise UsageError(f"cannot resume run {run_id}: {n} of its records wait in the local spool {path} "
                         "(the database failed during the run): it may have ended meanwhile",
                         hint=f"push them first with `labctl sync --db {target} --all`, then see how it ended: "
                              f"labctl runs show {run_id}")
    if not info.resumable:
        raise UsageError(f"cannot resume run {run_id}: {info.reason}")
    if info.outcome not in ("interrupted", "aborted"):
        raise UsageError(f"cannot resume run {run_id}: it ended {info.outcome}; only interrupted or aborted "
                         "runs continue", hint=f"run the plan again: labctl run {info.plan_path}")
    from labctl.launch import resolve_fixture

    station = resolve_fixture(fixture, []).station
    if station != info.station:
        raise UsageError(f"cannot resume run {run_id} on station {station}: it ran on station {info.station}",
                         hint="pass --fixture with that station's file")
    from labctl.resources import resolve_data_path

    plan_path = info.plan_path  # as written at `labctl run` (a built-in plan's name resolves the same way)
    if not resolve_data_path(plan_path, "testplans").exists():
        raise UsageError(f"cannot resume run {run_id}: its plan file {plan_path} is gone",
                         hint="restore the plan file at that path")
    overrides = {k: str(v) for k, v in info.parameters.items()}
    loaded = load_plan(plan_path, overrides)
    current = loaded.sha256
    notes: list[str] = []
    if current != info.plan_hash:
        if not force:
            raise UsageError(f"cannot resume run {run_id}: plan {plan_path} changed since the run started",
                             hint="restore the plan, or pass --force to resume with the changed plan (recorded)")
        notes.append(f"plan {plan_path} changed since the run started (hash {info.plan_hash[:12]} -> "
                     f"{current[:12]}); resumed with --force")
    # aborted steps (an aborted run) run again; teardown always runs
    finished = {k: outcome for k, outcome in info.finished.items()
                if outcome != "ABORTED" and not k.startswith("teardown/")}
    first_attempt = {k: n + 1 for k, n in info.attempts.items()}
    # a step whose last attempt FAILed or ERRORed with retries left was cut off between its
    # attempts (the next one had not been recorded): it runs again with the attempts it had left
    retries = {f"{ps.group}/{ps.key}": ps.step.retries for ps in loaded.expand()}
    attempts_left: dict[str, int] = {}
    for key, outcome in list(finished.items()):
        ended = info.tries.get(key, 1)
        if outcome in ("FAIL", "ERROR") and ended < retries.get(key, 0) + 1:
            del finished[key]
            attempts_left[key] = retries[key] + 1 - ended
    return Resumable(info, plan_path, overrides, finished, first_attempt, notes, attempts_left)


def resume_run(run_id: str, *, force: bool = False, db: str | None = None, fixture: str | None = None,
               answers: str | None = None, preflight: bool = True, allow_expired: bool = False,
               subscribers: list[Callable[[Any], None]] | None = None,
               say: Callable[[str], None] = print, abort: Any = None, handle_signals: bool = True,
               prepared: Resumable | None = None) -> RunOutput:
    """Continue one run of a station without slots (a slot's run: :func:`labctl.slots.resume.resume_slots`).
    ``prepared``: what :func:`prepare_resume` found for this run, when the caller has it already."""
    r = prepared if prepared is not None else prepare_resume(run_id, force=force, db=db, fixture=fixture)
    info = r.info
    if info.slot is not None:
        raise UsageError(f"run {run_id} ran in slot {info.slot}: resume it with the other runs of its rack",
                         hint=f"labctl resume {run_id} [OTHER_RUN …] --fixture FIXTURE (the slots' runs together)")
    req = RunRequest(plan=r.plan_path, fixture=fixture, dut=info.dut_serial, overrides=r.overrides, db=db,
                     answers=answers, preflight=preflight, operator=info.operator, run_id=run_id,
                     finished_steps=r.finished, attempts_left=r.attempts_left, resumed_from=run_id,
                     allow_expired=allow_expired)
    n_cut = len(info.cut_off) + len(r.attempts_left)
    cut = f", {n_cut} cut off and re-run" if n_cut else ""
    say(f"resuming run {run_id}: {len(r.finished)} step(s) already finished (those that establish the "
        f"bench's state are replayed){cut}")
    for text in r.notes:
        say(text)
    return execute(req, list(subscribers or []), say=say, first_attempt=r.first_attempt, run_notes=tuple(r.notes),
                   abort=abort, handle_signals=handle_signals)
