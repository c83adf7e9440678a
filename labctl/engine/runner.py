"""The runner: setup -> steps (per corner) -> teardown, with safety beside every step.

Whatever happens — pass, fail, error, operator abort, Ctrl-C, SIGTERM, a tripped
interlock — teardown steps run and then every role's safe state, each recorded; one failing
action does not stop the others. The runner only publishes events; it knows nothing of the
store or the UI.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labctl import __version__
from labctl.clock import Clock, RealClock
from labctl.engine.abort import AbortController, RunAborted, abort_on_signals
from labctl.engine.context import PromptHandler, Recorded, StepContext, StepFailed
from labctl.engine.events import (
    NOT_IN_DATABASE,
    NOT_RUN,
    EventBus,
    InstrumentErrorReported,
    InstrumentInfo,
    LogMessage,
    RunEnded,
    RunOutcome,
    RunStarted,
    StepEnded,
    StepOutcome,
    StepStarted,
    Verdict,
)
from labctl.engine.interlocks import build_interlocks
from labctl.engine.replay import (
    REPLAY,
    REPLAY_MESSAGE,
    REPLAY_TAG,
    ReplayBus,
    rerun_selection,
    resume_actions,
)
from labctl.engine.safety import MIN_WALL_INTERVAL, SafetyMonitor
from labctl.engine.watchdog import SafeStateWatchdog
from labctl.errors import InstrumentError, LabctlError


@dataclass
class RunOptions:
    dut_serial: str | None = None
    operator: str | None = None
    run_id: str | None = None
    prompt_handler: PromptHandler | None = None
    handle_signals: bool = True
    #: resume: step key ("steps/rails@2") -> outcome ("PASS", "FAIL" …) of the steps that finished
    #: in an earlier session of this run; before the cut-off they are kept or replayed
    #: (labctl.engine.replay), and their outcomes count in the verdict
    finished_steps: Mapping[str, str] = field(default_factory=dict)
    resumed_from: str | None = None
    #: re-run: the earlier run this one re-runs steps of, and the steps chosen (step ids or
    #: "group/key"); only those run, after the steps that establish the board's state
    #: (labctl.engine.replay.rerun_selection); teardown and the safe state run as always
    rerun_of: str | None = None
    only_steps: frozenset[str] | None = None
    slot: str | None = None
    #: resume: step key -> attempt number to start at (attempts of earlier sessions are kept)
    first_attempt: dict[str, int] = field(default_factory=dict)
    #: resume: step key -> attempts left to a step whose earlier session ended one of its attempts
    #: FAIL or ERROR before its retries were spent (an uninterrupted run would have retried it)
    attempts_left: dict[str, int] = field(default_factory=dict)
    #: warnings recorded in the run's log right after it starts (e.g. "resumed with --force")
    notes: tuple[str, ...] = ()
    #: role -> instrument identity (*IDN? or the console's id), recorded with the run
    identities: dict[str, str] = field(default_factory=dict)
    #: why results are not safely in the database (spooled or lost), None while they are;
    #: a run whose results were not saved never ends ``passed``
    store_problem: Callable[[], str | None] | None = None
    #: seconds (wall) the safe-state watchdog waits for the runner after an abort
    watchdog_grace: float = 2.0
    watchdog_stall: float = 5.0
    #: told every good interlock reading (the safety monitor's thread): ``(interlock, value)``;
    #: a live display (the TUI), never the event bus (the watchdog counts bus traffic as progress)
    on_interlock: Callable[[Any, float], None] | None = None
    #: wall seconds kept at least between two interlock polls; a slot orchestrator raises it
    #: so that many slots' monitors do not hog a shared host
    safety_min_wall_interval: float = MIN_WALL_INTERVAL




def new_run_id() -> str:
    """A run id that is unique across a fleet and sorts by start time: 8 hex digits of the
    epoch second, then 64 random bits (a collision needs ~4 billion runs in one second)."""
    return f"{int(time.time()):08x}{secrets.token_hex(8)}"


@dataclass
class StepResult:
    key: str  # group/step-key, without the attempt
    step_id: str
    group: str
    check: str
    outcome: StepOutcome
    message: str = ""
    attempts: int = 1
    measurements: list[Recorded] = field(default_factory=list)
    corner: dict[str, Any] = field(default_factory=dict)
    #: when the step (its first attempt) started, wall epoch seconds, and how long all its
    #: attempts took (wall; simulated seconds too on a time-scaled bench): what a slot that
    #: records a shared step run by another slot records as its own
    started_at: float | None = None
    duration: float = 0.0
    duration_sim: float | None = None


@dataclass
class RunResult:
    run_id: str
    outcome: RunOutcome
    message: str
    steps: list[StepResult]
    safe_state: dict[str, Any] = field(default_factory=dict)

    @property
    def failures(self) -> list[StepResult]:
        return [s for s in self.steps if s.outcome in (StepOutcome.FAIL, StepOutcome.ERROR)]


class Runner:
    def __init__(
        self,
        loaded: Any,  # labctl.plan.loaded.LoadedPlan
        station: Any,  # labctl.instruments.station.Station
        fixture: Any,
        *,
        bus: EventBus | None = None,
        clock: Clock | None = None,
        options: RunOptions | None = None,
        abort: AbortController | None = None,
    ) -> None:
        import labctl.checks.builtin  # noqa: F401  (attaches the built-in implementations)
        from labctl.checks.registry import get_check, load_plugins

        load_plugins()
        self._get_check = get_check  # (an import statement per step costs more than the lookup)
        self.loaded = loaded
        self.station = station
        self.fixture = fixture
        self.bus = bus or EventBus()
        self.clock = clock or RealClock()
        self.options = options or RunOptions()
        self.abort = abort or AbortController()
        self.run_id = self.options.run_id or new_run_id()
        self.results: list[StepResult] = []
        self._stop_requested = False
        self._broke_off: str | None = None  # why the steps stopped short (an exception out of them)

    # ------------------------------------------------------------------ events
    def _now(self) -> float:
        return self.clock.wall_time()  # records carry wall time; waits run on the (scaled) clock

    def _log(self, message: str, level: str = "info", step_key: str | None = None) -> None:
        self.bus.publish(LogMessage(run_id=self.run_id, time=self._now(), level=level,
                                    message=message, step_key=step_key))

    # ------------------------------------------------------------------ run
    def run(self) -> RunResult:
        watchdog = SafeStateWatchdog(self.station.safe_state, self.abort, grace=self.options.watchdog_grace,
                                     stall=self.options.watchdog_stall)
        unsubscribe = self.bus.subscribe(watchdog.activity, first=True)
        self.bus.on_critical_failure = self._critical_subscriber_failed
        watchdog.start()
        monitor: SafetyMonitor | None = None
        refused = ""
        safe_state: dict[str, Any] = {}
        try:
            with abort_on_signals(self.abort) if self.options.handle_signals else _null():
                self._publish_started()
                if self.abort.requested:  # the recorder refused the run, or a signal came first
                    refused = f"refused to start: {self.abort.reason.message}"
                for note in self.options.notes:
                    self._log(note, "warning")
                if not refused:
                    try:
                        interlocks, interval = build_interlocks(self.loaded, self.station, self.fixture)
                        monitor = SafetyMonitor(interlocks, self.abort, self.clock, interval=interval,
                                                on_reading=self.options.on_interlock,
                                                min_wall_interval=self.options.safety_min_wall_interval)
                        trip = monitor.check_once() if interlocks else None
                        if trip is not None:
                            refused = f"refused to start: safety interlock already tripped: {trip.message}"
                    except Exception as err:  # noqa: BLE001 - an interlock that cannot be read must not be ignored
                        refused = f"refused to start: safety interlocks cannot be read: {err}"
                        self.abort.request("safety", refused)
                try:
                    if not refused:
                        if monitor is not None:
                            monitor.start()
                        try:
                            self._run_main()
                        except BaseException as exc:  # teardown and safe state still run; the record says error
                            detail = str(exc)
                            self._broke_off = (f"the run stopped short: {type(exc).__name__}"
                                               f"{': ' + detail if detail else ''}")
                            raise
                finally:
                    if monitor is not None:
                        monitor.stop()
                    watchdog.teardown_started()
                    self._run_teardown()
                    safe_state = self._safe_state()
                    watchdog.stop()
                    self._report_watchdog(watchdog)
        finally:
            watchdog.stop()
            unsubscribe()
            outcome, message = self._outcome(refused)
            self.bus.publish(RunEnded(run_id=self.run_id, time=self._now(), outcome=outcome, message=message))
        return RunResult(self.run_id, outcome, message, self.results, safe_state)

    def _critical_subscriber_failed(self, _subscriber: Any, exc: BaseException) -> None:
        """The results recorder raised: results can be kept nowhere, so the run stops."""
        text = exc.format() if isinstance(exc, LabctlError) else f"{type(exc).__name__}: {exc}"
        self.abort.request("recorder", f"results cannot be recorded ({text.splitlines()[0]}): "
                                       "the run stops to the safe state")

    def _report_watchdog(self, watchdog: SafeStateWatchdog) -> None:
        if watchdog.results is None:
            return
        done = "; ".join(f"{role} {' '.join(r.verdict())}" for role, r in watchdog.results.items())
        stamp = time.strftime("%H:%M:%S %Z", time.localtime(watchdog.fired_at or time.time()))
        self._log(f"safe-state watchdog drove the safe state at {stamp} because {watchdog.why}: "
                  f"{done or 'nothing done'}", "warning")

    def _publish_started(self) -> None:
        loaded = self.loaded
        plan = loaded.plan
        text = _plan_text(loaded.files)
        instruments = [
            InstrumentInfo(role=name, driver=b.driver, resource=b.resource,
                           idn=self.options.identities.get(name, ""),
                           asset_serial=b.asset.serial,
                           calibration_due=b.asset.calibration_due.isoformat() if b.asset.calibration_due else None)
            for name, b in self.fixture.roles.items()
        ]
        self.bus.publish(RunStarted(
            run_id=self.run_id, time=self._now(), plan_name=plan.name, plan_version=plan.version,
            plan_hash=loaded.sha256, plan_text=text, plan_path=loaded.path, station=self.fixture.station,
            dut_serial=self.options.dut_serial, operator=self.options.operator, labctl_version=__version__,
            host=socket.gethostname(), pid=os.getpid(), parameters=_jsonable(loaded.parameters),
            corners=[_jsonable(c.values) for c in loaded.corners], instruments=instruments,
            slot=self.options.slot, resumed_from=self.options.resumed_from, rerun_of=self.options.rerun_of,
        ))

    def _planned(self, groups: Iterable[str]) -> list[Any]:
        wanted = set(groups)
        return [ps for ps in self.loaded.expand() if ps.group in wanted]

    def _run_main(self) -> None:
        planned = self._planned(["setup", "steps"])
        if self.options.only_steps is not None:
            selected = rerun_selection(planned, self.options.only_steps, self.loaded)
            planned = [ps for ps in planned if self._base_key(ps) in selected]
        actions = resume_actions(planned, self.options.finished_steps, self.loaded)
        for ps in planned:
            action = actions.get(self._base_key(ps))
            halted = self.abort.requested or self._stop_requested
            if action is not None and (action != REPLAY or halted):
                result = self._keep(ps)
            elif halted:
                self._record_not_run(ps, StepOutcome.ABORTED if self.abort.requested else StepOutcome.SKIPPED,
                                     NOT_RUN + (self.abort.reason.message if self.abort.reason else "an earlier step stopped the run"))
                continue
            else:
                result = self._execute(ps, replay=action == REPLAY)
            if result.outcome not in (StepOutcome.FAIL, StepOutcome.ERROR) or halted:
                continue
            if result.message.startswith(REPLAY_MESSAGE):
                self._stop_requested = True
                self._log(f"replay of step {ps.step.id} did not pass: the state the remaining steps need is not "
                          "re-established; they are not run", "error")
            elif ps.group == "setup":
                self._stop_requested = True
                self._log(f"setup step {ps.step.id} did not pass: the steps are not run", "error")
            elif ps.step.on_fail == "stop":
                self._stop_requested = True
                self._log(f"step {ps.step.id} {result.outcome.value} with on_fail: stop", "warning")

    def _keep(self, ps: Any) -> StepResult:
        """A step finished in an earlier session of this run: its outcome counts, it is not run."""
        key = self._base_key(ps)
        outcome = StepOutcome(self.options.finished_steps[key])
        corner = _jsonable(dict(ps.corner.values)) if ps.corner else {}
        result = StepResult(key, ps.step.id, ps.group, ps.step.check, outcome,
                            f"finished in an earlier session of this run ({outcome.value})", 0, corner=corner)
        self.results.append(result)
        return result

    def _run_teardown(self) -> None:
        for ps in self._planned(["teardown"]):
            try:
                self._execute(ps, teardown=True)
            except Exception as exc:  # noqa: BLE001 - teardown goes on whatever happens
                self._log(f"teardown step {ps.step.id} crashed: {exc}", "error")

    def _safe_state(self) -> dict[str, Any]:
        results: dict[str, Any] = {}
        try:
            results = self.station.safe_state()
        except Exception as exc:  # noqa: BLE001
            self._log(f"safe state could not run: {exc}", "error")
            self.results.append(StepResult("teardown/safe-state", "safe-state", "teardown", "safe_state",
                                           StepOutcome.ERROR, f"safe state could not run: {exc}"))
            return results
        # every role is made safe at once (a thread each), taking res.seconds: its step starts
        # when they all started and lasts that long (the record's times, not a zero duration)
        began = self._now() - max((getattr(res, "seconds", 0.0) or 0.0 for res in results.values()), default=0.0)
        for role, res in results.items():
            key = f"teardown/safe-state.{role}"
            attempt_key = f"{key}#{self.options.first_attempt.get(key, 1)}"
            took = getattr(res, "seconds", 0.0) or 0.0
            self.bus.publish(StepStarted(run_id=self.run_id, time=began, step_key=attempt_key,
                                         step_id=f"safe-state.{role}", group="teardown", check="safe_state"))
            label, message = res.verdict()
            outcome = StepOutcome(label)
            self.bus.publish(StepEnded(run_id=self.run_id, time=began + took, step_key=attempt_key,
                                       outcome=outcome, message=message, duration=took))
            self.results.append(StepResult(key, f"safe-state.{role}", "teardown", "safe_state", outcome, message))
        return results

    # ------------------------------------------------------------------ one step
    def _base_key(self, ps: Any) -> str:
        return f"{ps.group}/{ps.key}"

    def _record_not_run(self, ps: Any, outcome: StepOutcome, message: str, *, replay: bool = False,
                        since: tuple[float, float] | None = None) -> StepResult:
        """A step recorded without running it. ``since``: (wall time, clock monotonic) it began
        waiting at (a slot aborted at a shared step's barrier): its record spans the wait."""
        key = self._base_key(ps)
        attempt_key = f"{key}#{self.options.first_attempt.get(key, 1)}"
        corner = _jsonable(dict(ps.corner.values)) if ps.corner else {}
        began = since[0] if since is not None else self._now()
        self.bus.publish(StepStarted(run_id=self.run_id, time=began, step_key=attempt_key, step_id=ps.step.id,
                                     group=ps.group, check=ps.step.check, corner=_jsonable(corner),
                                     corner_index=ps.corner.index if ps.corner else None,
                                     tags=(*ps.step.tags, REPLAY_TAG) if replay else tuple(ps.step.tags)))
        waited, waited_sim = 0.0, None
        if since is not None:
            elapsed = max(0.0, self.clock.monotonic() - since[1])
            waited, waited_sim = elapsed / self.clock.scale, elapsed if self.clock.scale != 1.0 else None
        self.bus.publish(StepEnded(run_id=self.run_id, time=self._now(), step_key=attempt_key,
                                   outcome=outcome, message=message, duration=waited, duration_sim=waited_sim))
        result = StepResult(key, ps.step.id, ps.group, ps.step.check, outcome, message, 0, corner=corner)
        self.results.append(result)
        return result

    def _execute(self, ps: Any, *, teardown: bool = False, replay: bool = False) -> StepResult:
        """Run one step (all its attempts). ``replay``: a finished step re-run on resume to
        re-establish the bench's state (see labctl.engine.replay)."""
        step = ps.step
        key = self._base_key(ps)
        corner = _jsonable(dict(ps.corner.values)) if ps.corner else {}
        try:
            if not self.loaded.should_run(step, ps.corner):
                if replay:
                    return self._keep(ps)
                return self._record_not_run(ps, StepOutcome.SKIPPED, f"when: {step.when} is false")
            args = self.loaded.resolve_args(step, ps.corner)
            limits = self.loaded.resolve_limits(step, ps.corner, args)
            timeout = self.loaded.resolve_timeout(step, ps.corner)
        except LabctlError as err:
            if replay:
                return self._record_not_run(ps, StepOutcome.ERROR, f"{REPLAY_MESSAGE}: {err.format()}", replay=True)
            return self._record_not_run(ps, StepOutcome.ERROR, err.format())
        step_id, check = step.id, step.check  # read once: every read of a plan model is a slow lookup
        spec = self._get_check(check)
        attempts = step.retries + 1
        result = StepResult(key, step_id, ps.group, check, StepOutcome.ERROR, corner=corner)
        # a resumed step cut off between its retries runs those it had left, counted on from
        # the ones its earlier session ended (``first``: where attempt 1 of them would be)
        done = attempts - self.options.attempts_left.get(key, attempts)
        first = self.options.first_attempt.get(key, 1) - done
        first_failure: str | None = None
        began: tuple[float, float] | None = None  # (wall, monotonic) at the first attempt's start
        for attempt in range(first + done, first + attempts):
            attempt_key = f"{key}#{attempt}"
            start, started_at = self.clock.monotonic(), self._now()
            if began is None:
                began = (started_at, start)  # (the time the record of the step's start carries)
            self.bus.publish(StepStarted(
                run_id=self.run_id, time=started_at, step_key=attempt_key, step_id=step_id, group=ps.group,
                check=check, corner=_jsonable(corner), corner_index=ps.corner.index if ps.corner else None,
                attempt=attempt, tags=(*step.tags, REPLAY_TAG) if replay else tuple(step.tags)))
            ctx = StepContext(
                run_id=self.run_id, step_key=attempt_key, step_id=step_id,
                bus=ReplayBus(self.bus) if replay else self.bus, clock=self.clock,
                abort=self.abort, station=self.station, fixture=self.fixture, limits=limits,
                parameters=self.loaded.parameters, corner=corner, timeout=timeout,
                prompt_handler=self.options.prompt_handler, dut_serial=self.options.dut_serial,
                enforce_abort=not teardown,
                limit_in=lambda name, unit: self.loaded.resolve_limit_as(step, ps.corner, args, name, unit),
            )
            outcome, message = self._call(spec, ctx, args)
            outcome, message = self._collect_instrument_errors(ctx, attempt_key, outcome, message)
            elapsed = self.clock.monotonic() - start
            scaled = self.clock.scale != 1.0
            if replay:
                message = REPLAY_MESSAGE + (f": {outcome.value}: {message}" if message else "")
            self.bus.publish(StepEnded(run_id=self.run_id, time=self._now(), step_key=attempt_key,
                                       outcome=outcome, message=message,
                                       duration=elapsed / self.clock.scale, duration_sim=elapsed if scaled else None))
            if first_failure is None and outcome in (StepOutcome.FAIL, StepOutcome.ERROR):
                first_failure = f"attempt {attempt - first + 1} {outcome.value}: {message}"
            if outcome is StepOutcome.PASS and first_failure is not None:
                # a retry never hides the first failure
                message = f"passed on attempt {attempt - first + 1} of {attempts}; {first_failure}"
            result.outcome, result.message, result.attempts = outcome, message, attempt - first + 1
            result.measurements = ctx.recorded
            took = start - began[1] + elapsed  # from the first attempt's start to this one's end
            result.started_at, result.duration = began[0], took / self.clock.scale
            result.duration_sim = took if scaled else None
            if outcome in (StepOutcome.PASS, StepOutcome.ABORTED) or self.abort.requested and not teardown:
                break
            if attempt < first + attempts - 1:
                self._log(f"step {step.id} {outcome.value} (attempt {attempt - first + 1} of {attempts}): retrying",
                          "warning", attempt_key)
        if replay:
            return self._replayed(ps, result.outcome, result.message)
        self.results.append(result)
        return result

    def _replayed(self, ps: Any, outcome: StepOutcome, message: str) -> StepResult:
        """The verdict of a replayed step: its earlier outcome, unless the replay failed."""
        kept = self._keep(ps)
        if outcome in (StepOutcome.FAIL, StepOutcome.ERROR, StepOutcome.ABORTED):
            kept.outcome = outcome
            kept.message = message if message.startswith(REPLAY_MESSAGE) else f"{REPLAY_MESSAGE}: {message}"
        else:
            kept.message += f"; {REPLAY_MESSAGE}"
        return kept

    def _call(self, spec: Any, ctx: StepContext, args: Any) -> tuple[StepOutcome, str]:
        if spec is None or spec.func is None:
            name = spec.name if spec is not None else "?"
            return StepOutcome.ERROR, f"check {name} has no implementation installed (step {ctx.step_id})"
        try:
            spec.func(ctx, args)
        except RunAborted as exc:
            return StepOutcome.ABORTED, f"aborted: {exc.reason.message}"
        except StepFailed as exc:
            return StepOutcome.FAIL, exc.message
        except LabctlError as exc:
            if self.abort.requested and ctx.enforce_abort:
                return StepOutcome.ABORTED, f"aborted: {self.abort.reason.message}; then {exc}"
            return StepOutcome.ERROR, str(exc) + (f" (hint: {exc.hint})" if exc.hint else "")
        except Exception as exc:  # noqa: BLE001 - a check bug is this step's ERROR, not a crash
            self._log("".join(traceback.format_exception(exc)), "debug", ctx.step_key)
            return StepOutcome.ERROR, f"internal error in check {spec.name}: {type(exc).__name__}: {exc}"
        if ctx.failed:
            first = ctx.failed[0]
            where = ", ".join(f"{k} {v}" for k, v in first.labels.items())
            shown = f"{first.value:.6g}" if isinstance(first.value, float) else str(first.value)
            text = f"{first.name}{f' ({where})' if where else ''} = {shown} {first.unit}".rstrip()
            limit = f", limit {first.limits.text}" if first.limits and first.limits.text else ""
            more = f" (+{len(ctx.failed) - 1} more)" if len(ctx.failed) > 1 else ""
            return StepOutcome.FAIL, f"{text}{limit}{more}"
        marginal = [m for m in ctx.recorded if m.verdict is Verdict.MARGINAL]
        return StepOutcome.PASS, (f"{len(marginal)} marginal measurement(s)" if marginal else "")

    def _collect_instrument_errors(
        self, ctx: StepContext, step_key: str, outcome: StepOutcome, message: str
    ) -> tuple[StepOutcome, str]:
        if not ctx.roles_used:
            return outcome, message
        try:
            errors = self.station.drain_errors(sorted(ctx.roles_used))
        except LabctlError as err:
            return (StepOutcome.ERROR if outcome is not StepOutcome.ABORTED else outcome,
                    message or f"error queue could not be read: {err}")
        found = []
        for role, entries in errors.items():
            for entry in entries:
                self.bus.publish(InstrumentErrorReported(run_id=self.run_id, time=self._now(), step_key=step_key,
                                                         role=role, code=entry.code, message=entry.message))
                found.append(f'{role}: {entry.code:+d},"{entry.message}"')
        if found and outcome in (StepOutcome.PASS, StepOutcome.FAIL):
            return StepOutcome.ERROR, "instrument error: " + "; ".join(found) + (f" ({message})" if message else "")
        return outcome, message

    # ------------------------------------------------------------------ outcome
    def _outcome(self, refused: str) -> tuple[RunOutcome, str]:
        """The run's outcome. A safe state not confirmed overrides it (outcome error, exit 2);
        a passed run whose results are not in the database is an error too."""
        outcome, message = self._steps_outcome(refused)
        unsafe = [r for r in self.results if r.check == "safe_state" and r.outcome is not StepOutcome.PASS]
        if unsafe:  # whatever else happened, the first thing the operator must read
            return RunOutcome.ERROR, ("BENCH MAY BE UNSAFE: " + " | ".join(f"{r.step_id}: {r.message}" for r in unsafe)
                                      + f" (run {outcome.value}: {message})")
        problem = self.options.store_problem() if self.options.store_problem is not None else None
        if problem and outcome is RunOutcome.PASSED:
            return RunOutcome.ERROR, f"{message}{NOT_IN_DATABASE}{problem}"
        return outcome, message

    def _steps_outcome(self, refused: str) -> tuple[RunOutcome, str]:
        reason = self.abort.reason
        if reason is not None and reason.source == "recorder":  # an error, not an operator's abort
            return RunOutcome.ERROR, refused or reason.message
        if refused:
            return RunOutcome.ABORTED, refused
        if self._broke_off is not None and not self.abort.requested:  # never `passed` on the steps that ran
            return RunOutcome.ERROR, self._broke_off
        if self.abort.requested:
            return RunOutcome.ABORTED, reason.message if reason else "aborted"
        outcomes = [r.outcome for r in self.results]
        errors = [r for r in self.results if r.outcome is StepOutcome.ERROR and r.check != "safe_state"]
        if errors:
            first = errors[0]
            return RunOutcome.ERROR, f"{first.step_id}: {first.message}"
        fails = [r for r in self.results if r.outcome is StepOutcome.FAIL and r.check != "safe_state"]
        if fails:
            return RunOutcome.FAILED, f"{len(fails)} step(s) failed, first {fails[0].step_id}: {fails[0].message}"
        if StepOutcome.ABORTED in outcomes:
            return RunOutcome.ABORTED, "aborted"
        # the plan's steps are counted; the safe state (one hidden step per role) is reported apart
        passed = sum(1 for r in self.results if r.outcome is StepOutcome.PASS and r.check != "safe_state")
        roles = [r for r in self.results if r.check == "safe_state"]
        ok = sum(1 for r in roles if r.outcome is StepOutcome.PASS)
        safe = "" if not roles else (f"; safe state: {ok} role(s) OK" if ok == len(roles)
                                     else f"; safe state: {ok} of {len(roles)} role(s) OK")
        return RunOutcome.PASSED, f"{passed} step(s) passed{safe}"


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _plan_text(files: list[str]) -> str:
    """The plan as run: its file, followed by every file it included (each headed by its path)."""
    if not files:
        return ""
    parts = [Path(files[0]).read_text(encoding="utf-8")]
    for extra in files[1:]:
        parts.append(f"\n# ---- included: {extra} ----\n" + Path(extra).read_text(encoding="utf-8"))
    return "".join(parts)


def _jsonable(values: Any) -> Any:
    """Corner and parameter values as JSON-ready data (quantities as text)."""
    if isinstance(values, dict):
        return {str(k): _jsonable(v) for k, v in values.items()}
    if isinstance(values, list | tuple):
        return [_jsonable(v) for v in values]
    if values is None or isinstance(values, bool | int | float | str):
        return values
    return str(values)


__all__ = ["Runner", "RunOptions", "RunResult", "StepResult", "InstrumentError", "NOT_IN_DATABASE"]
