"""Checks of a plan against its surroundings: safety interlocks (signals, units, roles)
and, with ``--fixture``, the station (required roles offered, named channels mapped).

A mixin of the loader's checking context: it uses ``self.err``, ``self.pos``,
``self.errors`` and ``self.smap`` from there.
"""

from __future__ import annotations

import re
from typing import Any

from labctl.errors import LabctlError, UnitError
from labctl.plan.loaded import LoadedPlan, located
from labctl.plan.model import Expr
from labctl.plan.source import suggest
from labctl.plan.temperatures import off_scale
from labctl.units import parse_quantity


class StationChecks:
    """Safety and station checks (``err``/``pos`` come from the loader's context)."""

    errors: list[LabctlError]
    smap: Any
    err: Any
    pos: Any

    # -- safety -----------------------------------------------------------------------------
    def check_safety(self, loaded: LoadedPlan) -> None:
        safety = loaded.plan.safety
        if safety is None:
            return
        env = loaded.env(None)
        for f in ("poll_interval",):
            self._time_field(loaded, getattr(safety, f), ("safety", f), env)
        for i, lock in enumerate(safety.interlocks):
            base = ("safety", "interlocks", i)
            self._time_field(loaded, lock.stale_after, (*base, "stale_after"), env)
            dim = _signal_dimension(lock.signal)
            bounds = {}
            for f in ("max", "min"):
                v = getattr(lock, f)
                if v is None:
                    continue
                try:
                    v = loaded.render(str(v), (*base, f), env) if isinstance(v, Expr) else v
                    q = parse_quantity(v, dim, what=f)
                    off = off_scale(q, "degC", f"{lock.signal} is read in") if q.dimension == "temperature" else None
                    if off is not None:  # the safety monitor reads temperatures in degC
                        self.err((*base, f), f"{f}: {off[0]}", off[1], cls=UnitError)
                        continue
                    bounds[f] = q
                except UnitError as err:
                    msg = err.message
                    if dim:
                        msg = msg.replace("expected", f"but {lock.signal} is", 1).split(" (e.g.")[0]
                    self.err((*base, f), msg, err.hint, cls=UnitError)
                except LabctlError as err:
                    self.errors.append(err)
            if "max" in bounds and "min" in bounds:
                try:
                    if bounds["min"].pint() >= bounds["max"].pint():
                        self.err((*base, "min"), f"interlock on {lock.signal}: min {bounds['min']} is not below max {bounds['max']}",
                                 "it trips below min and above max: min is the lower bound")
                except Exception:
                    self.err((*base, "min"), f"interlock on {lock.signal}: min and max have different units kinds",
                             "give both in the unit of what the signal reads", cls=UnitError)
            role = lock.signal.split(".")[0] if "." in lock.signal else None
            if role and loaded.plan.requires and role not in loaded.plan.requires:
                self.err((*base, "signal"), f"interlock signal {lock.signal} uses role {role!r}, not listed in requires:",
                         f"add {role} to requires:")

    def _time_field(self, loaded: LoadedPlan, value: Any, path: tuple[Any, ...], env: dict[str, Any]) -> None:
        try:
            v = loaded.render(str(value), path, env) if isinstance(value, Expr) else value
            q = parse_quantity(v, "time", what=path[-1])
            if q.magnitude <= 0:
                self.err(path, f"{path[-1]} must be positive", f"e.g. {path[-1]}: 500 ms")
        except UnitError as err:
            self.err(path, err.message, err.hint, cls=UnitError)
        except LabctlError as err:
            self.errors.append(err)

    # -- fixture ----------------------------------------------------------------------------
    def check_fixture(self, loaded: LoadedPlan, fixture: Any) -> None:
        roles = fixture.roles
        station = getattr(fixture, "station", "?")
        offered = ", ".join(roles) or "none"
        for role in loaded.requires_pos:
            if role not in roles:
                close = suggest(role, roles)
                self.errors.append(located(
                    loaded.requires_pos[role], f"required role {role!r} is not offered by station {station}"
                    + (f"; did you mean {close!r}?" if close else ""),
                    f"the fixture offers: {offered}",
                ))
        channels = fixture.channels
        from labctl.checks.registry import get_check

        for _group, step in loaded.plan.all_steps():
            sp = loaded.step_path(step)
            spec = get_check(step.check)
            if spec is None:
                continue
            try:
                args = loaded.resolve_args(step, loaded.corners[0] if loaded.corners and step.per_corner else None)
                channel_names, arg_roles = args.channels(), args.roles()
                for field, message, hint in args.fixture_problems(fixture):
                    self.err((*sp, "args", field), f"step {step.id!r}: {message}", hint)
            except LabctlError:
                # the arguments are broken (reported already); still check the channels named
                channel_names = _raw_channels(step.args, spec.args.channel_fields)
                arg_roles = []
            for name in channel_names:
                if name not in channels:
                    close = suggest(name, channels)
                    self.err(_find_in(step.args, name, (*sp, "args")) or (*sp, "args"),
                             f"channel {name!r} is not mapped in station {station}"
                             + (f"; did you mean {close!r}?" if close else ""),
                             "add it under channels: in the fixture (NAME: role@channel), mapped: "
                             + (", ".join(channels) or "none"))
            for role in dict.fromkeys([*spec.roles, *arg_roles]):
                # roles listed in requires: are reported there, once
                if role not in roles and role not in loaded.plan.requires:
                    self.err((*sp, "check"), f"step {step.id!r} needs role {role!r}, not offered by station {station}",
                             f"the fixture offers: {offered}")
        if loaded.plan.safety:
            for i, lock in enumerate(loaded.plan.safety.interlocks):
                path = ("safety", "interlocks", i, "signal")
                head = lock.signal.split(".")[0]
                if "." not in lock.signal:
                    if lock.signal not in channels:
                        close = suggest(lock.signal, channels)
                        self.err(path, f"interlock signal {lock.signal!r} is not a channel of station {station}"
                                 + (f"; did you mean {close!r}?" if close else ""),
                                 "a signal is role.property (dut.die_temp) or a named channel of the fixture")
                elif head not in roles and head not in channels:
                    self.err(path, f"interlock signal {lock.signal!r}: station {station} has no role {head!r}",
                             f"the fixture offers: {offered}")


def _raw_channels(args: dict[str, Any], fields: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for f in fields:
        v = args.get(f)
        if isinstance(v, str) and "${" not in v:
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, str) and "${" not in x)
    return out


def _find_in(obj: Any, value: str, path: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The path inside raw YAML data where the scalar ``value`` (or a key equal to it) is."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == value:
                return (*path, k)
            found = _find_in(v, value, (*path, k))
            if found:
                return found
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            found = _find_in(v, value, (*path, i))
            if found:
                return found
    elif obj == value:
        return path
    return None


_SIGNAL_DIMENSIONS = (
    (re.compile(r"temp|_tc$|^tc_|thermo", re.I), "temperature"),
    (re.compile(r"curr|amps?$|^i_", re.I), "current"),
    (re.compile(r"volt|^v_|_v$", re.I), "voltage"),
    (re.compile(r"power|watts?$|^p_", re.I), "power"),
)


def _signal_dimension(signal: str) -> str | None:
    """What an interlock signal measures, from its last name (``dut.die_temp`` -> temperature)."""
    if "." not in signal:
        return None
    last = signal.rsplit(".", 1)[1]
    for rx, dim in _SIGNAL_DIMENSIONS:
        if rx.search(last):
            return dim
    return None
