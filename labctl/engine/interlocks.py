"""Turn a plan's ``safety:`` section into :class:`~labctl.engine.safety.Interlock` readers.

Signals are written ``role.property`` or as a named fixture channel:

- ``dut.<sensor>`` — a sensor of the DUT console (``dut.die_temp``, ``dut.hbm_temp``);
- ``psu.ch<N>.current`` / ``psu.ch<N>.voltage`` — a supply channel's measured value;
- ``load.current`` / ``load.voltage`` / ``load.power`` — the electronic load;
- ``chamber.temperature`` — the chamber's actual temperature;
- ``TC_LID`` (a fixture channel) — read from its scanner as a temperature or a voltage,
  whichever the limit's unit says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from labctl.engine.safety import Interlock
from labctl.errors import PlanError
from labctl.units import Quantity, parse_duration, parse_quantity

_UNITS = {"temperature": "degC", "current": "A", "voltage": "V", "power": "W"}


def build_interlocks(loaded: Any, station: Any, fixture: Any) -> tuple[list[Interlock], float]:
    """Readers for every interlock of the plan, and the poll interval in seconds."""
    safety = loaded.plan.safety
    if safety is None:
        return [], 1.0
    env = loaded.env(None)
    interval = _seconds(loaded, safety.poll_interval, ("safety", "poll_interval"), env)
    out = []
    for i, lock in enumerate(safety.interlocks):
        path = ("safety", "interlocks", i)
        high = _quantity(loaded, lock.max, (*path, "max"), env)
        low = _quantity(loaded, lock.min, (*path, "min"), env)
        bound = high if high is not None else low
        kind = bound.dimension if bound is not None else ""
        unit = _UNITS.get(kind, bound.unit if bound is not None else "")
        read = _reader(lock.signal, kind, station, fixture)
        out.append(Interlock(
            name=lock.name or lock.signal,
            read=read,
            high=high.to(unit) if high is not None else None,
            low=low.to(unit) if low is not None else None,
            unit=unit,
            stale_after=_seconds(loaded, lock.stale_after, (*path, "stale_after"), env),
        ))
    return out, interval


def _quantity(loaded: Any, value: Any, path: tuple[Any, ...], env: dict[str, Any]) -> Quantity | None:
    if value is None:
        return None
    if not isinstance(value, Quantity):
        value = loaded.render(str(value), path, env)
    return value if isinstance(value, Quantity) else parse_quantity(value, what=path[-1])


def _seconds(loaded: Any, value: Any, path: tuple[Any, ...], env: dict[str, Any]) -> float:
    q = _quantity(loaded, value, path, env)
    return parse_duration(str(q) if q is not None else "1 s")


def _reader(signal: str, kind: str, station: Any, fixture: Any) -> Callable[[], float]:
    parts = signal.split(".")
    head = parts[0]
    if signal in fixture.channels:
        def read_channel() -> float:
            role, channel = station.channel(signal)
            if kind == "temperature":
                return float(role.read_temperature(channel))
            return float(role.read_voltage(channel))
        return read_channel
    if head not in fixture.roles:
        raise PlanError(f"safety signal {signal!r}: the station has no role or channel {head!r}",
                        hint=f"roles: {', '.join(fixture.roles)}; channels: {', '.join(fixture.channels)}")
    if head == "dut" or fixture.roles[head].driver.endswith("console"):
        sensor = ".".join(parts[1:])

        def read_sensor() -> float:
            values = station.role(head).sensors()
            if sensor not in values:
                raise KeyError(f"the DUT reports no sensor {sensor!r}")
            return float(values[sensor])
        return read_sensor
    if len(parts) == 3 and parts[1].lower().startswith("ch"):
        channel, quantity = parts[1][2:], parts[2]
        method = {"current": "measure_current", "voltage": "measure_voltage"}.get(quantity)
        if method is None:
            raise PlanError(f"safety signal {signal!r}: use .current or .voltage on a supply channel")
        return lambda: float(getattr(station.role(head), method)(channel))
    if len(parts) == 2:
        prop = parts[1]
        if prop == "temperature":
            return lambda: float(station.role(head).temperature())
        method = {"current": "measure_current", "voltage": "measure_voltage", "power": "measure_power"}.get(prop)
        if method is not None:
            return lambda: float(getattr(station.role(head), method)())
    raise PlanError(f"safety signal {signal!r} is not one labctl can read",
                    hint="use dut.<sensor>, psu.ch<N>.current|voltage, load.current|voltage|power, "
                         "chamber.temperature, or a named fixture channel")
