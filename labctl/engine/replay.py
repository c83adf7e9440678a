"""The resume rule: which finished steps are replayed, which are kept.

A resumed run must give the verdict an uninterrupted run would have given, on a bench that
the dead process left in any state (made safe by hand, or a simulated lab that died with
it). So before the *cut-off* (the first step, in run order, that did not finish), every
finished step that **establishes state** (power-up, sequencing, ``set``, link training, a
chamber setpoint or soak, a workload) is *replayed*, in order; every other finished step is
*kept* (its measurements stay as recorded, it is not run again). A run cut off in teardown
replays nothing: only teardown and the safe state run again. Corners: when the cut-off
lies in corner k (or after it), only the state steps of corner k are replayed, with those
of setup and of the steps that run once.

Each check declares whether it establishes state (``CheckArgs.establishes_state``); a plan
step overrides it with ``resume: replay`` or ``resume: skip``. A replay is recorded as a
new attempt of its step tagged :data:`REPLAY_TAG`, with the message :data:`REPLAY_MESSAGE`;
its measurements are judged (a replay that fails makes the resumed run fail or error) but
not recorded, so no measurement is counted twice.

A *re-run* (:func:`rerun_selection`) is a new run of chosen steps of an earlier run on the
board now on the fixture: the same rule picks the state-establishing steps that run first
(as ordinary steps: the board may have been reworked, their measurements are new).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from labctl.engine.events import Event, MeasurementRecorded
from labctl.errors import LabctlError

REPLAY_TAG = "resume-replay"
REPLAY_MESSAGE = "replayed on resume"
KEEP, REPLAY = "keep", "replay"


def resume_actions(planned: Sequence[Any], finished: Mapping[str, str], loaded: Any) -> dict[str, str]:
    """Step key (``group/key``) -> :data:`KEEP` or :data:`REPLAY` for every finished step
    before the cut-off. Steps not in the result run as usual."""
    if not finished:
        return {}
    keys = [f"{ps.group}/{ps.key}" for ps in planned]
    cut = next((i for i, k in enumerate(keys) if k not in finished), None)
    if cut is None:  # cut off in teardown: only teardown runs again, no state to re-establish
        return dict.fromkeys(keys, KEEP)
    before = planned[:cut]
    corner = _replay_corner(planned, cut)
    actions: dict[str, str] = {}
    for ps, key in zip(before, keys, strict=False):
        in_scope = ps.corner is None or ps.corner.index == corner
        actions[key] = REPLAY if in_scope and establishes_state(ps, loaded) else KEEP
    for key in keys[cut:]:  # finished steps after the cut-off (not expected, but possible): kept
        if key in finished:
            actions[key] = KEEP
    return actions


def _replay_corner(planned: Sequence[Any], cut: int) -> int | None:
    """The corner whose state the cut-off step expects: its own, else the last one before it."""
    if cut < len(planned) and planned[cut].corner is not None:
        return planned[cut].corner.index
    for ps in reversed(planned[:cut]):
        if ps.corner is not None:
            return ps.corner.index
    return None


def establishes_state(ps: Any, loaded: Any) -> bool:
    """The step's ``resume:`` if given, else its check's declaration (with its arguments)."""
    step = ps.step
    if step.resume is not None:
        return step.resume == REPLAY
    from labctl.checks.registry import get_check

    spec = get_check(step.check)
    if spec is None:
        return False
    try:
        return bool(loaded.resolve_args(step, ps.corner).establishes_state())
    except LabctlError:
        return bool(spec.args.ESTABLISHES_STATE)


def rerun_selection(planned: Sequence[Any], chosen: Collection[str], loaded: Any) -> set[str]:
    """The steps a re-run of ``chosen`` runs (step keys ``group/key``): the chosen steps (a
    step id chooses all its corners, ``group/key`` one of them) and, before each, the steps
    that establish the board's state (as a resume replays them): those of setup, of the
    steps that run once, and of the chosen step's own corner. Raises when nothing matches."""
    keys = [f"{ps.group}/{ps.key}" for ps in planned]
    picked = [i for i, (ps, key) in enumerate(zip(planned, keys, strict=True))
              if ps.step.id in chosen or key in chosen]
    unknown = sorted(c for c in chosen if c not in keys and all(ps.step.id != c for ps in planned))
    if unknown or not picked:
        known = ", ".join(dict.fromkeys(ps.step.id for ps in planned if ps.group == "steps"))
        raise LabctlError(f"no step {', '.join(unknown or sorted(chosen))} in plan {loaded.plan.name}",
                          hint=f"its steps are: {known}")
    run = {keys[i] for i in picked}
    for i in picked:
        corner = planned[i].corner.index if planned[i].corner is not None else _replay_corner(planned, i)
        for ps, key in zip(planned[:i], keys[:i], strict=True):
            if (ps.corner is None or ps.corner.index == corner) and establishes_state(ps, loaded):
                run.add(key)
    return run


class ReplayBus:
    """What a replayed step publishes to: everything but its measurements (judged by the
    step, already recorded by the finished attempt)."""

    def __init__(self, bus: Any) -> None:
        self._bus = bus

    def publish(self, event: Event) -> None:
        if not isinstance(event, MeasurementRecorded):
            self._bus.publish(event)


__all__ = ["KEEP", "REPLAY", "REPLAY_MESSAGE", "REPLAY_TAG", "ReplayBus", "establishes_state", "rerun_selection",
           "resume_actions"]
