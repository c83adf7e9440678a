"""Parse the ``timeout`` of a role binding: ``2``, ``2.5``, ``"2 s"``, ``"500 ms"``."""

from __future__ import annotations

import re

from labctl.errors import FixtureError

_SCALE = {"s": 1.0, "sec": 1.0, "second": 1.0, "seconds": 1.0, "ms": 1e-3, "min": 60.0}
_PATTERN = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?)\s*([a-z]*)\s*$")


def parse_seconds(value: str | float | int | None, default: float, *, where: str = "timeout") -> float:
    """Seconds as a float; ``None`` gives ``default``. Raises FixtureError on nonsense."""
    if value is None:
        return float(default)
    if isinstance(value, bool):
        raise FixtureError(f"{where}: expected a duration such as '2 s', got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        m = _PATTERN.match(str(value))
        if not m or (m[2] or "s") not in _SCALE:
            raise FixtureError(
                f"{where}: cannot read duration {value!r}",
                hint="write a number of seconds, or e.g. '2 s' or '500 ms'",
            )
        seconds = float(m[1]) * _SCALE[m[2] or "s"]
    if not seconds > 0:
        raise FixtureError(f"{where}: a timeout must be positive, got {value!r}")
    return seconds
