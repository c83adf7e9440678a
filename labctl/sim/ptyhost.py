"""Serial instruments on pseudo-terminals, each reachable through a stable symlink.

The emulator holds the pty master; clients open the slave through the symlink with
pyserial (``serial.Serial(path)``) or pyvisa-py (``ASRL<path>::INSTR``). The slave is
put in raw mode (no echo) and kept open here so that clients may come and go.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import tty
from pathlib import Path

from labctl.sim.faults import FaultGate
from labctl.sim.transport import LineSession, Responder

log = logging.getLogger(__name__)
POLL = 0.1
REOPEN_AFTER = 0.5  # wall seconds a "disconnected" serial device stays away


class PtyEndpoint:
    def __init__(self, path: str | Path, responder: Responder, gate: FaultGate | None = None) -> None:
        self.path = Path(path)
        self.responder = responder
        self.gate = gate or FaultGate()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.master: int | None = None
        self.slave: int | None = None
        self.device: str = ""

    @property
    def address(self) -> str:
        return str(self.path)

    def _open(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        self.master, self.slave = master, slave
        self.device = os.ttyname(slave)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        os.symlink(self.device, tmp)
        os.replace(tmp, self.path)

    def _close(self) -> None:
        for fd in (self.master, self.slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.master = self.slave = None
        with contextlib.suppress(OSError):
            if self.path.is_symlink() and os.readlink(self.path) == self.device:
                self.path.unlink()

    def start(self) -> None:
        self._open()
        self._thread = threading.Thread(target=self._loop, name=f"sim-pty-{self.path.name}", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        session = LineSession(self.responder, self.gate)
        while not self._stop.is_set():
            master = self.master
            if master is None:
                break
            try:
                ready, _, _ = select.select([master], [], [], POLL)
            except (OSError, ValueError):
                break
            if not ready:
                continue
            try:
                data = os.read(master, 4096)
            except OSError:
                continue  # no client has the slave open right now
            out, close = session.feed(data)
            if out:
                try:
                    os.write(master, out)
                except OSError:
                    pass
            if close:
                self._hang_up()
                session = LineSession(self.responder, self.gate)

    def _hang_up(self) -> None:
        """The adapter vanishes (clients get an I/O error) and comes back on a new pty: after
        :data:`REOPEN_AFTER`, or, for a persistent disconnect, once the fault is cleared
        (``labctl sim clear``); never while the lab stops."""
        self._close()
        while not self._stop.wait(REOPEN_AFTER):
            if not self.gate.refuse_connections:
                self._open()
                return

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        self._close()
