"""Signals handled in a thread of their own.

A Python signal handler runs in the main thread, between two bytecodes of whatever that
thread was doing. A handler that takes a lock (setting a ``threading.Event``, requesting an
abort, printing) deadlocks if the main thread held that same lock when the signal landed:
the main thread is then stuck in its own handler, the run never reaches its teardown, the
bench stays powered, and every later signal is swallowed the same way.

:class:`SignalRelay` keeps the handler to one ``os.write`` of the signal number into a pipe,
which takes no lock; a relay thread reads the pipe and calls the real callback, where taking
locks is safe: the main thread goes on and releases them.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from types import TracebackType

_STOP = 0  # no signal has number 0: the relay thread's cue to end


class SignalRelay:
    """While entered (in the main thread), ``callback(signum)`` runs in the relay thread, in
    arrival order, once for each of ``signals`` received.

    Outside the main thread (where Python cannot install handlers) it does nothing.
    On exit the previous handlers come back, or ``SIG_IGN`` where :attr:`ignore_on_exit` was
    set: a process that is ending because of a signal ignores a late one instead of dying of it.
    """

    def __init__(self, signals: tuple[int, ...], callback: Callable[[int], None], *, name: str = "labctl-signals"):
        self.signals = tuple(signals)
        self.callback = callback
        self.name = name
        self.ignore_on_exit = False
        self._previous: dict[int, object] = {}
        self._read = self._write = -1
        self._thread: threading.Thread | None = None

    def __enter__(self) -> SignalRelay:
        if threading.current_thread() is not threading.main_thread():
            return self
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self._thread = threading.Thread(target=self._relay, name=self.name, daemon=True)
        self._thread.start()
        self._previous = {sig: signal.signal(sig, self._handler) for sig in self.signals}
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._thread is None:
            return
        for sig, old in self._previous.items():
            if self.ignore_on_exit:
                old = signal.SIG_IGN
            signal.signal(sig, old if old is not None else signal.SIG_DFL)  # type: ignore[arg-type]
        try:
            os.write(self._write, bytes([_STOP]))
        except OSError:
            pass
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass
        self._thread = None

    def _handler(self, signum: int, _frame: object) -> None:
        try:
            os.write(self._write, bytes([signum]))  # no lock taken: safe whatever the main thread holds
        except OSError:
            pass  # the pipe is full (thousands of signals queued): the relay already has plenty to do

    def _relay(self) -> None:
        while True:
            try:
                data = os.read(self._read, 64)
            except OSError:
                return
            if not data:
                return
            for signum in data:
                if signum == _STOP:
                    return
                try:
                    self.callback(signum)
                except Exception as exc:  # noqa: BLE001 - the relay must outlive a failing callback
                    _report(signum, exc)


def _report(signum: int, exc: Exception) -> None:
    """A callback that failed says so on stderr (never silently: that signal did nothing)."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    try:
        os.write(2, f"labctl: handling {name} failed: {type(exc).__name__}: {exc}\n".encode(errors="replace"))
    except OSError:
        pass
