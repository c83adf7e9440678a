"""Waking idle agents: PostgreSQL ``LISTEN labctl_jobs`` / ``NOTIFY labctl_jobs``.

``labctl queue submit`` (and a job given back to the queue) notifies the channel in its own
transaction; every listening agent wakes and tries to claim (the claim itself decides who
gets the job). Agents poll anyway, so a lost notification (a reconnect) only delays a job by
one poll interval. SQLite has no notifications: agents poll.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection

CHANNEL = "labctl_jobs"


def notify(conn: Connection) -> None:
    """Announce new work (delivered when ``conn``'s transaction commits)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text(f"NOTIFY {CHANNEL}"))


class Waker:
    """A background thread holding one LISTEN connection; sets ``event`` on every notification.
    Reconnects (quietly) when the connection drops."""

    def __init__(self, db: str, event: threading.Event, retry: float = 5.0) -> None:
        from labctl.store.location import resolve_db

        self.url = resolve_db(db)
        self.event = event
        self.retry = retry
        self._stop = threading.Event()
        self._conn: Any = None
        self._thread: threading.Thread | None = None
        if self.url.startswith("postgresql"):
            self._thread = threading.Thread(target=self._listen, name="labctl-agent-listen", daemon=True)
            self._thread.start()

    def _conninfo(self) -> str:
        from sqlalchemy.engine import make_url

        return make_url(self.url).set(drivername="postgresql").render_as_string(hide_password=False)

    def _listen(self) -> None:
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(self._conninfo(), autocommit=True, connect_timeout=10,
                                     application_name="labctl agent (listen)") as conn:
                    self._conn = conn
                    conn.execute(f"LISTEN {CHANNEL}")
                    while not self._stop.is_set():
                        for _ in conn.notifies(timeout=1.0):
                            self.event.set()
            except Exception:  # noqa: BLE001 - the database is down: try again later, poll meanwhile
                self._conn = None
                self._stop.wait(self.retry)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=3)
        with contextlib.suppress(Exception):
            if self._conn is not None:
                self._conn.close()
