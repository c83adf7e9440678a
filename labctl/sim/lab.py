"""The simulated lab of one fixture: one bench model, one emulator per role, served at the
addresses written in the fixture (TCP ports on loopback, serial devices as pty symlinks)."""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

from labctl.clock import Clock, ScaledClock
from labctl.errors import FixtureError, InstrumentDisconnected
from labctl.fixture.model import ChannelRef, Fixture
from labctl.sim.config import SimConfig
from labctl.sim.control import ControlServer, default_control_path
from labctl.sim.emulators import load_all
from labctl.sim.faults import DUT_FAULTS, VARIANTS, FaultGate, normalize
from labctl.sim.physics.bench import Bench
from labctl.sim.physics.board import Board
from labctl.sim.physics.dut import DutParams
from labctl.sim.physics.rack import Rack
from labctl.sim.ptyhost import PtyEndpoint
from labctl.sim.server import TcpEndpoint

log = logging.getLogger(__name__)

_TCP = re.compile(r"^TCPIP\d*::(?P<host>[^:]+)::(?P<port>\d+)::SOCKET$", re.IGNORECASE)
_ASRL = re.compile(r"^ASRL(?P<path>/.+)::INSTR$", re.IGNORECASE)
_LOOPBACK = re.compile(r"^(127\.\d+\.\d+\.\d+|localhost)$")
DEFAULT_DUT = "SIM-GOLD-0001"
TICK_WALL_S = 0.25


def parse_celsius(text: str | float) -> float:
    m = re.match(r"^\s*([+-]?\d+(?:\.\d*)?)\s*(degC|°C|C|celsius)?\s*$", str(text), re.IGNORECASE)
    if not m:
        raise FixtureError(f"sim.ambient: {text!r} is not a temperature", hint="write e.g. '25 degC'")
    return float(m.group(1))


def build_dut(serial: str, sim: SimConfig) -> tuple[DutParams, list[dict[str, Any]]]:
    """The DUT's parameters (variation + variant + DUT faults) and its instrument faults."""
    entry = sim.duts.get(serial)
    variant = entry.variant if entry else "golden"
    if variant not in VARIANTS:
        raise FixtureError(f"sim.duts.{serial}.variant: unknown variant {variant!r}",
                           hint=f"use one of {', '.join(VARIANTS)}")
    params = DutParams.build(serial, sim.seed, variant)
    specs = [*VARIANTS[variant], *(entry.faults if entry else []), *sim.faults]
    instrument_faults: list[dict[str, Any]] = []
    for raw in specs:
        try:
            spec = normalize(raw)
            if spec["fault"] in DUT_FAULTS:
                params.apply_fault(spec["fault"], spec)
            else:
                instrument_faults.append(spec)
        except ValueError as err:
            raise FixtureError(f"sim faults of {serial}: {err}") from None
    return params, instrument_faults


class SimulatedLab:
    """``with SimulatedLab(fixture) as lab: ...`` serves every role of the fixture."""

    def __init__(self, fixture: Fixture, *, clock: Clock | None = None, dut_serial: str | None = None) -> None:
        load_all()
        self.fixture = fixture
        self.config = fixture.sim or SimConfig()
        self.clock: Clock = clock or ScaledClock(self.config.time_scale)
        room = parse_celsius(self.config.ambient)
        self.rack: Rack | None = None
        inst_faults: list[dict[str, Any]] = []
        if fixture.slots:  # several boards in one chamber: one bay per slot
            duts = {}
            for slot in fixture.slots:
                params, faults = build_dut(slot_dut(self.config, slot.id), self.config)
                duts[slot.id] = params
                inst_faults += [_in_slot(spec, slot.id, slot.roles) for spec in faults]
            self.rack = Rack(duts, clock=self.clock, seed=self.config.seed, room=room)
            self.bench = next(iter(self.rack.bays.values()))
        else:
            serial = dut_serial or self.config.dut or next(iter(self.config.duts), None) or DEFAULT_DUT
            params, inst_faults = build_dut(serial, self.config)
            self.bench = Bench(params, clock=self.clock, seed=self.config.seed, room=room)
        self.instruments: dict[str, Any] = {}
        self.gates: dict[str, FaultGate] = {}
        self.endpoints: dict[str, TcpEndpoint | PtyEndpoint] = {}
        self._started = False
        self._lock = threading.Lock()
        self._ticker: threading.Thread | None = None
        self._tick_stop = threading.Event()
        self.control: ControlServer | None = None
        for role, binding in fixture.roles.items():
            self._add_role(role, binding)
        for slot in fixture.slots:
            for role, binding in slot.roles.items():
                self._add_role(role, binding, slot=slot)
        self._wire_bays()
        for spec in inst_faults:
            self.inject(spec)

    def _add_role(self, role: str, binding: Any, slot: Any = None) -> None:
        from labctl.sim.emulators import EMULATORS

        cls = EMULATORS.get(binding.driver)
        where = f"slots.{slot.id}.roles.{role}" if slot is not None else f"roles.{role}"
        if cls is None:
            raise FixtureError(f"{where}.driver: the simulated lab has no emulator for {binding.driver!r}",
                               hint=f"simulated drivers: {', '.join(sorted(EMULATORS))}")
        channels = {**self.fixture.channels, **(slot.channels if slot is not None else {})}
        wiring = {}
        for name, text in channels.items():
            ref = ChannelRef.parse(text)
            if ref.role == role:
                wiring[ref.channel.strip("()@ ")] = name
        bench = self.rack.bay(slot.id) if slot is not None and self.rack is not None else self.bench
        try:
            inst = cls(bench=bench, serial=binding.asset.serial, role=role, options=binding.options, wiring=wiring)
        except ValueError as err:
            raise FixtureError(f"{where}.options: {err}") from None
        role = f"{slot.id}/{role}" if slot is not None else role
        gate = FaultGate()
        resource = binding.resource.strip()
        m = _TCP.match(resource)
        if m:
            if not _LOOPBACK.match(m["host"]):
                raise FixtureError(f"{where}.resource: the simulated lab serves on loopback only, not {m['host']}",
                                   hint="use TCPIP0::127.0.0.1::PORT::SOCKET")
            endpoint: TcpEndpoint | PtyEndpoint = TcpEndpoint(m["host"], int(m["port"]), inst, gate)
        else:
            a = _ASRL.match(resource)
            path = a["path"] if a else resource
            if not path.startswith("/"):
                raise FixtureError(f"{where}.resource: the simulated lab cannot serve {resource!r}",
                                   hint="use TCPIP0::127.0.0.1::PORT::SOCKET or a device path like /tmp/labctl-sim/x")
            endpoint = PtyEndpoint(path, inst, gate)
        self.instruments[role] = inst
        self.gates[role] = gate
        self.endpoints[role] = endpoint

    def _wire_bays(self) -> None:
        """A station-wide instrument (the DAQ) reads each slot's channels on that slot's board."""
        if self.rack is None:
            return
        for slot in self.fixture.slots:
            for name, text in slot.channels.items():
                ref = ChannelRef.parse(text)
                inst = self.instruments.get(ref.role)
                if ref.role not in slot.roles and inst is not None and hasattr(inst, "bays"):
                    channel = ref.channel.strip("()@ ")
                    inst.bays[channel] = self.rack.bay(slot.id)
                    inst.wiring[channel] = name

    # -- life cycle ---------------------------------------------------------------------
    def start(self) -> SimulatedLab:
        with self._lock:
            if self._started:
                return self
            started: list[TcpEndpoint | PtyEndpoint] = []
            for role, ep in self.endpoints.items():
                try:
                    ep.start()
                except OSError as err:
                    for s in started:
                        s.stop()
                    raise InstrumentDisconnected(
                        f"cannot serve role {role}: {err.strerror or err}",
                        resource=ep.address,
                        hint="another simulated lab may be serving this fixture; stop it or use other ports",
                    ) from None
                started.append(ep)
            self._started = True
            self._start_control()
            if not hasattr(self.clock, "advance"):  # a manual clock moves only when told
                self._tick_stop.clear()
                self._ticker = threading.Thread(target=self._tick, name="sim-physics", daemon=True)
                self._ticker.start()
            return self

    def _start_control(self) -> None:
        path = default_control_path(self.fixture)
        if len(str(path)) > 100:
            log.warning("control socket path too long for a Unix socket: %s", path)
            return
        try:
            self.control = ControlServer(self, path)
            self.control.start()
        except OSError as err:
            log.warning("simulated lab: no control socket at %s (%s)", path, err)
            self.control = None

    @property
    def control_path(self) -> str | None:
        return str(self.control.path) if self.control else None

    def _tick(self) -> None:
        """Keep the model integrated while nobody asks, so the next query is quick."""
        while not self._tick_stop.wait(TICK_WALL_S):
            self.bench.update()

    def stop(self) -> None:
        with self._lock:
            self._tick_stop.set()
            if self._ticker is not None:
                self._ticker.join(timeout=2)
                self._ticker = None
            for ep in self.endpoints.values():
                ep.stop()
            if self.control is not None:
                self.control.stop()
                self.control = None
            self._started = False

    def __enter__(self) -> SimulatedLab:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- inspection ---------------------------------------------------------------------
    @property
    def board(self) -> Board:
        """The physics model of the DUT on the bench."""
        return self.bench.board

    @property
    def dut_serial(self) -> str:
        return self.bench.dut.serial

    @property
    def addresses(self) -> dict[str, str]:
        return {role: ep.address for role, ep in self.endpoints.items()}

    def instrument(self, role: str) -> Any:
        return self.instruments[role]

    # -- faults and DUTs ----------------------------------------------------------------
    def inject(self, fault_spec: Any, slot: str | None = None) -> None:
        """Inject a fault now: a name, ``{"fault": "disconnect", "role": "bert", "after": 3}``…
        On a rack, ``slot`` names the board a board fault acts on (one is required: the lab
        does not pick one), and the slot whose instrument a bare role means (``psu``: that
        slot's; ``2/psu`` names slot 2's supply without it)."""
        try:
            spec = normalize(fault_spec)
        except ValueError as err:
            raise FixtureError(f"fault {fault_spec!r}: {err}") from None
        if slot is not None:
            bench = self.slot_bench(slot)
            spec = _in_slot(spec, slot, next(s.roles for s in self.fixture.slots if s.id == slot))
        elif self.rack is not None and spec["fault"] in DUT_FAULTS:
            raise FixtureError(f"fault {spec['fault']} acts on a board, and this lab is a rack of "
                               f"{len(self.rack.bays)}: name the slot whose board it hits",
                               hint=f"--slot ID (slots: {', '.join(self.rack.bays)})")
        else:
            bench = self.bench
        if spec["fault"] in DUT_FAULTS:
            try:
                with bench.lock:
                    bench.update()
                    bench.dut.apply_fault(spec["fault"], spec)
                    bench.touch()
                    bench.update()  # solved now: what the fault stops (a dead rail) stops at this instant
            except ValueError as err:
                raise FixtureError(f"fault {fault_spec!r}: {err}") from None
            return
        role = spec["role"]
        if role not in self.instruments:
            raise FixtureError(f"fault {spec['fault']}: no role {role!r} in this fixture",
                               hint=f"roles: {', '.join(self.instruments)}")
        if spec["fault"] == "scpi_error":
            inst = self.instruments[role]
            rules = getattr(inst, "error_rules", None)
            if rules is None:
                raise FixtureError(f"fault scpi_error: role {role} is not a SCPI instrument")
            rules.append(dict(spec))
        else:
            self.gates[role].add(spec)

    def clear_faults(self, role: str | None = None) -> None:
        """Remove instrument faults (of one role or all)."""
        for r in [role] if role else list(self.gates):
            self.gates[r].clear()
            rules = getattr(self.instruments[r], "error_rules", None)
            if rules is not None:
                rules.clear()

    def clear_board_faults(self) -> None:
        """Remove the board faults injected at run time from every board: each DUT is again what
        the fixture says it is (its variant and ``sim.duts`` faults stay: they are the board's)."""
        for bench in self.rack.bays.values() if self.rack is not None else [self.bench]:
            with bench.lock:
                bench.update()
                bench.board.params = build_dut(bench.dut.serial, self.config)[0]
                bench.touch()
                bench.update()  # solved now: what the fault stopped (a dead rail) runs again from this instant

    def swap_dut(self, serial: str, slot: str | None = None) -> None:
        """Put another DUT on the fixture, or in one slot of a rack (its variant and faults
        come from ``sim.duts``)."""
        params, inst_faults = build_dut(serial, self.config)
        if slot is not None:
            if self.rack is None or slot not in self.rack.bays:
                raise FixtureError(f"no slot {slot!r} in this simulated lab",
                                   hint=f"slots: {', '.join(self.rack.bays) if self.rack else 'none'}")
            self.rack.bay(slot).swap_dut(params)
            roles = next(s.roles for s in self.fixture.slots if s.id == slot)
            for role in [f"{slot}/{r}" for r in roles]:
                self.clear_faults(role)
            for spec in inst_faults:
                self.inject(_in_slot(spec, slot, roles))
            return
        self.bench.swap_dut(params)
        self.clear_faults()
        for spec in inst_faults:
            self.inject(spec)

    def slot_bench(self, slot: str) -> Bench:
        """The physics of the board in one slot of a rack."""
        if self.rack is None or slot not in self.rack.bays:
            raise FixtureError(f"no slot {slot!r} in this simulated lab")
        return self.rack.bay(slot)


def slot_dut(config: SimConfig, slot: str) -> str:
    """The serial of the DUT the simulated lab puts in a slot."""
    return config.slots.get(slot) or f"SIM-SLOT-{slot}"


def _in_slot(spec: dict[str, Any], slot: str, slot_roles: dict[str, Any]) -> dict[str, Any]:
    """An instrument fault of a slot's DUT acts on that slot's instrument of the role."""
    role = spec.get("role")
    if role in slot_roles:
        return {**spec, "role": f"{slot}/{role}"}
    return spec
