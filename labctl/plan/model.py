"""The test-plan language: pydantic models of a plan's structure.

These models check shape and types (unknown keys are errors, wrong types are errors). What
needs context — check names and their arguments, parameters and ``${…}`` expressions, units
against each check's measurements, fixture roles — is checked by :mod:`labctl.plan.loader`
on top, with the same ``file:line:col`` reporting. See ``docs/plans.md``.
"""

from __future__ import annotations

import re
import sys
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
    WrapValidator,
    field_validator,
    model_validator,
)

from labctl.errors import LabctlError, PlanError, UnitError
from labctl.plan.expr import CONDITION_HINT, kind_of, show_value
from labctl.plan.types import labctl_error
from labctl.units import Quantity, named_error, parse_quantity, parse_tolerance, quantity_hint

ID_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.-]*$"
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
SIGNAL_PATTERN = r"^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*$"
KEYWORDS = ("and", "or", "not", "true", "false")
LIMIT_KEYS = ("min", "max", "nominal", "tol", "equals", "regex", "marginal")


class Expr(str):
    """A value written as ``${…}``: resolved per corner by the loader, kept as text here."""

    __slots__ = ()


def plain_key(value: Any) -> Any:
    """A hashable copy of plain YAML data (with each value's type, so ``1`` is not ``true``
    nor ``1.0``), or None when it holds a ``${…}`` or anything else."""
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            if v.__class__ is str:  # the common case, inline
                if "${" in v:
                    return None
                key: Any = ("str", v)
            else:
                key = plain_key(v)
                if key is None:
                    return None
            items.append((k, key))
        return ("map", tuple(items))
    if isinstance(value, list):
        out = []
        for v in value:
            key = plain_key(v)
            if key is None:
                return None
            out.append(key)
        return ("list", tuple(out))
    if isinstance(value, str):
        return None if "${" in value else ("str", value)
    if value is None or isinstance(value, bool | int | float):
        return (type(value).__name__, value)
    return None


_DURATIONS = ("timeout", "stale_after", "poll_interval")


def _quantity_or_expr(kind: str) -> Any:
    def validate(value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, Expr):
            return value
        if isinstance(value, str) and "${" in value:
            return Expr(value)
        what = info.field_name or ("tol" if kind == "tol" else "value")
        try:
            if kind == "tol":
                return parse_tolerance(value, what=what)
            return parse_quantity(value, what=what)
        except UnitError as err:  # timeout: 'lots' is not a quantity (hint: a duration)
            raise labctl_error(named_error(err, what, quantity_hint("time" if what in _DURATIONS else None))) from None
        except LabctlError as err:
            raise labctl_error(err) from None

    return validate


def _ser_q(v: Any) -> Any:
    return str(v) if isinstance(v, Quantity) else v


QuantityOrExpr = Annotated[
    Any,
    BeforeValidator(_quantity_or_expr("quantity")),
    PlainSerializer(_ser_q),
    WithJsonSchema({"type": ["string", "number"], "description": "a quantity (0.75 V, 3 %, 105 degC) or ${expression}"}),
]
ToleranceOrExpr = Annotated[
    Any,
    BeforeValidator(_quantity_or_expr("tol")),
    PlainSerializer(_ser_q),
    WithJsonSchema({"type": ["string", "number"], "description": "relative (3 %) or absolute (±25 mV) tolerance, or ${expression}"}),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class Limit(_Strict):
    """Limits of one measurement. ``min``/``max`` bound it; ``nominal`` + ``tol`` is the
    same as min/max around a nominal (``tol`` absolute ``±25 mV`` or relative ``3 %``);
    ``equals`` or ``regex`` judge text or exact values; ``marginal`` is a guard band inside
    the limits: a value that passes but lies within it is MARGINAL (still a pass)."""

    min: QuantityOrExpr | None = Field(None, description="lowest passing value (inclusive)")
    max: QuantityOrExpr | None = Field(None, description="highest passing value (inclusive)")
    nominal: QuantityOrExpr | None = Field(None, description="nominal value (use with tol)")
    tol: ToleranceOrExpr | None = Field(None, description="± tolerance around nominal: 3 % or ±25 mV")
    equals: Any = Field(None, description="the value must equal this (text, number or quantity)")
    regex: str | None = Field(None, description="text measurements: must match this regex")
    marginal: ToleranceOrExpr | None = Field(
        None,
        description="guard band inside the limits: a percentage of the window (10 %) or a "
        "quantity (5 mV); passing values within it are MARGINAL",
    )

    @model_validator(mode="after")
    def _combination(self) -> Limit:
        has_window = self.min is not None or self.max is not None
        has_nominal = self.nominal is not None or self.tol is not None
        exact = self.equals is not None or self.regex is not None
        if self.nominal is not None and self.tol is None:
            _refuse("nominal needs tol (e.g. tol: 3 % or tol: ±25 mV)",
                    "add tol: beside nominal: relative (3 %) or absolute (±25 mV)")
        if self.tol is not None and self.nominal is None:
            _refuse("tol needs nominal", "add nominal: (the value tol is around), or bound it with min:/max:")
        if has_window and has_nominal:
            _refuse("give either min/max or nominal + tol, not both", "keep one of the two forms")
        if exact and (has_window or has_nominal):
            _refuse("equals/regex cannot be combined with min/max or nominal/tol",
                    "judge exact values with equals or regex alone, ranges with min/max or nominal + tol")
        if self.equals is not None and self.regex is not None:
            _refuse("give equals or regex, not both", "keep one of them")
        if not (exact or has_window or has_nominal):
            _refuse("a limit needs min, max, nominal + tol, equals or regex",
                    "e.g. {max: 5 A} or {nominal: 0.75 V, tol: 3 %}")
        if self.marginal is not None and exact:
            _refuse("marginal applies to min/max or nominal/tol limits only",
                    "remove marginal: from an equals or regex limit")
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as err:
                _refuse(f"regex is not valid: {err}", "write a Python regular expression; quote it in single quotes")
        if isinstance(self.min, Quantity) and isinstance(self.max, Quantity):
            try:  # (different dimensions are reported against the measurement later)
                same = self.min.delta == self.max.delta and self.min.dimension == self.max.dimension
                above = same and self.min.base > self.max.base  # cached factors: no pint per limit
            except Exception:
                above = False
            if above:
                _refuse(f"min ({self.min}) is above max ({self.max})",
                        "min is the lowest passing value and max the highest: swap them")
        return self


def _refuse(message: str, hint: str) -> None:
    """A rule of the plan language is broken: said at the value, with what to write."""
    raise labctl_error(PlanError(message, hint=hint))


def _limits_shape(value: Any) -> Any:
    """One limit, or a mapping measurement -> limit. A mapping that uses any limit key is
    one limit, and so is one whose values are not all mappings (so a typo like ``maxx: 2 V``
    is reported as an unknown key of that limit, with "did you mean 'max'")."""
    if isinstance(value, dict) and (
        any(k in LIMIT_KEYS for k in value) or not all(isinstance(v, dict) for v in value.values())
    ):
        return {"*": value}
    return value


def _shared(what: str) -> WrapValidator:
    """Values written alike are one object: within one validation that passes a dict under
    ``what`` in its context (the plan loader passes ``limits`` and ``args``), steps whose
    value is the same plain data get the same validated object, validated once. A plan of
    100,000 steps that read the same property with the same limits keeps one copy of them, not
    100,000 (plan models are never changed once loaded). A value with a ``${…}`` is its own."""

    def shared(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        seen = info.context.get(what) if isinstance(info.context, dict) else None
        key = plain_key(value) if seen is not None else None
        if key is None:
            return handler(value)
        found = seen.get(key)
        if found is None:
            found = seen[key] = handler(value)
        return found

    return WrapValidator(shared)


#: limits written alike: one dict of the same :class:`Limit` objects
Limits = Annotated[dict[str, Limit], BeforeValidator(_limits_shape), _shared("limits")]
#: a check's arguments written alike: one dict
Args = Annotated[dict[str, Any], _shared("args")]


def _tag(tag: str) -> str:
    """A tag is a word (reported at the tag itself)."""
    if not re.match(r"^[\w.-]+$", tag):
        _refuse(f"tag {tag!r} may only hold letters, digits, _ . -", "e.g. tags: [power, thermal]")
    return tag


class Step(_Strict):
    """One step: a check with its arguments and limits."""

    id: str = Field(pattern=ID_PATTERN, description="unique step id (letters, digits, _ . -)")
    name: str | None = Field(None, description="human title shown in reports")
    description: str | None = None
    check: Annotated[str, AfterValidator(sys.intern)] = Field(  # one string per check name, not per step
        description="check name, e.g. power.rails (see `labctl validate --list-checks`)")
    args: Args = Field(default_factory=dict, description="the check's arguments")
    limits: Limits | None = Field(
        None, description="one limit (for every measurement) or measurement name -> limit"
    )
    retries: int = Field(0, ge=0, le=100, description="extra attempts after a FAIL or ERROR")
    timeout: QuantityOrExpr | None = Field(None, description="step timeout, e.g. 10 min")
    on_fail: Literal["continue", "stop"] = Field(
        "continue", description="after a failure: continue with the next step, or stop (teardown runs)"
    )
    when: str | None = Field(None, description="condition, e.g. ambient >= 25 degC and not quick")
    tags: list[Annotated[str, AfterValidator(_tag)]] = Field(default_factory=list)
    per_corner: bool = Field(
        True, description="false: run once, not once per corner (steps: group only)"
    )
    shared: bool = Field(
        False, description="acts on the environment every slot shares (a rack's chamber): with --slots, "
        "every live slot reaches it, it runs once, and every slot records its result"
    )
    resume: Literal["replay", "skip"] | None = Field(
        None,
        description="labctl resume, for this step when it finished before the cut-off: replay "
        "(re-run it to re-establish the bench's state) or skip (keep its result); default: "
        "what the check declares (power-up, set, link training, soak, workload: replay)",
    )

    @field_validator("when", mode="before")
    @classmethod
    def _when(cls, v: Any, info: ValidationInfo) -> Any:
        """``when: true`` / ``when: false``: YAML reads them as booleans; they are the
        expression language's ``true`` and ``false``. Any other value that is not text
        (``when: 3``) is no condition."""
        if isinstance(v, bool):
            return "true" if v else "false"
        if v is None or isinstance(v, str):
            return v
        step = info.data.get("id")
        what = f"holds {'a list' if isinstance(v, list) else 'a mapping'}" if isinstance(v, list | dict) \
            else f"{show_value(v)} is {kind_of(v)}"
        raise labctl_error(PlanError(f"{f'step {step!r}: ' if step else ''}when: {what}, not true or false",
                                     hint=CONDITION_HINT))

    @property
    def single_limit(self) -> Limit | None:
        """The limit written without a measurement name (applies to every measurement)."""
        return (self.limits or {}).get("*")


class Interlock(_Strict):
    """A safety condition watched for the whole run."""

    signal: str = Field(
        pattern=SIGNAL_PATTERN,
        description="role.property (dut.die_temp, psu.ch1.current) or a named channel (TC_LID)",
    )
    name: str | None = None
    max: QuantityOrExpr | None = Field(None, description="trip above this")
    min: QuantityOrExpr | None = Field(None, description="trip below this")
    stale_after: QuantityOrExpr = Field(
        "3 s", description="a reading older than this (or failing) trips too"
    )
    action: Literal["abort"] = Field("abort", description="abort: to the safe state, run ABORTED")

    @model_validator(mode="after")
    def _bound(self) -> Interlock:
        if self.max is None and self.min is None:
            _refuse(f"interlock on {self.signal} needs max or min", "add max: (it trips above) or min: (below)")
        return self


class Safety(_Strict):
    poll_interval: QuantityOrExpr = Field("1 s", description="how often interlocks are read")
    interlocks: list[Interlock] = Field(default_factory=list)


class Parameter(_Strict):
    """Long form of a parameter: ``vin: {default: 12 V, description: input voltage}``."""

    default: Any = Field(description="value used unless overridden by --set NAME=VALUE")
    description: str | None = None
    choices: list[Any] | None = Field(None, description="allowed values")


def _parameter_shape(value: Any) -> Any:
    if isinstance(value, dict) and "default" in value:
        return value
    if isinstance(value, Parameter):
        return value
    return {"default": value}


ParameterDecl = Annotated[Parameter, BeforeValidator(_parameter_shape)]


def _version(value: Any) -> Any:
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


class Plan(_Strict):
    """A test plan."""

    name: str = Field(description="plan name, recorded with every run")
    version: Annotated[str, BeforeValidator(_version)] = Field("1", description="plan version")
    description: str = ""
    owner: str | None = Field(None, description="team or person responsible")
    requires: list[str] = Field(default_factory=list, description="roles the station must offer")
    parameters: dict[str, ParameterDecl] = Field(
        default_factory=dict, description="NAME: default, referenced as ${NAME}; --set NAME=VALUE"
    )
    corners: dict[str, list[Any]] = Field(
        default_factory=dict, description="sweep matrix: axis -> values; steps run per corner"
    )
    corner_order: list[str] | None = Field(
        None, description="axes from slowest- to fastest-changing (default: as written)"
    )
    safety: Safety | None = None
    setup: list[Step] = Field(default_factory=list, description="run once, before the steps")
    steps: list[Step] = Field(default_factory=list, json_schema_extra={"minItems": 1},
                              description="the checks; at least one (leave steps: out for a plan of only setup and teardown)")
    teardown: list[Step] = Field(
        default_factory=list, description="always runs: pass, fail, error, abort"
    )

    @field_validator("corners")
    @classmethod
    def _non_empty(cls, v: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for name, values in v.items():
            if not values:
                _refuse(f"corner axis {name!r} has no values", f"list its values, e.g. {name}: [0 degC, 25 degC]")
        return v

    @field_validator("requires")
    @classmethod
    def _roles(cls, v: list[str]) -> list[str]:
        for role in v:
            if not re.match(r"^[A-Za-z_][\w-]*$", role):
                _refuse(f"role {role!r} must be a word, e.g. psu, dmm, chamber",
                        "letters, digits, _ and -, starting with a letter or _")
        return v

    def all_steps(self) -> list[tuple[str, Step]]:
        return [(g, s) for g in ("setup", "steps", "teardown") for s in getattr(self, g)]


class StepLibrary(_Strict):
    """A reusable step library, included with ``- include: lib/power-up.yaml``."""

    name: str | None = None
    description: str = ""
    requires: list[str] = Field(default_factory=list, description="roles the steps need")
    parameters: dict[str, ParameterDecl] = Field(
        default_factory=dict, description="defaults; the including plan's values win"
    )
    steps: list[Any] = Field(description="the steps to splice in where included")


class Include(_Strict):
    """``- include: lib/power-up.yaml`` inside setup/steps/teardown."""

    include: str = Field(description="path relative to the including file")
    prefix: str = Field("", description="prefix added to the included steps' ids",
                        json_schema_extra={"pattern": r"^([A-Za-z_][A-Za-z0-9_.-]*)?$"})
