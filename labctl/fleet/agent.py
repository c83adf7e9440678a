"""The station agent: ``labctl agent --fixture F --db postgresql://…``.

One agent per station. It registers the station (:mod:`labctl.fleet.registry`), heartbeats,
claims the next job for it (:mod:`labctl.fleet.queue`) and runs it exactly as ``labctl run``
would — :func:`labctl.launch.execute`: same pre-flight, safety and store — or resumes its run
(:func:`labctl.resume.resume_run`) when the job was interrupted. The agent owns the signals:

* SIGTERM, SIGINT, SIGHUP, SIGQUIT: the running job is aborted to the safe state, its run is
  kept and the job goes back to the queue bound to this station (the next agent here resumes
  it); then the agent stops. A second signal only says the safe state is still being reached;
  once the agent has stopped, further ones are ignored while the process ends (exit 0).
* The database fails during a job: the run goes on and its results are spooled (the
  recorder); the agent claims nothing until the database is back, then pushes the spool and
  records the job's outcome.
* kill -9 or power loss: the job stays ``running`` until the heartbeat is stale (or the agent
  is seen dead on the same host), then it is ``interrupted``; this station's next agent takes
  it back first and resumes the run: the cut-off step is re-run, finished ones are kept.

Wake-ups: on PostgreSQL the agent ``LISTEN``s on channel ``labctl_jobs`` (``labctl queue
submit`` notifies it), and polls every ``poll`` seconds in any case.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from labctl.errors import AbortedBeforeStart, BenchBusy, ExitCode, LabctlError, StoreUnreachable
from labctl.fleet import queue, registry
from labctl.fleet.wake import Waker

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
RUN_OUTCOMES = ("passed", "failed", "error", "aborted")


class _Progress:
    """Subscriber: the run and step the agent reports in its heartbeat."""

    def __init__(self) -> None:
        self.run_id: str | None = None
        self.step: str | None = None

    def __call__(self, event: Any) -> None:
        from labctl.engine import events as ev

        if isinstance(event, ev.RunStarted):
            self.run_id = event.run_id
        elif isinstance(event, ev.StepStarted):
            self.step = event.step_key
        elif isinstance(event, ev.RunEnded):
            self.step = None


class Agent:
    def __init__(self, fixture: str, db: str, *, classes: list[str] | None = None, heartbeat_interval: float = 5.0,
                 poll: float = 5.0, workdir: str | Path | None = None, max_jobs: int | None = None,
                 exit_when_idle: bool = False, time_scale: float | None = None, preflight: bool = True,
                 allow_expired: bool = False, say: Callable[[str], None] = print) -> None:
        from labctl.launch import resolve_fixture
        from labctl.store.location import display_url, labctl_home, resolve_db

        self.fixture_path = str(Path(fixture).resolve()) if Path(fixture).exists() else fixture
        self.fixture = resolve_fixture(fixture, [], time_scale)
        self.station = self.fixture.station
        self.db = db
        self.where = display_url(resolve_db(db))  # never the password
        self.classes = sorted(set(classes or []))
        self.heartbeat_interval = heartbeat_interval
        self.poll = poll
        self.workdir = Path(workdir) if workdir else labctl_home() / "agent" / self.station
        self.max_jobs = max_jobs
        self.exit_when_idle = exit_when_idle
        self.time_scale = time_scale
        self.preflight = preflight
        self.allow_expired = allow_expired
        self._say = say
        self.agent_id = uuid.uuid4().hex
        self.store: Any = None
        self.stop_reason: str | None = None
        self.signals_seen = 0
        self.controller: Any = None  # the running job's AbortController
        self.job: Any = None
        self.progress = _Progress()
        self.state = "idle"
        self.db_ok = True
        self.jobs_done = 0
        self._wake = threading.Event()
        self._stopping = threading.Event()  # set with stop_reason; never by a queue notification
        self._beat_stop = threading.Event()
        self._lock = threading.Lock()

    # -- output ------------------------------------------------------------------------------

    def say(self, text: str) -> None:
        try:
            self._say(f"{time.strftime('%H:%M:%S')} [{self.station}] {text}")
        except (OSError, ValueError):
            pass  # a closed terminal never stops the agent

    # -- signals -----------------------------------------------------------------------------

    def _on_signal(self, signum: int) -> None:
        """In the signal relay's thread (:mod:`labctl.signals`), never inside the main thread's locks."""
        self.signals_seen += 1
        name = signal.Signals(signum).name
        if signum == signal.SIGHUP:  # the terminal is gone: output must not fail or block on it
            from labctl.engine.abort import detach_from_terminal

            detach_from_terminal()
        controller = self.controller
        if self.stop_reason is None:
            self.stop_reason = f"{name} received"
            if controller is not None:
                controller.request("signal", f"{name} received by the station agent: aborting the job to the safe state")
                self.say(f"{name}: aborting job {self.job.id if self.job else ''} to the safe state, then stopping")
            else:
                self.say(f"{name}: stopping")
        else:
            self.say(f"{name} again: already stopping; the safe state is still being reached, please wait")
        self._stopping.set()
        self._wake.set()

    # -- main loop ---------------------------------------------------------------------------

    def run(self) -> int:
        """Serve the station until stopped; returns the exit code (0: stopped cleanly)."""
        from labctl.signals import SignalRelay

        with SignalRelay(STOP_SIGNALS, self._on_signal, name="labctl-agent-signals") as relay:
            try:
                return self._run()
            finally:
                # Stopped by a signal, the process only ends from here: a late press (Ctrl-C twice)
                # is ignored. Not the agent's handler: Python's finalization resets every Python-level
                # handler to the default, which would turn a press that lands then into a death by
                # SIGINT instead of the clean exit 0.
                relay.ignore_on_exit = self.signals_seen > 0

    def _run(self) -> int:
        waker = None
        beat = None
        try:
            if not self._connect_and_register():
                return int(ExitCode.PASSED)
            waker = Waker(self.db, self._wake)
            beat = threading.Thread(target=self._heartbeat_loop, name="labctl-agent-heartbeat", daemon=True)
            beat.start()
            self.say(f"agent up: station {self.station}, classes {', '.join(self.classes) or '-'}, "
                     f"database {self.where}")
            self._serve()
            return int(ExitCode.PASSED)
        finally:
            self._beat_stop.set()
            if beat is not None:
                beat.join(timeout=10)
            if waker is not None:
                waker.close()
            if self.store is not None:
                try:
                    registry.stopped(self.store, self.station, self.agent_id, self.stop_reason or "nothing left to do")
                except Exception:  # noqa: BLE001 - the database may be down
                    pass
                self.store.close()
            self.say(f"agent stopped ({self.stop_reason or 'done'}); {self.jobs_done} job(s) run")

    def _connect_and_register(self) -> bool:
        from labctl.store import open_store

        waited = False
        while self.stop_reason is None:
            try:
                self.store = open_store(self.db)
                info = registry.StationInfo.from_fixture(self.fixture, self.fixture_path, self._fixture_text(),
                                                         self.classes)
                registry.register(self.store, info, self.agent_id, os.getpid(), self.heartbeat_interval)
                self._identify(info)
                return True
            except StoreUnreachable as err:
                if self.store is not None:
                    self.store.close()
                    self.store = None
                if not waited:
                    self.say(f"waiting for the results database: {err.message}")
                    waited = True
                self._wake.wait(self.poll)
                self._wake.clear()
        return False

    def _identify(self, info: registry.StationInfo) -> None:
        """Read every instrument's identity (the station pre-flight, nothing powered) into the
        registry; a problem is shown there and in the log — each job runs its own pre-flight."""
        from labctl.instruments import open_station
        from labctl.instruments.preflight import preflight
        from labctl.launch import make_clock, simulated_lab

        try:
            clock = make_clock(self.fixture)
            with simulated_lab(self.fixture, None, clock, []), open_station(self.fixture, clock=clock) as station:
                report = preflight(self.fixture, station=station, allow_expired=self.allow_expired)
        except Exception as err:  # noqa: BLE001 - an unreachable instrument is reported, not fatal
            report, problem = None, f"pre-flight could not run: {err}".splitlines()[0]
        roles = {k: dict(v) for k, v in info.instruments.items()}
        if report is not None:
            for row in report.rows:
                if row.role in roles:
                    roles[row.role]["idn"] = row.identity
            bad = [f"{r.role}: {'; '.join(r.problems)}" for r in report.rows if r.problems]
            problem = ("pre-flight: " + " | ".join(bad)) if bad else ""
        if problem:
            self.say(problem)
        registry.heartbeat(self.store, self.station, self.agent_id, instruments=roles, message=problem)

    def _fixture_text(self) -> str:
        from labctl.resources import resolve_data_path

        return resolve_data_path(self.fixture_path, "fixtures").read_text(encoding="utf-8")

    def _serve(self) -> None:
        last_reap = 0.0
        while self.stop_reason is None:
            if self.max_jobs is not None and self.jobs_done >= self.max_jobs:
                return
            try:
                self._sync_spool()
                if time.monotonic() - last_reap > self.heartbeat_interval:
                    queue.reap(self.store)
                    last_reap = time.monotonic()
                job = queue.claim(self.store, self.station, self.agent_id, self.classes)
                self._db_back()
            except Exception as err:  # noqa: BLE001 - the database is down: claim nothing until it is back
                self._db_down(err)
                job = None
            if job is not None:
                self._run_job(job)
                continue
            if self.exit_when_idle and self.db_ok:
                return
            self._wake.wait(self.poll if self.db_ok else min(self.poll, 2.0))
            self._wake.clear()

    def _db_down(self, err: BaseException) -> None:
        if self.db_ok:
            reason = str(getattr(err, "orig", None) or err).strip().splitlines()
            self.say(f"results database unreachable ({type(err).__name__}: {reason[0] if reason else '-'}): "
                     "claiming nothing until it is back")
        self.db_ok = False

    def _db_back(self) -> None:
        if not self.db_ok:
            self.say("results database reachable again")
        self.db_ok = True

    # -- heartbeat (own thread) --------------------------------------------------------------

    def _heartbeat_loop(self) -> None:
        while not self._beat_stop.wait(self.heartbeat_interval):
            self._beat()

    def _beat(self) -> None:
        with self._lock:
            job, controller = self.job, self.controller
        status = {"state": self.state, "current_job": job.id if job is not None else None,
                  "current_run": self.progress.run_id if job is not None else None,
                  "current_step": self.progress.step if job is not None else None}
        try:
            held = registry.heartbeat(self.store, self.station, self.agent_id, **status)
            self._db_back()
            if not held:
                self.say("another agent holds this station now: stopping after this job")
                self.stop_reason = self.stop_reason or "replaced by another agent"
                self._stopping.set()
                return
            if job is not None and controller is not None and queue.job_state(self.store, job.id) == "cancelling":
                if controller.request("operator", f"job {job.id} cancelled (labctl queue cancel)"):
                    self.say(f"job {job.id} cancelled: aborting it to the safe state")
        except Exception as err:  # noqa: BLE001 - a missed heartbeat; the run spools if it must
            self._db_down(err)

    # -- one job -----------------------------------------------------------------------------

    def _run_job(self, job: Any) -> None:
        from labctl.engine.abort import AbortController

        controller = AbortController()
        with self._lock:
            self.job, self.controller = job, controller
            self.progress = _Progress()
        self.state = "running"
        if self.stop_reason is not None:  # a signal between claim and here
            controller.request("signal", f"{self.stop_reason} by the station agent")
        self._beat()
        try:
            self._run_job_inner(job, controller)
        finally:
            with self._lock:
                self.job, self.controller = None, None
            self.state = "idle"
            self.jobs_done += 1
            self._beat()

    def _run_job_inner(self, job: Any, controller: Any) -> None:
        from labctl.launch import EXIT_BY_OUTCOME

        self._new_run_id: str | None = None
        folder = self.workdir / "jobs" / str(job.id)
        plan_path = queue.write_bundle(job, folder)
        previous = self._run_record(job.run_id) if job.run_id else None
        ours = previous is not None and previous.station == self.station
        if ours and previous.outcome == "running":  # its writer died (same host: at once; else: stale heartbeat)
            self.store.mark_interrupted()
            previous = self._run_record(job.run_id)
            if previous.outcome == "running":
                self._release(job, f"run {job.run_id} still shows running (its heartbeat is not stale yet); "
                              "resumed when it is")
                self._back_off()
                return
        if ours and previous.outcome in ("passed", "failed", "error"):  # it ended; the agent died before recording it
            self._finish(job, previous.outcome, int(EXIT_BY_OUTCOME[previous.outcome]), "run ended before the agent restarted")
            return
        try:
            if ours:
                self.say(f"job {job.id}: resuming run {job.run_id} ({previous.outcome})")
                out = self._resume(job, plan_path, controller)
            else:
                out = self._start(job, plan_path, controller)
        except AbortedBeforeStart as err:
            self._release(job, f"not started: {err.message}", forget_run=not ours)
            return
        except StoreUnreachable as err:
            self._db_down(err)
            self._release(job, "not started: the results database was unreachable", forget_run=not ours)
            return
        except BenchBusy as err:  # somebody runs a plan on this bench by hand: the job waits its turn
            self._release(job, f"not started: {err.message}", forget_run=not ours)
            self._back_off()
            return
        except LabctlError as err:
            self.say(f"job {job.id}: {err.format().splitlines()[0]}")
            self._forget_unrecorded_run(job, ours)
            self._finish(job, "error", int(err.exit_code), err.format().splitlines()[0])
            return
        except Exception as err:  # noqa: BLE001 - one job's bug must not stop the station
            self.say(f"job {job.id}: internal error {type(err).__name__}: {err}")
            self._forget_unrecorded_run(job, ours)
            self._finish(job, "error", int(ExitCode.ERROR), f"internal error {type(err).__name__}: {err}")
            return
        self._after_run(job, out)

    def _forget_unrecorded_run(self, job: Any, ours: bool) -> None:
        """A new run that ended before it was recorded (the wrong board on the fixture, a
        failed pre-flight: nothing was powered) leaves the job without a run id: ``queue show``
        must never name a run that ``runs show`` does not know."""
        run_id = self._new_run_id
        if ours or run_id is None:
            return
        try:
            if self._run_record(run_id) is None:
                queue.set_run(self.store, job.id, self.agent_id, None)
        except Exception as err:  # noqa: BLE001 - the job's end is recorded all the same
            self._db_down(err)

    def _back_off(self) -> None:
        """Wait a heartbeat before claiming again after giving a job back. The queue's
        notification of that very release must not wake the agent (it would claim the job at
        once, over and over); only a stop does."""
        self._stopping.wait(self.heartbeat_interval)
        self._wake.clear()

    def _run_record(self, run_id: str) -> Any:
        from sqlalchemy import select

        from labctl.store.schema import runs

        with self.store.read_engine.connect() as conn:
            return conn.execute(select(runs.c.station, runs.c.outcome, runs.c.message).where(runs.c.id == run_id)).first()

    def _start(self, job: Any, plan_path: Path, controller: Any) -> Any:
        from labctl.engine.runner import new_run_id
        from labctl.launch import RunRequest, execute

        run_id = self._new_run_id = new_run_id()
        if not queue.set_run(self.store, job.id, self.agent_id, run_id):
            raise AbortedBeforeStart(f"job {job.id} is no longer held by this agent")
        self.say(f"job {job.id}: {job.plan_name}" + (f" on DUT {job.dut_serial}" if job.dut_serial else "")
                 + f", run {run_id}")
        req = RunRequest(plan=str(plan_path), fixture=self.fixture_path, dut=job.dut_serial,
                         overrides={k: str(v) for k, v in (job.parameters or {}).items()}, db=self.db,
                         preflight=self.preflight, operator=job.submitted_by, run_id=run_id,
                         time_scale=self.time_scale, allow_expired=self.allow_expired)
        loaded_hash = _plan_hash(req)
        if loaded_hash != job.plan_sha256:
            from labctl.errors import PlanError

            raise PlanError(f"job {job.id}: the plan written from the queue has hash {loaded_hash[:12]}, "
                            f"not the submitted {job.plan_sha256[:12]}: not run")
        return execute(req, [self.progress], say=self._quiet, abort=controller, handle_signals=False)

    def _resume(self, job: Any, plan_path: Path, controller: Any) -> Any:
        from labctl.resume import resume_run

        return resume_run(job.run_id, db=self.db, fixture=self.fixture_path, preflight=self.preflight,
                          allow_expired=self.allow_expired, subscribers=[self.progress], say=self._quiet,
                          abort=controller, handle_signals=False)

    def _quiet(self, text: str) -> None:
        if text.startswith(("pre-flight:", "simulated lab started")):
            return  # every job says these; the run's log keeps them
        self.say(text)

    def _after_run(self, job: Any, out: Any) -> None:
        from labctl.engine.runner import NOT_IN_DATABASE
        from labctl.launch import EXIT_BY_OUTCOME

        outcome, code, message = out.result.outcome.value, int(out.exit_code), out.result.message
        run_id = out.result.run_id
        if outcome == "aborted" and self._abort_source() == "signal":  # the agent was told to stop
            self._release(job, f"{self.stop_reason}: run {run_id} aborted to the safe state; "
                          "this station resumes it when its agent is back")
            return
        if not out.saved:
            self.say(f"job {job.id}: results were spooled (database failed during the run); pushing them when it is back")
            if not self._wait_and_sync():
                return  # stopping with the database down: the next agent syncs and records the job
            run = self._run_record(run_id)
            if run is not None and run.outcome in RUN_OUTCOMES:
                if run.outcome == "error" and NOT_IN_DATABASE in run.message:  # now they are
                    self._mark_synced_run_passed(run_id, run.message)
                    outcome, message = "passed", run.message.split(NOT_IN_DATABASE)[0] + " (results spooled, then synced)"
                else:
                    outcome, message = run.outcome, run.message
                code = int(EXIT_BY_OUTCOME[outcome])
        self._finish(job, outcome, code, message, run_id=run_id)

    def _abort_source(self) -> str | None:
        controller = self.controller
        reason = controller.reason if controller is not None else None
        return reason.source if reason is not None else None

    def _mark_synced_run_passed(self, run_id: str, message: str) -> None:
        from sqlalchemy import update

        from labctl.engine.runner import NOT_IN_DATABASE
        from labctl.store.schema import runs

        with self.store.engine.begin() as conn:
            conn.execute(update(runs).where(runs.c.id == run_id, runs.c.outcome == "error").values(
                outcome="passed", message=message.split(NOT_IN_DATABASE)[0]
                + "; results spooled during a database outage, synced by the station agent"))

    # -- the database's side of a job: retried until it answers ------------------------------

    def _retry(self, what: str, fn: Callable[[], Any]) -> tuple[bool, Any]:
        """Call ``fn`` until the database answers; gives up only when the agent stops
        (the next agent of this station finishes the bookkeeping)."""
        while True:
            try:
                value = fn()
                self._db_back()
                return True, value
            except Exception as err:  # noqa: BLE001
                self._db_down(err)
                if self.stop_reason is not None and self.signals_seen > 0:
                    self.say(f"stopping with the database down: {what} is left to this station's next agent")
                    return False, None
                time.sleep(min(self.poll, 2.0))

    def _sync_spool(self) -> int:
        from labctl.store.sink import DbSink
        from labctl.store.spool import Spool
        from labctl.store.store import DEFAULT_HEARTBEAT_INTERVAL

        spool = Spool()
        try:
            if self.store.display_url not in spool.targets():
                return 0
            report = spool.replay(DbSink(self.store, heartbeat_interval=DEFAULT_HEARTBEAT_INTERVAL), self.store.display_url)
        finally:
            spool.close()
        if report.events:
            self.say(f"synced {report.events} spooled events of run(s) {', '.join(sorted(report.runs))}")
        return report.events

    def _wait_and_sync(self) -> bool:
        return self._retry("pushing the spool", self._sync_spool)[0]

    def _finish(self, job: Any, state: str, code: int, message: str, run_id: str | None = None) -> None:
        ok, held = self._retry(f"recording job {job.id}", lambda: queue.finish(self.store, job.id, self.agent_id,
                                                                              state, code, message))
        if ok:
            self.say(f"job {job.id}: {state}" + (f" (run {run_id})" if run_id else "")
                     + ("" if held else " — but this agent no longer held it"))
            if run_id and held:
                try:
                    registry.record_identities(self.store, self.station, self.agent_id, run_id)
                except Exception:  # noqa: BLE001 - identities are a nicety
                    pass

    def _release(self, job: Any, message: str, *, forget_run: bool = False) -> None:
        ok, _ = self._retry(f"releasing job {job.id}",
                            lambda: queue.release(self.store, job.id, self.agent_id, message, forget_run=forget_run))
        if ok:
            self.say(f"job {job.id} back in the queue: {message}")


def _plan_hash(req: Any) -> str:
    from labctl.launch import resolve_fixture
    from labctl.plan.loader import load_plan

    fixture = resolve_fixture(req.fixture, [], req.time_scale)
    return load_plan(req.plan, req.overrides, fixture).sha256
