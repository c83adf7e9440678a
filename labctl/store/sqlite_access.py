"""A SQLite results file this process may not write: refused to writers in one line, opened
read-only for readers (``labctl runs``, ``report``, ``stats``).

SQLite writes beside its file (the WAL journal and its index, ``results.db-wal`` and
``-shm``), so writing needs the folder writable as well as the file. Read-only, a WAL file
in a folder without its ``-shm`` cannot be opened with ``mode=ro``; when no journal is left
beside it (every write was checkpointed into the file) it is opened ``immutable``, which
reads the file alone.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine

from labctl.errors import StoreError, StoreReadOnly


def unwritable_reason(path: str) -> str | None:
    """Why this process cannot write the SQLite file ``path`` (or create it), or None. A folder
    that does not exist yet is not judged here (the default location's is created)."""
    file, folder = Path(path), Path(path).parent
    if not folder.is_dir():
        return None
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"its folder {folder} is not writable (SQLite keeps its journal beside the file)"
    if file.exists() and not os.access(file, os.W_OK):
        return "the file is read-only"
    return None


def refuse_writing(path: str, why: str) -> StoreReadOnly:
    reading = f"; reading it works: labctl runs --db {path}" if Path(path).is_file() else ""
    return StoreReadOnly(
        f"cannot record results in {path}: {why}",
        hint=f"give --db (or $LABCTL_DB) a file in a folder you may write to, or make it writable "
             f"(chmod u+w, or ask its owner){reading}",
    )


def missing_sqlite_file(url: str) -> str | None:
    """The path of the SQLite file ``url`` names when it is not there (None for a file that
    is, an in-memory database or another kind of database)."""
    from sqlalchemy.engine import make_url

    if not url.startswith("sqlite"):
        return None
    path = make_url(url).database
    return path if path and path != ":memory:" and not Path(path).exists() else None


def no_such_database(path: str) -> StoreError:
    """The refusal to read a results file that is not there (a typo must not read as an empty
    store: nothing is created)."""
    from labctl.store.location import default_db_path

    return StoreError(f"cannot read the results database {path}: there is no such file",
                      hint="`ls` the folder, or give --db the file that `labctl run` wrote "
                           f"(without --db and $LABCTL_DB: {default_db_path()})")


def read_only_engine(path: str) -> Engine:
    """An engine that reads ``path`` and can write nothing (every connection ``BEGIN``s)."""
    if not Path(path).is_file():
        raise no_such_database(path)
    uri = Path(path).resolve().as_uri()
    mode = f"{uri}?mode=ro"
    try:
        sqlite3.connect(mode, uri=True).execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        journal = Path(f"{path}-wal")
        if journal.exists() and journal.stat().st_size > 0:
            raise StoreError(
                f"cannot read the results database {path}: its journal {journal} holds results not yet in the "
                "file, and this process may not write the folder to read them",
                hint="open it once as a user who may write the folder (any labctl runs --db), or copy the folder "
                     "somewhere writable and read the copy") from None
        mode = f"{uri}?immutable=1"

    def connect() -> Any:
        return sqlite3.connect(mode, uri=True, timeout=30, check_same_thread=False)

    engine = create_engine("sqlite://", creator=connect)

    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # SQLAlchemy's begin event issues BEGIN itself
        dbapi_conn.execute("PRAGMA busy_timeout = 30000")

    event.listen(engine, "connect", on_connect)
    event.listen(engine, "begin", lambda conn: conn.exec_driver_sql("BEGIN"))
    return engine
