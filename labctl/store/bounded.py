"""Database calls with a bounded time.

A PostgreSQL server (or the network to it) can stall: the connection stays open and nothing
comes back. Server-side ``statement_timeout`` cannot help when the statement never reaches
the server, and TCP keepalive cannot help while the peer still acknowledges packets. So every
call the recorder makes runs on one worker thread of its own and the caller waits at most
``timeout`` seconds for it. A call that does not return in time raises
:class:`~labctl.errors.StoreTimeout` and the caller is marked stalled: every later call fails
at once (the recorder then spools), and the worker stuck in the driver is abandoned (a daemon
thread: it never holds up the end of the process).
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from labctl.errors import StoreTimeout

T = TypeVar("T")

DEFAULT_TIMEOUT = 10.0  # seconds; $LABCTL_DB_TIMEOUT overrides


def default_timeout(variable: str = "LABCTL_DB_TIMEOUT", default: float = DEFAULT_TIMEOUT) -> float:
    """Seconds from the environment ``variable`` (0 < t < 3600), else ``default``."""
    raw = os.environ.get(variable)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        return default
    return value if 0 < value < 3600 else default


class _Call:
    __slots__ = ("fn", "args", "done", "result", "error")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn, self.args = fn, args
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class BoundedCaller:
    """Run callables on a private worker thread, waiting at most ``timeout`` s for each."""

    def __init__(self, timeout: float | None = None, *, name: str = "labctl-db", what: str = "the database",
                 hint: str = "results go to the local spool; run `labctl sync` later") -> None:
        self.timeout = default_timeout() if timeout is None else float(timeout)
        self.name = name
        self.what = what
        self.hint = hint
        self.stalled: str | None = None  # why, once a call overran its time
        self._queue: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        if self.stalled is not None:
            raise StoreTimeout(self.stalled, hint=self.hint)
        job = _Call(fn, args)
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=self.name, daemon=True)
                self._thread.start()
            self._queue.put(job)
        if not job.done.wait(self.timeout):
            self.stalled = f"{self.what} did not answer within {self.timeout:g} s"
            with self._lock:
                self._thread = None  # abandon the stuck worker; it ends when (if) its call returns
                self._queue.put(None)
            raise StoreTimeout(self.stalled, hint=self.hint)
        if job.error is not None:
            raise job.error
        return job.result

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            try:
                job.result = job.fn(*job.args)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                job.error = exc
            job.done.set()

    def close(self) -> None:
        """Let the worker end once its queue is empty (never waits for it)."""
        with self._lock:
            if self._thread is not None:
                self._queue.put(None)
                self._thread = None
