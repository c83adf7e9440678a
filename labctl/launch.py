"""Putting a run together: fixture, simulated lab if needed, station, pre-flight, store,
console, runner. Used by ``labctl run``, ``labctl demo`` and ``labctl resume``.

This is the one place that knows all the parts; the engine itself knows none of the store,
the console or the simulated lab.
"""

from __future__ import annotations

import contextlib
import getpass
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from labctl.errors import ExitCode, InstrumentError, LabctlError, StoreError, UsageError

DEFAULT_FIXTURE = "sim-bench.yaml"


@dataclass
class RunRequest:
    plan: str
    fixture: str | None = None
    dut: str | None = None
    overrides: dict[str, str] = field(default_factory=dict)
    db: str | None = None
    answers: str | None = None
    preflight: bool = True
    operator: str | None = None
    run_id: str | None = None
    finished_steps: dict[str, str] = field(default_factory=dict)  # resume: step key -> earlier outcome
    #: resume: step key -> attempts a step cut off between its retries has left (of retries + 1)
    attempts_left: dict[str, int] = field(default_factory=dict)
    resumed_from: str | None = None
    rerun_of: str | None = None  # a re-run of steps of this earlier run (labctl.rerun)
    only_steps: frozenset[str] | None = None  # run only these steps (and what establishes their state)
    notes: tuple[str, ...] = ()  # warnings recorded in the run's log when it starts
    use_store: bool = True
    time_scale: float | None = None  # override the fixture's sim.time_scale (demo, tests)
    allow_expired: bool = False  # run on instruments whose calibration expired (recorded)
    prompt_handler: Callable[..., tuple[str, str]] | None = None  # asks a person (the TUI); --answers wins
    #: µs a query watches for its reply before it sleeps (roles' own reply_spin_us win); None: the
    #: station's default. The TUI gives 0: its screen's thread needs the interpreter meanwhile.
    reply_spin_us: float | None = None
    #: whose words the hint of a refused start uses: "cli" (its options) or "tui" (its keys, fields)
    front_end: str = "cli"


@dataclass
class RunOutput:
    result: Any  # labctl.engine.runner.RunResult
    exit_code: ExitCode
    db: str | None
    saved: bool
    notes: list[str]
    lost: bool = False  # some results were kept neither in the database nor in the spool


#: what to do about a start refused on the bench, in the words of the front end that started it
FIX_PREFLIGHT = {"cli": "fix the station (labctl instruments check --fixture F), or skip with --no-preflight",
                 "tui": "fix the station: the station screen (s) shows each instrument's problem, "
                        "ctrl+r reads them again"}
FIX_DUT = {"cli": "or run with --dut {serial}", "tui": "or type {serial} in the start form's DUT serial"}
#: how a user allows an instrument whose calibration expired (preflight's ``override``)
ALLOW_EXPIRED = {"cli": "--allow-expired", "tui": "the start form's allow-expired box"}

EXIT_BY_OUTCOME = {"passed": ExitCode.PASSED, "failed": ExitCode.FAILED, "error": ExitCode.ERROR,
                   "aborted": ExitCode.ABORTED}


def _answers_of(root: Any, path: str) -> dict[str, str]:
    """Prompt id -> answer, as written, from the composed YAML of an answers file: a mapping
    of plain values; a key given twice or a value that is not one scalar is a usage error."""
    import yaml

    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise UsageError(f"--answers {path}: expected a mapping of prompt id -> answer",
                         hint="give a YAML file of lines STEP_ID: answer")
    answers: dict[str, str] = {}
    for key, value in root.value:
        where = f"{path}:{key.start_mark.line + 1}:{key.start_mark.column + 1}"
        if not isinstance(key, yaml.ScalarNode) or not isinstance(value, yaml.ScalarNode):
            raise UsageError(f"{where}: an answer is one value (text), not a list or a mapping",
                             hint="write STEP_ID: answer")
        if key.value in answers:
            raise UsageError(f"{where}: prompt {key.value} is answered twice in this file",
                             hint="keep one answer per prompt")
        answers[key.value] = value.value
    return answers


def load_answers(path: str | None) -> Callable[[str, str, tuple[str, ...]], tuple[str, str]] | None:
    """``--answers FILE``: a YAML mapping of prompt id (the step id) -> answer."""
    if path is None:
        return None
    import yaml

    from labctl.plan.bounds import InputLimits
    from labctl.plan.yamlguard import YamlSyntaxStop, read_bounded, scan_events

    limits = InputLimits.from_env()  # a file from a colleague or a rig: hostile until checked
    text = read_bounded(path, path, limits, UsageError)
    try:
        scan_events(text, path, limits, UsageError, getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except YamlSyntaxStop:
        pass  # reported below, in PyYAML's words
    try:  # the node tree, not constructed values: an answer is the text written (`fan: yes` is "yes")
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as err:
        raise UsageError(f"--answers {path}: not valid YAML ({str(err).splitlines()[0]})",
                         hint="give a YAML file: STEP_ID: answer") from None
    answers = _answers_of(root, path)

    def handler(prompt_id: str, text: str, choices: tuple[str, ...]) -> tuple[str, str]:
        from labctl.engine.context import PromptUnanswered

        base = prompt_id.split("#")[0]
        for key in (prompt_id, base):
            if key in answers:
                # judged by the step, as a person's answer is (a choice outside choices FAILs)
                return answers[key], "answers-file"
        raise PromptUnanswered(f"no answer for prompt {prompt_id!r} ({text})", file=path,
                               hint=f"add a line `{base}: <answer>` to {path}")

    return handler


@contextlib.contextmanager
def simulated_lab(fixture: Any, dut: str | None, clock: Any, notes: list[str]) -> Iterator[Any]:
    """Start the fixture's simulated lab in-process if it asks for one and nothing serves it."""
    from labctl.instruments.simstart import anything_serving

    sim = fixture.sim
    if sim is None or not sim.enabled or anything_serving(fixture):
        yield None
        return
    from labctl.sim.lab import SimulatedLab

    with SimulatedLab(fixture, clock=clock, dut_serial=dut) as lab:
        boards = f"{len(lab.rack.bays)} boards in one chamber" if lab.rack is not None else f"DUT {lab.dut_serial}"
        notes.append(f"simulated lab started in-process (time scale {sim.time_scale:g}×, {boards})")
        yield lab


def make_clock(fixture: Any) -> Any:
    from labctl.clock import RealClock, ScaledClock

    sim = fixture.sim
    if sim is not None and sim.enabled and sim.time_scale != 1:
        return ScaledClock(sim.time_scale)
    return RealClock()


def resolve_fixture(path: str | None, notes: list[str], time_scale: float | None = None) -> Any:
    from labctl.fixture import load_fixture

    if path is None:
        notes.append(f"no --fixture given: using the default simulated bench ({DEFAULT_FIXTURE})")
        path = DEFAULT_FIXTURE
    fixture = load_fixture(path)
    if time_scale is not None and fixture.sim is not None:
        if not time_scale > 0:
            raise UsageError(f"time scale must be > 0, got {time_scale:g}")
        fixture = fixture.model_copy(update={"sim": fixture.sim.model_copy(update={"time_scale": time_scale})})
    served = served_time_scale(fixture)
    if served is not None and served != fixture.sim.time_scale:
        # the served lab's physics run at its scale (`sim serve --time-scale`): the run's waits
        # and timeouts must too, or a soak settles in an impossible time
        notes.append(f"the simulated lab serving this fixture runs at time x{served:g} (the fixture says "
                     f"x{fixture.sim.time_scale:g}): the run's clock follows the lab")
        fixture = fixture.model_copy(update={"sim": fixture.sim.model_copy(update={"time_scale": served})})
    return fixture


def served_time_scale(fixture: Any) -> float | None:
    """The time scale of the simulated lab already serving ``fixture`` (``labctl sim serve``),
    read from its control socket; None when the fixture has no simulated lab or none serves it."""
    sim = getattr(fixture, "sim", None)
    if sim is None or not sim.enabled:
        return None
    from labctl.errors import LabctlError
    from labctl.sim.control import control_request, default_control_path

    path = default_control_path(fixture)
    if not path.exists():
        return None
    try:
        scale = control_request(path, {"op": "time_scale"}, timeout=2.0).get("time_scale")
    except (LabctlError, OSError, ValueError):
        return None  # a lab that does not answer is found out by the pre-flight
    return float(scale) if isinstance(scale, int | float) and scale > 0 else None


def execute(req: RunRequest, subscribers: list[Callable[[Any], None]], *, say: Callable[[str], None] = print,
            lab_hook: Callable[[Any], None] | None = None, first_attempt: dict[str, int] | None = None,
            run_notes: tuple[str, ...] = (), abort: Any = None, handle_signals: bool = True,
            station_hook: Callable[[Any], None] | None = None,
            interlock_hook: Callable[[Any, float], None] | None = None) -> RunOutput:
    """Run one plan on one DUT; returns the result and the exit code. Raises LabctlError for
    problems found before the run starts (bad plan or fixture, unreachable database,
    pre-flight failure): nothing is powered then.

    ``abort`` is the run's :class:`~labctl.engine.abort.AbortController` (one is made when
    None): a caller with its own abort control (the TUI, a slot orchestrator) passes its own.
    With ``handle_signals`` (main thread only), SIGINT, SIGTERM, SIGHUP, SIGQUIT and
    SIGUSR1/2 abort the run to the safe state from the moment this is called until it returns;
    a caller that owns the signals passes False.

    ``station_hook(station)`` is called once the station is open, before anything is powered
    (the TUI follows its session log: the instrument I/O of the current step, a call in flight).
    ``interlock_hook(interlock, value)`` is told every interlock reading of the safety monitor.
    """
    from labctl.engine.abort import AbortController, abort_on_signals

    abort = abort if abort is not None else AbortController()
    with abort_on_signals(abort) if handle_signals else contextlib.nullcontext():
        out = _execute(req, subscribers, say=say, lab_hook=lab_hook, first_attempt=first_attempt,
                       run_notes=run_notes, abort=abort, station_hook=station_hook,
                       interlock_hook=interlock_hook)
    if handle_signals:
        ignore_late_interrupts()
    return out


def _refuse_if_aborted(abort: Any, when: str) -> None:
    if abort.requested:
        from labctl.errors import AbortedBeforeStart

        raise AbortedBeforeStart(f"{abort.reason.message} {when}: nothing was started or powered")


def _execute(req: RunRequest, subscribers: list[Callable[[Any], None]], *, say: Callable[[str], None],
             lab_hook: Callable[[Any], None] | None, first_attempt: dict[str, int] | None,
             run_notes: tuple[str, ...], abort: Any, station_hook: Callable[[Any], None] | None = None,
             interlock_hook: Callable[[Any, float], None] | None = None) -> RunOutput:
    from labctl.engine.events import EventBus
    from labctl.engine.runner import Runner, RunOptions
    from labctl.gcpause import gc_settled
    from labctl.instruments import open_station
    from labctl.instruments.benchlock import bench_lock
    from labctl.plan.loader import load_plan

    notes: list[str] = []
    fixture = resolve_fixture(req.fixture, notes, req.time_scale)
    loaded = load_plan(req.plan, req.overrides, fixture)
    prompt_handler = load_answers(req.answers) or req.prompt_handler
    clock = make_clock(fixture)
    for n in notes:
        say(n)
    # one run per bench: refused here, before anything is recorded or powered, while another
    # process drives one of these instruments (held until the safe state is done)
    lock = bench_lock(fixture, slots=())
    # the results store first: an unreachable database stops the run before anything is powered
    # a subscriber that promises "printed, so committed" (the JSON stream) gets a commit per step end
    per_step = any(getattr(sub, "commit_before_output", False) for sub in subscribers)
    store, recorder = open_store_locked(lock, req.db, use_store=req.use_store, per_step=per_step)
    saved, lost, problem = True, False, None
    try:
        _refuse_if_aborted(abort, "while the results store was opened")
        shown = len(notes)
        with simulated_lab(fixture, req.dut, clock, notes) as lab, open_station(
                fixture, clock=clock, reply_spin_us=req.reply_spin_us) as station:
            for n in notes[shown:]:
                say(n)
            shown = len(notes)
            if lab is not None and lab_hook is not None:
                lab_hook(lab)
            if station_hook is not None:
                station_hook(station)
            _refuse_if_aborted(abort, "while the station was opened")
            made_safe = _bench_safe(station, say, req.preflight)  # first, even with --no-preflight
            identities, warnings = _preflight(fixture, station, say, req.allow_expired, FIX_PREFLIGHT[req.front_end],
                                              ALLOW_EXPIRED[req.front_end]) if req.preflight else ({}, [])
            warnings = [*made_safe, *warnings]
            reported = _dut_serial(station, fixture)
            if req.dut and reported and reported != req.dut:
                raise InstrumentError(f"the board on station {fixture.station} reports serial {reported}, not {req.dut}",
                                      hint="put the right board on the fixture (for a simulated lab served "
                                           "elsewhere: labctl sim dut SERIAL), "
                                           + (f"to continue run {req.resumed_from} of {req.dut}" if req.resumed_from
                                              else FIX_DUT[req.front_end].format(serial=reported)))
            bus = EventBus()
            if recorder is not None:  # before any other subscriber: a step is committed before it is shown
                bus.subscribe(SessionLogPusher(station.session_log, recorder), critical=True)
                bus.subscribe(recorder, critical=True)
                recorder.failure_listeners.append(partial(bus.critical_failed, recorder))  # (its own thread's failures)
            for sub in subscribers:
                bus.subscribe(sub)
            runner = Runner(loaded, station, fixture, bus=bus, clock=clock, abort=abort, options=RunOptions(
                dut_serial=req.dut or reported, operator=req.operator or _whoami(),
                run_id=req.run_id, prompt_handler=prompt_handler, finished_steps=req.finished_steps,
                resumed_from=req.resumed_from, rerun_of=req.rerun_of, only_steps=req.only_steps,
                first_attempt=dict(first_attempt or {}), attempts_left=dict(req.attempts_left), notes=(*run_notes, *req.notes, *warnings),
                identities=identities, handle_signals=False, on_interlock=interlock_hook,
                store_problem=(lambda: None if recorder.saved else (recorder.problem or "results were spooled"))
                if recorder is not None else None))
            with gc_settled():
                result = runner.run()
    finally:
        if recorder is not None:
            with contextlib.suppress(Exception):
                recorder.flush()
            saved, lost, problem = bool(recorder.saved), bool(recorder.lost), recorder.problem
            with contextlib.suppress(Exception):
                recorder.close()
        if store is not None:
            with contextlib.suppress(Exception):
                store.close()
        lock.release()
    code = EXIT_BY_OUTCOME.get(result.outcome.value, ExitCode.ERROR)
    if lost:
        detail = (problem or "").removeprefix("results could not be saved anywhere: ") or "no detail"
        notes.append(f"results of this run were lost: the results database failed and so did the local spool "
                     f"({detail}); the database holds only what was written before")
    elif not saved:
        notes.append("the results database failed during the run: results were spooled locally; "
                     "run `labctl sync` to push them")
        if code is ExitCode.PASSED:  # the recorder failed at the very end, after the verdict
            code = ExitCode.ERROR
    return RunOutput(result, code, store.display_url if store is not None else None, saved, notes[shown:], lost)


def ignore_late_interrupts() -> None:
    """After the run (teardown and safe state done, results recorded), a late Ctrl-C must not
    interrupt closing the store and the station."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _whoami() -> str | None:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001
        return None


def _dut_serial(station: Any, fixture: Any) -> str | None:
    """The DUT serial as the board reports it (console ``id``), when the station has a console."""
    if "dut" not in fixture.roles:
        return None
    try:
        ident = station.role("dut").identify()
    except (LabctlError, AttributeError):
        return None
    return ident.get("serial") if isinstance(ident, dict) else None


def _bench_safe(station: Any, say: Callable[[str], None], preflight: bool) -> list[str]:
    """A bench left live by a dead run (supply output or load input on, chamber away from its
    safe setpoint) is made safe before the run starts, each action read back; the lines are
    printed and kept in the run's log. Raises (the run is refused) when it cannot be done; an
    instrument that does not answer is left to the station pre-flight to report, or refuses
    the run here without it."""
    from labctl.instruments.preflight import make_bench_safe, unsafe

    done = make_bench_safe(station)
    lines = [f"pre-flight: {a}" for a in done.actions]
    for line in lines:
        say(line)
    if done.unreachable and not preflight:
        raise unsafe("; ".join(done.unreachable))
    return lines


def _preflight(fixture: Any, station: Any, say: Callable[[str], None],
               allow_expired: bool = False, fix: str = FIX_PREFLIGHT["cli"],
               override: str = ALLOW_EXPIRED["cli"]) -> tuple[dict[str, str], list[str]]:
    """Run the station pre-flight (raises on a problem); returns each role's identity and the
    warnings (calibration due soon, or expired and allowed), which go into the run's log."""
    from labctl.instruments.preflight import preflight

    report = preflight(fixture, station=station, allow_expired=allow_expired, override=override)
    if not report.ok:
        problems = "; ".join(f"{r.role}: {r.detail}" for r in report.rows if r.problems)
        raise InstrumentError(f"station pre-flight failed: {problems}",
                              hint=fix)
    warnings = [f"pre-flight {r.role}: {w}" for r in report.rows for w in r.warnings]
    for w in warnings:
        say(w)
    say(f"pre-flight: {len(report.rows)} role(s) OK" + (f", {len(warnings)} warning(s)" if warnings else ""))
    return {r.role: r.identity for r in report.rows if r.identity}, warnings


OPEN_STORE_TIMEOUT = 45.0  # seconds for opening (connect, migrate, upkeep) the results store


def open_store_locked(lock: Any, db: str | None, *, use_store: bool = True,
                      per_step: bool = False) -> tuple[Any, Any]:
    """Take the bench ``lock``, then open the results store and its recorder (``(None, None)``
    without a store). A store that cannot be opened lets the lock go again; otherwise the
    caller releases it once the run's safe state is done."""
    lock.acquire()
    try:
        return _open_recorder(db, per_step=per_step) if use_store else (None, None)
    except BaseException:
        lock.release()
        raise


def _open_recorder(db: str | None, *, per_step: bool = False) -> tuple[Any, Any]:
    from labctl.store import open_store
    from labctl.store.bounded import BoundedCaller
    from labctl.store.recorder import Recorder, commit_window_from_env

    opener = BoundedCaller(OPEN_STORE_TIMEOUT, name="labctl-open-store", what=f"the results store {db or ''}".strip(),
                           hint="check --db / LABCTL_DB and that the database server answers; nothing was powered")
    try:
        store = opener.call(open_store, db)
    except LabctlError:
        raise
    except Exception as err:  # noqa: BLE001
        raise StoreError(f"cannot open the results store {db or ''}: {err}".replace("  ", " "),
                         hint="check --db / LABCTL_DB") from None
    finally:
        opener.close()
    return store, Recorder(store, commit_window=0.0 if per_step else commit_window_from_env())


class SessionLogPusher:
    """Hands the instrument session log to the recorder at every step end (before the
    recorder commits the step), so the I/O of a step is kept with it."""

    EVERY = 1000

    def __init__(self, log: Any, recorder: Any) -> None:
        from labctl.engine.events import RunEnded, StepEnded

        self.log = log
        self.recorder = recorder
        self._sent = 0
        self._ends = (StepEnded, RunEnded)
        self._held: list[dict[str, Any]] = []  # the other roles' safe-state I/O, for their own steps

    def __call__(self, event: Any) -> None:
        if self.log is None:
            return
        if event.__class__ not in self._ends and self.log.total - self._sent < self.EVERY:
            return  # a long step hands its I/O over every EVERY records (the log keeps only the latest)
        records, self._sent = self.log.since(self._sent)
        step_key = getattr(event, "step_key", None)
        role = _safe_state_role(step_key)
        if role is not None or self._held:
            # every role is made safe at once (a thread each) and each is then recorded as a
            # step of its own: each step keeps its own role's I/O
            records, self._held = self._held + records, []
            if role is not None:
                self._held = [r for r in records if r.get("instrument") != role]
                records = [r for r in records if r.get("instrument") == role]
        if records:
            self.recorder.add_session_log(event.run_id, records, step_key=step_key)


def _safe_state_role(step_key: str | None) -> str | None:
    """``psu`` of ``teardown/safe-state.psu#1``, None for any other step."""
    if not step_key or not step_key.startswith("teardown/safe-state."):
        return None
    return step_key[len("teardown/safe-state."):].split("#", 1)[0]


_SessionLogPusher = SessionLogPusher  # the name labctl.slots imports
