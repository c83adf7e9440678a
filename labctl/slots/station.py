"""The bench's shared instruments and each slot's station.

:class:`SharedBench` opens the fixture's station-wide roles (chamber, DAQ, a BERT mainframe
…) once: one connection per address, whatever the number of slots. Everything sent on them
goes to the bench's session log, and, while a slot holds the lease, to that slot's log too.

:class:`SlotStation` is the ordinary :class:`~labctl.instruments.station.Station` of one
slot (the fixture merged with the slot's ``roles`` and ``channels``), except that a shared
role is reached through a lease on every call, its safe state is not the slot's (the bench
makes the shared environment safe when the last slot ends), and closing a slot leaves the
shared connections open.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from labctl.engine.abort import AbortController
from labctl.instruments.roles import InstrumentErrorEntry, SafeStateResult, TemperatureScanner
from labctl.instruments.sessionlog import SessionLog
from labctl.instruments.station import RoleEntry, Station
from labctl.slots.leases import LeasePool
from labctl.slots.scanbatch import ScanBatcher

DEFAULT_LEASE_TIMEOUT = 60.0  # wall seconds a slot waits for a shared instrument


class _RoutedLog:
    """The session log of a shared transport: the bench's log, and the lease holder's."""

    def __init__(self, bench_log: SessionLog) -> None:
        self.bench_log = bench_log
        self.current: SessionLog | list[SessionLog] | None = None  # a list: the slots of one batched scan

    def record(self, instrument: str, resource: str, kind: str, text: str, **extra: Any) -> dict[str, Any]:
        rec = self.bench_log.record(instrument, resource, kind, text, **extra)
        current = self.current
        for slot_log in current if isinstance(current, list) else [current] if current is not None else []:
            slot_log.record(instrument, resource, kind, text, shared=True, **extra)
        return rec


class SharedBench:
    """The station-wide roles of a fixture with slots, opened once and leased to slots."""

    def __init__(self, fixture: Any, *, clock: Any = None, lease_timeout: float = DEFAULT_LEASE_TIMEOUT,
                 profile_search: list[Path] | None = None, log_path: str | Path | None = None) -> None:
        self.fixture = fixture.model_copy(update={"slots": []})
        log = SessionLog(log_path, clock=clock.wall_time if clock is not None else None) if log_path else None
        # (many slot threads share the CPUs: none watches for replies unless a role asks to)
        self.station = Station(self.fixture, clock=clock, profile_search=profile_search, session_log=log,
                               reply_spin_us=0)
        self.session_log = self.station.session_log
        self.lease_timeout = lease_timeout
        self.pool = LeasePool()
        self.logs: dict[str, _RoutedLog] = {}
        self.batchers: dict[str, ScanBatcher] = {}
        for name in self.station.names:
            entry = self.station.entry(name)
            routed = _RoutedLog(self.session_log)
            entry.driver.transport.session_log = routed
            self.logs[name] = routed
            self.pool.lease(self.address(name), name)
            if self.station.entry(name).profile.roles[0] == "temperature_scanner":
                self.batchers[name] = ScanBatcher(self, name)

    def roles_of(self, slot: Any) -> set[str]:
        """The station-wide roles a slot shares (those it does not bind itself)."""
        return {name for name in self.station.names if name not in slot.roles}

    def address(self, role: str) -> str:
        return self.station.entry(role).binding.resource

    def safe_state(self, who: str = "bench", abort: AbortController | None = None) -> dict[str, SafeStateResult]:
        """The shared roles' safe state (chamber to its safe temperature …), each under its lease."""
        out: dict[str, SafeStateResult] = {}
        for name in self.station.names:
            try:
                with self.pool.hold([self.address(name)], who, self.lease_timeout, abort):
                    out[name] = self.station._safe_state_of(name)
            except Exception as err:  # noqa: BLE001 - one role never stops the others
                out[name] = SafeStateResult(name, False, error=str(err))
        return out

    def close(self) -> None:
        self.station.close()
        self.session_log.close()


class SlotStation(Station):
    def __init__(self, fixture: Any, shared: SharedBench, slot: str, *, shared_roles: set[str],
                 abort: AbortController, clock: Any = None, profile_search: list[Path] | None = None) -> None:
        self.shared = shared
        self.slot = slot
        self.shared_roles = set(shared_roles)
        self.abort = abort
        self._depth = threading.local()  # nesting of this thread's leased calls
        self._errors_lock = threading.Lock()
        self._shared_errors: dict[str, list[InstrumentErrorEntry]] = {}  # shared role -> this slot's errors
        super().__init__(fixture, clock=clock, profile_search=profile_search, reply_spin_us=0)

    def _make_entry(self, name: str, binding: Any, search: list[Path] | None) -> RoleEntry:
        if name in self.shared_roles:
            return self.shared.station.entry(name)
        return super()._make_entry(name, binding, search)

    @property
    def own_names(self) -> list[str]:
        return [n for n in self.names if n not in self.shared_roles]

    def leased(self, names: list[str], *, route: bool = True) -> Any:
        """Hold the leases of these shared roles (in the global order); the calls made meanwhile
        are written to this slot's session log too (unless ``route`` is false: a batched scan
        routes the log to every slot it serves)."""
        return _Holding(self, [n for n in names if n in self.shared_roles], route)

    def role(self, name: str, kind: Any = None) -> Any:
        if name not in self.shared_roles:
            return super().role(name, kind)
        if name in self.shared.batchers and kind in (None, "temperature_scanner", TemperatureScanner):
            return _BatchedScanner(self, name, lambda: self.shared.station.role(name, kind))
        return _Leased(self, name, lambda: self.shared.station.role(name, kind))

    # -- a shared instrument's errors, attributed to the slot whose command caused them --
    def note_shared_errors(self, role: str, entries: list[InstrumentErrorEntry], also: list[str] | None = None) -> None:
        """Errors read from a shared role's queue right after this slot's call, under its lease."""
        others = [s for s in (also or []) if s != self.slot]
        if others:  # a batched scan: the queue was read once for all of its slots
            note = f" (a scan shared with slot {', '.join(others)})"
            entries = [InstrumentErrorEntry(e.code, e.message + note, e.instrument) for e in entries]
        with self._errors_lock:
            self._shared_errors.setdefault(role, []).extend(entries)

    def take_shared_errors(self, role: str) -> list[InstrumentErrorEntry]:
        with self._errors_lock:
            return self._shared_errors.pop(role, [])

    def drain_errors(self, names: list[str] | None = None) -> dict[str, list[InstrumentErrorEntry]]:
        """This slot's own roles' error queues; a shared role's are those read after this slot's
        own calls on it (each read within the call's lease), so another slot's error is never
        this slot's."""
        targets = names if names is not None else self.names
        own = [n for n in targets if n not in self.shared_roles
               and (names is not None or self.entry(n).driver.transport.is_open)]  # as Station: the open ones
        out = super().drain_errors(own)
        with self._errors_lock:
            for n in targets:
                if n in self.shared_roles and self._shared_errors.get(n):
                    out[n] = self._shared_errors.pop(n)
        return out

    def _after_shared_call(self, name: str) -> None:
        """Still under the lease, after the outermost call: the shared role's error queue is this slot's."""
        from labctl.slots.scanbatch import _drain

        errors = _drain(self.shared.station, name)  # (after a timeout too: the next slot must not read it)
        if errors:
            self.note_shared_errors(name, errors)

    def driver(self, name: str) -> Any:
        if name not in self.shared_roles:
            return super().driver(name)
        return _Leased(self, name, lambda: self.shared.station.driver(name))

    def safe_state_roles(self) -> list[str]:
        """This slot's roles only (its supply outputs and load inputs off …): the shared
        chamber is the bench's to make safe."""
        return self.own_names

    def close(self) -> None:
        for name in self.own_names:
            self.entry(name).driver.close()


class _Holding:
    def __init__(self, station: SlotStation, names: list[str], route: bool = True) -> None:
        self.station = station
        self.names = names if route else []
        self.lease_names = names
        self._cm: Any = None

    def __enter__(self) -> None:
        st = self.station
        self._cm = st.shared.pool.hold([st.shared.address(n) for n in self.lease_names], f"slot {st.slot}",
                                       st.shared.lease_timeout, st.abort)
        self._cm.__enter__()
        self._saved = {n: st.shared.logs[n].current for n in self.names}
        for n in self.names:
            st.shared.logs[n].current = st.session_log

    def __exit__(self, *exc: object) -> None:
        st = self.station
        for n in self.names:
            st.shared.logs[n].current = self._saved[n]
        self._cm.__exit__(*exc)


class _Leased:
    """A shared role (or its driver) as a slot sees it: every call holds the instrument's lease."""

    def __init__(self, station: SlotStation, name: str, target: Callable[[], Any]) -> None:
        object.__setattr__(self, "_station", station)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_target", target)

    def __getattr__(self, attr: str) -> Any:
        st = self._station
        with st.leased([self._name]):
            value = getattr(self._target(), attr)
        if not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            name = self._name
            with st.leased([name]):
                depth = getattr(st._depth, "n", 0)
                st._depth.n = depth + 1
                try:
                    value = getattr(self._target(), attr)(*args, **kwargs)
                    if attr == "drain_errors" and depth == 0:  # with those read after this slot's calls
                        value = st.take_shared_errors(name) + list(value)
                    return value
                finally:
                    st._depth.n = depth
                    if depth == 0:  # the error queue read in the same lease as the command
                        st._after_shared_call(name)

        return call

    def __repr__(self) -> str:
        return f"<shared {self._name} of slot {self._station.slot}>"


class _BatchedScanner(_Leased):
    """A shared scanner as a slot sees it: single readings join the next channel-list scan
    (:class:`~labctl.slots.scanbatch.ScanBatcher`); everything else is a leased call."""

    def _batch(self, kind: str, channels: Sequence[str]) -> dict[str, float]:
        st = self._station
        return st.shared.batchers[self._name].read(st, kind, channels)

    def read_temperature(self, channel: str) -> float:
        return self._batch("temperature", [channel])[str(channel)]

    def read_voltage(self, channel: str) -> float:
        return self._batch("voltage", [channel])[str(channel)]

    def scan_temperatures(self, channels: Sequence[str]) -> dict[str, float]:
        return self._batch("temperature", channels)

    def scan_voltages(self, channels: Sequence[str]) -> dict[str, float]:
        return self._batch("voltage", channels)
