"""Start the simulated lab in-process when a fixture asks for it and nothing serves it."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from labctl.instruments.address import tcp_socket


def address_answers(resource: str, timeout: float = 0.3) -> bool:
    """True when something listens at a TCP socket resource or a serial device path exists."""
    tcp = tcp_socket(resource)
    if tcp:
        try:
            with socket.create_connection((tcp.host, tcp.port), timeout=timeout):
                return True
        except OSError:
            return False
    if resource.startswith("/"):
        return os.path.exists(resource)
    return True  # USB/GPIB/INSTR: cannot tell cheaply; assume a real instrument


def anything_serving(fixture: Any) -> bool:
    """Whether a lab already serves the fixture. A socket that answers is proof; a serial
    path is not when the fixture has sockets too: a lab killed with ``kill -9`` leaves its pty
    links behind, and their /dev/pts targets are soon reused by other processes."""
    resources = [str(b.resource).strip() for b in fixture.roles.values()]
    sockets = [r for r in resources if tcp_socket(r)]
    return any(address_answers(r) for r in (sockets or resources))


@contextmanager
def simulated_lab_if_needed(fixture: Any, *, allow: bool = True) -> Iterator[str | None]:
    """Yield a note when the simulated lab was started here (None when it was not needed)."""
    sim = getattr(fixture, "sim", None)
    if not (allow and sim is not None and sim.enabled) or anything_serving(fixture):
        yield None
        return
    from labctl.sim.lab import SimulatedLab

    with SimulatedLab(fixture):
        yield "nothing answered at the fixture's addresses and sim.enabled is set: started the simulated lab in-process"
