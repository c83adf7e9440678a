"""What the TCP server and the pty host share: line splitting and the fault gate around an
emulator's ``process(line) -> reply``."""

from __future__ import annotations

import logging
import re
import time
from typing import Protocol

from labctl.sim.faults import FaultGate

log = logging.getLogger(__name__)
_EOL = re.compile(rb"[\r\n]")
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
        self.buffer += data
        out = b""
        while True:
            m = _EOL.search(self.buffer)
            if not m:
                if len(self.buffer) > self.max_line:
                    self.buffer = b""  # a runaway line without terminator is dropped
                break
            raw, self.buffer = self.buffer[: m.start()], self.buffer[m.end() :]
            line = raw.decode("latin-1").strip()
            if not line:
                continue
            action = self.gate.before()
            if action == "close":
                return out, True
            if action == "swallow":
                continue
            try:
                reply = self.responder.process(line)
            except Exception:  # never let an emulator bug kill the transport
                log.exception("responder failed on %r", line)
                reply = None
            reply = self.gate.after_reply(reply)
            if reply is not None and (delay := self.gate.reply_delay()) > 0:
                time.sleep(min(delay, MAX_DELAY))  # a slow instrument holds its answer back
            if reply is not None:
                out += reply.encode("latin-1", errors="replace") + b"\n"
        return out, False
