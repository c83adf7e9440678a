"""A station: the fixture's roles opened through their profiles, as typed role objects.

>>> with open_station(load_fixture_file("fixtures/sim-bench.yaml")) as station:
...     psu = station.role("psu")            # a PowerSupply
...     psu.set_voltage("1", 5.0)
...     results = station.safe_state()       # every role, continuing past failures

Profiles are loaded (and validated) when the station is made; connections open lazily on
first use of a role (or all at once with :meth:`Station.open_all`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from labctl.errors import FixtureError, LabctlError
from labctl.instruments.driver import ProfileDriver, SafeStateUnconfirmed
from labctl.instruments.impl import DEFAULT_IMPLS, RoleImpl
from labctl.instruments.profile import Profile, load_profile
from labctl.instruments.roles import ROLE_TYPES, InstrumentErrorEntry, SafeStateResult
from labctl.instruments.sessionlog import SessionLog
from labctl.instruments.timeouts import parse_seconds
from labctl.instruments.transports import make_transport

T = TypeVar("T")

_TRANSPORT_OPTIONS = ("visa_backend", "reconnect_attempts", "reconnect_delay", "reply_spin_us")
#: how long (µs) a run's connection watches for a reply before it sleeps until the reply comes
#: (role option ``reply_spin_us``; see :meth:`Transport._watch_for_reply`)
DEFAULT_REPLY_SPIN_US = 200.0


@dataclass
class RoleEntry:
    name: str
    binding: Any  # labctl.fixture.model.RoleBinding
    profile: Profile
    driver: ProfileDriver
    impls: dict[str, RoleImpl] = field(default_factory=dict)


#: instrument I/O records a station keeps in memory (the run's recorder is handed them at every
#: step end and every 1,000 records; a soak of days must not grow the process)
SESSION_LOG_KEEP = 10_000


class Station:
    def __init__(self, fixture: Any, *, session_log: SessionLog | None = None, clock: Any = None,
                 profile_search: list[Path] | None = None, reply_spin_us: float = DEFAULT_REPLY_SPIN_US) -> None:
        self.fixture = fixture
        self.reply_spin_us = reply_spin_us  # a role's option reply_spin_us wins
        self.clock = clock
        self.session_log = session_log if session_log is not None else SessionLog(
            clock=clock.wall_time if clock is not None else None, max_records=SESSION_LOG_KEEP)
        self._lock = threading.RLock()
        self._entries: dict[str, RoleEntry] = {}
        for name, binding in fixture.roles.items():
            self._entries[name] = self._make_entry(name, binding, profile_search)

    def _make_entry(self, name: str, binding: Any, search: list[Path] | None) -> RoleEntry:
        try:
            profile = load_profile(binding.driver, search)
        except LabctlError as err:
            err.message = f"role {name}: {err.message}"
            raise
        opts = dict(binding.options)
        timeout = parse_seconds(binding.timeout, profile.transport.timeout, where=f"roles.{name}.timeout")
        serial_opts = {"baud_rate": profile.transport.baud_rate} if profile.transport.baud_rate else {}
        transport = make_transport(
            binding.resource,
            kind=profile.transport.kind,
            backend=str(opts.get("visa_backend", "@py")),
            name=name,
            timeout=timeout,
            read_termination=profile.transport.read_termination,
            write_termination=profile.transport.write_termination,
            session_log=self.session_log,
            reconnect_attempts=int(opts.get("reconnect_attempts", 2)),
            reconnect_delay=float(opts.get("reconnect_delay", 0.2)),
            reply_spin=_reply_spin(opts.get("reply_spin_us", self.reply_spin_us), name),
            options={**serial_opts, **opts},
        )
        variables = {k: v for k, v in opts.items() if k not in _TRANSPORT_OPTIONS}
        return RoleEntry(name, binding, profile, ProfileDriver(profile, transport, options=variables))

    # ------------------------------------------------------------------ lookup
    @property
    def names(self) -> list[str]:
        return list(self._entries)

    def entry(self, name: str) -> RoleEntry:
        try:
            return self._entries[name]
        except KeyError:
            raise FixtureError(f"the station has no role {name!r}",
                               hint=f"roles of station {self.fixture.station}: {', '.join(self._entries)}") from None

    def profile(self, name: str) -> Profile:
        return self.entry(name).profile

    def driver(self, name: str) -> ProfileDriver:
        """The opened profile driver of a role (for pre-flight and tools; checks use ``role``)."""
        entry = self.entry(name)
        with self._lock:
            entry.driver.open()
        return entry.driver

    def driver_is_open(self, name: str) -> bool:
        return self.entry(name).driver.transport.is_open

    def role(self, name: str, kind: type[T] | str | None = None) -> T:
        """The typed role object, e.g. ``station.role("psu")`` or ``station.role("daq", Multimeter)``."""
        entry = self.entry(name)
        role_kind = _kind_name(kind) if kind is not None else entry.profile.roles[0]
        if role_kind not in entry.profile.roles:
            raise FixtureError(f"role {name} ({entry.profile.name}) is not a {role_kind}",
                               hint=f"profile {entry.profile.name} serves {', '.join(entry.profile.roles)}")
        with self._lock:
            impl = entry.impls.get(role_kind)
            if impl is None:
                impl = entry.impls[role_kind] = _impl_class(entry.profile, role_kind)(entry.driver, name)
        if not entry.driver.transport.is_open:
            entry.driver.open()  # outside the station lock: a dead instrument never holds up the others
        return cast(T, impl)

    def channel(self, signal: str) -> tuple[Any, str]:
        """A named fixture signal (``VDD_CORE``) → (role object, channel id)."""
        if signal not in self.fixture.channels:
            raise FixtureError(f"no channel named {signal!r} in the fixture",
                               hint=f"known: {', '.join(self.fixture.channels) or 'none'}")
        ref = self.fixture.channel(signal)
        role = self.role(ref.role)
        return role, self.entry(ref.role).driver.channel(ref.channel)

    # --------------------------------------------------------------- lifecycle
    def open_all(self) -> dict[str, LabctlError | None]:
        """Open every role; per role None or the error (nothing raised)."""
        out: dict[str, LabctlError | None] = {}
        for name in self._entries:
            try:
                self.role(name)
                out[name] = None
            except LabctlError as err:
                out[name] = err
        return out

    def safe_state(self) -> dict[str, SafeStateResult]:
        """Every role's safe state, all at once (one thread per role, so a hung instrument
        delays only its own); per-role results in fixture order, none raised."""
        names = self.safe_state_roles()
        results: dict[str, SafeStateResult] = {}
        threads = [threading.Thread(target=lambda n=name: results.__setitem__(n, self._safe_state_of(n)),
                                    name=f"safe-state-{name}", daemon=True) for name in names]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return {name: results[name] for name in names}

    def safe_state_roles(self) -> list[str]:
        """The roles whose safe state this station drives: all of them (a slot's station,
        only its own)."""
        return list(self._entries)

    def _safe_state_of(self, name: str) -> SafeStateResult:
        start = time.monotonic()
        try:
            actions = self.role(name).safe_state()  # type: ignore[attr-defined]
            result = SafeStateResult(name, True, list(actions))
        except SafeStateUnconfirmed as err:
            result = SafeStateResult(name, False, err.done, error=str(err), wrong_state=err.wrong)
        except LabctlError as err:
            result = SafeStateResult(name, False, error=str(err))
        except Exception as err:  # noqa: BLE001 - a safe state must never stop the others
            result = SafeStateResult(name, False, error=f"{type(err).__name__}: {err}")
        result.seconds = time.monotonic() - start
        return result

    def drain_errors(self, names: list[str] | None = None) -> dict[str, list[InstrumentErrorEntry]]:
        """Error queues of the opened roles (or of ``names``); roles without errors are left out."""
        out: dict[str, list[InstrumentErrorEntry]] = {}
        targets = names if names is not None else [n for n, e in self._entries.items() if e.driver.transport.is_open]
        for name in targets:
            errors = self.driver(name).drain_errors()
            if errors:
                out[name] = errors
        return out

    def close(self) -> None:
        for entry in self._entries.values():
            entry.driver.close()

    def __enter__(self) -> Station:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Station {self.fixture.station} roles={self.names}>"


def _kind_name(kind: type | str) -> str:
    if isinstance(kind, str):
        if kind not in ROLE_TYPES:
            raise FixtureError(f"unknown role kind {kind!r}", hint=f"one of {', '.join(ROLE_TYPES)}")
        return kind
    for name, proto in ROLE_TYPES.items():
        if proto is kind:
            return name
    raise FixtureError(f"unknown role interface {kind!r}")


def _impl_class(profile: Profile, role_kind: str) -> type[RoleImpl]:
    if profile.driver_class:
        from labctl.instruments.registry import driver_class

        cls = driver_class(profile.driver_class, profile_file=profile.path)
        if getattr(cls, "kind", role_kind) == role_kind:
            return cls
    return DEFAULT_IMPLS[role_kind]


def open_station(fixture: Any, *, session_log: SessionLog | None = None, clock: Any = None,
                 profile_search: list[Path] | None = None, slot: str | None = None,
                 reply_spin_us: float | None = None) -> Station:
    """A :class:`Station` for a Fixture (or the path of a fixture file).

    ``slot`` selects a DUT position of the fixture: its roles and channels replace the
    station-wide ones of the same name. ``reply_spin_us``: how long a query watches for its
    reply where the role does not say (None: :data:`DEFAULT_REPLY_SPIN_US`).
    """
    if isinstance(fixture, str | Path):
        from labctl.fixture.loader import load_fixture_file

        fixture = load_fixture_file(fixture)
    if slot is not None:
        fixture = _with_slot(fixture, slot)
    spin = DEFAULT_REPLY_SPIN_US if reply_spin_us is None else reply_spin_us
    return Station(fixture, session_log=session_log, clock=clock, profile_search=profile_search, reply_spin_us=spin)


def _with_slot(fixture: Any, slot: str) -> Any:
    return fixture.slot_view(slot)


def _reply_spin(value: Any, role: str) -> float:
    """A role's ``reply_spin_us`` option as seconds (0 = sleep until the reply at once)."""
    from labctl.instruments.transports.base import MAX_REPLY_SPIN

    top = MAX_REPLY_SPIN * 1e6
    try:
        us = float(value)
    except (TypeError, ValueError):
        us = float("nan")
    if isinstance(value, bool) or not 0 <= us <= top:
        raise FixtureError(f"roles.{role}.options.reply_spin_us: {value!r} is not a number of microseconds "
                           f"from 0 to {top:.0f}", hint="0 waits for replies without watching; the default is "
                           f"{DEFAULT_REPLY_SPIN_US:.0f}")
    return us * 1e-6
