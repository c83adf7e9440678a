"""The engine's events: the one vocabulary between the engine and everything downstream.

The engine publishes these to an :class:`EventBus`; the store, the console, the TUI and a
JSONL stream subscribe. Events are immutable; every event carries ``run_id`` and a ``time``
(wall-clock epoch seconds, also on a time-scaled simulated bench). Nothing downstream calls
back into the engine.

``publish`` is synchronous: when ``publish(StepEnded(...))`` returns, every subscriber has
handled it. The store relies on that to commit a step before the next step starts.
"""

from __future__ import annotations

import dataclasses
import enum
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class StepOutcome(enum.StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    ERROR = "ERROR"
    SKIPPED = "SKIPPED"
    ABORTED = "ABORTED"


#: how the message of a step recorded without running begins (the steps after an abort, ABORTED,
#: or after a stop, SKIPPED): reports tell it from the step the abort cut short
NOT_RUN = "not run: "


def never_ran(outcome: str, message: str | None) -> bool:
    """A step recorded after an abort without running (ABORTED, ``not run: REASON``), not the
    step the abort cut short: it was no attempt."""
    return outcome == "ABORTED" and (message or "").startswith(NOT_RUN)

#: how a run that passed but whose results went to the spool ends (``error``, message
#: "<verdict message>" + this + the store's problem); once ``labctl sync`` (or the station
#: agent) has put every record in the database, the run is ``passed`` again
NOT_IN_DATABASE = ", but the results are not in the database: "


class RunOutcome(enum.StrEnum):
    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    ABORTED = "aborted"
    INTERRUPTED = "interrupted"  # set by the store for a run whose process died


class Verdict(enum.StrEnum):
    PASS = "PASS"
    MARGINAL = "MARGINAL"  # inside the limits but inside the marginal band: passes, flagged
    FAIL = "FAIL"
    NONE = "NONE"  # recorded without limits


def _fill_init(cls: type) -> type:
    """Give a frozen dataclass an ``__init__`` that fills the instance dict in one go.

    The ``__init__`` dataclasses writes for a frozen class calls ``object.__setattr__`` once
    per field, which made building an event (10 fields) cost more than handing it to every
    subscriber. This one takes the same keyword-only arguments with the same defaults and
    default factories; instances stay frozen (``__setattr__`` still refuses), compare, hash
    and ``replace`` as before.
    """
    params: list[str] = []
    lines: list[str] = []
    names: dict[str, Any] = {"_MISSING": dataclasses.MISSING}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.default is not dataclasses.MISSING:
            names[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            names[f"_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            lines.append(f"    if {f.name} is _MISSING: {f.name} = _factory_{f.name}()")
        else:
            params.append(f.name)
    fill = ", ".join(f"{f.name!r}: {f.name}" for f in dataclasses.fields(cls) if f.init)
    source = (f"def __init__(self, *, {', '.join(params)}):\n" + "".join(line + "\n" for line in lines)
              + f"    self.__dict__.update({{{fill}}})\n")
    exec(source, names)  # noqa: S102 - source built above from the class's own field names
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init
    return cls


def _event(cls: type) -> type:
    """``@dataclass(frozen=True, kw_only=True)`` with the quick ``__init__`` of :func:`_fill_init`."""
    return _fill_init(dataclass(frozen=True, kw_only=True)(cls))


@dataclass(frozen=True)
class Limits:
    """Limits of one measurement, in the measurement's unit (already resolved)."""

    low: float | None = None
    high: float | None = None
    nominal: float | None = None
    equals: Any = None
    regex: str | None = None
    marginal_low: float | None = None  # values in [low, marginal_low) are MARGINAL
    marginal_high: float | None = None  # values in (marginal_high, high] are MARGINAL
    text: str = ""  # as the plan wrote it, e.g. "0.75 V ± 3 %"


@dataclass(frozen=True, kw_only=True)
class Event:
    run_id: str
    time: float

    @property
    def kind(self) -> str:
        return type(self).__name__

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (enums as values), with ``event`` naming the kind."""
        data = dataclasses.asdict(self)
        for key, value in list(data.items()):
            if isinstance(value, enum.Enum):
                data[key] = value.value
        return {"event": self.kind, **data}


@dataclass(frozen=True, kw_only=True)
class InstrumentInfo:
    role: str
    driver: str
    resource: str
    idn: str = ""
    asset_serial: str | None = None
    calibration_due: str | None = None


@_event
class RunStarted(Event):
    plan_name: str
    plan_version: str
    plan_hash: str  # sha256 of the plan text (with its includes)
    plan_text: str
    plan_path: str
    station: str
    dut_serial: str | None
    operator: str | None
    labctl_version: str
    host: str
    pid: int
    parameters: dict[str, Any] = field(default_factory=dict)
    corners: list[dict[str, Any]] = field(default_factory=list)
    instruments: list[InstrumentInfo] = field(default_factory=list)
    slot: str | None = None
    resumed_from: str | None = None  # set when `labctl resume` continues a run
    rerun_of: str | None = None  # set when a new run re-runs steps of an earlier run


@_event
class StepStarted(Event):
    step_key: str  # unique in the run: "<group>/<step id>[<corner index>]#<attempt>"
    step_id: str
    group: str  # setup | steps | teardown
    check: str
    corner: dict[str, Any] = field(default_factory=dict)
    corner_index: int | None = None
    attempt: int = 1
    tags: tuple[str, ...] = ()


@_event
class MeasurementRecorded(Event):
    step_key: str
    name: str
    value: float | str | bool | None
    unit: str = ""
    limits: Limits | None = None
    verdict: Verdict = Verdict.NONE
    labels: dict[str, str] = field(default_factory=dict)  # lane / rail / channel / sensor


@_event
class SampleRecorded(Event):
    """One point of a time series (e.g. chamber temperature during a soak)."""

    step_key: str
    series: str
    value: float
    unit: str = ""


@_event
class PromptAsked(Event):
    step_key: str
    prompt_id: str
    text: str
    choices: tuple[str, ...] = ()
    timeout: float | None = None  # wall seconds the operator has to answer (the plan's timeout:)


@_event
class PromptAnswered(Event):
    step_key: str
    prompt_id: str
    answer: str
    source: str = "operator"  # who answered: operator:<name> | answers-file


@_event
class LogMessage(Event):
    level: str  # debug | info | warning | error
    message: str
    step_key: str | None = None


@_event
class Progress(Event):
    """A long wait says what it waits for ("chamber 44.6/45.0 degC, stable 1m40s of 5m")."""

    step_key: str
    text: str
    fraction: float | None = None  # 0..1 when known


@_event
class InstrumentErrorReported(Event):
    step_key: str | None
    role: str
    code: int
    message: str


@_event
class AttachmentAdded(Event):
    step_key: str | None
    name: str
    media_type: str
    path: str


@_event
class StepEnded(Event):
    step_key: str
    outcome: StepOutcome
    message: str = ""
    duration: float = 0.0  # wall seconds
    duration_sim: float | None = None  # simulated seconds, on a time-scaled (simulated) bench only


@_event
class RunEnded(Event):
    outcome: RunOutcome
    message: str = ""


Subscriber = Callable[[Event], None]


class EventBus:
    """Synchronous publish/subscribe. A failing subscriber never stops the others.

    A subscriber registered with ``critical=True`` (the results recorder) is one the run
    cannot go on without: when it raises, :attr:`on_critical_failure` is called with the
    subscriber and the exception (the runner aborts to the safe state with an error). Every
    failure is also kept in :attr:`errors`.
    """

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._snapshot: tuple[Subscriber, ...] = ()  # what publish walks: replaced, never changed
        self._critical: set[int] = set()
        self._lock = threading.RLock()
        self.errors: list[tuple[Subscriber, BaseException]] = []
        self.on_critical_failure: Callable[[Subscriber, BaseException], None] | None = None

    def subscribe(self, subscriber: Subscriber, *, critical: bool = False, first: bool = False) -> Callable[[], None]:
        with self._lock:
            self._subscribers.insert(0, subscriber) if first else self._subscribers.append(subscriber)
            self._snapshot = tuple(self._subscribers)
            if critical:
                self._critical.add(id(subscriber))

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)
                    self._snapshot = tuple(self._subscribers)
                    self._critical.discard(id(subscriber))

        return unsubscribe

    def critical_failed(self, subscriber: Subscriber, exc: BaseException) -> None:
        """A critical subscriber failed outside :meth:`publish` (on a thread of its own, such as
        the recorder's group commit): the same as if it had raised there."""
        self.errors.append((subscriber, exc))
        if self.on_critical_failure is not None:
            self.on_critical_failure(subscriber, exc)

    def publish(self, event: Event) -> None:
        for subscriber in self._snapshot:  # no lock per event: (un)subscribing swaps the tuple
            try:
                subscriber(event)
            except Exception as exc:  # noqa: BLE001 - kept, and acted on for critical subscribers
                self.errors.append((subscriber, exc))
                if id(subscriber) in self._critical and self.on_critical_failure is not None:
                    self.on_critical_failure(subscriber, exc)
