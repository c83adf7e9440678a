"""The transport interface: public ``query``/``write``/``read`` log, then call the subclass.

Subclasses implement ``_open``, ``_close``, ``_write``, ``_read`` (and may override
``_query``). They signal trouble with the builtin ``TimeoutError`` (no answer in time) and
``ConnectionError`` (link dropped or cannot open); this base turns those into
:class:`~labctl.errors.InstrumentTimeout` / :class:`~labctl.errors.InstrumentDisconnected`
naming the instrument, the resource and the command.

Reconnect policy (bounded, never re-enables anything by itself): when a link drops, the
transport tries ``reconnect_attempts`` times to reopen it. A *query* is then sent once more
(it changes nothing on the instrument); a *write* is never replayed and the error is raised,
so an output the engine switched off stays off and the caller decides what to do.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from labctl.errors import InstrumentDisconnected, InstrumentError, InstrumentTimeout
from labctl.instruments.sessionlog import SessionLog
from labctl.instruments.transports.watch import WatchTrial

#: the longest ``reply_spin`` a transport takes (seconds): watching longer costs more CPU than a
#: wake-up ever does
MAX_REPLY_SPIN = 0.01
#: queries waited for without watching after an instrument did not answer within the watch
SPIN_BACKOFF = 15


class Transport(ABC):
    """One connection to one instrument (thread-safe: one exchange at a time)."""

    kind = "transport"
    disconnect_hint = "check the cable/network; after a reconnect no command is replayed and no output is re-enabled"

    def __init__(
        self,
        resource: str,
        *,
        name: str | None = None,
        timeout: float = 2.0,
        read_termination: str = "\n",
        write_termination: str = "\n",
        session_log: SessionLog | None = None,
        reconnect_attempts: int = 2,
        reconnect_delay: float = 0.2,
        reply_spin: float = 0.0,
        options: dict[str, Any] | None = None,
    ) -> None:
        if not timeout > 0:
            raise ValueError("timeout must be positive and finite")
        self.resource = resource
        self.name = name or resource
        self.timeout = float(timeout)
        self.read_termination = read_termination
        self.write_termination = write_termination
        self.session_log = session_log
        self.reconnect_attempts = max(0, int(reconnect_attempts))
        self.reconnect_delay = max(0.0, float(reconnect_delay))
        if not 0 <= reply_spin <= MAX_REPLY_SPIN:
            raise ValueError(f"reply_spin must be between 0 and {MAX_REPLY_SPIN} s")
        self.reply_spin = float(reply_spin)
        self._spin_skip = 0  # queries left to wait for without watching first (a slow instrument)
        self.watch_trial = WatchTrial()  # whether watching pays on this connection (measured)
        self.options = dict(options or {})
        self._lock = threading.RLock()
        self._open_ok = False
        self._stale = False  # a reply may still be in flight after a timeout
        self._timeouts = 0  # exchanges that timed out (a caller that waited meanwhile is told at once)

    # ----------------------------------------------------------------- public API
    @property
    def lock(self) -> threading.RLock:
        """Hold it to make several exchanges atomic (a multi-line reply, a command sequence)."""
        return self._lock

    @property
    def is_open(self) -> bool:
        return self._open_ok

    @property
    def silent(self) -> bool:
        """The last exchange timed out (and nothing has been heard since)."""
        return self._stale

    def open(self) -> Transport:
        with self._lock:
            if self._open_ok:
                return self
            self._log("note", f"open {self.kind}")
            try:
                self._open()
            except (TimeoutError, ConnectionError, OSError) as err:
                self._log("error", f"open failed: {err}")
                raise InstrumentDisconnected(
                    f"cannot open connection: {_reason(err)}",
                    instrument=self.name,
                    resource=self.resource,
                    hint="is the instrument powered and connected (or the simulated lab running)? "
                    "check the resource address in the fixture",
                ) from None
            self._open_ok = True
            self._stale = False
            self.watch_trial.reset()
            return self

    def close(self) -> None:
        with self._lock:
            if not self._open_ok:
                return
            self._open_ok = False
            try:
                self._close()
            except (OSError, ConnectionError, TimeoutError):
                pass
            self._log("note", "closed")

    def write(self, command: str) -> None:
        with self._lock:
            self._ensure_open(command)
            self._log("write", command)
            self._guard(command, lambda: self._write(command), replay=False)

    def query(self, command: str) -> str:
        seen = self._timeouts
        with self._lock:
            if self._stale or not self._open_ok:
                self.not_hung_meanwhile(command, seen)
                self._ensure_open(command)
            log = self.session_log
            if log is not None:
                log.record(self.name, self.resource, "query", command)
            start = time.monotonic()
            try:
                reply = self._query(command)
            except Exception:  # noqa: BLE001 - the guard below names it (and retries a lost link once)
                reply = self._guard(command, lambda: self._query(command), replay=True, failed=True)
            if log is not None:
                log.record(self.name, self.resource, "reply", reply, elapsed_s=round(time.monotonic() - start, 6))
            return reply

    def read(self) -> str:
        """Read one more reply line (for instruments that answer in several lines)."""
        with self._lock:
            self._ensure_open("<read>")
            reply = self._guard("<read>", self._read, replay=False)
            self._log("reply", reply)
            return reply

    def read_until(self, done: Callable[[str], Any], max_lines: int, deadline: float) -> list[str]:
        """Read reply lines up to the first for which ``done`` is true (that one included), at
        most ``max_lines``, none after the ``time.monotonic()`` ``deadline``: the rest of a
        console's multi-line reply. Each line is logged as :meth:`read` logs it (together, one
        timestamp); the lock and the error handling are taken once for them all."""
        lines: list[str] = []

        def more() -> list[str]:
            try:
                while len(lines) < max_lines and time.monotonic() <= deadline:
                    got = self._read_lines(max_lines - len(lines))
                    for i, line in enumerate(got):
                        lines.append(line)
                        if done(line):
                            self._unread(got[i + 1:])
                            return lines
            finally:  # (logged before a timeout or a lost link is, as line by line)
                if self.session_log is not None:
                    self.session_log.record_lines(self.name, self.resource, "reply", lines)
            return lines

        with self._lock:
            self._ensure_open("<read>")
            return self._guard("<read>", more, replay=False)

    def pending(self) -> bool:
        """True when reply bytes are already waiting (an extra line after an answer)."""
        with self._lock:
            if not self._open_ok:
                return False
            try:
                return self._pending()
            except (OSError, ConnectionError, TimeoutError):
                return False

    def reconnect(self) -> bool:
        """Close and reopen: ``reconnect_attempts`` times, and on for the transport's reconnect
        window (a serial adapter that comes back after a moment). True when open again."""
        with self._lock:
            if not self.reconnect_attempts:
                return False
            deadline = time.monotonic() + self._reconnect_window()
            attempt = 0
            while attempt < self.reconnect_attempts or time.monotonic() < deadline:
                attempt += 1
                self._log("note", f"reconnect attempt {attempt}")
                self._open_ok = False
                try:
                    self._close()
                except (OSError, ConnectionError, TimeoutError):
                    pass
                if self.reconnect_delay:
                    time.sleep(min(self.reconnect_delay * attempt, 1.0))
                try:
                    self._open()
                except (TimeoutError, ConnectionError, OSError) as err:
                    self._log("error", f"reconnect failed: {err}")
                    continue
                self._open_ok = True
                self._stale = False
                self._log("note", "reconnected (no command replayed, no state restored)")
                return True
            return False

    def __enter__(self) -> Transport:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.resource}>"

    # ------------------------------------------------------------ subclass hooks
    @abstractmethod
    def _open(self) -> None: ...

    @abstractmethod
    def _close(self) -> None: ...

    @abstractmethod
    def _write(self, command: str) -> None: ...

    @abstractmethod
    def _read(self) -> str: ...

    def _query(self, command: str) -> str:
        if not self.reply_spin or not self._can_peek:
            self._write(command)
            return self._read()
        trial = self.watch_trial
        start = time.perf_counter()
        self._write(command)
        if trial.watch():
            self._watch_for_reply()
        reply = self._read()
        trial.took(time.perf_counter() - start)
        return reply

    def _watch_for_reply(self) -> None:
        """Watch for the reply for up to :attr:`reply_spin` seconds before :meth:`_read` blocks.

        A thread that blocks for a reply is woken by the kernel once it arrives: on a busy
        or virtual machine that wake-up, and the cold caches after it, cost tens of µs, about
        what a fast instrument takes to answer. Watching (a non-blocking look at the
        connection, without sleeping) sees the reply as it lands. An instrument that did not
        answer within the watch is waited for without watching for the next
        :data:`SPIN_BACKOFF` queries, so a slow one costs one watch in ``SPIN_BACKOFF + 1``
        queries. Whether a query watches at all is :attr:`watch_trial`'s to say (where
        watching does not pay on this machine, the queries sleep)."""
        if self._spin_skip:
            self._spin_skip -= 1
            return
        deadline = time.perf_counter() + self.reply_spin
        pending = self._reply_waiting
        try:
            while not pending():
                if time.perf_counter() >= deadline:
                    self._spin_skip = SPIN_BACKOFF
                    return
        except (OSError, ConnectionError, TimeoutError):
            return  # the read reports it

    def _read_lines(self, limit: int) -> list[str]:
        """One line or more (at most ``limit``), waiting as :meth:`_read` does for the first:
        subclasses that buffer input return every complete line already received at once."""
        return [self._read()]

    def _unread(self, lines: list[str]) -> None:
        """Put back lines :meth:`_read_lines` returned past the one a reader wanted."""
        if lines:
            raise RuntimeError(f"{type(self).__name__} cannot put back {len(lines)} line(s)")

    def _flush_input(self) -> None:
        """Drop late replies after a timeout (subclasses that can, do)."""
        return None

    def _pending(self) -> bool:
        """Subclasses that can tell whether input is waiting, do (and set :attr:`_can_peek`)."""
        return False

    def _reply_waiting(self) -> bool:
        """:meth:`_pending` for the watch, looked at again and again (a subclass may have a
        cheaper look that also says True at the connection's end: the read reports that)."""
        return self._pending()

    #: :meth:`_pending` can tell, without waiting, that input has arrived (``reply_spin`` is
    #: ignored where it cannot)
    _can_peek: bool = False

    def _reconnect_window(self) -> float:
        """Seconds to keep trying to reconnect beyond ``reconnect_attempts`` (0: no more)."""
        return 0.0

    # ------------------------------------------------------------------ helpers
    @property
    def timeouts(self) -> int:
        """How many exchanges timed out so far (read it before waiting for :attr:`lock`)."""
        return self._timeouts

    def not_hung_meanwhile(self, command: str, seen: int) -> None:
        """A query that waited for the connection while another thread's exchange on it timed
        out fails at once: asking a hung instrument again would double the wait (a step and
        the safety monitor sharing a chamber end one timeout after it hung, not two)."""
        if self._timeouts != seen and self._stale:
            raise InstrumentTimeout(
                f"no answer: another exchange with it timed out ({self.timeout:g} s) while this one waited",
                instrument=self.name, resource=self.resource, command=command,
                hint="the instrument is hung, busy or disconnected; check it and its timeout in the fixture")

    def _ensure_open(self, command: str) -> None:
        if not self._open_ok:
            self.open()
        if self._stale:
            self._stale = False
            try:
                self._flush_input()
            except (OSError, ConnectionError, TimeoutError):
                pass

    def _guard(self, command: str, action, *, replay: bool, failed: bool = False):
        """``action()`` with its failures named; ``failed``: it just failed, so handle that
        failure (re-raised here) instead of a first try."""
        try:
            if failed:
                raise  # noqa: PLE0704 - the exception being handled by the caller
            return action()
        except InstrumentError:
            raise
        except TimeoutError as err:
            self._stale = True
            self._timeouts += 1
            self._log("error", f"timeout after {self.timeout:g} s: {err}")
            raise InstrumentTimeout(
                f"no answer within {self.timeout:g} s",
                instrument=self.name,
                resource=self.resource,
                command=command,
                hint="the instrument is hung, busy or disconnected; check it and its timeout in the fixture",
            ) from None
        except (ConnectionError, OSError) as err:
            self._log("error", f"connection lost: {err}")
            reconnected = self.reconnect()
            if reconnected and replay:
                self._log("note", f"query {command!r} sent again after reconnect")
                try:
                    return action()
                except TimeoutError:
                    self._stale = True
                    raise InstrumentTimeout(
                        f"no answer within {self.timeout:g} s after reconnect",
                        instrument=self.name,
                        resource=self.resource,
                        command=command,
                    ) from None
                except (ConnectionError, OSError) as err2:
                    err = err2
                    reconnected = False
            if reconnected:
                message = f"connection lost during a write: {_reason(err)}; reconnected, but labctl never replays a write"
            else:
                message = f"connection lost: {_reason(err)}"
            raise InstrumentDisconnected(
                message,
                instrument=self.name,
                resource=self.resource,
                command=command,
                hint=self.disconnect_hint,
            ) from None

    def _log(self, kind: str, text: str, **extra: Any) -> None:
        if self.session_log is not None:
            self.session_log.record(self.name, self.resource, kind, text, **extra)


def _reason(err: BaseException) -> str:
    text = str(err).strip()
    return text or type(err).__name__
