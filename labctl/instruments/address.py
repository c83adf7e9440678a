"""VISA resource strings labctl reads itself (the rest is pyvisa's business)."""

from __future__ import annotations

import os
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


_TCP_INSTR = re.compile(r"^TCPIP(?P<board>\d*)::(?P<host>[^:]+)(?:::(?P<device>[^:]+))?::INSTR$", re.IGNORECASE)
_GPIB = re.compile(r"^GPIB(?P<board>\d*)::(?P<primary>\d+)(?:::(?P<secondary>\d+))?::INSTR$", re.IGNORECASE)
_ASRL = re.compile(r"^ASRL(?P<port>.+?)::INSTR$", re.IGNORECASE)
_LOOPBACK = {"localhost": "127.0.0.1", "::1": "127.0.0.1"}


def instrument_key(resource: str) -> str:
    """One text per instrument, however its address is spelled: ``TCPIP::H::5025::SOCKET``
    and ``tcpip0::h::5025::SOCKET`` are one supply; ``TCPIP0::H::INSTR`` is ``TCPIP0::H::inst0::INSTR``;
    ``ASRL/dev/ttyUSB0::INSTR`` is ``/dev/ttyUSB0`` (a serial path through its symlinks)."""
    text = resource.strip()
    sock = tcp_socket(text)
    if sock is not None:
        host = sock.host.lower()
        return f"tcp:{_LOOPBACK.get(host, host)}:{sock.port}"
    m = _TCP_INSTR.match(text)
    if m:
        host = m["host"].lower()
        return f"vxi:{_LOOPBACK.get(host, host)}:{(m['device'] or 'inst0').lower()}"
    m = _GPIB.match(text)
    if m:
        return f"gpib:{int(m['board'] or 0)}:{int(m['primary'])}:{int(m['secondary'] or 0)}"
    m = _ASRL.match(text)
    port = m["port"] if m else text
    if port.startswith("/"):
        return "serial:" + os.path.realpath(port)
    return text.upper()
