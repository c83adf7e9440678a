"""A transport that plays an exact, expected conversation (for unit tests of drivers).

>>> t = ProtocolTransport([("*IDN?", "Keysight Technologies,E36312A,MY1,1.0"), ("*CLS", None)])
>>> t.query("*IDN?")
'Keysight Technologies,E36312A,MY1,1.0'
>>> t.write("*CLS")
>>> t.verify()   # fails when some pairs were never used

A pair is ``(command, reply)``: ``reply`` ``None`` means a plain write, a string means a
query answered with that string, an exception class or instance is raised when the command
arrives (``TimeoutError``, ``ConnectionError``) to test error paths. A ``None`` command
means an unsolicited line read by :meth:`read`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from labctl.instruments.transports.base import Transport

Pair = tuple[str | None, Any]


class ProtocolMismatch(AssertionError):
    """The driver sent something other than the next expected command."""


class ProtocolTransport(Transport):
    kind = "protocol"

    def __init__(self, pairs: Iterable[Pair], *, name: str = "protocol", resource: str = "PROTOCOL::0", **kw: Any) -> None:
        kw.setdefault("reconnect_attempts", 0)
        super().__init__(resource, name=name, **kw)
        self.pairs: list[Pair] = [tuple(p) for p in pairs]  # type: ignore[misc]
        self.index = 0
        self.sent: list[str] = []

    def _open(self) -> None:
        pass

    def _close(self) -> None:
        pass

    def _next(self, command: str | None, *, want_reply: bool) -> Any:
        if self.index >= len(self.pairs):
            raise ProtocolMismatch(f"unexpected {'query' if want_reply else 'write'} {command!r}: all {len(self.pairs)} expected pairs are used")
        expected, reply = self.pairs[self.index]
        if expected != command:
            raise ProtocolMismatch(f"pair {self.index}: expected {expected!r}, got {command!r}")
        self.index += 1
        if isinstance(reply, BaseException) or (isinstance(reply, type) and issubclass(reply, BaseException)):
            raise reply
        if want_reply and reply is None:
            raise ProtocolMismatch(f"pair {self.index - 1}: {command!r} was sent as a query but the pair has no reply")
        if not want_reply and reply is not None:
            raise ProtocolMismatch(f"pair {self.index - 1}: {command!r} was written, but the pair expects a query with reply {reply!r}")
        return reply

    def _write(self, command: str) -> None:
        self.sent.append(command)
        self._next(command, want_reply=False)

    def _query(self, command: str) -> str:
        self.sent.append(command)
        return str(self._next(command, want_reply=True))

    def _pending(self) -> bool:
        return self.index < len(self.pairs) and self.pairs[self.index][0] is None

    def _read(self) -> str:
        return str(self._next(None, want_reply=True))

    @property
    def unused(self) -> list[Pair]:
        return self.pairs[self.index :]

    def verify(self) -> None:
        """Fail when pairs were left unused (the driver skipped an expected command)."""
        if self.unused:
            raise ProtocolMismatch(f"{len(self.unused)} expected pair(s) never used, first: {self.unused[0]!r}")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        super().__exit__(exc_type, *rest)
        if exc_type is None:
            self.verify()
