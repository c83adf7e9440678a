"""``labctl resume RUN1 RUN2 …``: continue the interrupted runs of a many-slot run together.

A ``kill -9`` of ``labctl run --slots`` leaves one interrupted run record per slot. They are
resumed as they ran: in one process, on the same rack, each slot on its own instruments
(its supply, console, BERT) and in its own record, the shared instruments opened once and
leased, and the shared steps behind the barrier (a replayed soak moves the chamber once for
every slot). Each slot follows the resume rule of one run (labctl.engine.replay): its
finished steps that establish state are replayed, the others kept, the cut-off one and the
rest run, and its verdict is the one an uninterrupted run would have given.

The runs must come from one plan (same file, hash and parameters) on one station, one run
per slot. A run resumed without the others of its rack run continues alone on its slot.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from labctl.errors import UsageError
from labctl.launch import RunRequest
from labctl.resume import Resumable, prepare_resume
from labctl.slots.orchestrator import (
    SlotResume,
    SlotsOutput,
    SlotsRequest,
    SubscriberFactory,
    run_slots,
)
from labctl.slots.station import DEFAULT_LEASE_TIMEOUT


def prepare_slots(run_ids: list[str], *, force: bool = False, db: str | None = None,
                  fixture: str | None = None) -> list[Resumable]:
    """Every run checked (as a single resume would), then checked to belong together."""
    runs = [prepare_resume(r, force=force, db=db, fixture=fixture) for r in dict.fromkeys(run_ids)]
    no_slot = [r.info.run_id for r in runs if r.info.slot is None]
    if no_slot and len(runs) > 1:
        raise UsageError(f"run(s) {', '.join(no_slot)} ran on no slot: only the slots' runs of one rack run "
                         "resume together", hint="resume a run without a slot on its own: labctl resume RUN")
    first = runs[0]
    for r in runs[1:]:
        what = [name for name, a, b in (
            ("plan file", r.plan_path, first.plan_path), ("plan", r.info.plan_hash, first.info.plan_hash),
            ("parameters", r.overrides, first.overrides)) if a != b]
        if what:
            raise UsageError(f"runs {first.info.run_id} and {r.info.run_id} differ in {', '.join(what)}: only the "
                             "runs of one rack run resume together", hint="resume them separately")
    slots: dict[str, str] = {}
    for r in runs:
        if r.info.slot in slots:
            raise UsageError(f"runs {slots[r.info.slot]} and {r.info.run_id} both ran in slot {r.info.slot}",
                             hint="resume one run per slot")
        slots[r.info.slot] = r.info.run_id
    return runs


def resume_slots(run_ids: list[str], subscribers: SubscriberFactory, *, force: bool = False, db: str | None = None,
                 fixture: str | None = None, answers: str | None = None, preflight: bool = True,
                 allow_expired: bool = False, lease_timeout: float = DEFAULT_LEASE_TIMEOUT,
                 bench_log: str | None = None, say: Callable[[str], None] = print, abort: Any = None,
                 handle_signals: bool = True, lab_hook: Callable[[Any], None] | None = None) -> SlotsOutput:
    runs = prepare_slots(run_ids, force=force, db=db, fixture=fixture)
    first = runs[0]
    req = RunRequest(plan=first.plan_path, fixture=fixture, overrides=first.overrides, db=db, answers=answers,
                     preflight=preflight, allow_expired=allow_expired)
    resume = {r.info.slot: SlotResume(r.info.run_id, r.finished, r.first_attempt, r.info.operator, tuple(r.notes),
                                      r.attempts_left)
              for r in runs}
    left = _left_behind([r.info.run_id for r in runs], db)
    if left:
        say(f"note: run(s) {', '.join(left)} of the same many-slot run were interrupted too and are not resumed "
            "now (resume them with these: labctl resume --rack RUN)")
    for r in runs:
        say(f"resuming run {r.info.run_id} (slot {r.info.slot}, {r.info.dut_serial}): {len(r.finished)} step(s) "
            f"already finished (those that establish the bench's state are replayed), {len(r.info.cut_off)} cut "
            "off and re-run")
        for text in r.notes:
            say(f"slot {r.info.slot}: {text}")
    slots = ",".join(r.info.slot for r in runs)
    duts = ",".join(r.info.dut_serial or "" for r in runs) if all(r.info.dut_serial for r in runs) else None
    return run_slots(SlotsRequest(req, slots, duts, lease_timeout, bench_log, resume=resume), subscribers, say=say,
                     abort=abort, handle_signals=handle_signals, lab_hook=lab_hook)


def _left_behind(run_ids: list[str], db: str | None) -> list[str]:
    """Interrupted runs of the same many-slot run(s) that are not among ``run_ids``."""
    from labctl.store import open_store

    store = open_store(db)
    try:
        siblings = dict.fromkeys(r for run_id in run_ids for r in store.rack_runs(run_id))
    finally:
        store.close()
    return [r for r in siblings if r not in run_ids]
