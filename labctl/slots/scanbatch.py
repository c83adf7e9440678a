"""One scan of a shared scanner serves every slot waiting for it.

A DAQ970A reads a channel list in one ``MEAS:TEMP?``/``MEAS:VOLT:DC?`` call. When several
slots read their channels of the one shared DAQ at once (16 boards reading their rails),
:class:`ScanBatcher` gathers what they wait for and reads it in one scan per kind
(temperatures, DC volts) under one lease, instead of one leased call per reading:

- the first slot to ask while no scan is under way leads: it takes the DAQ's lease (in
  the global order, with the slot's timeout and abort), takes every request waiting at that
  moment, scans, hands each slot its readings, and drains the DAQ's error queue before
  giving the lease back; whatever the queue held is reported to every slot of that scan
  (:meth:`SlotStation.note_shared_errors`);
- the others wait for their readings; a request that arrives while a scan is under way
  goes into the next scan;
- a reading that is invalid (overload) is an error of the slot that asked for it only;
- the commands are written to the session log of every slot in the scan.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from labctl.errors import InstrumentReplyError, LeaseTimeout

POLL_S = 0.05
OVERLOAD_ABOVE = 9.0e37


@dataclass
class _Request:
    kind: str  # "temperature" | "voltage"
    channels: list[str]
    station: Any  # the asking slot's SlotStation
    done: threading.Event = field(default_factory=threading.Event)
    values: dict[str, float] | None = None
    error: BaseException | None = None


class ScanBatcher:
    """Coalesces the slots' reads of one shared scanner role into channel-list scans."""

    def __init__(self, shared: Any, role: str) -> None:
        self.shared = shared  # the SharedBench
        self.role = role
        self._cond = threading.Condition()
        self._pending: list[_Request] = []
        self._busy = False
        self.scans = 0  # scans made (one per kind per batch)
        self.requests = 0  # readings asked for

    def read(self, station: Any, kind: str, channels: Sequence[str]) -> dict[str, float]:
        req = _Request(kind, [str(c) for c in channels], station)
        deadline = time.monotonic() + self.shared.lease_timeout
        with self._cond:
            self.requests += 1
            self._pending.append(req)
            while not req.done.is_set():
                if not self._busy:
                    self._busy = True
                    break  # this slot leads the next scan
                if station.abort.requested or time.monotonic() > deadline:
                    if req in self._pending:
                        self._pending.remove(req)
                    station.abort.raise_if_requested()
                    lease = self.shared.pool.lease(self.shared.address(self.role))
                    raise LeaseTimeout(
                        f"slot {station.slot} waited {self.shared.lease_timeout:g} s for the shared {self.role} "
                        f"held by {lease.holder or 'another slot'} (its scan was to serve this slot too)",
                        instrument=self.role, resource=lease.address,
                        hint="the shared instrument may have hung; check it, or raise --lease-timeout")
                self._cond.wait(POLL_S)
        if not req.done.is_set():
            self._lead(station, req)
        if req.error is not None:
            raise req.error
        assert req.values is not None
        return req.values

    def _lead(self, station: Any, mine: _Request) -> None:
        try:
            with station.leased([self.role], route=False):
                with self._cond:
                    batch, self._pending = self._pending, []
                self._scan(batch)
        except BaseException:
            with self._cond:  # the lease was not had: this slot's request fails, the others wait on
                if mine in self._pending:
                    self._pending.remove(mine)
            raise
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def _scan(self, batch: list[_Request]) -> None:
        shared = self.shared
        routed = shared.logs[self.role]
        saved = routed.current
        routed.current = list({id(r.station): r.station.session_log for r in batch}.values())  # a slot once
        try:
            role = shared.station.role(self.role)
            for kind in ("temperature", "voltage"):
                asked = [r for r in batch if r.kind == kind]
                if not asked:
                    continue
                chans = list(dict.fromkeys(c for r in asked for c in r.channels))
                self.scans += 1
                try:
                    values = role.scan_temperatures(chans) if kind == "temperature" else role.scan_voltages(chans)
                except BaseException as err:  # noqa: BLE001 - every slot of the scan gets the error
                    for r in asked:
                        r.error = err
                    continue
                for r in asked:
                    bad = [c for c in r.channels if not values[c] < OVERLOAD_ABOVE]
                    if bad:
                        r.error = InstrumentReplyError(f"overload/invalid {kind} reading on channel(s) "
                                                       f"{', '.join(bad)}", instrument=self.role)
                    else:
                        r.values = {c: values[c] for c in r.channels}
            errors = _drain(shared.station, self.role)
            if errors:
                for station in {id(r.station): r.station for r in batch}.values():
                    station.note_shared_errors(self.role, errors, also=[r.station.slot for r in batch])
        finally:
            routed.current = saved
            for r in batch:
                if r.values is None and r.error is None:
                    r.error = InstrumentReplyError("no reading", instrument=self.role)
                r.done.set()


def _drain(station: Any, role: str) -> list[Any]:
    """The role's error queue (entries), or one entry saying it could not be read."""
    from labctl.errors import LabctlError
    from labctl.instruments.roles import InstrumentErrorEntry

    driver = station.driver(role)
    if driver.transport.silent:
        # its last answer timed out: asked once more, still under this lease, since the queue
        # may hold why (a channel it does not have), which must not wait for the next slot's
        # call to be read and charged to that slot; if it does not answer, the call's own
        # error says so
        try:
            return list(driver.drain_errors(after_timeout=True))
        except LabctlError:
            return []
    try:
        return list(driver.drain_errors())
    except LabctlError as err:
        return [InstrumentErrorEntry(0, f"error queue could not be read: {err}", role)]
