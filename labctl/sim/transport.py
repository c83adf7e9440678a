"""What the TCP server and the pty host share: line splitting and the fault gate around an
emulator's ``process(line) -> reply``."""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Protocol

from labctl.sim.faults import FaultGate

log = logging.getLogger(__name__)
MAX_DELAY = 30.0  # wall seconds
_NO_LOCK = contextlib.nullcontext()


class Responder(Protocol):
    def process(self, line: str) -> str | None: ...


class LineSession:
    """Bytes in, reply bytes out. ``feed`` returns (bytes to send, close?).

    A line longer than ``max_line`` is refused whole, as an instrument's input buffer refuses
    it: nothing of it runs (neither its head nor, once its terminator comes, its tail), and an
    instrument with an error queue queues ``-223,"Too much data"``."""

    def __init__(self, responder: Responder, gate: FaultGate, max_line: int = 1 << 16) -> None:
        self.responder = responder
        self.gate = gate
        self.buffer = b""
        self.max_line = max_line
        self._discarding = False  # inside a line too long: dropped up to its terminator

    def feed(self, data: bytes) -> tuple[bytes, bool]:
        buffer = self.buffer + data if self.buffer else data
        if buffer.find(b"\r") >= 0:  # (find: ``in`` tries the bytes as an int first and formats a TypeError)
            buffer = buffer.replace(b"\r", b"\n")  # CR, LF or CR LF end a line (empty lines are skipped)
        if self._discarding:  # the rest of a runaway line, up to its end
            end = buffer.find(b"\n")
            if end < 0:
                self.buffer = b""
                return b"", False
            buffer, self._discarding = buffer[end + 1:], False
        lines = buffer.split(b"\n")
        rest = lines.pop()
        self.buffer = rest
        if len(rest) > self.max_line:  # a runaway line without terminator: refused
            self.buffer, self._discarding = b"", True
            self._overrun()
        if len(lines) == 1 and len(lines[0]) > self.max_line or len(lines) > 1 and max(map(len, lines)) > self.max_line:
            lines = [raw for raw in lines if len(raw) <= self.max_line or self._overrun()]
        if self.gate.faults:  # (FaultGate.armed, read here without a call: this is every line's path)
            return self._feed_gated(lines)
        if len(lines) == 1:  # one line, the usual exchange: no list of replies to join
            line = lines[0].decode("latin-1").strip()
            reply = self._respond(line) if line else None
            return (b"", False) if reply is None else ((reply + "\n").encode("latin-1", "replace"), False)
        replies = []
        for raw in lines:
            line = raw.decode("latin-1").strip()
            if line and (reply := self._respond(line)) is not None:
                replies.append(reply)
        if not replies:
            return b"", False
        replies.append("")  # each reply ends with a newline
        return "\n".join(replies).encode("latin-1", "replace"), False

    def _overrun(self) -> bool:
        """A line too long was refused: the instrument's error queue says so (False: for filters)."""
        push = getattr(self.responder, "push_error", None)
        if push is not None:
            with getattr(self.responder, "lock", None) or _NO_LOCK:
                push(-223)
        return False

    def _respond(self, line: str) -> str | None:
        try:
            return self.responder.process(line)
        except Exception:  # never let an emulator bug kill the transport
            log.exception("responder failed on %r", line)
            return None

    def _feed_gated(self, lines: list[bytes]) -> tuple[bytes, bool]:
        """The lines through the instrument faults armed on the gate."""
        out = b""
        gate = self.gate
        for i, raw in enumerate(lines):
            line = raw.decode("latin-1").strip()
            if not line:
                continue
            action = gate.before()
            if action == "close":
                self.buffer = b"\n".join([*lines[i + 1 :], self.buffer])
                return out, True
            if action == "swallow":
                continue
            reply = gate.after_reply(self._respond(line))
            if reply is not None and (delay := gate.reply_delay()) > 0:
                time.sleep(min(delay, MAX_DELAY))  # a slow instrument holds its answer back
            if reply is not None:
                out += reply.encode("latin-1", errors="replace") + b"\n"
        return out, False
