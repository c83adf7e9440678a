"""VISA resource strings labctl reads itself (the rest is pyvisa's business)."""

from __future__ import annotations

import re
from typing import NamedTuple

_TCP_SOCKET = re.compile(r"^(?P<board>TCPIP\d*)::(?P<host>[^:]+)::(?P<port>\d+)::SOCKET$", re.IGNORECASE)


class TcpSocket(NamedTuple):
    """``TCPIP0::127.0.0.1::5025::SOCKET``: a raw-socket LAN instrument."""

    board: str  # "TCPIP0", as written
    host: str
    port: int

    def with_port(self, port: int) -> str:
        return f"{self.board}::{self.host}::{port}::SOCKET"


def tcp_socket(resource: str) -> TcpSocket | None:
    """The parts of a raw-socket resource string, or None for any other kind of resource."""
    m = _TCP_SOCKET.match(resource.strip())
    return TcpSocket(m["board"], m["host"], int(m["port"])) if m else None
