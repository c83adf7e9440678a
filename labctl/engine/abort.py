"""Abort requests: from the operator (Ctrl-C, the TUI's abort), a signal, a safety monitor, or
a failing results store.

An :class:`AbortController` holds the first reason given; everything that waits in a run
(``StepContext.sleep``, polling loops) checks it, so an abort reaches even a step blocked in
a long wait within one poll. Listeners (:meth:`AbortController.on_request`) are told at once,
from whatever thread asked: the safe-state watchdog (:mod:`labctl.engine.watchdog`) uses that
to drive the safe state itself when the thread running the plan is blocked.

Signal handlers only *request* an abort: the runner then takes the abort path, whose teardown
and safe-state actions always run. Every way a terminal session ends is covered: SIGINT
(Ctrl-C), SIGTERM, SIGHUP (terminal closed, SSH session lost), SIGQUIT (Ctrl-\\) and
SIGUSR1/SIGUSR2. A second signal is acknowledged but cannot skip the safe state.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

#: the signals a run turns into an abort to the safe state
ABORT_SIGNALS: tuple[signal.Signals, ...] = (
    signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


@dataclass(frozen=True)
class AbortReason:
    source: str  # operator | signal | safety | engine | recorder
    message: str


class RunAborted(Exception):
    """Raised inside a step when an abort was requested; carries the reason."""

    def __init__(self, reason: AbortReason) -> None:
        self.reason = reason
        super().__init__(reason.message)


class AbortController:
    def __init__(self) -> None:
        self._event = threading.Event()
        self._reason: AbortReason | None = None
        self._lock = threading.Lock()
        self._listeners: list[Callable[[AbortReason], None]] = []
        self.signals_seen = 0

    @property
    def event(self) -> threading.Event:
        return self._event

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> AbortReason | None:
        return self._reason

    def on_request(self, listener: Callable[[AbortReason], None]) -> Callable[[], None]:
        """Call ``listener(reason)`` when the abort is requested (at once if it already was).

        Listeners run in the requesting thread — possibly the thread relaying a signal
        (:mod:`labctl.signals`) — so they must only hand the work over (set an event), never
        block. Returns a function removing it.
        """
        with self._lock:
            self._listeners.append(listener)
            reason = self._reason
        if reason is not None:
            listener(reason)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

    def request(self, source: str, message: str) -> bool:
        """Ask for an abort; the first reason wins. Returns True if this call set it."""
        with self._lock:
            if self._reason is not None:
                return False
            self._reason = reason = AbortReason(source, message)
            self._event.set()
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(reason)
            except Exception:  # noqa: BLE001 - a listener must never stop an abort
                pass
        return True

    def raise_if_requested(self) -> None:
        if self._reason is not None:
            raise RunAborted(self._reason)


def _safe_print(text: str) -> None:
    """Print to stderr, never raising: after SIGHUP the terminal may be gone."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _terminal(fd: int) -> bool:
    """``fd`` is a terminal, one that hung up included: ``isatty`` says no once the terminal
    is gone (its ``tcgetattr`` fails with EIO, where a pipe or a file fails with ENOTTY)."""
    if os.isatty(fd):
        return True
    try:
        import termios
    except ImportError:  # (not on Windows)
        return False
    try:
        termios.tcgetattr(fd)
    except termios.error as err:
        return bool(err.args) and err.args[0] == errno.EIO
    return True


def detach_from_terminal() -> None:
    """After a hang-up, point stdout/stderr that were a terminal at /dev/null, so that the
    output of the rest of the run (teardown, safe state, summary) cannot fail or block on a
    terminal that is gone. Pipes and files (a rig's log) are left as they are."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        for fd in (1, 2):
            try:
                if _terminal(fd):
                    os.dup2(null, fd)
            except OSError:
                pass
    finally:
        os.close(null)


@contextmanager
def abort_on_signals(
    controller: AbortController, notify: Callable[[str], None] | None = None,
    signals: tuple[signal.Signals, ...] = ABORT_SIGNALS,
) -> Iterator[None]:
    """Turn the abort signals into abort requests while the block runs (main thread only).

    The first signal requests the abort; later ones only say that teardown is running.
    SIGHUP also detaches the process from its (closed) terminal. The work is done in a
    thread of its own (:class:`labctl.signals.SignalRelay`), never inside the main thread's
    locks, which a handler running in the main thread could deadlock on.
    """
    from labctl.signals import SignalRelay

    def say(text: str) -> None:
        if notify is not None:
            try:
                notify(text)
                return
            except Exception:  # noqa: BLE001 - the terminal may be gone
                pass
        _safe_print(text)

    def on_signal(signum: int) -> None:  # in the relay's thread, never inside the main thread's locks
        controller.signals_seen += 1
        name = signal.Signals(signum).name
        if signum == signal.SIGHUP:
            detach_from_terminal()
        if controller.request("signal", f"{name} received: aborting to the safe state"):
            say(f"{name}: aborting; teardown and safe-state actions will run")
        else:
            say(f"{name} again: already aborting; safe-state actions still run, please wait")

    with SignalRelay(signals, on_signal, name="labctl-abort-signals"):
        yield
