"""What the TCP server and the pty host share: line splitting and the fault gate around an
emulator's ``process(line) -> reply``."""

from __future__ import annotations

import logging
import time
from typing import Protocol

from labctl.sim.faults import FaultGate

log = logging.getLogger(__name__)
MAX_DELAY = 30.0  # wall seconds


class Responder(Protocol):
    def process(self, line: str) -> str | None: ...


class LineSession:
    """Bytes in, reply bytes out. ``feed`` returns (bytes to send, close?)."""

    def __init__(self, responder: Responder, gate: FaultGate, max_line: int = 1 << 16) -> None:
        self.responder = responder
        self.gate = gate
        self.buffer = b""
        self.max_line = max_line

    def feed(self, data: bytes) -> tuple[bytes, bool]:
        buffer = self.buffer + data if self.buffer else data
        if buffer.find(b"\r") >= 0:  # (find: ``in`` tries the bytes as an int first and formats a TypeError)
            buffer = buffer.replace(b"\r", b"\n")  # CR, LF or CR LF end a line (empty lines are skipped)
        lines = buffer.split(b"\n")
        rest = lines.pop()
        self.buffer = rest if len(rest) <= self.max_line else b""  # a runaway line without terminator is dropped
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
