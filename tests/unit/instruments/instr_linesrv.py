"""A line responder served on a free loopback port, for transport and station unit tests.

It reuses the simulated lab's TCP host (``labctl.sim.server.TcpEndpoint``) with a plain
function instead of an instrument emulator: ``responder(line) -> str | None``.
``silent = True`` swallows lines (a hung instrument); ``drop()`` closes the connection at
the next line (a power-cycled instrument).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from labctl.sim.faults import FaultGate
from labctl.sim.server import TcpEndpoint


class LineServer:
    def __init__(self, responder: Callable[[str], str | None]) -> None:
        self.responder = responder
        self.received: list[str] = []
        self.gate = FaultGate()
        self.endpoint = TcpEndpoint("127.0.0.1", 0, self, self.gate)
        self.endpoint.start()

    def process(self, line: str) -> str | None:
        self.received.append(line)
        return self.responder(line)

    @property
    def resource(self) -> str:
        return self.endpoint.address

    @property
    def silent(self) -> bool:
        return any(f.kind == "instrument_timeout" for f in self.gate.faults)

    @silent.setter
    def silent(self, value: bool) -> None:
        self.gate.clear()
        if value:
            self.gate.add({"fault": "instrument_timeout"})

    def wait_received(self, count: int, timeout: float = 5.0) -> list[str]:
        """The received lines once there are ``count`` (writes have no reply to wait for)."""
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return list(self.received)

    def drop(self) -> None:
        self.gate.add({"fault": "disconnect"})

    def close(self) -> None:
        self.endpoint.stop()

    def __enter__(self) -> LineServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
