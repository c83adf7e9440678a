"""A bound on the looking commands' PostgreSQL calls (``labctl runs``, ``report``, ``stats``,
``stations``, ``queue list|show|cancel``: the stores opened ``reading`` or ``must_exist``).

The server bounds every statement itself (``statement_timeout``, 30 s: see
:func:`labctl.store.store._postgres_engine`), and TCP keepalives catch a peer that stopped
acknowledging. A server, or a path to it, that accepts the query and then says nothing is
caught by neither: a reading command waited for it forever. This watch gives each statement
(and the pool's liveness ping) :func:`read_timeout` seconds: past that it shuts the
connection's socket down, so the call returns at once with an error, which is reported as one
line (:class:`~labctl.errors.StoreTimeout`). Ending the call loses nothing: these commands
write nothing, or one short transaction (reaping stale jobs, cancelling one) that the server
rolls back when its connection ends.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

from labctl.errors import StoreTimeout
from labctl.store.bounded import default_timeout

#: seconds; beyond the server's own 30 s statement limit, so that only a silent server trips it
DEFAULT_READ_TIMEOUT = 40.0
_POLL_S = 0.2


def read_timeout() -> float:
    """``$LABCTL_DB_READ_TIMEOUT`` (seconds, 0 < t < 3600) or :data:`DEFAULT_READ_TIMEOUT`."""
    return default_timeout("LABCTL_DB_READ_TIMEOUT", DEFAULT_READ_TIMEOUT)


def _socket_of(dbapi_connection: Any) -> int | None:
    """The file descriptor of a psycopg connection's socket (None for another driver)."""
    pgconn = getattr(getattr(dbapi_connection, "driver_connection", dbapi_connection), "pgconn", None)
    try:
        return int(pgconn.socket) if pgconn is not None else None
    except Exception:  # noqa: BLE001 - a closed connection has no socket
        return None


class ReadWatch:
    """Arms a deadline for each statement on ``engine`` and cuts the connection of one that
    overruns it. ``what``: the database as the user named it (for the message)."""

    def __init__(self, engine: Engine, what: str, timeout: float | None = None) -> None:
        self.timeout = read_timeout() if timeout is None else timeout
        self.what = what
        self._lock = threading.Lock()
        self._armed: dict[int, tuple[float, int]] = {}  # key -> (deadline, socket fd)
        self._cut: set[int] = set()  # the keys whose connection this watch shut down
        self._thread: threading.Thread | None = None
        event.listen(engine, "before_cursor_execute", self._before)
        event.listen(engine, "after_cursor_execute", self._after)
        event.listen(engine, "handle_error", self._error)
        ping = engine.dialect.do_ping
        engine.dialect.do_ping = lambda dbapi_connection: self._around(dbapi_connection, ping)  # type: ignore[method-assign]

    # -- arming --------------------------------------------------------------------------
    def _arm(self, key: int, dbapi_connection: Any) -> None:
        fd = _socket_of(dbapi_connection)
        if fd is None:
            return
        with self._lock:
            self._armed[key] = (time.monotonic() + self.timeout, fd)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="labctl-read-watch", daemon=True)
                self._thread.start()

    def _disarm(self, key: int) -> bool:
        """Disarm ``key``; True if the watch had cut its connection."""
        with self._lock:
            self._armed.pop(key, None)
            if key in self._cut:
                self._cut.discard(key)
                return True
            return False

    def _before(self, conn: Any, cursor: Any, *_args: Any) -> None:
        self._arm(id(cursor), conn.connection.dbapi_connection)

    def _after(self, conn: Any, cursor: Any, *_args: Any) -> None:
        self._disarm(id(cursor))

    def _error(self, context: Any) -> None:
        cursor = getattr(context.execution_context, "cursor", None)
        if cursor is not None and self._disarm(id(cursor)):
            raise self._stalled() from context.original_exception

    def _around(self, dbapi_connection: Any, ping: Any) -> Any:
        key = id(dbapi_connection)
        self._arm(key, dbapi_connection)
        try:
            result = ping(dbapi_connection)
        except Exception as exc:
            if self._disarm(key):
                raise self._stalled() from exc
            raise
        self._disarm(key)
        return result

    def _stalled(self) -> StoreTimeout:
        return StoreTimeout(
            f"the results database {self.what} did not answer within {self.timeout:g} s",
            hint="a stalled server or network path: check the server (and that it is not out of disk) "
                 "and try again; $LABCTL_DB_READ_TIMEOUT sets this bound")

    # -- the watch -----------------------------------------------------------------------
    def _watch(self) -> None:
        """Until nothing is armed (the next statement starts another watch): a long-lived
        process opening stores now and then (the TUI) keeps no thread per store."""
        while True:
            time.sleep(_POLL_S)
            now = time.monotonic()
            with self._lock:
                if not self._armed:
                    self._thread = None
                    return
                late = [(key, fd) for key, (deadline, fd) in self._armed.items() if now >= deadline]
                for key, _fd in late:
                    del self._armed[key]
                    self._cut.add(key)
            for _key, fd in late:
                _shut_down(fd)


def _shut_down(fd: int) -> None:
    """End the connection on ``fd`` both ways: the driver waiting on it wakes with an error.
    (A duplicate of the descriptor is shut down and closed; the driver's own stays to close.)"""
    try:
        dup = socket.socket(fileno=os.dup(fd))
    except OSError:
        return
    try:
        dup.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        dup.close()
