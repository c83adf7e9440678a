"""The recorder: the store's subscriber on the engine's event bus.

Durability (what is committed when ``publish`` returns):

* ``RunStarted``: the run row (status ``running``, owner host/pid, heartbeat) at once;
* ``StepEnded``: the step's measurements, verdict and everything else pending, in one
  transaction, so a step is safe before the next step sends its first instrument command.
  With a ``commit_window`` (``labctl run`` uses :data:`DEFAULT_COMMIT_WINDOW`), steps that end
  less than that long after the last commit are *group-committed*: held whole (the step row,
  its measurements and its end together) and committed with the next commit, at the latest
  ``commit_window`` seconds after they ended (by the background thread). A ``kill -9``
  then loses at most the steps of the last window, never part of a step; resume re-runs them.
* ``PromptAsked`` / ``PromptAnswered``: by the background thread at its next look (within a
  tick, 50 ms with the default commit window); ``RunEnded``: at once;
* samples, logs, step starts, instrument errors, attachments, instrument I/O: batched and
  flushed at least every ``flush_interval`` (1 s) by a background thread, and at step end.

The thread running the plan does no database I/O while a step runs (progress lines, logs,
prompts all go through the background thread): a stalled database never holds a step up, and
so never makes it run past its ``timeout:``. It waits for the database only at a step's end
when steps are committed one by one (``commit_window`` 0), and at the run's start and end;
* ``Progress`` (what a long wait waits for): only the latest line of each run is kept, in the
  ``progress`` table, written at most once per ``progress_interval`` (0.5 s) — the newest
  line is written by the background thread when the interval has passed — so a watcher
  (``labctl tui --watch``) sees live progress. It is transient: never spooled.

Measurements of a step are held until its end: a step cut off by a crash leaves none, so
re-running it on resume never duplicates a measurement.

While a run is open, the background thread refreshes its heartbeat every
``heartbeat_interval`` seconds. If the database fails (PostgreSQL unreachable, disk error),
the recorder spools every later batch to a local journal (:mod:`labctl.store.spool`) and
:attr:`Recorder.saved` turns False: the engine must not report ``passed`` then.

Every database call has a bounded time (:mod:`labctl.store.bounded`, ``write_timeout``,
default 10 s or ``$LABCTL_DB_TIMEOUT``): a database that stalls (the connection stays open,
nothing comes back) is a failed database, exactly like one that dropped the connection. The
thread running the plan therefore never waits on the store for longer than that, and never
waits on a lock held by a thread that is stuck in the database driver.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from labctl.engine import events as ev
from labctl.errors import StoreError, StoreTimeout
from labctl.store.bounded import BoundedCaller
from labctl.store.sink import Batch, DbSink
from labctl.store.spool import Spool
from labctl.store.store import DEFAULT_HEARTBEAT_INTERVAL, Store

_IMMEDIATE = (ev.PromptAsked, ev.PromptAnswered)
#: ``labctl run``'s group-commit window (seconds): a step is durable at most this long after it ends
DEFAULT_COMMIT_WINDOW = 0.1
ENV_COMMIT_WINDOW = "LABCTL_COMMIT_WINDOW"
_PENDING_MAX = 10_000  # samples, logs, I/O records held before they are flushed whatever the time
_READY_MAX = 200_000  # events of finished steps held for the group commit before the run waits for one


def commit_window_from_env() -> float:
    """``$LABCTL_COMMIT_WINDOW`` (seconds, 0 = commit every step at its end) or the default."""
    raw = os.environ.get(ENV_COMMIT_WINDOW, "").strip()
    try:
        value = float(raw) if raw else DEFAULT_COMMIT_WINDOW
    except ValueError:
        return DEFAULT_COMMIT_WINDOW
    return value if 0 <= value <= 10 else DEFAULT_COMMIT_WINDOW


@dataclass
class _Run:
    run_id: str
    session: int
    started: tuple[int, ev.RunStarted]
    seq: int = 0
    pending: list[tuple[int, ev.Event]] = field(default_factory=list)
    ready: list[tuple[int, ev.Event]] = field(default_factory=list)  # finished steps, not yet committed
    ready_since: float = 0.0
    measurements: list[tuple[int, ev.Event]] = field(default_factory=list)
    io: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    open_steps: dict[str, tuple[int, ev.StepStarted]] = field(default_factory=dict)
    last_flush: float = field(default_factory=time.monotonic)
    spool_prologue_done: bool = False
    progress: ev.Progress | None = None  # the newest progress line not written yet
    progress_written: float = float("-inf")  # monotonic time of the last progress write
    urgent: bool = False  # something pending is to be committed at the background thread's next look

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq


class Recorder:
    """``Recorder(store)`` is a subscriber: ``bus.subscribe(Recorder(store))``.

    One recorder can follow several runs at once (events are routed by ``run_id``).
    """

    def __init__(
        self,
        store: Store,
        *,
        spool_path: str | os.PathLike[str] | None = None,
        heartbeat_interval: float = DEFAULT_HEARTBEAT_INTERVAL,
        flush_interval: float = 1.0,
        write_timeout: float | None = None,
        commit_window: float = 0.0,
        progress_interval: float = 0.5,
    ) -> None:
        self.store = store
        self.spool_path = spool_path
        self.heartbeat_interval = heartbeat_interval
        self.flush_interval = flush_interval
        self.commit_window = commit_window
        self.progress_interval = progress_interval
        self._sink = DbSink(store, heartbeat_interval=heartbeat_interval)
        self._db = BoundedCaller(write_timeout, name="labctl-recorder-db",
                                 what=f"the results database {store.display_url}")
        self._spool: Spool | None = None
        self._runs: dict[str, _Run] = {}
        self._lock = threading.RLock()
        # Serialises commits (so batches reach the database in order). Taken only while holding
        # ``_lock``; the background thread then lets ``_lock`` go for the database I/O, so the run
        # never waits for a group commit unless it commits itself.
        self._commit_lock = threading.Lock()
        self._keeper: tuple[threading.Thread, threading.Event] | None = None
        self.spooled = False  # some results went to the local spool instead of the database
        self.lost = False  # some results could be written nowhere
        self.problem: str | None = None
        #: told (on the background thread) when results could be kept nowhere, neither in the
        #: database nor in the spool: the run cannot go on (launch hands each run's bus in)
        self.failure_listeners: list[Callable[[StoreError], None]] = []

    # -- status the engine reads -------------------------------------------------------------

    @property
    def saved(self) -> bool:
        """True while every committed result is in the database itself (not spooled, not lost)."""
        return not self.spooled and not self.lost

    @property
    def spool(self) -> Spool | None:
        return self._spool

    # -- the subscriber ----------------------------------------------------------------------

    def __call__(self, event: ev.Event) -> None:
        if event.__class__ is ev.MeasurementRecorded:  # by far the most frequent: held until the step ends
            with self._lock:
                run = self._runs.get(event.run_id)
                if run is not None:
                    run.seq += 1
                    run.measurements.append((run.seq, event))
                    return
        with self._lock:
            if isinstance(event, ev.RunStarted):
                self._run_started(event)
                return
            run = self._runs.get(event.run_id)
            if run is None:
                raise StoreError(f"event {event.kind} for run {event.run_id!r}, which has not started here")
            if isinstance(event, ev.Progress):  # the background thread writes the newest line
                run.progress = event
                return
            seq = run.next_seq()
            if isinstance(event, ev.MeasurementRecorded):
                run.measurements.append((seq, event))
                return
            run.pending.append((seq, event))
            if isinstance(event, ev.StepStarted):
                run.open_steps[event.step_key] = (seq, event)
            elif isinstance(event, ev.StepEnded):
                run.open_steps.pop(event.step_key, None)
                if self.commit_window > 0 and len(run.ready) < _READY_MAX:
                    if not run.ready:
                        run.ready_since = time.monotonic()
                    run.ready += run.pending
                    run.ready += run.measurements
                    run.pending, run.measurements = [], []
                else:
                    self._flush(run, with_measurements=True)
            elif isinstance(event, ev.RunEnded):
                try:
                    self._flush(run, with_measurements=True)
                finally:
                    del self._runs[run.run_id]
            elif isinstance(event, _IMMEDIATE):
                run.urgent = True  # committed by the background thread at its next look (≤ 50 ms)
            elif len(run.pending) + len(run.io) >= _PENDING_MAX:
                self._flush(run, with_measurements=False)  # (memory stays bounded)
        if isinstance(event, ev.RunEnded):
            self._stop_keeper()  # outside the lock: the keeper may be waiting for it

    def add_session_log(self, run_id: str, records: list[dict[str, Any]], step_key: str | None = None) -> None:
        """Queue instrument I/O records (``SessionLog.records``) for the run; flushed like samples."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                raise StoreError(f"run {run_id!r} is not open in this recorder")
            seq, io = run.seq, run.io
            for rec in records:
                seq += 1
                io.append((seq, {"step_key": step_key, **rec} if step_key else rec))
            run.seq = seq

    def flush(self) -> None:
        """Commit everything pending except measurements of unfinished steps."""
        with self._lock:
            for run in list(self._runs.values()):
                self._flush(run, with_measurements=False)

    def close(self) -> None:
        """Flush and stop the background thread (runs still open stay ``running``)."""
        self.flush()
        self._stop_keeper(force=True)
        self._db.close()
        if self._spool is not None:
            self._spool.close()

    # -- internals ---------------------------------------------------------------------------

    def _run_started(self, e: ev.RunStarted) -> None:
        if e.run_id in self._runs:
            raise StoreError(f"run {e.run_id} started twice in one recorder")
        continuing = e.resumed_from == e.run_id
        try:
            session = self._db.call(self.store.next_session, e.run_id)
        except (SQLAlchemyError, StoreTimeout) as exc:
            if continuing:
                raise StoreError(f"cannot resume run {e.run_id}: the results database is unreachable") from exc
            session = 0
        if session > 0 and not continuing:
            raise StoreError(
                f"run id {e.run_id} already exists in {self.store.display_url}",
                hint="a new run needs a new id; to continue a run set resumed_from to its id",
            )
        if continuing and session > 0:
            self._check_not_running_elsewhere(e.run_id)
        run = _Run(e.run_id, session, (0, e))
        self._runs[e.run_id] = run
        with self._commit_lock:
            self._commit(run, Batch(e.run_id, session, [(0, e)]))
        self._start_keeper()

    def _check_not_running_elsewhere(self, run_id: str) -> None:
        """Two processes must never write one run: a resume of a live run is refused."""
        info = self._db.call(self.store.resume_info, run_id)
        if info.outcome == "running":
            self._db.call(self.store.mark_interrupted)  # its owner may have died since the store was opened
            info = self._db.call(self.store.resume_info, run_id)
        if info.outcome == "running":
            raise StoreError(f"cannot resume: {info.reason}", hint="wait for it to end, or stop it first")

    def _flush(self, run: _Run, *, with_measurements: bool) -> None:
        """Commit what is pending (the caller holds ``_lock``)."""
        batch = self._take(run, with_measurements=with_measurements)
        if batch is not None:
            with self._commit_lock:
                self._commit(run, batch)

    def _take(self, run: _Run, *, with_measurements: bool) -> Batch | None:
        items = run.ready + run.pending if run.ready else run.pending
        if with_measurements and run.measurements:
            items = items + run.measurements
            run.measurements = []
        run.pending, run.ready = [], []
        io, run.io = run.io, []
        run.last_flush, run.urgent = time.monotonic(), False
        return Batch(run.run_id, run.session, items, io) if items or io else None

    def _due_progress(self, run: _Run, now: float) -> ev.Progress | None:
        """The run's newest progress line when the last write is ``progress_interval`` old (the
        caller holds ``_lock``; it writes the line with :meth:`_write_progress`, without it)."""
        event = run.progress
        if event is None or self.spooled or now - run.progress_written < self.progress_interval:
            return None
        run.progress, run.progress_written = None, now
        return event

    def _write_progress(self, event: ev.Progress) -> None:
        """Write a progress line. Best effort: a failed write loses only this line (a stalled
        database is a failed one)."""
        try:
            self._db.call(self._sink.write_progress, event)
        except StoreTimeout as exc:
            self.spooled = True
            self.problem = f"results database failed: {exc.message}"
        except SQLAlchemyError:
            pass  # the next batch write notices a dead database and spools

    def _commit(self, run: _Run, batch: Batch) -> None:
        if not self.spooled:
            for attempt in (1, 2):  # one retry on a fresh connection (the pool drops dead ones)
                try:
                    self._db.call(self._sink.write, batch)
                    return
                except StoreTimeout as exc:  # stalled: no retry, it would only wait again
                    self.spooled = True
                    self.problem = f"results database failed: {exc.message}"
                    break
                except SQLAlchemyError as exc:
                    if attempt == 2:
                        self.spooled = True
                        self.problem = f"results database {self.store.display_url} failed: {exc.__class__.__name__}: {str(exc).splitlines()[0]}"
        self._to_spool(run, batch)

    def _to_spool(self, run: _Run, batch: Batch) -> None:
        try:
            if self._spool is None:
                self._spool = Spool(self.spool_path)
            if not run.spool_prologue_done:
                # Enough context for the replay to stand alone (it is idempotent).
                prologue = [run.started, *run.open_steps.values()]
                batch = Batch(batch.run_id, batch.session,
                              [p for p in prologue if p not in batch.items] + batch.items, batch.io_records)
            self._spool.append(self.store.display_url, batch)
            run.spool_prologue_done = True
        except Exception as exc:
            self.lost = True
            self.problem = f"results could not be saved anywhere: {exc}"
            raise StoreError(self.problem, hint="check the disk holding the spool journal") from exc

    # -- background: sample flush and heartbeat -------------------------------------------------

    def _start_keeper(self) -> None:
        """Start the background thread (called with the lock held, when a run starts)."""
        if self._keeper is not None:
            return
        stop = threading.Event()
        thread = threading.Thread(target=self._keep, args=(stop,), name="labctl-recorder", daemon=True)
        self._keeper = (thread, stop)
        thread.start()

    def _stop_keeper(self, force: bool = False) -> None:
        """Stop the background thread once no run is open (never call with the lock held)."""
        with self._lock:
            if self._keeper is None or (self._runs and not force):
                return
            (thread, stop), self._keeper = self._keeper, None
        stop.set()
        if thread is not threading.current_thread():
            thread.join(timeout=30)

    def _keep(self, stop: threading.Event) -> None:
        tick = min(self.flush_interval, self.heartbeat_interval, self.progress_interval, self.commit_window or 1e9) / 2
        last_beat = time.monotonic()
        while not stop.wait(tick):
            now = time.monotonic()
            with self._lock:
                runs = list(self._runs.values())
            for run in runs:
                self._lock.acquire()
                batch = None
                try:
                    line = self._due_progress(run, now)
                    if ((run.pending or run.io) and (run.urgent or now - run.last_flush >= self.flush_interval)
                            or run.ready and now - run.ready_since >= self.commit_window):
                        batch = self._take(run, with_measurements=False)
                        if batch is not None:
                            self._commit_lock.acquire()  # before letting _lock go: batches stay in order
                finally:
                    self._lock.release()
                if batch is not None:
                    failed: StoreError | None = None
                    try:
                        self._commit(run, batch)  # the run goes on meanwhile
                    except StoreError as exc:  # kept nowhere (recorded in self.problem): the run must stop
                        failed = exc
                    finally:
                        self._commit_lock.release()
                    if failed is not None:  # told outside the locks: the abort it asks for may flush
                        for listener in self.failure_listeners:
                            listener(failed)
                if line is not None:  # (the database I/O without the lock: the run never waits for it)
                    self._write_progress(line)
            if now - last_beat >= self.heartbeat_interval and not self.spooled:
                last_beat = now
                for run in runs:
                    try:
                        if not self._db.call(self.store.touch_heartbeat, run.run_id, run.started[1].pid, run.session):
                            self.problem = f"run {run.run_id} is owned by another process now"
                    except StoreTimeout as exc:
                        self.spooled = True  # a stalled database is a failed one
                        self.problem = f"results database failed: {exc.message}"
                    except SQLAlchemyError:
                        pass  # the next batch write will notice and spool
