"""Quantities with units, written the way lab engineers write them.

``0.75 V``, ``750 mV``, ``3 %``, ``±25 mV``, ``5 min``, ``105 degC``, ``56 Gbps``, ``32 GT/s``,
``1e-12``, ``1.5 degC/min``, ``10 TOPS/W``. Parsing and dimension checks use pint, which is
imported lazily (about 0.3 s for the registry; see ``bench/units_import.py``): importing this
module costs nothing, the first parse pays.

The value object is :class:`Quantity` (a frozen dataclass: magnitude, unit, delta flag) so
plans, events and the store never carry pint objects around. Temperatures are offset units:
``105 degC`` is a point on the scale, ``±0.5 degC`` (a tolerance) and ``1.5 degC/min`` are
differences (``delta=True``), and conversions honour that.

Friendly dimension names (:data:`DIMENSIONS`) are what checks declare and what error
messages say: ``voltage``, ``current``, ``power``, ``temperature``, ``time``, ``data_rate`` …
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from labctl.errors import UnitError

if TYPE_CHECKING:  # pragma: no cover
    import pint

# friendly dimension name -> a reference unit of that dimension (also the display unit)
DIMENSIONS: dict[str, str] = {
    "voltage": "V",
    "current": "A",
    "power": "W",
    "energy": "J",
    "resistance": "ohm",
    "capacitance": "F",
    "temperature": "degC",
    "temperature_rate": "K/min",
    "thermal_resistance": "K/W",
    "time": "s",
    "frequency": "Hz",
    "data_rate": "databit/s",
    "transfer_rate": "transfer/s",
    "information": "databit",
    "throughput": "OPS",
    "perf_per_watt": "OPS/W",
    "voltage_slew": "V/s",
    "current_slew": "A/s",
    "ratio": "",
}

# the largest magnitude a plan may give, per dimension, in the unit of DIMENSIONS: far beyond
# any bench (1 MV, 100 kA, 1000 h …) but finite, so arithmetic, timeouts and estimates stay
# meaningful (docs/plans.md, "Limits"). Temperatures on a scale: absolute zero to 2000 degC.
SENSIBLE_MAX: dict[str, float] = {
    "voltage": 1e6,
    "current": 1e5,
    "power": 1e9,
    "energy": 1e12,
    "resistance": 1e15,
    "capacitance": 1e3,
    "temperature": 1e4,  # differences; points on the scale: TEMPERATURE_RANGE
    "temperature_rate": 1e4,
    "thermal_resistance": 1e6,
    "time": 1000 * 3600.0,  # a 1000-hour HTOL stress test
    "frequency": 1e13,
    "data_rate": 1e14,
    "transfer_rate": 1e14,
    "information": 1e18,
    "throughput": 1e21,
    "perf_per_watt": 1e21,
    "voltage_slew": 1e13,
    "current_slew": 1e13,
    "ratio": 1e18,
}
TEMPERATURE_RANGE = (-273.15, 2000.0)  # degC
#: a quantity is a number and a unit: longer text is not one (and is not fed to a regex)
MAX_QUANTITY_CHARS = 200

# examples shown in hints, per dimension
_EXAMPLES: dict[str, str] = {
    "voltage": "0.75 V, 750 mV",
    "current": "20 A, 350 mA",
    "power": "350 W, 15 mW",
    "energy": "10 J",
    "resistance": "10 kohm",
    "capacitance": "10 uF",
    "temperature": "105 degC, 25 degC",
    "temperature_rate": "1.5 degC/min",
    "thermal_resistance": "0.2 K/W",
    "time": "90 s, 5 min, 2 ms",
    "frequency": "20 MHz",
    "data_rate": "56 Gbps, 112 Gbit/s",
    "transfer_rate": "32 GT/s",
    "information": "1 GB",
    "throughput": "400 TOPS",
    "perf_per_watt": "2 TOPS/W",
    "voltage_slew": "1 V/ms",
    "current_slew": "2.5 A/us",
    "ratio": "3 %, 0.95, 1e-12",
}

# pint's own ``bit`` is dimensionless (so Gbps would be a frequency); labctl's data units get a
# dimension of their own under new names, and the parser maps bit/bps onto them.
_EXTRA_DEFINITIONS = (
    "databit = [information]",
    "transfer = [transfer]",
    "operation = [operation] = op",
    "OPS = operation / second",
    "unit_interval = [] = UI",
)

def _simple_units() -> dict[str, tuple[str, float]]:
    """Units understood without pint: SI prefixes on V, A, W, J, ohm, F, s, Hz, the minute and
    the hour, %, ppm and plain numbers -> (dimension, factor to the dimension's unit). Every
    other unit (temperatures, data rates, compounds …) goes through pint."""
    prefixes = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "m": 1e-3, "u": 1e-6, "n": 1e-9, "p": 1e-12}
    base = {"V": "voltage", "A": "current", "W": "power", "J": "energy", "ohm": "resistance",
            "F": "capacitance", "s": "time", "Hz": "frequency"}
    out = {p + b: (dim, f) for b, dim in base.items() for p, f in prefixes.items()}
    out.update({"min": ("time", 60.0), "h": ("time", 3600.0), "hour": ("time", 3600.0),
                "percent": ("ratio", 0.01), "ppm": ("ratio", 1e-6), "": ("ratio", 1.0)})
    return out


#: see :func:`_simple_units`: plans that use only these never import pint
_SIMPLE = _simple_units()

_COMMON_UNITS = (
    "V mV uV kV A mA uA W mW kW J ohm kohm Mohm F uF nF degC K delta_degC s ms us ns min hour h "
    "Hz kHz MHz GHz bps Mbps Gbps bit/s GT/s % percent ppm UI TOPS OPS dB"
).split()

_NUMBER = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"  # ASCII digits (\d takes ５ too)
_QUANTITY_RE = re.compile(rf"^\s*(?P<pm>±|\+-|\+/-)?\s*(?P<num>{_NUMBER})\s*(?P<unit>.*?)\s*$")
_TRANSFER_RE = re.compile(r"(?<![A-Za-z_])([kMGTP]?)T/s\b")
_BPS_RE = re.compile(r"(?<![A-Za-z_])([kMGTP]?)bps(?![A-Za-z_])")
_BIT_RE = re.compile(r"(?<![A-Za-z_])([kMGTP]?)bits?(?![A-Za-z_])")
_OFFSET_RE = re.compile(r"(?<![A-Za-z_])(degC|degF|°C|°F|celsius|fahrenheit)(?![A-Za-z_])")


@functools.lru_cache(maxsize=1)
def registry() -> pint.UnitRegistry:
    """The one pint registry (built on first use)."""
    import pint

    ureg = pint.UnitRegistry(on_redefinition="ignore", autoconvert_offset_to_baseunit=False)
    for line in _EXTRA_DEFINITIONS:
        ureg.define(line)
    return ureg


@dataclass(frozen=True)
class Quantity:
    """A magnitude with a unit.

    ``unit`` is a unit expression pint understands (``"mV"``, ``"degC"``, ``"percent"``,
    ``""`` for a plain number). ``delta`` marks a difference or tolerance: ``±0.5 degC`` is
    half a kelvin, not a temperature near the freezing point.
    """

    magnitude: float
    unit: str = ""
    delta: bool = False

    # -- conversion -------------------------------------------------------------------------
    def pint(self) -> pint.Quantity:
        ureg = registry()
        unit = _delta_unit(self.unit) if self.delta else self.unit
        return ureg.Quantity(self.magnitude, unit or "dimensionless")

    def to(self, unit: str) -> float:
        """The magnitude expressed in ``unit`` (a ratio: ``Quantity(3, "%").to("") == 0.03``)."""
        if unit == self.unit and not self.delta:
            return float(self.magnitude)
        affine = _affine(self.unit, self.delta, unit)
        if affine is not None:
            return self.magnitude * affine[0] + affine[1]
        return self._to_pint(unit)

    def _to_pint(self, unit: str) -> float:
        target = _normalise_unit(unit)
        if self.delta:
            target = _delta_unit(target)
        try:
            return float(self.pint().to(target or "dimensionless").magnitude)
        except Exception as err:  # pint DimensionalityError, UndefinedUnitError …
            raise UnitError(
                f"cannot convert {self} to {unit or 'a plain number'}: {_short(err)}"
            ) from None

    @property
    def base(self) -> float:
        """The magnitude in SI base units (kelvin for temperatures)."""
        affine = _affine(self.unit, self.delta, None)
        if affine is not None:
            return self.magnitude * affine[0] + affine[1]
        return float(self.pint().to_base_units().magnitude)

    @property
    def dimension(self) -> str:
        """The friendly dimension name, or pint's dimensionality text when there is none."""
        return dimension_of(self.unit)

    @property
    def is_ratio(self) -> bool:
        return self.dimension == "ratio"

    def compatible(self, dimension: str) -> bool:
        return _compatible(self.unit, dimension)

    def __str__(self) -> str:
        mag = f"{self.magnitude:g}"
        sign = "±" if self.delta else ""
        if not self.unit:
            return sign + mag
        return f"{sign}{mag} {display_symbol(self.unit)}"

    def to_json(self) -> dict[str, Any]:
        return {"value": self.magnitude, "unit": self.unit, **({"delta": True} if self.delta else {})}


@functools.lru_cache(maxsize=1024)
def _affine(unit: str, delta: bool, target: str | None) -> tuple[float, float] | None:
    """``(scale, offset)`` of the conversion from ``unit`` to ``target`` (``None``: SI base
    units), asked of pint once per pair; ``None`` when the conversion fails or is not affine
    (then every call asks pint, which words the error)."""
    src = _SIMPLE.get(unit)
    if src is not None:
        if target is None:
            return src[1], 0.0  # coherent SI units: the base magnitude is the factor
        dst = _SIMPLE.get(_normalise_unit(target))
        if dst is not None and dst[0] == src[0]:
            return src[1] / dst[1], 0.0
    try:
        def at(x: float) -> float:
            q = Quantity(x, unit, delta)
            return q._to_pint(target) if target is not None else float(q.pint().to_base_units().magnitude)

        y0, y1, y10 = at(0.0), at(1.0), at(10.0)
    except Exception:  # noqa: BLE001 - the slow path raises the worded error
        return None
    offset = y0
    scale = y1 - y0  # exactly pint's factor for multiplicative units (y0 == 0)
    if not math.isclose(scale * 10.0 + offset, y10, rel_tol=1e-12, abs_tol=1e-300):
        return None
    return scale, offset


# ------------------------------------------------------------------------------------------
# parsing


def _short(err: BaseException) -> str:
    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return text.replace("'dimensionless'", "a plain number")


def _normalise_unit(text: str) -> str:
    """Rewrite the spellings pint does not take: %, ±, °C, µ, Ω, GT/s."""
    u = text.strip()
    if not u:
        return ""
    u = u.replace("°C", "degC").replace("°F", "degF").replace("Ω", "ohm").replace("µ", "u")
    u = u.replace("μ", "u")
    u = _TRANSFER_RE.sub(lambda m: f"{m.group(1)}transfer/s", u)
    u = _BPS_RE.sub(lambda m: f"{m.group(1)}databit/s", u)
    u = _BIT_RE.sub(lambda m: f"{m.group(1)}databit", u)
    if u == "%":
        return "percent"
    u = u.replace("%", "percent")
    # an offset unit inside a compound (degC/min, K/W is fine) means a difference
    if _OFFSET_RE.search(u) and re.search(r"[/*^]", u):
        u = _delta_unit(u)
    return u


def _delta_unit(unit: str) -> str:
    return _OFFSET_RE.sub(
        lambda m: "delta_" + {"°C": "degC", "°F": "degF"}.get(m.group(1), m.group(1)), unit
    ).replace("delta_delta_", "delta_")


@functools.lru_cache(maxsize=512)
def _dimensionality(unit: str) -> Any:
    ureg = registry()
    text = _delta_unit(_normalise_unit(unit))
    return ureg.Quantity(1, text).dimensionality if text else ureg.Quantity(1).dimensionality


def _compatible(unit: str, dimension: str) -> bool:
    if dimension not in DIMENSIONS:
        raise ValueError(f"unknown dimension {dimension!r}")
    simple = _SIMPLE.get(unit)
    if simple is not None and (simple[0] == dimension or DIMENSIONS[dimension] in _SIMPLE):
        return simple[0] == dimension  # both pint-free dimensions are distinct from each other
    return _dimensionality(unit) == _dimensionality(DIMENSIONS[dimension])


@functools.lru_cache(maxsize=512)
def dimension_of(unit: str) -> str:
    """``"mV" -> "voltage"``, ``"percent" -> "ratio"``; pint's dimensionality text otherwise."""
    simple = _SIMPLE.get(unit)
    if simple is not None:
        return simple[0]
    dims = _dimensionality(unit)
    for name, ref in DIMENSIONS.items():
        if dims == _dimensionality(ref):
            return name
    return str(dims)


def describe_dimension(dimension: str) -> str:
    """``"voltage" -> "a voltage (e.g. 0.75 V, 750 mV)"`` for messages and hints."""
    article = "an" if dimension[:1] in "aeiou" else "a"
    name = dimension.replace("_", " ")
    ex = _EXAMPLES.get(dimension)
    if dimension == "ratio":
        return "a plain number or percentage (e.g. 3 %, 0.95)"
    return f"{article} {name}" + (f" (e.g. {ex})" if ex else "")


def looks_like_quantity(text: str) -> bool:
    """Cheap test (no pint): does ``text`` start like a number with an optional unit?"""
    if len(text) > MAX_QUANTITY_CHARS:
        return False
    m = _QUANTITY_RE.match(text)
    return bool(m) and (not m["unit"] or bool(re.match(r"^[A-Za-z%°µμΩ]", m["unit"])))


@functools.lru_cache(maxsize=4096)
def _parse_cached(text: str) -> tuple[Quantity, bool]:
    if len(text) > MAX_QUANTITY_CHARS:
        raise UnitError(f"{text[:40]!r}… ({len(text):,} characters) is not a quantity",
                        hint="write a number and a unit, e.g. 0.75 V, 3 %, 5 min, 105 degC")
    m = _QUANTITY_RE.match(text)
    if not m:
        raise UnitError(
            f"{text!r} is not a quantity",
            hint="write a number and a unit, e.g. 0.75 V, 3 %, 5 min, 105 degC",
        )
    plus_minus = bool(m["pm"])
    magnitude = float(m["num"])
    if not math.isfinite(magnitude):
        raise UnitError(f"{text.strip()!r} is not a finite number",
                        hint="values are finite; check the exponent")
    if magnitude == 0.0 and any(c in "123456789" for c in m["num"].lower().split("e")[0]):
        raise UnitError(f"{text.strip()!r} is too small to be told from 0",
                        hint="check the exponent (a double holds down to about 1e-308)")
    unit_text = _normalise_unit(m["unit"])
    if not unit_text:
        return check_range(Quantity(magnitude, "", delta=plus_minus)), plus_minus
    if unit_text in _SIMPLE:  # percent, ppm, mV, ms … (no pint)
        return check_range(Quantity(magnitude, unit_text, delta=plus_minus)), plus_minus
    ureg = registry()
    try:
        unit = ureg.Unit(unit_text)
    except Exception:
        word = m["unit"].strip()
        close = difflib.get_close_matches(word, _COMMON_UNITS, n=1, cutoff=0.5)
        raise UnitError(
            f"unknown unit {word!r} in {text.strip()!r}",
            hint=(f"did you mean {close[0]!r}? " if close else "")
            + "units use SI symbols with prefixes, e.g. mV, A, W, degC, ms, min, Gbps, GT/s, %",
        ) from None
    # keep the unit as written (normalised): "mV" stays "mV", "%" is "percent"
    canonical = "" if unit.dimensionless and unit_text == "dimensionless" else unit_text
    if _OFFSET_RE.fullmatch(canonical.removeprefix("delta_")) and canonical.startswith("delta_"):
        return check_range(Quantity(magnitude, canonical[6:], delta=True)), plus_minus  # 5 delta_degC
    return check_range(Quantity(magnitude, canonical, delta=plus_minus)), plus_minus


def check_range(q: Quantity, *, what: str = "") -> Quantity:
    """``q`` unless it lies outside :data:`SENSIBLE_MAX` / :data:`TEMPERATURE_RANGE`."""
    if not math.isfinite(q.magnitude):
        raise UnitError(f"{what + ': ' if what else ''}{q} is not a finite number")
    if q.magnitude == 0:
        return q
    dim = q.dimension
    top = SENSIBLE_MAX.get(dim)
    if top is None:
        return q
    ref = DIMENSIONS[dim]
    if dim == "temperature" and not q.delta:
        lo, hi = TEMPERATURE_RANGE
        value = q.to("degC")
        if not lo <= value <= hi:
            raise UnitError(f"{what + ': ' if what else ''}{q} is outside {lo:g} degC (absolute zero) "
                            f"to {hi:g} degC", hint="a temperature on a bench lies in that range")
        return q
    value = abs(q.to(ref)) if q.unit not in ("", ref) else abs(q.magnitude)
    if value > top:
        shown = "1000 h (a 1000-hour stress test)" if dim == "time" else format_quantity(top, ref, 4)
        kind = "a plain number" if dim == "ratio" else dim.replace("_", " ")
        raise UnitError(f"{what + ': ' if what else ''}{q} is beyond any bench: the limit for "
                        f"{kind} is {shown}",
                        hint="check the number, its exponent and its unit prefix")
    return q


def parse_quantity(
    value: Any,
    dimension: str | None = None,
    *,
    what: str = "value",
    default_unit: str | None = None,
    unit_hint: str | None = None,
) -> Quantity:
    """Parse ``"0.75 V"``, ``"±25 mV"``, ``1e-12``, ``"3 %"`` … into a :class:`Quantity`.

    With ``dimension`` (a key of :data:`DIMENSIONS`) the result must have it, else
    :class:`UnitError` names what was expected. A bare number gets ``default_unit`` if given;
    without one it is only accepted for ``ratio`` (or when no dimension is asked for).
    """
    if isinstance(value, Quantity):
        q = value
    elif isinstance(value, bool):
        raise UnitError(f"{what}: expected a quantity, got {value!r}")
    elif isinstance(value, int | float):
        try:
            q = Quantity(float(value), "")
        except OverflowError:
            q = Quantity(math.inf, "")
        if not math.isfinite(q.magnitude):
            raise UnitError(f"{what}: {value!r:.40} is not a finite number")
    elif isinstance(value, str):
        q, _ = _parse_cached(value.strip())
    else:
        raise UnitError(f"{what}: expected a quantity such as '0.75 V', got {type(value).__name__}")
    if not q.unit and default_unit is not None:
        q = Quantity(q.magnitude, _parse_cached(f"1 {default_unit}")[0].unit, q.delta)
    if dimension is not None:
        check_dimension(q, dimension, what=what, unit_hint=unit_hint)
    return q


def check_dimension(q: Quantity, dimension: str, *, what: str = "value", unit_hint: str | None = None) -> None:
    """Raise :class:`UnitError` unless ``q`` has ``dimension``; hints show ``unit_hint`` (the
    unit of the measurement or argument at hand) when given, else the dimension's own."""
    if q.compatible(dimension):
        return
    got = q.dimension
    if not q.unit:
        unit = display_symbol(unit_hint) if unit_hint else DIMENSIONS[dimension] or ""
        raise UnitError(
            f"{what}: {q} has no unit, expected {describe_dimension(dimension)}",
            hint=f"add the unit, e.g. '{q.magnitude:g} {unit}'".rstrip(),
        )
    got_text = describe_dimension(got) if got in DIMENSIONS else f"of dimension {got}"
    raise UnitError(
        f"{what}: {q} is {got_text.split(' (e.g.')[0]}, expected {describe_dimension(dimension)}",
        hint=f"write it in a unit of {dimension.replace('_', ' ')}, e.g. {_EXAMPLES.get(dimension, DIMENSIONS[dimension])}",
    )


def parse_tolerance(value: Any, dimension: str | None = None, *, what: str = "tol") -> Quantity:
    """A tolerance: ``±25 mV`` / ``+-25 mV`` / ``25 mV`` (absolute, a difference) or ``3 %``
    (relative). Absolute tolerances must have ``dimension``; temperatures become deltas."""
    q = parse_quantity(value, what=what)
    if q.magnitude < 0:
        raise UnitError(f"{what}: a tolerance must not be negative ({value})",
                        hint=f"a tolerance is a width on either side of the value: write {what}: ±{abs(q.magnitude):g}"
                        + (f" {display_symbol(q.unit)}" if q.unit else ""))
    q = Quantity(q.magnitude, q.unit, delta=True)
    if q.unit == "" or q.is_ratio:
        return q
    if dimension is not None:
        check_dimension(q, dimension, what=what)
    return q


#: "2 s", "500 ms", "1.5 min", "1 h": the durations fixtures and plans write most, read without
#: building the unit registry (which costs a fraction of a second at start-up)
_PLAIN_DURATION = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|min|h)\s*\Z")
_SECONDS_PER = {"ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}


_CALENDAR_MONTH = re.compile(r"(?i)\bmonths?\b")  # pint's month is a twelfth of a year
_DURATION_HINT = "write a duration, e.g. 90 s, 5 min or 2 h (a bare number is seconds)"
_GENERIC_HINT = "write a number and a unit"


def named_error(err: UnitError, what: str, hint: str) -> UnitError:
    """``err`` with the field it is about (``hold: 'forever' is not a quantity``) and, where
    its hint is the generic one, ``hint``: what to write in that field."""
    message = err.message if what == "value" or err.message.startswith(f"{what}:") else f"{what}: {err.message}"
    generic = not err.hint or err.hint.startswith(_GENERIC_HINT)
    return UnitError(message, hint=hint if generic else err.hint)


def quantity_hint(dimension: str | None) -> str:
    """What to write where a quantity of ``dimension`` is wanted."""
    if dimension is None:
        return _GENERIC_HINT + ", e.g. 0.75 V, 3 %, 5 min, 105 degC"
    if dimension == "time":
        return _DURATION_HINT
    return f"write {describe_dimension(dimension)}"


def parse_duration(value: Any, *, what: str = "duration") -> float:
    """``"5 min"`` -> 300.0, ``"90 s"`` -> 90.0, ``"2 ms"`` -> 0.002; a bare number is seconds."""
    if isinstance(value, str):
        plain = _PLAIN_DURATION.match(value)
        seconds = float(plain.group(1)) * _SECONDS_PER[plain.group(2)] if plain else None
        if seconds is not None and seconds <= SENSIBLE_MAX["time"]:
            return seconds  # (beyond a bench's range: the full path below says so)
    try:
        q = parse_quantity(value, "time", what=what, default_unit="s")
    except UnitError as err:  # 'forever' is not a quantity: say which field, and what to write
        raise named_error(err, what, _DURATION_HINT) from None
    seconds = q.to("s")
    if seconds < 0 or math.isnan(seconds):
        raise UnitError(f"{what}: a duration must not be negative ({value})", hint=_DURATION_HINT)
    if isinstance(value, str) and _CALENDAR_MONTH.search(value):
        raise UnitError(f"{what}: {value.strip()} is no fixed time (a month has 28 to 31 days)",
                        hint="give it in days or hours, e.g. 30 d or 720 h")
    return seconds


def format_span(seconds: float) -> str:
    """A duration as ``labctl runs`` and the reports show it: ``42.1s``, ``2m05.3s``,
    ``1h02m05s`` (never ``1m60.0s``); a negative one (a wall clock set back between a start
    and an end) as ``-3.5s``."""
    if seconds < 0:
        return "-" + format_span(-seconds)
    if seconds < 59.95:
        return f"{seconds:.1f}s"
    if seconds < 3599.5:
        tenths = round(seconds * 10)
        return f"{tenths // 600}m{tenths % 600 / 10:04.1f}s"
    whole = round(seconds)
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m{whole % 60:02d}s"


def ran_seconds(spans: Any) -> float | None:
    """How long a run's sessions ran together, from their ``(started_at, ended_at)``; None
    while one has not ended. A run resumed after a weekend ran for its sessions, not for the
    weekend between them (the store's listings do the same sum in SQL)."""
    spans = list(spans)
    if not spans or any(end is None for _start, end in spans):
        return None
    return sum(end - start for start, end in spans)


def run_duration(started_at: float | None, ended_at: float | None, sessions: int | None, ran_s: float | None
                 ) -> float | None:
    """A run's duration: its sessions' time together (``ran_s``, :func:`ran_seconds`) when it
    was resumed, else end − start; None while it runs."""
    if ended_at is None or started_at is None:
        return None
    if (sessions or 1) > 1 and ran_s is not None:
        return float(ran_s)
    return ended_at - started_at


def to_base(value: float, unit: str) -> float:
    """``to_base(750, "mV") == 0.75``; temperatures go to kelvin."""
    return parse_quantity(f"{value!r} {unit}" if unit else value).base


def convert(value: float, from_unit: str, to_unit: str, *, delta: bool = False) -> float:
    """``convert(750, "mV", "V") == 0.75``; ``delta=True`` for differences of temperature."""
    q = Quantity(value, _parse_cached(f"1 {from_unit}")[0].unit if from_unit else "", delta)
    return q.to(to_unit)


def format_quantity(value: float, unit: str, digits: int = 4) -> str:
    """``format_quantity(0.7512, "V") == "0.7512 V"`` (``%`` sticks to the number)."""
    num = f"{value:.{digits}g}"
    if not unit:
        return num
    return f"{num} {display_symbol(unit)}"


def is_offset_unit(unit: str) -> bool:
    """``degC``/``°C``/``degF``: a point on an interval scale, where a ratio (a % change) means
    nothing; differences (``delta_degC``) and compounds (``degC/min``) are not offset units."""
    return bool(_OFFSET_RE.fullmatch(unit.strip()))


def display_symbol(unit: str) -> str:
    """The unit as people write it: ``percent -> %``, ``Gtransfer/s -> GT/s``."""
    if unit == "percent":
        return "%"
    text = unit.replace("transfer/s", "T/s").replace("delta_degC", "degC").replace("percent", "%")
    return text.replace("databit/s", "bps").replace("databit", "bit")


def display_unit(dimension: str) -> str:
    """The unit a dimension is shown in by default (``voltage -> V``)."""
    return DIMENSIONS.get(dimension, "")
