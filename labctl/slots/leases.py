"""Leases on shared instruments: one slot at a time, first come first served, with a timeout.

A :class:`Lease` is a fair (FIFO) lock that the same thread may take again (nested calls).
A waiter gives up after its timeout (:class:`~labctl.errors.LeaseTimeout`, naming the slot
that holds it) or as soon as its run is aborted. :meth:`LeasePool.hold` takes several
leases in one global order (sorted by address), so two slots that each need the chamber
and the DAQ can never wait on each other.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from labctl.engine.abort import AbortController
from labctl.errors import LeaseTimeout

POLL_S = 0.05  # how often a waiter looks at its abort controller


class Lease:
    def __init__(self, address: str, role: str = "") -> None:
        self.address = address
        self.role = role or address
        self._cond = threading.Condition()
        self._queue: deque[object] = deque()
        self._owner: int | None = None
        self._depth = 0
        self.holder: str | None = None  # who holds it (a slot's label), for messages
        self.on_change: Callable[[str | None], None] | None = None  # holder label on take/give
        self.grants = 0

    def acquire(self, who: str, timeout: float, abort: AbortController | None = None) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return
            ticket = object()
            self._queue.append(ticket)
            deadline = time.monotonic() + timeout
            try:
                while self._owner is not None or self._queue[0] is not ticket:
                    if abort is not None and abort.requested:
                        abort.raise_if_requested()
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise LeaseTimeout(
                            f"{who} waited {timeout:g} s for the shared {self.role} held by {self.holder or 'another slot'}",
                            instrument=self.role, resource=self.address,
                            hint="the shared instrument may have hung; check it, or raise --lease-timeout")
                    self._cond.wait(min(left, POLL_S))
            except BaseException:
                self._queue.remove(ticket)
                self._cond.notify_all()
                raise
            self._queue.popleft()
            self._owner, self._depth, self.holder = me, 1, who
            self.grants += 1
            if self.on_change is not None:
                self.on_change(who)

    def release(self) -> None:
        with self._cond:
            if self._owner != threading.get_ident():
                return
            self._depth -= 1
            if self._depth == 0:
                self._owner, self.holder = None, None
                if self.on_change is not None:
                    self.on_change(None)
                self._cond.notify_all()


class LeasePool:
    """One lease per shared address."""

    def __init__(self) -> None:
        self._leases: dict[str, Lease] = {}
        self._lock = threading.Lock()

    def lease(self, address: str, role: str = "") -> Lease:
        with self._lock:
            if address not in self._leases:
                self._leases[address] = Lease(address, role)
            return self._leases[address]

    @contextlib.contextmanager
    def hold(self, addresses: Iterable[str], who: str, timeout: float,
             abort: AbortController | None = None) -> Iterator[list[Lease]]:
        """Take every lease (in the global order), give them back in reverse."""
        taken: list[Lease] = []
        try:
            for address in sorted(set(addresses)):
                lease = self.lease(address)
                lease.acquire(who, timeout, abort)
                taken.append(lease)
            yield taken
        finally:
            for lease in reversed(taken):
                lease.release()

    def grants(self) -> dict[str, Any]:
        return {lease.role: lease.grants for lease in self._leases.values()}
