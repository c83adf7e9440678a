"""The results store: one database (SQLite file or PostgreSQL), its upkeep, and resume info.

``open_store()`` resolves the location (``--db``, ``$LABCTL_DB``, default file), checks the
schema (a SQLite file is migrated; a shared PostgreSQL database only by ``labctl db upgrade``,
see :mod:`labctl.store.migrate`) and marks runs whose owner died as ``interrupted``. Writing goes through
:class:`labctl.store.recorder.Recorder`; reading through :mod:`labctl.store.query`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event, func, select, update
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import SQLAlchemyError

from labctl.engine.events import NOT_IN_DATABASE, never_ran
from labctl.errors import RunNotFound, StoreError, StoreUnreachable
from labctl.store import migrate
from labctl.store.location import default_db_path, display_url, resolve_db
from labctl.store.owner import process_alive, this_host
from labctl.store.schema import io_log, logs, run_sessions, runs, samples, steps
from labctl.store.sqlite_access import (
    missing_sqlite_file,
    no_such_database,
    read_only_engine,
    refuse_writing,
    unwritable_reason,
)

DEFAULT_HEARTBEAT_INTERVAL = 5.0
STALE_FACTOR = 4.0  # a run on another host is dead after STALE_FACTOR × its heartbeat interval
FINISHED_OUTCOMES = ("PASS", "FAIL", "ERROR", "SKIPPED", "ABORTED")
INTERRUPTED_STEP = "INTERRUPTED"


def split_step_key(step_key: str) -> tuple[str, int]:
    """``"steps/vout[2]#3"`` -> ``("steps/vout[2]", 3)``; keys without ``#n`` are attempt 1."""
    base, sep, attempt = step_key.rpartition("#")
    if sep and attempt.isdigit():
        return base, int(attempt)
    return step_key, 1


@dataclass(frozen=True)
class CutOffStep:
    step_key: str
    logical_key: str  # the step key without its "#attempt"
    step_id: str
    group: str
    corner_index: int | None
    attempt: int
    next_attempt: int  # use this attempt number when the step is re-run


@dataclass(frozen=True)
class ResumeInfo:
    """What ``labctl resume`` needs to continue a run (see :meth:`Store.resume_info`)."""

    run_id: str
    outcome: str
    resumable: bool
    reason: str
    plan_name: str
    plan_version: str
    plan_path: str
    plan_hash: str
    plan_text: str
    parameters: dict[str, Any]
    corners: list[dict[str, Any]]
    station: str
    slot: str | None
    dut_serial: str | None
    operator: str | None
    next_session: int
    finished: dict[str, str] = field(default_factory=dict)  # logical step key -> outcome
    finished_step_keys: frozenset[str] = frozenset()
    cut_off: tuple[CutOffStep, ...] = ()
    attempts: dict[str, int] = field(default_factory=dict)  # logical key -> highest attempt seen
    #: logical key -> attempts of it that ended in the session of its latest ended attempt
    tries: dict[str, int] = field(default_factory=dict)

    def is_finished(self, step_key: str) -> bool:
        """Whether the step (any attempt of it) finished in an earlier session."""
        return split_step_key(step_key)[0] in self.finished

    def next_attempt(self, step_key: str) -> int:
        return self.attempts.get(split_step_key(step_key)[0], 0) + 1


def _null(_value: None) -> None:
    return None


def _bind_none_directly() -> None:
    """Let Python's sqlite3 module bind ``None`` without a failed lookup.

    The module binds int, float, str and bytes at once, but looks for an adapter for every
    other parameter, ``None`` included; finding none, it formats an ``AttributeError`` that it
    throws away, about 2,000 instructions (0.2 µs here) for each NULL of each row, and a
    step's rows carry about 16 (limits not set, labels, a query's reply time). An adapter for
    ``None`` is found by the first lookup and binds NULL, as before. sqlite3 keeps adapters in
    one table for the whole process, so other SQLite users in it get the same, unchanged
    meaning (None is NULL), sooner."""
    import sqlite3

    sqlite3.register_adapter(type(None), _null)


def _sqlite_engines(url: str, synchronous: str) -> tuple[Engine, Engine]:
    _bind_none_directly()
    path = make_url(url).database
    if not path or path == ":memory:":
        raise StoreError("an in-memory SQLite database cannot hold results", hint="give a file path")
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the folder for the results database {path}: {exc.strerror}",
                         hint="pick another place with --db or $LABCTL_DB") from exc

    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # SQLAlchemy's begin event issues BEGIN itself
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA busy_timeout = 30000")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute(f"PRAGMA synchronous = {synchronous}")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.execute("PRAGMA cache_size = -65536")  # 64 MiB: index inserts stay in memory
        cur.close()

    engines = []
    for begin in ("BEGIN IMMEDIATE", "BEGIN"):  # writer takes the write lock up front
        eng = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})
        event.listen(eng, "connect", on_connect)
        event.listen(eng, "begin", lambda conn, _b=begin: conn.exec_driver_sql(_b))
        engines.append(eng)
    return engines[0], engines[1]


def _postgres_engine(url: str) -> Engine:
    # Bounded everywhere: connect, every statement, every lock wait, an idle transaction, and
    # a dead peer (keepalive, unacknowledged data). A server that accepts and then says nothing
    # is caught by the recorder's own bound (labctl.store.bounded).
    bounds = "-c statement_timeout=30000 -c lock_timeout=10000 -c idle_in_transaction_session_timeout=60000"
    given = make_url(url).query.get("options")  # the URL's own options (e.g. a search_path) come first
    given = " ".join(given) if isinstance(given, tuple) else given
    connect_args = {
        "connect_timeout": 10,
        "options": f"{given} {bounds}" if given else bounds,
        "application_name": "labctl",
        "keepalives": 1,
        "keepalives_idle": 10,
        "keepalives_interval": 3,
        "keepalives_count": 3,
        "tcp_user_timeout": 20000,
    }
    return create_engine(url, pool_pre_ping=True, pool_timeout=10, connect_args=connect_args)


class Store:
    """An open results database. Use :func:`open_store`; close it when done."""

    def __init__(self, url: str, *, mark_interrupted: bool = True, sqlite_synchronous: str = "FULL",
                 reading: bool = False, must_exist: bool = False) -> None:
        if sqlite_synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
            raise StoreError(f"sqlite_synchronous must be FULL, NORMAL or EXTRA, not {sqlite_synchronous!r}")
        self.url = url
        self.display_url = display_url(url)
        self.dialect = make_url(url).get_backend_name()
        #: a SQLite file this process may not write, opened to read only (``reading``)
        self.read_only = False
        if self.dialect == "sqlite":
            path = make_url(url).database
            missing = missing_sqlite_file(url) if reading or must_exist else None
            if missing and Path(missing).resolve() != default_db_path().resolve():
                raise no_such_database(missing)  # a typo'd --db: no "no runs recorded" from a new, empty file
            why = unwritable_reason(path) if path and path != ":memory:" else None
            if why is not None and not reading:
                raise refuse_writing(path, why)
            if why is not None:
                self.read_only = True
                self.engine = self.read_engine = read_only_engine(path)
            else:
                self.engine, self.read_engine = _sqlite_engines(url, sqlite_synchronous.upper())
        elif self.dialect == "postgresql":
            self.engine = self.read_engine = _postgres_engine(url)
            if reading or must_exist:  # a server that takes the query and says nothing ends the command
                from labctl.store.readbound import ReadWatch

                ReadWatch(self.read_engine, self.display_url)
        else:
            raise StoreError(f"unsupported database {self.display_url}")
        self._clock_offset: float | None = 0.0 if self.dialect != "postgresql" else None
        try:
            self.schema = migrate.check(self.engine, self.display_url, self.read_engine,
                                        may_migrate=not self.read_only)
            if mark_interrupted and not self.read_only:
                self.mark_interrupted()
        except SQLAlchemyError as exc:
            self.close()
            raise StoreUnreachable(
                f"cannot open the results database {self.display_url}: {_reason(exc)}",
                hint="check --db / $LABCTL_DB, that the server is up and that you may write there",
            ) from exc
        except BaseException:  # a schema this labctl cannot use: its connections go too
            self.close()
            raise

    def now(self) -> float:
        """Wall-clock epoch seconds on the database's clock: heartbeats are stamped and judged
        with it, so that stations whose clocks differ agree about which run or agent is alive
        (PostgreSQL: the server's clock, its offset from this host's read once; SQLite, a file
        of this host: this host's clock)."""
        if self._clock_offset is None:
            try:
                with self.read_engine.connect() as conn:
                    before = time.time()
                    server = float(conn.execute(select(func.extract("epoch", func.clock_timestamp()))).scalar())
                    after = time.time()
                self._clock_offset = server - (before + after) / 2
            except SQLAlchemyError:
                return time.time()  # read again next time; the call that needs the database fails anyway
        return time.time() + self._clock_offset

    def close(self) -> None:
        self.engine.dispose()
        if self.read_engine is not self.engine:
            self.read_engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- upkeep -------------------------------------------------------------------------

    def mark_interrupted(self, now: float | None = None) -> list[str]:
        """Mark runs left ``running`` by a dead owner as ``interrupted``; return their ids.

        On this host the owner is dead when its process is gone (or its pid now belongs to
        another process); a run of another host is dead when its heartbeat is older than
        ``STALE_FACTOR`` × its heartbeat interval. A live run is never touched.
        """
        now = self.now() if now is None else now
        host = this_host()
        marked: list[str] = []
        with self.read_engine.connect() as conn:
            rows = conn.execute(
                select(
                    runs.c.id, runs.c.host, runs.c.pid, runs.c.owner_token,
                    runs.c.heartbeat_at, runs.c.heartbeat_interval, runs.c.sessions,
                ).where(runs.c.outcome == "running")
            ).all()
        for r in rows:
            if r.host == host:
                if process_alive(r.pid, r.owner_token):
                    continue
                why = f"process {r.pid} on {r.host} is gone"
            elif now - r.heartbeat_at > STALE_FACTOR * r.heartbeat_interval:
                why = f"no heartbeat from {r.host} (pid {r.pid}) for {now - r.heartbeat_at:.0f} s"
            else:
                continue
            if self._mark_one(r, why):
                marked.append(r.id)
        return marked

    def _mark_one(self, r: Any, why: str) -> bool:
        with self.engine.begin() as conn:
            # the end time: the last sign of life, the heartbeat or anything recorded after it
            # (a step's start or end, a sample, an instrument exchange, a log line: the bench
            # was active until then, and no record may come after the run's end)
            ended = _last_sign(conn, r.id, r.heartbeat_at)
            res = conn.execute(
                update(runs)
                .where(runs.c.id == r.id, runs.c.outcome == "running", runs.c.pid == r.pid,
                       runs.c.host == r.host, runs.c.heartbeat_at == r.heartbeat_at)
                .values(outcome="interrupted", ended_at=ended,
                        message=f"interrupted: {why}; its last sign of life kept as end time")
            )
            if res.rowcount != 1:
                return False  # it heartbeated or ended meanwhile
            conn.execute(
                update(run_sessions)
                .where(run_sessions.c.run_id == r.id, run_sessions.c.outcome.is_(None))
                .values(outcome="interrupted", ended_at=ended)
            )
            conn.execute(
                update(steps)
                .where(steps.c.run_id == r.id, steps.c.outcome.is_(None))
                .values(outcome=INTERRUPTED_STEP, message="cut off: the run was interrupted")
            )
        return True

    def close_synced(self, run_ids: Iterable[str]) -> None:
        """After ``labctl sync`` pushed every spooled record of ``run_ids``: a step of a session
        that is over (the run interrupted, ended, or resumed since) is running no longer
        (``INTERRUPTED``); an interrupted run ends no earlier than its last record (it had been
        closed at the last sign of life it had in the database before the sync); a run that
        passed but ended ``error`` because its results were spooled is ``passed``."""
        with self.engine.begin() as conn:
            for run_id in run_ids:
                row = conn.execute(select(runs.c.outcome, runs.c.sessions, runs.c.ended_at, runs.c.message)
                                   .where(runs.c.id == run_id)).first()
                if row is None:
                    continue
                over = [steps.c.run_id == run_id, steps.c.outcome.is_(None)]
                if row.outcome == "running":  # only its live session's steps may still run
                    over.append(steps.c.session < row.sessions - 1)
                conn.execute(update(steps).where(*over)
                             .values(outcome=INTERRUPTED_STEP, message="cut off: the run was interrupted"))
                message = row.message or ""
                if row.outcome == "error" and NOT_IN_DATABASE in message:
                    # it passed on the bench; its results are in the database now
                    conn.execute(update(runs).where(runs.c.id == run_id, runs.c.outcome == "error").values(
                        outcome="passed", message=message.split(NOT_IN_DATABASE)[0]
                        + "; results spooled during a database outage, synced later"))
                    conn.execute(update(run_sessions).where(run_sessions.c.run_id == run_id,
                                                            run_sessions.c.session == row.sessions - 1,
                                                            run_sessions.c.outcome == "error")
                                 .values(outcome="passed"))
                if row.outcome != "interrupted":
                    continue
                ended = _last_sign(conn, run_id, row.ended_at)
                if ended is not None and (row.ended_at is None or ended > row.ended_at):
                    conn.execute(update(runs).where(runs.c.id == run_id, runs.c.outcome == "interrupted")
                                 .values(ended_at=ended))
                    conn.execute(update(run_sessions)
                                 .where(run_sessions.c.run_id == run_id, run_sessions.c.session == row.sessions - 1,
                                        run_sessions.c.outcome == "interrupted")
                                 .values(ended_at=ended))

    def touch_heartbeat(self, run_id: str, pid: int, session: int | None = None, now: float | None = None) -> bool:
        """Refresh the heartbeat of a run this process owns (False if another process owns it now).

        A run of ours that another host marked ``interrupted`` (our heartbeats did not reach
        the database for a while) is taken back: it is alive, so it is ``running`` again.
        """
        now = self.now() if now is None else now
        mine = (runs.c.id == run_id, runs.c.pid == pid, runs.c.host == this_host())
        with self.engine.begin() as conn:
            res = conn.execute(update(runs).where(*mine, runs.c.outcome == "running").values(heartbeat_at=now))
            if res.rowcount == 1:
                return True
            res = conn.execute(
                update(runs).where(*mine, runs.c.outcome == "interrupted")
                .values(outcome="running", heartbeat_at=now, ended_at=None, message="")
            )
            if res.rowcount == 1 and session is not None:
                conn.execute(
                    update(run_sessions)
                    .where(run_sessions.c.run_id == run_id, run_sessions.c.session == session)
                    .values(outcome=None, ended_at=None)
                )
            return res.rowcount == 1

    def next_session(self, run_id: str) -> int:
        """0 for a new run, else one more than the sessions already recorded."""
        with self.read_engine.connect() as conn:
            n = conn.execute(
                select(func.max(run_sessions.c.session)).where(run_sessions.c.run_id == run_id)
            ).scalar()
        return 0 if n is None else n + 1

    def integrity_check(self) -> str:
        """``"ok"`` when the database file is sound (SQLite ``PRAGMA integrity_check``)."""
        with self.read_engine.connect() as conn:
            if self.dialect == "sqlite":
                rows = conn.exec_driver_sql("PRAGMA integrity_check").scalars().all()
                return "ok" if rows == ["ok"] else "; ".join(rows)
            conn.execute(select(func.count()).select_from(runs)).scalar()
            return "ok"

    # -- resume ---------------------------------------------------------------------------

    def rack_runs(self, run_id: str) -> list[str]:
        """The interrupted or aborted runs of the many-slot run that ``run_id`` belongs to: the
        slots' runs of its station whose latest session was the same process (host and pid)
        as ``run_id``'s, in slot order (``run_id`` included). Raises :class:`StoreError` for
        an unknown run."""
        latest = (select(run_sessions.c.run_id, func.max(run_sessions.c.session).label("session"))
                  .group_by(run_sessions.c.run_id).subquery())
        owner = (select(runs.c.id, runs.c.station, runs.c.slot, runs.c.outcome, run_sessions.c.host,
                        run_sessions.c.pid)
                 .join(latest, latest.c.run_id == runs.c.id)
                 .join(run_sessions, (run_sessions.c.run_id == runs.c.id)
                       & (run_sessions.c.session == latest.c.session)))
        with self.read_engine.connect() as conn:
            me = conn.execute(owner.where(runs.c.id == run_id)).first()
            if me is None:
                raise RunNotFound(f"no run {run_id!r} in {self.display_url}",
                                 hint="labctl runs lists the runs of this database")
            if me.slot is None:
                return [run_id]
            rows = conn.execute(owner.where(runs.c.station == me.station, runs.c.slot.is_not(None),
                                            run_sessions.c.host == me.host, run_sessions.c.pid == me.pid,
                                            runs.c.outcome.in_(("interrupted", "aborted")) | (runs.c.id == run_id)))
            found = [(r.slot, r.id) for r in rows]
        return [rid for _slot, rid in sorted(found, key=lambda x: (len(x[0]), x[0]))]

    def resume_info(self, run_id: str) -> ResumeInfo:
        """The plan, context and step progress of ``run_id``, for ``labctl resume``.

        ``finished`` maps every logical step (step key without ``#attempt``) whose latest
        attempt ended in an earlier session to its outcome; ``cut_off`` lists steps whose
        latest attempt started but never ended (re-run them with ``next_attempt``; their
        partial data stays with the old attempt and no measurement of theirs was committed).
        Replays (attempts tagged ``resume-replay``, see labctl.engine.replay) re-establish
        state only: they count for ``attempts`` but never change whether a step finished.
        Raises :class:`StoreError` for an unknown run.
        """
        from labctl.engine.replay import REPLAY_TAG

        with self.read_engine.connect() as conn:
            run = conn.execute(select(runs).where(runs.c.id == run_id)).first()
            if run is None:
                from labctl.store.spool import not_recorded_hint

                raise RunNotFound(f"no run {run_id!r} in {self.display_url}",
                                  hint=not_recorded_hint(run_id, "`labctl runs` lists the recorded runs"))
            rows = conn.execute(
                select(steps.c.step_key, steps.c.step_id, steps.c.step_group,
                       steps.c.corner_index, steps.c.attempt, steps.c.outcome, steps.c.tags, steps.c.session,
                       steps.c.message)
                .where(steps.c.run_id == run_id)
                .order_by(steps.c.session, steps.c.seq)
            ).all()
            n_sessions = conn.execute(
                select(func.max(run_sessions.c.session)).where(run_sessions.c.run_id == run_id)
            ).scalar()
        finished: dict[str, str] = {}
        finished_keys: set[str] = set()
        attempts: dict[str, int] = {}
        tries: dict[str, tuple[int, int]] = {}  # logical -> (session, attempts ended in it)
        open_steps: dict[str, Any] = {}
        for s in rows:
            logical, attempt = split_step_key(s.step_key)
            if not never_ran(s.outcome, s.message):  # (no try)
                attempts[logical] = max(attempts.get(logical, 0), attempt, s.attempt)
            if REPLAY_TAG in (s.tags or ()):
                continue
            if s.outcome in FINISHED_OUTCOMES:
                session, n = tries.get(logical, (s.session, 0))
                tries[logical] = (s.session, n + 1 if session == s.session else 1)
                finished[logical] = s.outcome
                finished_keys.add(s.step_key)
                open_steps.pop(logical, None)
            else:  # the latest attempt was cut off (e.g. a retry): the step did not finish
                open_steps[logical] = s
                finished.pop(logical, None)
        cut = tuple(
            CutOffStep(s.step_key, logical, s.step_id, s.step_group, s.corner_index,
                       attempts[logical], attempts[logical] + 1)
            for logical, s in open_steps.items()
        )
        resumable, reason = True, ""
        if run.outcome == "running":
            resumable, reason = False, f"run {run_id} is still running on {run.host} (pid {run.pid})"
        elif run.outcome == "passed":
            resumable, reason = False, f"run {run_id} already passed"
        return ResumeInfo(
            run_id=run.id, outcome=run.outcome, resumable=resumable, reason=reason,
            plan_name=run.plan_name, plan_version=run.plan_version, plan_path=run.plan_path,
            plan_hash=run.plan_hash, plan_text=run.plan_text,
            parameters=dict(run.parameters or {}), corners=list(run.corners or []),
            station=run.station, slot=run.slot, dut_serial=run.dut_serial, operator=run.operator,
            next_session=0 if n_sessions is None else n_sessions + 1,
            finished=finished, finished_step_keys=frozenset(finished_keys), cut_off=cut,
            attempts=attempts, tries={k: n for k, (_session, n) in tries.items()},
        )


def _reason(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    return str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__


def open_store(
    url_or_path: str | os.PathLike[str] | None = None,
    *,
    mark_interrupted: bool = True,
    sqlite_synchronous: str = "FULL",
    reading: bool = False,
    must_exist: bool = False,
) -> Store:
    """Open the results store (a SQLite file is created and migrated as needed; a PostgreSQL
    database must have been brought to this labctl's schema by ``labctl db upgrade``).

    ``url_or_path``: a SQLite file path or a URL; ``None`` means ``$LABCTL_DB`` or the default
    file (see :mod:`labctl.store.location`). Runs left ``running`` by a dead process are marked
    ``interrupted`` unless ``mark_interrupted`` is False.

    ``sqlite_synchronous``: ``FULL`` (default) fsyncs every commit, so a committed step survives
    a power cut; ``NORMAL`` survives any process crash (kill -9) but may lose the last commits
    on power loss, for a higher commit rate.

    ``reading``: the caller only reads (``labctl runs``, ``report``, ``stats``). A SQLite file
    this process may not write (the file or its folder read-only) is then opened read-only,
    without migration or marking; a caller that records gets :class:`StoreReadOnly` for it.
    With ``reading`` or ``must_exist`` (``labctl stations``, ``queue list|show|cancel``: they
    look at what is there) a SQLite file named explicitly that is not there is an error, never
    a new empty database (only the default file is made on first use).
    """
    return Store(resolve_db(url_or_path), mark_interrupted=mark_interrupted,
                 sqlite_synchronous=sqlite_synchronous, reading=reading, must_exist=must_exist)


def _last_sign(conn: Any, run_id: str, known: float | None) -> float | None:
    """A run's last sign of life: ``known`` (its heartbeat, or the end it was given) or anything
    recorded after it (a step's start or end, a sample, an instrument exchange, a log line: the
    bench was active until then, and no record may come after the run's end). One query."""
    last = [select(func.max(func.coalesce(steps.c.ended_at, steps.c.started_at))).where(steps.c.run_id == run_id)
            .scalar_subquery()]
    last += [select(func.max(t.c.t)).where(t.c.run_id == run_id).scalar_subquery() for t in (samples, io_log, logs)]
    signs = [known, *conn.execute(select(*last)).one()]
    return max((t for t in signs if t is not None), default=None)

