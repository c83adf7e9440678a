"""Turn batches of events into rows, in one transaction per batch, idempotently.

A :class:`Batch` is what the recorder commits at one durability point (a step end, a sample
flush, the run start). Every row has a natural key (run, session, event sequence number),
inserts use ``ON CONFLICT DO NOTHING`` and updates set absolute values, so writing the same
batch twice (a retry, a replayed spool journal) changes nothing. On PostgreSQL the bulk rows
(steps, measurements, samples, instrument I/O) go by ``COPY``; a batch one of whose rows is there
already is rolled back and written again with those inserts.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

from sqlalchemy import Table, select, update
from sqlalchemy.engine import Connection

from labctl.engine import events as ev
from labctl.store.owner import process_token, this_host
from labctl.store.schema import (
    attachments,
    instrument_errors,
    instruments,
    io_log,
    logs,
    measurements,
    progress,
    prompts,
    run_sessions,
    runs,
    samples,
    steps,
)
from labctl.store.store import Store, split_step_key

ATTACHMENT_MAX_BYTES = 32 * 1024 * 1024  # larger files are recorded by path and hash only
# Bulk rows go straight to the driver's executemany (SQLAlchemy's per-row processing would
# halve the write rate). Column order matches the tuples built below.
_LIMIT_COLUMNS = ("low", "high", "nominal", "marginal_low", "marginal_high", "limit_equals", "limit_regex",
                  "limit_text")
_LABEL_COLUMNS = ("lane", "rail", "channel", "sensor", "labels")
_MEASUREMENT_COLUMNS = (
    "step_ref", "run_id", "seq", "name", "value", "value_text", "unit", *_LIMIT_COLUMNS, "verdict",
    *_LABEL_COLUMNS, "t",
)
_VALUE_NUM, _VALUE_TEXT, _VALUE_BOTH, _VALUE_NONE = ("value",), ("value_text",), ("value", "value_text"), ()
_SAMPLE_COLUMNS = ("step_ref", "run_id", "seq", "series", "value", "unit", "t")
_IO_COLUMNS = ("run_id", "session", "seq", "step_key", "t", "instrument", "resource", "kind", "text", "elapsed_s")


#: a step row's columns as it starts, and those its end adds (the statements below and COPY)
_STEP_START = ("run_id, session, seq, step_key, step_id, step_group, check_name, corner, corner_index, attempt,"
               " tags, started_at")
_STEP_END = "outcome, message, ended_at, duration, duration_sim"


def _step_sql(mark: str) -> dict[str, str]:
    """The per-step statements, as plain SQL (they run for every step of every run)."""
    return {
        "step_insert": (
            f"INSERT INTO steps ({_STEP_START}, message) VALUES"
            f" ({', '.join([mark] * 12)}, '') ON CONFLICT DO NOTHING RETURNING id"
        ),
        "step_insert_many": (
            f"INSERT INTO steps ({_STEP_START}, message) VALUES"
            f" ({', '.join([mark] * 12)}, '') ON CONFLICT DO NOTHING"
        ),
        "step_insert_ended": (
            f"INSERT INTO steps ({_STEP_START}, {_STEP_END}) VALUES"
            f" ({', '.join([mark] * 17)}) ON CONFLICT DO NOTHING"
        ),
        "step_ids": f"SELECT step_key, id, ended_at FROM steps WHERE run_id = {mark} AND session = {mark}"
                    " AND step_key IN ",
        "step_id": f"SELECT id FROM steps WHERE run_id = {mark} AND session = {mark} AND step_key = {mark}",
        "step_end": f"UPDATE steps SET outcome = {mark}, message = {mark}, ended_at = {mark}, duration = {mark},"
                    f" duration_sim = {mark} WHERE id = {mark}",
    }


def _bulk_sql(table: str, columns: tuple[str, ...], dialect: str) -> str:
    mark = "?" if dialect == "sqlite" else "%s"
    return (f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join([mark] * len(columns))})"
            " ON CONFLICT DO NOTHING")


def _unique_violation(exc: BaseException) -> bool:
    """A row of the batch is there already (PostgreSQL's SQLSTATE 23505, raised by psycopg or
    wrapped by SQLAlchemy)."""
    return any(getattr(err, "sqlstate", None) == "23505" for err in (exc, getattr(exc, "orig", None)))


def _dialect_module(dialect: str) -> Any:
    """SQLAlchemy's module for the store's dialect (its ``insert`` has ``on_conflict_…``); only
    that one is imported: the PostgreSQL dialect costs a SQLite run ~50 ms of start-up."""
    if dialect == "sqlite":
        from sqlalchemy.dialects import sqlite

        return sqlite
    from sqlalchemy.dialects import postgresql

    return postgresql


@dataclass
class Batch:
    run_id: str
    session: int
    items: list[tuple[int, ev.Event]] = field(default_factory=list)
    io_records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


def _plain(value: Any) -> Any:
    """JSON-safe copy (paths, quantities and other objects become strings)."""
    return json.loads(json.dumps(value, default=str)) if value is not None else None


class DbSink:
    """Writes batches into a :class:`Store`. Keeps a cache of the row ids of steps not ended yet."""

    def __init__(self, store: Store, *, heartbeat_interval: float) -> None:
        self.store = store
        self.heartbeat_interval = heartbeat_interval
        self._steps: dict[tuple[str, int, str], int] = {}
        # SQLite: a measurement row leaves its NULL columns out (see _measurement); PostgreSQL's
        # COPY takes every column
        self._sparse = store.dialect == "sqlite"
        self._label_cols: dict[tuple[tuple[str, Any], ...], tuple[tuple[str, ...], tuple[Any, ...]]] = {}
        self._limit_cols: dict[int, tuple[ev.Limits, tuple[str, ...], tuple[Any, ...]]] = {}  # this batch's
        self._measurement_sql: dict[tuple[tuple[str, ...], ...], str] = {}
        self._no_limits = self._present(_LIMIT_COLUMNS, (None,) * len(_LIMIT_COLUMNS))
        self._bulk = {
            "measurements": _bulk_sql("measurements", _MEASUREMENT_COLUMNS, store.dialect),
            "samples": _bulk_sql("samples", _SAMPLE_COLUMNS, store.dialect),
            "io_log": _bulk_sql("io_log", _IO_COLUMNS, store.dialect),
        }
        self._sql = _step_sql("?" if store.dialect == "sqlite" else "%s")
        self._copy_sql = {} if store.dialect != "postgresql" else {
            name: f"COPY {table} ({columns}) FROM STDIN" for name, table, columns in (
                ("measurements", "measurements", ", ".join(_MEASUREMENT_COLUMNS)),
                ("samples", "samples", ", ".join(_SAMPLE_COLUMNS)), ("io_log", "io_log", ", ".join(_IO_COLUMNS)),
                ("steps_open", "steps", f"{_STEP_START}, message"),
                ("steps_whole", "steps", f"{_STEP_START}, {_STEP_END}"))}
        mod = _dialect_module(store.dialect)
        self._progress_insert = mod.insert(progress)
        self._insert_stmts = {t.name: mod.insert(t).on_conflict_do_nothing() for t in (
            runs, run_sessions, instruments, steps, measurements, samples, logs, prompts,
            instrument_errors, attachments, io_log)}

    def _ins(self, table: Table) -> Any:
        return self._insert_stmts[table.name]

    def write(self, batch: Batch) -> None:
        if self._copy_sql:  # PostgreSQL: bulk rows by COPY, unless the batch was written before
            try:
                with self.store.engine.begin() as conn:
                    self._write(conn, batch, copy=True)
                return
            except Exception as exc:
                if not _unique_violation(exc):
                    raise
                for _seq, e in batch.items:  # step ids read in the rolled-back transaction are gone
                    step_key = getattr(e, "step_key", None)
                    if step_key is not None:
                        self._steps.pop((batch.run_id, batch.session, step_key), None)
        with self.store.engine.begin() as conn:  # row by row, skipping rows already there
            self._write(conn, batch)

    def write_progress(self, e: ev.Progress) -> None:
        """The run's latest progress line replaces the one before (one row per run)."""
        values = {"run_id": e.run_id, "step_key": e.step_key, "text": e.text, "fraction": e.fraction, "t": e.time}
        stmt = self._progress_insert.values(**values)
        stmt = stmt.on_conflict_do_update(index_elements=["run_id"],
                                          set_={k: v for k, v in values.items() if k != "run_id"})
        with self.store.engine.begin() as conn:
            conn.execute(stmt)

    # -- the three phases: parents, children (bulk), updates ------------------------------

    def _write(self, conn: Connection, b: Batch, *, copy: bool = False) -> None:
        children: dict[str, list[Any]] = defaultdict(list)
        later: list[tuple[int, ev.Event]] = []  # answers and the run's end, after the step ends
        # one pass sorts the batch (a group commit holds thousands of events): step starts,
        # step ends, the run start, everything else in order
        starts: list[tuple[int, ev.StepStarted]] = []
        step_ends: list[ev.StepEnded] = []
        ends: dict[str, ev.StepEnded] = {}  # the first end of each step key
        others: list[tuple[int, ev.Event]] = []
        run_started: list[ev.RunStarted] = []
        self._limit_cols.clear()  # (keyed by the id of a Limits the batch holds)
        shaped: list[tuple[tuple[tuple[str, ...], ...], tuple[Any, ...]]] = []  # measurements
        for item in b.items:
            cls = item[1].__class__
            if cls is ev.StepStarted:
                starts.append(item)  # type: ignore[arg-type]
            elif cls is ev.StepEnded:
                step_ends.append(item[1])  # type: ignore[arg-type]
                ends.setdefault(item[1].step_key, item[1])  # type: ignore[attr-defined]
            elif cls is ev.RunStarted:
                run_started.append(item[1])  # type: ignore[arg-type]
            else:
                others.append(item)
        for e in run_started:  # the run row before its steps (a spooled batch may carry both)
            self._run_started(conn, b, e)
        ended: dict[str, float] = {}  # step rows written whole (their end in the same batch): key -> ended_at
        if len(starts) > 1:  # a group commit: every step row in one statement
            ended = self._steps_started(conn, b, starts, ends, copy=copy)
        else:
            for seq, e in starts:
                self._step_started(conn, b, seq, e)
        ref_key, ref = None, 0  # the step row of the measurements before (a step's come together)
        for seq, e in others:
            match e:  # measurements first: by far the most frequent
                case ev.MeasurementRecorded():
                    if e.step_key != ref_key:
                        ref_key, ref = e.step_key, self._step_ref(conn, b, e.step_key, e.time)
                    shaped.append(self._measurement(ref, b.run_id, seq, e))
                case ev.SampleRecorded():
                    children["samples"].append((self._step_ref(conn, b, e.step_key, e.time), b.run_id,
                                                seq, e.series, e.value, e.unit, e.time))
                case ev.LogMessage():
                    children["logs"].append(self._child(b, seq, e, level=e.level, message=e.message))
                case ev.PromptAsked():
                    children["prompts"].append(self._child(
                        b, seq, e, prompt_id=e.prompt_id, text=e.text, choices=list(e.choices),
                        answer=None, answer_source=None, answered_at=None))
                case ev.InstrumentErrorReported():
                    children["instrument_errors"].append(self._child(
                        b, seq, e, role=e.role, code=e.code, message=e.message))
                case ev.AttachmentAdded():
                    children["attachments"].append(self._attachment(b, seq, e))
                case ev.PromptAnswered() | ev.RunEnded():
                    later.append((seq, e))
                case _:
                    pass  # Progress goes its own way (Recorder: latest line per run, throttled)
        if b.io_records:
            run_id, session = b.run_id, b.session
            children["io_log"] = [
                (run_id, session, seq, rec.get("step_key"), float(rec.get("t", 0.0)), str(rec.get("instrument", "")),
                 str(rec.get("resource", "")), str(rec.get("kind", "")), str(rec.get("text", "")),
                 rec.get("elapsed_s"))
                for seq, rec in b.io_records]
        if shaped:
            if self._sparse:
                self._insert_measurements(conn, shaped)
            else:
                children["measurements"] = [row for _shape, row in shaped]
        tables = {t.name: t for t in (measurements, samples, logs, prompts, instrument_errors, attachments, io_log)}
        for name, table_rows in children.items():
            if copy and name in self._copy_sql:
                self._copy(conn, name, table_rows)
            elif name in self._bulk:
                conn.exec_driver_sql(self._bulk[name], table_rows)
            else:
                conn.execute(self._ins(tables[name]), table_rows)
        end_rows = [(e.outcome.value, e.message, e.time, e.duration, e.duration_sim, self._step_ref(conn, b, e.step_key, e.time))
                    for e in step_ends if ended.get(e.step_key) != e.time]
        if end_rows:
            conn.exec_driver_sql(self._sql["step_end"], end_rows if len(end_rows) > 1 else end_rows[0])
        steps_cache = self._steps
        for e in step_ends:  # an ended step's row id is not needed again (else read back): a long run
            steps_cache.pop((b.run_id, b.session, e.step_key), None)  # keeps no entry a step
        for _seq, e in later:
            if isinstance(e, ev.PromptAnswered):
                conn.execute(
                    update(prompts)
                    .where(prompts.c.run_id == b.run_id, prompts.c.session == b.session,
                           prompts.c.prompt_id == e.prompt_id)
                    .values(answer=e.answer, answer_source=e.source, answered_at=e.time)
                )
            elif isinstance(e, ev.RunEnded):
                self._run_ended(conn, b, e)

    def _copy(self, conn: Connection, name: str, rows: list[tuple[Any, ...]]) -> None:
        """``COPY … FROM STDIN`` of bulk rows, in the batch's transaction: about a fifth of the
        client's CPU and a third of the time of one ``INSERT`` a row. A row that is there
        already fails the batch (:meth:`write` then writes it row by row, skipping those)."""
        if not rows:
            return
        with conn.connection.driver_connection.cursor() as cur, cur.copy(self._copy_sql[name]) as out:
            for row in rows:
                out.write_row(row)

    def _child(self, b: Batch, seq: int, e: ev.Event, **values: Any) -> dict[str, Any]:
        return {"run_id": b.run_id, "session": b.session, "seq": seq,
                "step_key": getattr(e, "step_key", None), "t": e.time, **values}

    # -- runs -----------------------------------------------------------------------------

    def _run_started(self, conn: Connection, b: Batch, e: ev.RunStarted) -> None:
        have_session = conn.execute(
            select(run_sessions.c.session)
            .where(run_sessions.c.run_id == b.run_id, run_sessions.c.session == b.session)
        ).first()
        if have_session is not None:
            return  # replayed: already recorded
        existing = conn.execute(select(runs.c.plan_hash, runs.c.sessions).where(runs.c.id == b.run_id)).first()
        owner = {
            "host": e.host, "pid": e.pid, "heartbeat_at": self.store.now(),  # the database's clock, not the run's
            "owner_token": process_token(e.pid) if e.host == this_host() else "",
            "heartbeat_interval": self.heartbeat_interval, "labctl_version": e.labctl_version,
        }
        if existing is None:
            conn.execute(self._ins(runs), [{
                "id": b.run_id, "plan_name": e.plan_name, "plan_version": e.plan_version,
                "plan_hash": e.plan_hash, "plan_path": e.plan_path, "plan_text": e.plan_text,
                "station": e.station, "slot": e.slot, "dut_serial": e.dut_serial,
                "operator": e.operator, "parameters": _plain(e.parameters), "corners": _plain(e.corners),
                "started_at": e.time, "ended_at": None, "outcome": "running", "message": "",
                "resumed_from": e.resumed_from if e.resumed_from != b.run_id else None,
                "sessions": b.session + 1, "rerun_of": e.rerun_of, **owner,
            }])
            changed = False
        else:
            changed = existing.plan_hash != e.plan_hash
            conn.execute(
                update(runs).where(runs.c.id == b.run_id)
                .values(outcome="running", ended_at=None, message="",
                        sessions=max(existing.sessions, b.session + 1), **owner)
            )
        conn.execute(self._ins(run_sessions), [{
            "run_id": b.run_id, "session": b.session, "started_at": e.time, "ended_at": None,
            "outcome": None, "host": e.host, "pid": e.pid, "labctl_version": e.labctl_version,
            "plan_hash": e.plan_hash, "plan_changed": changed, "plan_text": e.plan_text if changed else None,
        }])
        if e.instruments:
            conn.execute(self._ins(instruments), [{
                "run_id": b.run_id, "session": b.session, "role": i.role, "driver": i.driver,
                "resource": i.resource, "idn": i.idn, "asset_serial": i.asset_serial,
                "calibration_due": i.calibration_due,
            } for i in e.instruments])

    def _run_ended(self, conn: Connection, b: Batch, e: ev.RunEnded) -> None:
        conn.execute(
            update(run_sessions)
            .where(run_sessions.c.run_id == b.run_id, run_sessions.c.session == b.session)
            .values(outcome=e.outcome.value, ended_at=e.time)
        )
        # Only the latest session decides the run's outcome (a late sync of an old one must not).
        conn.execute(
            update(runs).where(runs.c.id == b.run_id, runs.c.sessions == b.session + 1)
            .values(outcome=e.outcome.value, ended_at=e.time, message=e.message)
        )

    # -- steps ----------------------------------------------------------------------------

    def _step_started(self, conn: Connection, b: Batch, seq: int, e: ev.StepStarted) -> None:
        corner = json.dumps(e.corner, default=str) if e.corner else None
        tags = json.dumps(list(e.tags)) if e.tags else None
        ref = conn.exec_driver_sql(self._sql["step_insert"], (
            b.run_id, b.session, seq, e.step_key, e.step_id, e.group, e.check, corner, e.corner_index,
            e.attempt, tags, e.time)).scalar()
        key = (b.run_id, b.session, e.step_key)
        if ref is None:  # already there (a replayed batch)
            self._steps.pop(key, None)
        else:
            self._steps[key] = ref

    def _steps_started(self, conn: Connection, b: Batch, starts: list[tuple[int, ev.StepStarted]],
                       ends: dict[str, ev.StepEnded], *, copy: bool = False) -> dict[str, float]:
        """Many step rows at once (one ``executemany``), then their ids in one query per 500.

        A step whose end is in the same batch (a group commit) is inserted whole, its outcome
        with it. Returns those that are in the table whole now: step key -> ``ended_at``. A
        row that was there already (a replayed batch) is not among them unless it holds
        this very end, so the caller still sets its end. ``ends``: the first end of each step
        key in the batch (a later end of the same key is an update, as always)."""
        open_rows: list[tuple[Any, ...]] = []
        whole_rows: list[tuple[Any, ...]] = []
        for seq, e in starts:
            row = (b.run_id, b.session, seq, e.step_key, e.step_id, e.group, e.check,
                   json.dumps(e.corner, default=str) if e.corner else None, e.corner_index, e.attempt,
                   json.dumps(list(e.tags)) if e.tags else None, e.time)
            end = ends.get(e.step_key)
            if end is None:
                open_rows.append(row)
            else:
                whole_rows.append((*row, end.outcome.value, end.message, end.time, end.duration, end.duration_sim))
        if copy:  # (no row can be there already: the batch would fail and be written again)
            self._copy(conn, "steps_open", [(*row, "") for row in open_rows])
            self._copy(conn, "steps_whole", whole_rows)
        else:
            if open_rows:
                conn.exec_driver_sql(self._sql["step_insert_many"], open_rows)
            if whole_rows:
                conn.exec_driver_sql(self._sql["step_insert_ended"], whole_rows)
        mark = "?" if self.store.dialect == "sqlite" else "%s"
        keys = [e.step_key for _seq, e in starts]
        whole: dict[str, float] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            sql = self._sql["step_ids"] + f"({', '.join([mark] * len(chunk))})"
            for key, ref, ended_at in conn.exec_driver_sql(sql, (b.run_id, b.session, *chunk)).fetchall():
                self._steps[(b.run_id, b.session, key)] = ref
                if ended_at is not None:
                    whole[key] = ended_at
        return whole

    def _step_ref(self, conn: Connection, b: Batch, step_key: str, t: float) -> int:
        key = (b.run_id, b.session, step_key)
        ref = self._steps.get(key)
        if ref is None:
            ref = conn.exec_driver_sql(self._sql["step_id"], key).scalar()
            if ref is None:  # data for a step that never announced itself: keep it anyway
                logical, attempt = split_step_key(step_key)
                group, _, step_id = logical.partition("/")
                self._step_started(conn, b, -1, ev.StepStarted(
                    run_id=b.run_id, time=t, step_key=step_key, step_id=step_id or logical,
                    group=group if step_id else "steps", check="", attempt=attempt))
                ref = conn.exec_driver_sql(self._sql["step_id"], key).scalar()
            self._steps[key] = ref
        return ref

    def _measurement(self, ref: int, run_id: str, seq: int,
                     e: ev.MeasurementRecorded) -> tuple[tuple[tuple[str, ...], ...], tuple[Any, ...]]:
        """A measurement's row (``ref``: its step's row id) and its shape (the columns its
        value, limits and labels fill).

        On SQLite the NULL columns are left out of both: Python's sqlite3 module binds a number
        or a text at once, but calls an adapter for each ``None``
        (:func:`labctl.store.store._bind_none_directly`), and a row with limits ``low``/``high``
        and one label holds nine (``bench/store_step.py`` times such a row in SQLite both ways)."""
        v = e.value
        if isinstance(v, bool):
            num, txt = float(v), "true" if v else "false"
        elif isinstance(v, int | float):
            num = float(v)
            txt = None if math.isfinite(num) else repr(num)
            num = num if txt is None else None
        elif v is None:
            num, txt = None, None
        else:
            num, txt = None, str(v)
        if not self._sparse:
            vcols, vals = _VALUE_BOTH, (num, txt)
        elif txt is None:
            vcols, vals = (_VALUE_NUM, (num,)) if num is not None else (_VALUE_NONE, ())
        else:
            vcols, vals = (_VALUE_TEXT, (txt,)) if num is None else (_VALUE_BOTH, (num, txt))
        lim = e.limits
        if lim is None:
            lcols, lvals = self._no_limits
        else:
            cached = self._limit_cols.get(id(lim))
            if cached is None:
                equals = json.dumps(lim.equals, default=str) if lim.equals is not None else None
                cached = self._limit_cols[id(lim)] = (lim, *self._present(_LIMIT_COLUMNS, (
                    lim.low, lim.high, lim.nominal, lim.marginal_low, lim.marginal_high, equals, lim.regex,
                    lim.text)))
            _lim, lcols, lvals = cached
        labels = e.labels
        key = tuple(labels.items()) if labels else ()
        lab = self._label_cols.get(key)
        if lab is None:
            lab = self._label_cols[key] = self._present(_LABEL_COLUMNS, (
                labels.get("lane"), labels.get("rail"), labels.get("channel"), labels.get("sensor"),
                json.dumps(labels)) if labels else (None,) * len(_LABEL_COLUMNS))
        return (vcols, lcols, lab[0]), (ref, run_id, seq, e.name, *vals, e.unit, *lvals, e.verdict.value, *lab[1], e.time)

    def _present(self, columns: tuple[str, ...], values: tuple[Any, ...]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
        """The columns and values to insert: all of them, or on SQLite those not NULL."""
        if not self._sparse:
            return columns, values
        kept = [(c, v) for c, v in zip(columns, values, strict=True) if v is not None]
        return tuple(c for c, _ in kept), tuple(v for _, v in kept)

    def _insert_measurements(self, conn: Connection, shaped: list[tuple[tuple[tuple[str, ...], ...], tuple[Any, ...]]]) -> None:
        """SQLite: one ``executemany`` for each run of rows of one shape, in order (the
        measurements of a step usually share one)."""
        for shape, group in groupby(shaped, key=itemgetter(0)):
            sql = self._measurement_sql.get(shape)
            if sql is None:
                vcols, lcols, labcols = shape
                sql = self._measurement_sql[shape] = _bulk_sql("measurements", (
                    "step_ref", "run_id", "seq", "name", *vcols, "unit", *lcols, "verdict", *labcols, "t"), "sqlite")
            conn.exec_driver_sql(sql, [row for _shape, row in group])

    def _attachment(self, b: Batch, seq: int, e: ev.AttachmentAdded) -> dict[str, Any]:
        size = digest = content = None
        path = Path(e.path)
        try:
            size = path.stat().st_size
            data = path.read_bytes() if size <= ATTACHMENT_MAX_BYTES else None
            if data is not None:
                digest, content = hashlib.sha256(data).hexdigest(), data
        except OSError:
            pass  # the file is gone: keep the record of it
        return self._child(b, seq, e, name=e.name, media_type=e.media_type, path=e.path,
                           size=size, sha256=digest, content=content)
