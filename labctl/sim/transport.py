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
        if b"\r" in buffer:
            buffer = buffer.replace(b"\r", b"\n")  # CR, LF or CR LF end a line (empty lines are skipped)
        *lines, rest = buffer.split(b"\n")
        self.buffer = rest if len(rest) <= self.max_line else b""  # a runaway line without terminator is dropped
        out = b""
        gate = self.gate
        for i, raw in enumerate(lines):
            line = raw.decode("latin-1").strip()
            if not line:
                continue
            armed = gate.armed
            if armed:
                action = gate.before()
                if action == "close":
                    self.buffer = b"\n".join([*lines[i + 1 :], rest])
                    return out, True
                if action == "swallow":
                    continue
            try:
                reply = self.responder.process(line)
            except Exception:  # never let an emulator bug kill the transport
                log.exception("responder failed on %r", line)
                reply = None
            if reply is None:
                continue
            if armed:
                reply = gate.after_reply(reply)
                if reply is not None and (delay := gate.reply_delay()) > 0:
                    time.sleep(min(delay, MAX_DELAY))  # a slow instrument holds its answer back
            if reply is not None:
                out += reply.encode("latin-1", errors="replace") + b"\n"
        return out, False
