"""Parse the ``timeout`` of a role binding: ``2``, ``2.5``, ``"2 s"``, ``"500 ms"``."""

from __future__ import annotations

import math

from labctl.errors import FixtureError, UnitError


def parse_seconds(value: str | float | int | None, default: float, *, where: str = "timeout") -> float:
    """Seconds as a float; ``None`` gives ``default``. Raises FixtureError on nonsense."""
    if value is None:
        return float(default)
    if isinstance(value, bool):
        raise FixtureError(f"{where}: expected a duration such as '2 s', got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        from labctl.units import parse_duration

        try:
            seconds = parse_duration(value, what=where)
        except UnitError as err:
            raise FixtureError(f"{where}: {err.message}", hint="write a number of seconds, or e.g. '2 s' or '500 ms'") from None
    if not (seconds > 0 and math.isfinite(seconds)):
        raise FixtureError(f"{where}: a timeout must be positive and finite, got {value!r}")
    return seconds
