"""What a check sees while it runs: :class:`StepContext`.

A check is a function ``check(ctx, args)``. It reaches instruments only through roles
(``ctx.role("psu")``, ``ctx.signal("VDD_CORE")``), records measurements with
``ctx.measure(...)`` (judged at once against the step's limits), time series with
``ctx.sample(...)``, says what a long wait is waiting for with ``ctx.progress(...)``, and
waits only through ``ctx.sleep`` / ``ctx.wait_until`` so that the run's clock (the simulated
lab's time scale), the step timeout and an abort request reach it. Every role call passes a
checkpoint too, so a step in a loop of instrument queries also sees an abort within one call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from labctl.clock import Clock
from labctl.engine.abort import AbortController, RunAborted
from labctl.engine.events import (
    EventBus,
    Limits,
    LogMessage,
    MeasurementRecorded,
    Progress,
    PromptAnswered,
    PromptAsked,
    SampleRecorded,
    Verdict,
)
from labctl.errors import LabctlError

#: the hint of a prompt nobody answered in time; a prompt handler's ``timeout_hint`` wins (the
#: TUI's names its dialog)
TIMEOUT_HINT = "answer sooner, raise the prompt's timeout:, or answer it with --answers FILE"


class StepTimeout(LabctlError, TimeoutError):
    """The step ran past its ``timeout:``."""


class StepFailed(LabctlError):
    """A check decided the step fails (beyond its measurements), with a message."""


class PromptUnanswered(LabctlError):
    """A prompt had no answer (headless run without --answers)."""


class PromptTimeout(PromptUnanswered, TimeoutError):
    """Nobody answered a prompt within its ``timeout:``."""


PromptHandler = Callable[[str, str, tuple[str, ...]], tuple[str, str]]
"""(prompt_id, text, choices) -> (answer, source). ``source`` says who answered:
``answers-file``, or ``operator:<name>`` for a person. A handler may also have a
``cancel(prompt_id)`` method, called when the prompt timed out or the run was aborted."""


@dataclass
class Recorded:
    """A measurement as the step recorded it (for the step's verdict and summaries)."""

    name: str
    value: Any
    unit: str
    verdict: Verdict
    limits: Limits | None
    labels: dict[str, str] = field(default_factory=dict)


_OWN = frozenset({"_target", "_ctx", "_name"})
_own = object.__getattribute__


class _RoleProxy:
    """A role object whose every call first passes the step's checkpoint.

    Every name but the proxy's own three and the dunders is the role's. They are told apart in
    ``__getattribute__``, not by a ``__getattr__`` behind a failed lookup: a failed lookup
    builds an ``AttributeError`` message, at every role call of every step."""

    def __init__(self, target: Any, ctx: StepContext, name: str) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_ctx", ctx)
        object.__setattr__(self, "_name", name)

    def __getattribute__(self, attr: str) -> Any:
        if attr in _OWN or attr[:2] == "__":
            return _own(self, attr)
        value = getattr(_own(self, "_target"), attr)
        if not callable(value):
            return value
        ctx = _own(self, "_ctx")

        def call(*args: Any, **kwargs: Any) -> Any:
            ctx.checkpoint()
            return value(*args, **kwargs)

        return call

    def __repr__(self) -> str:
        return f"<role {self._name}: {self._target!r}>"


class StepContext:
    def __init__(
        self,
        *,
        run_id: str,
        step_key: str,
        step_id: str,
        bus: EventBus,
        clock: Clock,
        abort: AbortController,
        station: Any,
        fixture: Any,
        limits: Mapping[str, Any] | None = None,
        parameters: Mapping[str, Any] | None = None,
        corner: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        prompt_handler: PromptHandler | None = None,
        dut_serial: str | None = None,
        enforce_abort: bool = True,
        limit_in: Callable[[str, str], Any] | None = None,
    ) -> None:
        self.run_id = run_id
        self.step_key = step_key
        self.step_id = step_id
        self.bus = bus
        self.clock = clock
        self.abort = abort
        self.station = station
        self.fixture = fixture
        self.limits = dict(limits or {})  # measurement name (or "*") -> ResolvedLimit
        self.parameters = dict(parameters or {})
        self.corner = dict(corner or {})
        self.timeout = timeout
        self.dut_serial = dut_serial
        self.enforce_abort = enforce_abort  # False in teardown: cleanup must not be cut short
        # (name, unit) -> the step's limit of that measurement in the unit its reading came in
        self._limit_in = limit_in
        self._prompt_handler = prompt_handler
        self._started = clock.monotonic()
        self.deadline = self._started + timeout if timeout is not None else None  # (0 s is a limit too)
        self.recorded: list[Recorded] = []
        self._never: threading.Event | None = None  # what teardown sleeps on: aborts must not cut cleanup short
        self.roles_used: set[str] = set()
        self._prompts = 0

    # ------------------------------------------------------------------ time and aborts
    def checkpoint(self) -> None:
        """Raise if the run was aborted or the step ran out of time."""
        if self.enforce_abort:
            self.abort.raise_if_requested()
        if self.deadline is not None and self.clock.monotonic() > self.deadline:
            raise StepTimeout(f"step {self.step_id} timed out after {self.timeout:g} s",
                              hint="raise the step's timeout: or look at what it waited for")

    @property
    def elapsed(self) -> float:
        return self.clock.monotonic() - self._started

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of run time; returns early (raising) on abort or timeout."""
        end = self.clock.monotonic() + max(0.0, seconds)
        while True:
            self.checkpoint()
            remaining = end - self.clock.monotonic()
            if remaining <= 0:
                return
            if self.deadline is not None:
                remaining = min(remaining, max(0.0, self.deadline - self.clock.monotonic()) + 1e-3)
            if not self.enforce_abort and self._never is None:
                self._never = threading.Event()
            self.clock.wait(self.abort.event if self.enforce_abort else self._never, remaining)

    def wait_until(
        self,
        condition: Callable[[], Any],
        *,
        timeout: float,
        poll: float = 1.0,
        describe: Callable[[float], str] | None = None,
        what: str = "condition",
    ) -> Any:
        """Poll ``condition`` until it returns something truthy; returns that value.

        Raises :class:`StepTimeout` after ``timeout`` run seconds. ``describe(elapsed)``
        gives the progress text shown while waiting.
        """
        start = self.clock.monotonic()
        while True:
            value = condition()
            if value:
                return value
            elapsed = self.clock.monotonic() - start
            if describe is not None:
                self.progress(describe(elapsed), min(1.0, elapsed / timeout) if timeout else None)
            if elapsed >= timeout:
                raise StepTimeout(f"{what} not reached within {timeout:g} s")
            self.sleep(min(poll, max(0.0, timeout - elapsed)))

    # ------------------------------------------------------------------ instruments
    def role(self, name: str, kind: Any = None) -> Any:
        """The station's role ``name`` (optionally as role interface ``kind``)."""
        target = self.station.role(name, kind) if kind is not None else self.station.role(name)
        self.roles_used.add(name)
        return _RoleProxy(target, self, name)

    def signal(self, name: str) -> tuple[Any, str]:
        """A named fixture channel (``VDD_CORE``) -> (role, channel id on that role)."""
        target, channel = self.station.channel(name)
        ref = self.fixture.channel(name)
        self.roles_used.add(ref.role)
        return _RoleProxy(target, self, ref.role), channel

    def has_role(self, name: str) -> bool:
        return name in self.fixture.roles

    # ------------------------------------------------------------------ recording
    def limit_for(self, name: str) -> Any:
        return self.limits.get(name, self.limits.get("*"))

    def measure(
        self,
        name: str,
        value: Any,
        unit: str = "",
        *,
        labels: Mapping[str, str] | None = None,
        limit: Any = None,
    ) -> Verdict:
        """Record one measurement, judged against its limit (the step's, or ``limit``)."""
        resolved = limit if limit is not None else self.limit_for(name)
        if (resolved is not None and unit and resolved.unit != unit and limit is None and self._limit_in is not None
                and (resolved.unit or isinstance(resolved.equals, str))):
            # read in a unit the plan did not name (``measure`` without ``unit:``): a limit with
            # a unit is checked against it and converted (``max: 1000 mV`` on a reading in V);
            # a bare number is the number as read
            resolved = self._limit_in(name, unit) or resolved
        verdict = Verdict.NONE
        event_limits = None
        if resolved is not None:
            verdict = {"pass": Verdict.PASS, "marginal": Verdict.MARGINAL, "fail": Verdict.FAIL}[resolved.judge(value)]
            event_limits = to_event_limits(resolved)
            unit = unit or resolved.unit
        labels = {k: str(v) for k, v in (labels or {}).items()}
        self.bus.publish(MeasurementRecorded(
            run_id=self.run_id, time=self.clock.wall_time(), step_key=self.step_key, name=name,
            value=value, unit=unit, limits=event_limits, verdict=verdict, labels=labels))
        self.recorded.append(Recorded(name, value, unit, verdict, event_limits, labels))
        return verdict

    def sample(self, series: str, value: float, unit: str = "") -> None:
        """One point of a time series (temperature during a soak, current during power-on)."""
        self.bus.publish(SampleRecorded(run_id=self.run_id, time=self.clock.wall_time(),
                                        step_key=self.step_key, series=series, value=float(value), unit=unit))

    def progress(self, text: str, fraction: float | None = None) -> None:
        self.bus.publish(Progress(run_id=self.run_id, time=self.clock.wall_time(), step_key=self.step_key,
                                  text=text, fraction=fraction))

    def log(self, message: str, level: str = "info") -> None:
        self.bus.publish(LogMessage(run_id=self.run_id, time=self.clock.wall_time(), level=level,
                                    message=message, step_key=self.step_key))

    def fail(self, message: str) -> None:
        """End the step as FAIL with ``message`` (measurements recorded so far are kept)."""
        raise StepFailed(message)

    def prompt(self, text: str, choices: tuple[str, ...] = (), timeout: float | None = None) -> str:
        """Ask the operator (or the answers file); returns the answer.

        ``timeout`` (wall seconds: a person answers in real time, also on a time-scaled
        simulated bench) bounds the wait for whatever handler answers: past it the step
        ends with :class:`PromptTimeout`, and a handler with a ``cancel(prompt_id)`` method
        (the TUI's dialog) is told to stop asking. An abort ends the wait at once. The step's
        own ``timeout:`` bounds the wait too (in wall seconds, as a person answers; the shorter
        of the two): a step with a time limit never waits for an answer forever.
        """
        if self.timeout is not None:
            timeout = self.timeout if timeout is None else min(timeout, self.timeout)
        self._prompts += 1
        prompt_id = f"{self.step_id}#{self._prompts}" if self._prompts > 1 else self.step_id
        self.bus.publish(PromptAsked(run_id=self.run_id, time=self.clock.wall_time(), step_key=self.step_key,
                                     prompt_id=prompt_id, text=text, choices=tuple(choices), timeout=timeout))
        if self._prompt_handler is None:
            raise PromptUnanswered(f"step {self.step_id} asks {text!r} but nobody can answer",
                                   hint="pass --answers FILE with an answer for this prompt id")
        answer, source = self._bounded_prompt(prompt_id, text, tuple(choices), timeout)
        self.bus.publish(PromptAnswered(run_id=self.run_id, time=self.clock.wall_time(), step_key=self.step_key,
                                        prompt_id=prompt_id, answer=answer, source=source))
        return answer

    def _bounded_prompt(self, prompt_id: str, text: str, choices: tuple[str, ...],
                        timeout: float | None) -> tuple[str, str]:
        """Run the prompt handler in a helper thread and wait for it (at most ``timeout``
        wall seconds when given), checking for an abort between short waits: a person who
        does not answer never keeps a run from aborting."""
        import time

        handler = self._prompt_handler
        assert handler is not None
        done = threading.Event()
        box: dict[str, Any] = {}

        def ask() -> None:
            try:
                box["answer"] = handler(prompt_id, text, choices)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the step's thread
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=ask, name=f"labctl-prompt-{prompt_id}", daemon=True).start()
        deadline = time.monotonic() + timeout if timeout is not None else None
        try:
            while not done.wait(0.1 if deadline is None else min(0.1, max(0.0, deadline - time.monotonic()))):
                if self.enforce_abort:
                    self.abort.raise_if_requested()
                if deadline is not None and time.monotonic() >= deadline:
                    raise PromptTimeout(
                        f"prompt {prompt_id}: nobody answered {text!r} within {timeout:g} s",
                        hint=getattr(handler, "timeout_hint", TIMEOUT_HINT))
        except BaseException:
            cancel = getattr(handler, "cancel", None)
            if cancel is not None:
                try:
                    cancel(prompt_id)
                except Exception:  # noqa: BLE001 - cancelling a dialog must not hide the timeout
                    pass
            raise
        if "error" in box:
            raise box["error"]
        return box["answer"]

    # ------------------------------------------------------------------ verdict
    @property
    def failed(self) -> list[Recorded]:
        return [m for m in self.recorded if m.verdict is Verdict.FAIL]


def to_event_limits(resolved: Any) -> Limits:
    """A plan's :class:`~labctl.plan.limits.ResolvedLimit` as the event/store form (both are
    immutable: made once per limit and kept on it, not formatted again per measurement)."""
    known = getattr(resolved, "__dict__", {}).get("_event_limits")
    if known is not None:
        return known
    made = _event_limits(resolved)
    if hasattr(resolved, "__dict__"):
        object.__setattr__(resolved, "_event_limits", made)  # a cache on a frozen dataclass
    return made


def _event_limits(resolved: Any) -> Limits:
    lo, hi, band = resolved.lo, resolved.hi, resolved.marginal or 0.0
    return Limits(
        low=lo,
        high=hi,
        nominal=resolved.nominal,
        equals=resolved.equals,
        regex=resolved.regex,
        marginal_low=lo + band if band and lo is not None else None,
        marginal_high=hi - band if band and hi is not None else None,
        text=resolved.describe(),
    )


__all__ = ["StepContext", "StepTimeout", "StepFailed", "PromptUnanswered", "PromptTimeout", "RunAborted", "Recorded",
           "to_event_limits"]
