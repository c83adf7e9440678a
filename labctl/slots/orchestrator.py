"""Run one plan on several slots of a fixture at once.

One orchestrator per process, at the top: it owns the abort controller and the signals
(SIGINT, SIGTERM, SIGHUP … abort every slot), the results store, the simulated lab when
one is needed, and the :class:`~labctl.slots.station.SharedBench`. Each slot runs the
ordinary runner (:class:`~labctl.slots.runner.SlotRunner`) in a thread of its own with its
own abort controller, so a slot's interlock aborts that slot only; an interlock on a shared
signal, or any abort from the top, aborts every slot. A slot's safe state turns off its own
outputs; the shared chamber goes to its safe temperature on any bench-wide abort and when
the last slot ends.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from labctl.engine.abort import AbortController, AbortReason, abort_on_signals
from labctl.engine.safety import MIN_WALL_INTERVAL
from labctl.errors import ExitCode, InstrumentError, LabctlError
from labctl.gcpause import gc_settled
from labctl.launch import (
    EXIT_BY_OUTCOME,
    RunRequest,
    _bench_safe,
    _dut_serial,
    _preflight,
    _SessionLogPusher,
    _whoami,
    ignore_late_interrupts,
    load_answers,
    make_clock,
    open_store_locked,
    resolve_fixture,
    simulated_lab,
)
from labctl.slots.barrier import SharedStepBarrier
from labctl.slots.selection import pair_duts, select_slots
from labctl.slots.station import DEFAULT_LEASE_TIMEOUT, SharedBench, SlotStation

SubscriberFactory = Callable[[str], list[Callable[[Any], None]]]


@dataclass
class SlotsRequest:
    run: RunRequest  # plan, fixture, overrides, db … (its ``dut`` is unused)
    slots: str = "all"  # --slots
    duts: str | None = None  # --dut SN1,SN2,…
    lease_timeout: float = DEFAULT_LEASE_TIMEOUT
    bench_log: str | None = None  # --bench-log: the shared instruments' session log, JSON lines
    resume: dict[str, SlotResume] = field(default_factory=dict)  # slot -> its interrupted run (labctl resume)


@dataclass
class SlotResume:
    """An interrupted run of one slot, continued in its own record (labctl.slots.resume)."""

    run_id: str
    finished_steps: dict[str, str]
    first_attempt: dict[str, int]
    operator: str | None = None
    attempts_left: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass
class SlotOutput:
    slot: str
    dut: str | None
    result: Any = None  # RunResult, None when the slot never started
    exit_code: ExitCode = ExitCode.ERROR
    message: str = ""

    @property
    def outcome(self) -> str:
        if self.result is not None:
            return self.result.outcome.value
        return "aborted" if self.exit_code is ExitCode.ABORTED else "error"


@dataclass
class SlotsOutput:
    station: str
    slots: list[SlotOutput]
    exit_code: ExitCode
    db: str | None
    notes: list[str] = field(default_factory=list)
    bench_safe_state: dict[str, Any] = field(default_factory=dict)
    shared_runs: dict[str, int] = field(default_factory=dict)  # shared step -> times it ran

    @property
    def outcome(self) -> str:
        counts: dict[str, int] = {}
        for s in self.slots:
            counts[s.outcome] = counts.get(s.outcome, 0) + 1
        return ", ".join(f"{n} {k}" for k, n in counts.items())


def shared_interlocks(loaded: Any, fixture: Any, shared_roles: set[str]) -> list[str]:
    """Names of the plan's interlocks that watch a shared signal (chamber temperature, a
    station-wide channel): one of them tripping aborts every slot."""
    safety = loaded.plan.safety
    names = []
    for lock in safety.interlocks if safety is not None else []:
        head = lock.signal.split(".")[0]
        role = fixture.channel(lock.signal).role if lock.signal in fixture.channels else head
        if role in shared_roles:
            names.append(lock.name or lock.signal)
    return names


def run_slots(req: SlotsRequest, subscribers: SubscriberFactory, *, say: Callable[[str], None] = print,
              abort: AbortController | None = None, handle_signals: bool = True,
              lab_hook: Callable[[Any], None] | None = None) -> SlotsOutput:
    """Run the plan on every selected slot at once. Raises LabctlError for problems found
    before any slot starts (bad plan, fixture or selection; unreachable database)."""
    top = abort if abort is not None else AbortController()
    with abort_on_signals(top) if handle_signals else contextlib.nullcontext():
        out = _run(req, subscribers, say, top, lab_hook)
    if handle_signals:
        ignore_late_interrupts()
    return out


def _run(req: SlotsRequest, subscribers: SubscriberFactory, say: Callable[[str], None], top: AbortController,
         lab_hook: Callable[[Any], None] | None) -> SlotsOutput:
    from labctl.plan.loader import load_plan

    r = req.run
    notes: list[str] = []
    fixture = resolve_fixture(r.fixture, notes, r.time_scale)
    chosen = select_slots(fixture, req.slots)
    expected = pair_duts(chosen, req.duts)
    merged = {sid: fixture.slot_view(sid) for sid in chosen}
    loaded = {sid: load_plan(r.plan, r.overrides, merged[sid]) for sid in chosen}  # errors before anything starts
    prompt_handler = load_answers(r.answers)
    clock = make_clock(fixture)
    for n in notes:
        say(n)
    from labctl.instruments.benchlock import bench_lock

    lock = bench_lock(fixture, slots=chosen)  # one run per bench: the shared roles and these slots'
    store, first_recorder = open_store_locked(lock, r.db, use_store=r.use_store)
    # one recorder per slot (each its own runs and background flush), one store
    recorders = {sid: (first_recorder if i == 0 else _new_recorder(store)) for i, sid in enumerate(chosen)} \
        if store is not None else {sid: None for sid in chosen}
    outputs: dict[str, SlotOutput] = {sid: SlotOutput(sid, expected[sid]) for sid in chosen}
    bench_safe: dict[str, Any] = {}
    barrier = SharedStepBarrier(chosen)
    try:
        shown = len(notes)
        with simulated_lab(fixture, None, clock, notes) as lab:
            for n in notes[shown:]:
                say(n)
            del notes[:]  # said already
            if lab is not None and lab_hook is not None:
                lab_hook(lab)
            shared = SharedBench(fixture, clock=clock, lease_timeout=req.lease_timeout, log_path=req.bench_log)
            slot_aborts = {sid: AbortController() for sid in chosen}
            bench_safe_now = threading.Event()

            def abort_all(reason: AbortReason) -> None:  # may run in a signal handler: hand over only
                for a in slot_aborts.values():
                    a.request(reason.source, reason.message)
                bench_safe_now.set()

            remove = top.on_request(abort_all)
            for sid in chosen:
                slot = next(s for s in fixture.slots if s.id == sid)
                names = shared_interlocks(loaded[sid], merged[sid], shared.roles_of(slot))

                def escalate(reason: AbortReason, names: list[str] = names, sid: str = sid) -> None:
                    if reason.source == "safety" and any(
                            reason.message.startswith(f"safety interlock tripped: {n} ") for n in names):
                        top.request("safety", f"slot {sid}: {reason.message} (a shared signal: every slot stops)")

                slot_aborts[sid].on_request(escalate)
            bench_thread = threading.Thread(target=_bench_safe_on_abort, args=(shared, bench_safe_now, top, bench_safe),
                                            name="labctl-bench-safe", daemon=True)
            bench_thread.start()
            threads = []
            for sid in chosen:
                slot = next(s for s in fixture.slots if s.id == sid)
                job = _SlotJob(sid, merged[sid], loaded[sid], shared, shared.roles_of(slot), barrier, clock,
                               slot_aborts[sid], top, recorders[sid], subscribers(sid), say, r, prompt_handler,
                               outputs[sid], len(chosen), req.resume.get(sid))
                t = threading.Thread(target=job.run, name=f"labctl-slot-{sid}", daemon=True)
                threads.append(t)
                t.start()
            try:
                for t in threads:
                    while t.is_alive():
                        t.join(0.2)  # the main thread stays free for signal handlers
            finally:
                remove()
                bench_safe_now.set()
                bench_thread.join(timeout=2 * req.lease_timeout + 10)
                # the last slot has ended: the shared environment to its safe state, read back
                bench_safe.update(shared.safe_state())
                for role, res in bench_safe.items():
                    label, message = res.verdict()
                    say(f"bench safe state {role}: {label} {message}".rstrip())
                shared.close()
    finally:
        for rec in (x for x in recorders.values() if x is not None):
            with contextlib.suppress(Exception):
                rec.flush()
            with contextlib.suppress(Exception):
                rec.close()
        if store is not None:
            with contextlib.suppress(Exception):
                store.close()
        lock.release()
    slots = [outputs[sid] for sid in chosen]
    code = max((int(s.exit_code) for s in slots), default=int(ExitCode.ERROR))
    unsafe = [f"{role}: {res.error or 'not confirmed'}" for role, res in bench_safe.items() if not res.ok]
    if unsafe:
        notes.append("BENCH MAY BE UNSAFE: shared " + "; ".join(unsafe))
        code = max(code, int(ExitCode.ERROR))
    return SlotsOutput(fixture.station, slots, ExitCode(code), store.display_url if store is not None else None,
                       notes, bench_safe, dict(barrier.runs))


def _new_recorder(store: Any) -> Any:
    from labctl.store.recorder import Recorder

    return Recorder(store)


def _bench_safe_on_abort(shared: SharedBench, wake: threading.Event, top: AbortController,
                         out: dict[str, Any]) -> None:
    """On a bench-wide abort, the shared chamber goes safe at once (not only after the last slot)."""
    wake.wait()
    if top.requested:
        out.update(shared.safe_state("bench abort"))


@dataclass
class _SlotJob:
    sid: str
    fixture: Any
    loaded: Any
    shared: SharedBench
    shared_roles: set[str]
    barrier: SharedStepBarrier
    clock: Any
    abort: AbortController
    top: AbortController
    recorder: Any
    subscribers: list[Callable[[Any], None]]
    say: Callable[[str], None]
    req: RunRequest
    prompt_handler: Any
    out: SlotOutput
    slots: int = 1  # how many slots run at once
    resume: SlotResume | None = None

    def run(self) -> None:
        try:
            self._run()
        except LabctlError as err:
            self.out.message = err.format().splitlines()[0]
            self.out.exit_code = ExitCode.ABORTED if err.exit_code is ExitCode.ABORTED else ExitCode.ERROR
            self.say(f"slot {self.sid}: not started: {self.out.message}")
        except Exception as err:  # noqa: BLE001 - one slot's crash never takes the others down
            self.out.message = f"internal error: {type(err).__name__}: {err}"
            self.out.exit_code = ExitCode.ERROR
            self.say(f"slot {self.sid}: {self.out.message}")
        finally:
            self.barrier.leave(self.sid)

    def _run(self) -> None:
        from labctl.engine.events import EventBus
        from labctl.engine.runner import RunOptions
        from labctl.slots.runner import SlotRunner

        sid, fixture = self.sid, self.fixture
        say = self._say
        with SlotStation(fixture, self.shared, sid, shared_roles=self.shared_roles, abort=self.abort,
                         clock=self.clock) as station:
            if self.abort.requested:
                from labctl.errors import AbortedBeforeStart

                raise AbortedBeforeStart(f"{self.abort.reason.message}: slot {sid} was not started")
            made_safe = _bench_safe(station, say, self.req.preflight)
            identities, warnings = (_preflight(fixture, station, say, self.req.allow_expired)
                                    if self.req.preflight else ({}, []))
            reported = _dut_serial(station, fixture)
            expected = self.out.dut
            if expected and reported and reported != expected:
                raise InstrumentError(f"slot {sid}: the board reports serial {reported}, not {expected}",
                                      hint="put the right board in the slot, or fix the order of --dut")
            self.out.dut = expected or reported
            bus = EventBus()
            if self.recorder is not None:
                bus.subscribe(_SessionLogPusher(station.session_log, self.recorder), critical=True)
                bus.subscribe(self.recorder, critical=True)
                self.recorder.failure_listeners.append(partial(bus.critical_failed, self.recorder))  # (its own thread's failures)
            for sub in self.subscribers:
                bus.subscribe(sub)
            recorder = self.recorder
            resume = self.resume
            runner = SlotRunner(self.loaded, station, fixture, bus=bus, clock=self.clock, abort=self.abort,
                                slot=sid, barrier=self.barrier, shared_roles=self.shared_roles, bench_abort=self.top,
                                options=RunOptions(
                                    dut_serial=self.out.dut, slot=sid,
                                    operator=(resume.operator if resume else None) or self.req.operator or _whoami(),
                                    run_id=resume.run_id if resume else None, resumed_from=resume.run_id if resume else None,
                                    finished_steps=dict(resume.finished_steps) if resume else {},
                                    first_attempt=dict(resume.first_attempt) if resume else {},
                                    attempts_left=dict(resume.attempts_left) if resume else {},
                                    prompt_handler=self.prompt_handler,
                                    notes=(*(resume.notes if resume else ()), *made_safe, *warnings),
                                    identities=identities, handle_signals=False,
                                    safety_min_wall_interval=MIN_WALL_INTERVAL * max(1.0, self.slots / 4),
                                    store_problem=(lambda: None if recorder.saved
                                                   else (recorder.problem or "results were spooled"))
                                    if recorder is not None else None))
            with gc_settled():
                result = runner.run()
        self.out.result = result
        self.out.exit_code = EXIT_BY_OUTCOME.get(result.outcome.value, ExitCode.ERROR)
        self.out.message = result.message

    def _say(self, text: str) -> None:
        self.say(f"slot {self.sid}: {text}")
