"""The ordinary runner of one slot, with the shared environment in mind.

- A step that acts on the shared environment (a ``thermal.soak`` of a shared chamber, or a
  step marked ``shared: true``) goes through the :class:`~labctl.slots.barrier.SharedStepBarrier`:
  run once, recorded by every slot.
- A teardown step that touches only shared roles (``chamber.setpoint``) is not the slot's
  to run: the bench makes the shared environment safe when the last slot ends.
- When the slot's steps end (done, stopped, aborted), it leaves the barrier.
- On resume, a shared step that a slot replays (finished before the kill, establishes
  state) goes through the barrier too: the chamber moves once for every slot, whether
  they replay it or run it anew (one that runs it anew leads; the others record a replay).
"""

from __future__ import annotations

from typing import Any

from labctl.engine.abort import AbortController
from labctl.engine.events import NOT_RUN, MeasurementRecorded, StepEnded, StepOutcome, StepStarted
from labctl.engine.replay import REPLAY_MESSAGE, REPLAY_TAG
from labctl.engine.runner import Runner, StepResult, _jsonable
from labctl.errors import LabctlError
from labctl.slots.barrier import AbortedWaiting, SharedStepBarrier

#: checks that move the environment itself when their role is shared
ENVIRONMENT_CHECKS = {"thermal.soak"}


def step_roles(loaded: Any, ps: Any, fixture: Any) -> set[str]:
    """The roles a planned step uses: the check's own, those its arguments name, and the
    roles of the channels it reads."""
    from labctl.checks.registry import get_check

    spec = get_check(ps.step.check)
    roles = set(spec.roles) if spec is not None else set()
    try:
        args = loaded.resolve_args(ps.step, ps.corner)
    except LabctlError:
        return roles
    roles.update(args.roles())
    for name in args.channels():
        if name in fixture.channels:
            roles.add(fixture.channel(name).role)
    return roles


class SlotRunner(Runner):
    def __init__(self, *args: Any, slot: str, barrier: SharedStepBarrier, shared_roles: set[str],
                 bench_abort: AbortController, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.slot = slot
        self.barrier = barrier
        self.shared_roles = set(shared_roles)
        self.bench_abort = bench_abort

    def is_shared_step(self, ps: Any) -> bool:
        if getattr(ps.step, "shared", False):
            return True
        return ps.step.check in ENVIRONMENT_CHECKS and bool(step_roles(self.loaded, ps, self.fixture) & self.shared_roles)

    def _run_main(self) -> None:
        try:
            super()._run_main()
        finally:
            self.barrier.leave(self.slot)

    def _execute(self, ps: Any, *, teardown: bool = False, replay: bool = False) -> StepResult:
        if teardown:
            roles = step_roles(self.loaded, ps, self.fixture)
            if roles and roles <= self.shared_roles:
                return self._record_not_run(ps, StepOutcome.SKIPPED, f"shared {', '.join(sorted(roles))}: made safe "
                                                                     "by the bench when the last slot ends")
            return super()._execute(ps, teardown=True, replay=replay)
        if not self.is_shared_step(ps):
            return super()._execute(ps, replay=replay)
        key = self._base_key(ps)
        self._log(f"slot {self.slot} at the shared step {key}: waiting for every live slot", "info")
        arrived = (self._now(), self.clock.monotonic())

        def keep(result: StepResult) -> bool:  # a leader aborted on its own does not decide for everyone
            return result.outcome is not StepOutcome.ABORTED or self.bench_abort.requested

        try:
            result, leader = self.barrier.run(key, self.slot,
                                              lambda: super(SlotRunner, self)._execute(ps, replay=replay),
                                              self.abort, keep=keep, rank=0 if replay else 1)
        except AbortedWaiting as exc:  # its board waited that long: the record spans the wait
            # cut short while another slot ran it (an attempt), or before anyone began it (none)
            message = f"aborted: {exc.reason.message}" if exc.under_way else NOT_RUN + exc.reason.message
            return self._record_not_run(ps, StepOutcome.ABORTED, message, since=arrived)
        except Exception as exc:  # noqa: BLE001 - aborted while waiting
            message = f"aborted: {self.abort.reason.message}" if self.abort.reason else f"{exc}"
            return self._record_not_run(ps, StepOutcome.ABORTED, message, since=arrived)
        if leader == self.slot:
            return result
        if replay:
            return self._follow_replay(ps, result, leader)
        return self._follow(ps, result, leader)

    def _follow_started(self, ps: Any, *tags: str, at: float | None = None) -> tuple[str, str, dict[str, Any]]:
        """The StepStarted of a shared step this slot records but did not run: (key, attempt key,
        corner). ``at``: when the leader started it (this slot's board was in the chamber then)."""
        key = self._base_key(ps)
        attempt_key = f"{key}#{self.options.first_attempt.get(key, 1)}"
        corner = _jsonable(dict(ps.corner.values)) if ps.corner else {}
        self.bus.publish(StepStarted(run_id=self.run_id, time=self._now() if at is None else at,
                                     step_key=attempt_key, step_id=ps.step.id, group=ps.group, check=ps.step.check,
                                     corner=corner,
                                     corner_index=ps.corner.index if ps.corner else None,
                                     tags=(*ps.step.tags, "shared", *tags)))
        return key, attempt_key, corner

    def _follow_replay(self, ps: Any, led: StepResult, leader: str) -> StepResult:
        """A shared step this slot replays on resume, run once by ``leader``: recorded as a
        replay (no measurement: this slot's own are kept from before)."""
        _key, attempt_key, _corner = self._follow_started(ps, REPLAY_TAG)
        outcome = led.outcome
        detail = led.message.removeprefix(REPLAY_MESSAGE).lstrip(": ")
        message = f"{REPLAY_MESSAGE}: shared step, run once for every slot by slot {leader}" + (
            f": {outcome.value}: {detail}" if outcome is not StepOutcome.PASS and detail else "")
        self.bus.publish(StepEnded(run_id=self.run_id, time=self._now(), step_key=attempt_key,
                                   outcome=outcome, message=message))
        return self._replayed(ps, outcome, message)

    def _follow(self, ps: Any, led: StepResult, leader: str) -> StepResult:
        """Record the shared step's result, run once by ``leader``, as this slot's own: its start,
        duration and measurements (the leader's; the measurements stamped as this slot records them)."""
        key, attempt_key, corner = self._follow_started(ps, at=led.started_at)
        for m in led.measurements:
            self.bus.publish(MeasurementRecorded(run_id=self.run_id, time=self._now(), step_key=attempt_key,
                                                 name=m.name, value=m.value, unit=m.unit, limits=m.limits,
                                                 verdict=m.verdict, labels=dict(m.labels)))
        message = f"shared step, run once for every slot by slot {leader}" + (f": {led.message}" if led.message else "")
        self.bus.publish(StepEnded(run_id=self.run_id, time=self._now(), step_key=attempt_key,
                                   outcome=led.outcome, message=message, duration=led.duration,
                                   duration_sim=led.duration_sim))
        result = StepResult(key, ps.step.id, ps.group, ps.step.check, led.outcome, message, led.attempts,
                            list(led.measurements), corner, led.started_at, led.duration, led.duration_sim)
        self.results.append(result)
        return result
