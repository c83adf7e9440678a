"""The local spool journal: results kept on this machine while the central database is down.

When the recorder cannot write to its database it appends each batch of events (exactly
what it would have committed there) to a small SQLite file, durably. ``labctl sync`` replays
the batches, in order, into the database they were meant for, then deletes them. Writes
are idempotent, so a sync interrupted half-way can simply be run again.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labctl.errors import StoreError
from labctl.store.codec import event_from_json, event_to_json
from labctl.store.location import default_spool_path
from labctl.store.sink import Batch, DbSink

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    target TEXT NOT NULL,      -- the database URL the batch was meant for (no password)
    run_id TEXT NOT NULL,
    session INTEGER NOT NULL,
    batch TEXT NOT NULL,       -- entries of one batch are committed and replayed together
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,        -- 'event' or 'io'
    body TEXT NOT NULL,
    spooled_at REAL NOT NULL DEFAULT ((julianday('now') - 2440587.5) * 86400.0)
);
CREATE INDEX IF NOT EXISTS entries_target ON entries (target, id);
-- a batch is read and deleted by its id: without this, each scanned the whole journal
CREATE INDEX IF NOT EXISTS entries_batch ON entries (batch, id);
"""


@dataclass
class SyncReport:
    batches: int = 0
    events: int = 0
    runs: set[str] = field(default_factory=set)
    left: int = 0  # entries still in the journal (for other targets)


class Spool:
    """One spool journal file (default: ``$LABCTL_HOME/spool.db``)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_spool_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = FULL")
            self._conn.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the spool journal {self.path}: {exc}",
                             hint="give another file with --spool, or check the disk") from exc

    def close(self) -> None:
        self._conn.close()

    def append(self, target: str, batch: Batch) -> None:
        """Durably append one batch (a single transaction)."""
        batch_id = uuid.uuid4().hex
        rows: list[tuple[Any, ...]] = [
            (target, batch.run_id, batch.session, batch_id, seq, "event", event_to_json(e))
            for seq, e in batch.items
        ]
        rows += [
            (target, batch.run_id, batch.session, batch_id, seq, "io", json.dumps(rec, default=str))
            for seq, rec in batch.io_records
        ]
        with self._transaction():
            self._conn.executemany(
                "INSERT INTO entries (target, run_id, session, batch, seq, kind, body) VALUES (?,?,?,?,?,?,?)",
                rows,
            )

    def pending(self) -> list[tuple[str, str, int]]:
        """``(target, run_id, entries)`` waiting to be synced."""
        return [tuple(r) for r in self._conn.execute(
            "SELECT target, run_id, count(*) FROM entries GROUP BY target, run_id ORDER BY min(id)")]

    def targets(self) -> list[str]:
        return [r[0] for r in self._conn.execute("SELECT DISTINCT target FROM entries ORDER BY target")]

    def _batches(self, target: str | None) -> Iterator[tuple[str, Batch]]:
        """The batches meant for ``target`` (all when None) in the order they were spooled, one
        read at a time: a journal that grew through a long outage is never in memory whole."""
        where, args = (" WHERE target = ?", (target,)) if target is not None else ("", ())
        order = [b for (b,) in self._conn.execute(
            f"SELECT batch FROM entries{where} GROUP BY batch ORDER BY min(id)", args).fetchall()]
        for batch_id in order:
            batch: Batch | None = None
            for run_id, session, seq, kind, body in self._conn.execute(
                    "SELECT run_id, session, seq, kind, body FROM entries WHERE batch = ? ORDER BY id",
                    (batch_id,)).fetchall():
                if batch is None:
                    batch = Batch(run_id, session)
                if kind == "io":
                    batch.io_records.append((seq, json.loads(body)))
                else:
                    batch.items.append((seq, event_from_json(body)))
            if batch is not None:  # (gone meanwhile: another sync replayed it)
                yield batch_id, batch

    def replay(self, sink: DbSink, target: str | None, *, call: Callable[..., Any] | None = None) -> SyncReport:
        """Write every batch meant for ``target`` (all batches when None) through ``sink``;
        ``call(sink.write, batch)`` when given (a :class:`~labctl.store.bounded.BoundedCaller`'s,
        so that a stalled database cannot hold the sync for ever)."""
        report = SyncReport()
        for batch_id, batch in self._batches(target):
            if call is None:
                sink.write(batch)
            else:
                call(sink.write, batch)
            with self._transaction():
                self._conn.execute("DELETE FROM entries WHERE batch = ?", (batch_id,))
            report.batches += 1
            report.events += len(batch.items) + len(batch.io_records)
            report.runs.add(batch.run_id)
        report.left = self._conn.execute("SELECT count(*) FROM entries").fetchone()[0]
        return report

    def _transaction(self) -> _Tx:
        return _Tx(self._conn)


class _Tx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")


def _pending_here() -> tuple[Path, list[tuple[str, str, int]]]:
    """This machine's spool journal and its :meth:`Spool.pending` entries (none when there is
    no journal: nothing was ever spooled here)."""
    path = default_spool_path()
    if not path.is_file():
        return path, []
    spool = Spool(path)
    try:
        return path, spool.pending()
    finally:
        spool.close()


def unsynced_records(run_id: str) -> tuple[str, int] | None:
    """(spool journal, records) of ``run_id`` (or of the one run whose id starts so) still
    waiting in this machine's spool, for any database, or None: a run whose results went
    there is not over in the database's eyes (it reads ``interrupted``, or is not there at all
    when it started during the outage), and resuming it before ``labctl sync`` would record a
    second session over an end the spool holds."""
    path, pending = _pending_here()
    counts: dict[str, int] = {}
    for _target, rid, count in pending:
        if rid.startswith(run_id):
            counts[rid] = counts.get(rid, 0) + count
    return (str(path), next(iter(counts.values()))) if len(counts) == 1 else None


def not_recorded_hint(run_id: str, default: str) -> str:
    """The hint for a run the database does not know: ``default``, or ``labctl sync`` when
    this machine's spool holds its records (the database failed while it started)."""
    waiting = unsynced_records(run_id)
    if waiting is None:
        return default
    return (f"{waiting[1]} record(s) of it wait in this machine's spool {waiting[0]} (the database failed "
            "during the run): push them with `labctl sync --all`, then look again")


def waiting_runs(target: str) -> int:
    """How many runs' records for the database ``target`` wait in this machine's spool."""
    return len({rid for t, rid, _n in _pending_here()[1] if t == target})
