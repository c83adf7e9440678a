"""pydantic field types for quantities in plans and check arguments.

``Voltage`` accepts ``"0.75 V"`` or ``"750 mV"`` and holds a :class:`~labctl.units.Quantity`;
a wrong unit is a validation error at that value ("2 A is a current, expected a voltage").
``Duration`` holds seconds (float), ``Ratio`` a plain float (``"95 %"`` -> 0.95).
The JSON Schema of each says "a string such as '0.75 V'" so editors can help.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, ValidationInfo, WithJsonSchema
from pydantic_core import PydanticCustomError

from labctl.errors import LabctlError, UnitError
from labctl.units import (
    _EXAMPLES,
    Quantity,
    named_error,
    parse_duration,
    parse_quantity,
    parse_tolerance,
    quantity_hint,
)


def labctl_error(err: LabctlError) -> PydanticCustomError:
    """Carry a labctl error (message + hint) through pydantic to the located report."""
    return PydanticCustomError("labctl", "{message}", {"message": err.message, "hint": err.hint})


def _what(info: ValidationInfo | None) -> str:
    return info.field_name if info is not None and info.field_name else "value"


def _quantity_validator(dimension: str | None) -> Any:
    def validate(value: Any, info: ValidationInfo) -> Quantity:
        try:
            return parse_quantity(value, dimension, what=_what(info))
        except UnitError as err:  # current_limit: 'abc' is not a quantity (hint: a current)
            raise labctl_error(named_error(err, _what(info), quantity_hint(dimension))) from None
        except LabctlError as err:
            raise labctl_error(err) from None

    return validate


def _tolerance_validator(dimension: str | None) -> Any:
    def validate(value: Any, info: ValidationInfo) -> Quantity:
        try:
            return parse_tolerance(value, dimension, what=_what(info))
        except UnitError as err:
            raise labctl_error(named_error(err, _what(info), quantity_hint(dimension))) from None
        except LabctlError as err:
            raise labctl_error(err) from None

    return validate


def _duration(value: Any, info: ValidationInfo) -> float:
    try:
        return parse_duration(value, what=_what(info))
    except LabctlError as err:
        raise labctl_error(err) from None


def _ratio(value: Any, info: ValidationInfo) -> float:
    try:
        return parse_quantity(value, "ratio", what=_what(info)).to("")
    except LabctlError as err:
        raise labctl_error(err) from None


def _schema(description: str) -> WithJsonSchema:
    return WithJsonSchema({"type": ["string", "number"], "description": description})


def _ser(q: Quantity) -> str:
    return str(q)


def QuantityOf(dimension: str | None) -> Any:  # noqa: N802 - a type factory
    """The pydantic type of a quantity of ``dimension`` (None: any unit)."""
    example = _EXAMPLES.get(dimension or "", "0.75 V, 3 %, 5 min")
    name = (dimension or "quantity").replace("_", " ")
    return Annotated[
        Any,
        BeforeValidator(_quantity_validator(dimension)),
        PlainSerializer(_ser, return_type=str),
        _schema(f"a {name} with its unit, e.g. {example}"),
    ]


def ToleranceOf(dimension: str | None) -> Any:  # noqa: N802 - a type factory
    example = _EXAMPLES.get(dimension or "", "")
    return Annotated[
        Any,
        BeforeValidator(_tolerance_validator(dimension)),
        PlainSerializer(_ser, return_type=str),
        _schema(f"a tolerance: relative (3 %) or absolute (±25 mV); {example}"),
    ]


Voltage = QuantityOf("voltage")
Current = QuantityOf("current")
Power = QuantityOf("power")
Temperature = QuantityOf("temperature")
TemperatureDelta = ToleranceOf("temperature")
TemperatureRate = QuantityOf("temperature_rate")
Frequency = QuantityOf("frequency")
DataRate = QuantityOf("data_rate")
TransferRate = QuantityOf("transfer_rate")
AnyQuantity = QuantityOf(None)

Duration = Annotated[
    float,
    BeforeValidator(_duration),
    _schema("a duration, e.g. 90 s, 5 min, 2 ms (a bare number is seconds)"),
]
Ratio = Annotated[
    float,
    BeforeValidator(_ratio),
    _schema("a plain number or a percentage, e.g. 0.95 or 95 %"),
]
