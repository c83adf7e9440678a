"""A TCP proxy in front of PostgreSQL that a test can cut, like a network or server failure."""

from __future__ import annotations

import socket
import threading


class TcpProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._alive = True
        self._stalled = threading.Event()
        self.stall_on: bytes | None = None  # stall once the client sends these bytes (e.g. a query's text)
        self._down = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._down.is_set():  # the server is "down": connections are refused at once
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                if not self._alive:
                    client.close()
                    upstream.close()
                    return
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                if self.stall_on is not None and self.stall_on in data:
                    self._stalled.set()
                if not self._stalled.is_set():  # stalled: swallow, the peer hears nothing back
                    dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stall(self) -> None:
        """Keep every connection open but forward nothing, either way (a hung server or a
        black-holed network path: TCP still acknowledges, no reply ever comes)."""
        self._stalled.set()

    def cut(self) -> None:
        """Stop accepting and drop every open connection (the database is 'down')."""
        with self._lock:
            self._alive = False
            self._listener.close()
            self._drop_all()

    def _drop_all(self) -> None:
        """Close every open connection (with the lock held)."""
        for s in self._conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        self._conns.clear()

    def down(self) -> None:
        """Drop every open connection and refuse new ones until :meth:`up` (a database
        restart or a network outage that ends)."""
        self._down.set()
        with self._lock:
            self._drop_all()

    def up(self) -> None:
        self._down.clear()
