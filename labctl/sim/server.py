"""A raw-socket SCPI server on 127.0.0.1:PORT, like a LAN instrument's port 5025."""

from __future__ import annotations

import logging
import socket
import threading

from labctl.sim.faults import FaultGate
from labctl.sim.transport import LineSession, Responder

log = logging.getLogger(__name__)
POLL = 0.1  # wall seconds between checks of the stop flag


class TcpEndpoint:
    """Serves one responder on one TCP port; any number of clients, one thread each."""

    def __init__(self, host: str, port: int, responder: Responder, gate: FaultGate | None = None) -> None:
        self.host = host
        self.port = port
        self.responder = responder
        self.gate = gate or FaultGate()
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()

    @property
    def address(self) -> str:
        return f"TCPIP0::{self.host}::{self.port}::SOCKET"

    def start(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError:
            sock.close()
            raise
        sock.listen(8)
        sock.settimeout(POLL)
        self.port = sock.getsockname()[1]
        self._sock = sock
        t = threading.Thread(target=self._accept_loop, name=f"sim-tcp-{self.port}", daemon=True)
        t.start()
        self._threads.append(t)

    def _accept_loop(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            if self.gate.refuse_connections:
                conn.close()
                continue
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(None)  # blocking: no poll() before every recv; stop() shuts it down
            with self._lock:
                if self._stop.is_set():  # stop() has shut the others down already
                    conn.close()
                    break
                self._conns.add(conn)
            t = threading.Thread(target=self._serve, args=(conn,), name=f"sim-conn-{self.port}", daemon=True)
            t.start()
            self._threads = [x for x in self._threads if x.is_alive()] + [t]

    def _serve(self, conn: socket.socket) -> None:
        """One connection: a blocking recv, the chunk's replies in one sendall, nothing else per
        line (stop() shuts the connection down, which ends the recv)."""
        feed = LineSession(self.responder, self.gate).feed
        recv, sendall = conn.recv, conn.sendall
        try:
            while data := recv(4096):
                out, close = feed(data)
                if out:
                    sendall(out)
                if close:
                    break
        except OSError:
            pass
        finally:
            with self._lock:
                self._conns.discard(conn)
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def stop(self) -> None:
        self._stop.set()
        if self._sock is not None:
            self._sock.close()
        with self._lock:
            for c in list(self._conns):
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        for t in self._threads:
            t.join(timeout=2)
        self._threads.clear()
