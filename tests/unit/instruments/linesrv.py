"""A tiny line-based TCP server on a free loopback port, for transport unit tests.

``responder(line) -> str | None``: a string is sent back with ``\\n``; None sends nothing.
Set ``server.silent = True`` to stop answering, call ``server.drop()`` to close clients.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable


class LineServer:
    def __init__(self, responder: Callable[[str], str | None]) -> None:
        self.responder = responder
        self.silent = False
        self.received: list[str] = []
        self.accepted = 0
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(4)
        self._sock.settimeout(0.1)
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._clients: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def resource(self) -> str:
        return f"TCPIP0::127.0.0.1::{self.port}::SOCKET"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            conn.settimeout(0.1)
            self._clients.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        while not self._stop.is_set():
            try:
                data = conn.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            buf += data
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                line = raw.decode().strip()
                self.received.append(line)
                reply = None if self.silent else self.responder(line)
                if reply is not None:
                    try:
                        conn.sendall(reply.encode() + b"\n")
                    except OSError:
                        return

    def drop(self) -> None:
        """Close every client connection (like an instrument power-cycled)."""
        for c in self._clients:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()
        self._clients.clear()

    def close(self) -> None:
        self._stop.set()
        self.drop()
        self._sock.close()
        self._thread.join(timeout=2)

    def __enter__(self) -> LineServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
