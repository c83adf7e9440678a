"""The check registry: names, argument schemas and measurements of every check.

A check is *declared* with its argument model (pydantic) and what it measures, so plans can
be validated before any implementation is loaded; an implementation is *attached* to the
declared spec later::

    @register_check("power.rails", roles=("psu",), doc="Each rail against nominal ± tol.")
    class PowerRailsArgs(CheckArgs):
        rails: list[str]
        def measurements(self): return {r: Measure("voltage", "V") for r in self.rails}

    @implementation("power.rails")
    def power_rails(ctx, args: PowerRailsArgs): ...

A third-party package declares and implements in one go (decorating the function, with
``args=``) in a module listed under the entry-point group ``labctl.checks``::

    [project.entry-points."labctl.checks"]
    my_checks = "my_pkg.checks"
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

ENTRY_POINT_GROUP = "labctl.checks"


def argument_error(message: str, hint: str) -> Exception:
    """A refusal of a check's arguments with what to write, for a validator to raise::

        raise argument_error("ramp_rate must be positive", "e.g. ramp_rate: 5 degC/min")

    ``labctl validate`` prints it at the argument's ``file:line:col`` with ``hint: …``."""
    from pydantic_core import PydanticCustomError

    return PydanticCustomError("labctl", "{message}", {"message": message, "hint": hint})


@dataclass(frozen=True)
class Measure:
    """One measurement a check records: its dimension (for limit checks) and display unit.

    ``dimension=None`` means "any": the check records text or a value whose unit the plan
    chooses (``measure``/``scpi`` declare it with their ``unit:`` argument).
    """

    dimension: str | None
    unit: str | None = None
    doc: str = ""
    text: bool = False  # the value is text (limits: equals / regex)
    delta: bool = False  # a difference (temperature limits are then deltas, not scale points)


class CheckArgs(BaseModel):
    """Base of every check's arguments: unknown keys are errors; defaults such as
    ``"5 degC/min"`` are parsed like written values."""

    model_config = ConfigDict(extra="forbid", validate_default=True, defer_build=True)

    #: fields whose values name fixture channels (VDD_CORE, TC_LID …), for ``--fixture`` checks
    channel_fields: ClassVar[tuple[str, ...]] = ()
    #: fields whose values name fixture roles (``role: psu``)
    role_fields: ClassVar[tuple[str, ...]] = ()
    #: fixed measurements; override :meth:`measurements` when they depend on the arguments
    MEASURES: ClassVar[dict[str, Measure]] = {}
    #: the check leaves the bench in a state later steps rely on (power on, a setpoint, a
    #: workload, a trained link): ``labctl resume`` replays it before the cut-off step.
    #: Override :meth:`establishes_state` when it depends on the arguments; a plan step
    #: overrides both with ``resume: replay|skip``.
    ESTABLISHES_STATE: ClassVar[bool] = False

    def measurements(self) -> dict[str, Measure]:
        """Name -> :class:`Measure` of what this step records (keys usable in ``limits:``)."""
        return dict(self.MEASURES)

    def establishes_state(self) -> bool:
        """Whether this step, with these arguments, sets up state later steps rely on."""
        return self.ESTABLISHES_STATE

    def channels(self) -> list[str]:
        """The named channels (signals) these arguments refer to."""
        out: list[str] = []
        for name in self.channel_fields:
            value = getattr(self, name, None)
            if value is None:
                continue
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, dict):
                out.extend(str(k) for k in value)
            else:
                out.extend(str(v) for v in value)
        return out

    def roles(self) -> list[str]:
        """Roles named in the arguments (in addition to the check's fixed roles)."""
        return [str(getattr(self, n)) for n in self.role_fields if getattr(self, n, None)]

    def estimate_seconds(self) -> float | None:
        """How long the check takes on a real bench, if it can be known from the arguments."""
        return None

    def fixture_problems(self, fixture: Any) -> list[tuple[str, str, str]]:
        """What ``labctl validate --fixture`` can tell is wrong with these arguments on that
        station: ``(argument, message, hint)`` each (a check whose run would only find it then)."""
        return []

    def time_warnings(self) -> list[tuple[str, str]]:
        """``(argument, warning)`` for an argument that bounds the check's own time and looks too
        short for what the check is expected to do (``labctl validate`` warns; the run may still
        pass, e.g. when the chamber is nearer the setpoint than the estimate assumes)."""
        return []


@dataclass
class CheckSpec:
    """A declared check."""

    name: str
    args: type[CheckArgs]
    doc: str = ""
    roles: tuple[str, ...] = ()
    func: Callable[..., Any] | None = None
    origin: str = "labctl"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def implemented(self) -> bool:
        return self.func is not None

    @property
    def summary(self) -> str:
        """The description's first paragraph, on one line (a docstring wraps it)."""
        text = (self.doc or self.args.__doc__ or "").strip()
        return " ".join(text.split("\n\n", 1)[0].split()) if text else ""


class CheckRegistryError(ValueError):
    """A check was declared twice, or implemented without a declaration."""


_REGISTRY: dict[str, CheckSpec] = {}
_LOADED = {"catalog": False, "plugins": False}
plugin_errors: list[str] = []

T = TypeVar("T")


def register_check(
    name: str,
    *,
    args: type[CheckArgs] | None = None,
    roles: tuple[str, ...] = (),
    doc: str | None = None,
    origin: str | None = None,
) -> Callable[[T], T]:
    """Declare a check (decorating its :class:`CheckArgs` model), or declare-and-implement it
    (decorating a function, with ``args=``). Returns the decorated object unchanged."""

    def decorate(obj: T) -> T:
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            _declare(name, obj, roles, doc or (obj.__doc__ or ""), origin or obj.__module__)
        elif callable(obj):
            if name in _REGISTRY and args is None:
                attach(name, obj)
            else:
                if args is None:
                    raise CheckRegistryError(f"check {name!r}: a function needs args=<CheckArgs model>")
                _declare(name, args, roles, doc or (obj.__doc__ or ""), origin or obj.__module__)
                attach(name, obj)
        else:
            raise CheckRegistryError(f"register_check({name!r}) decorates a CheckArgs model or a function")
        return obj

    return decorate


def _declare(name: str, args: type[BaseModel], roles: tuple[str, ...], doc: str, origin: str) -> None:
    if not issubclass(args, CheckArgs):
        raise CheckRegistryError(f"check {name!r}: args must derive from CheckArgs")
    existing = _REGISTRY.get(name)
    if existing is not None and existing.args is not args:
        raise CheckRegistryError(f"check {name!r} is declared twice ({existing.origin} and {origin})")
    _REGISTRY[name] = CheckSpec(name=name, args=args, doc=doc.strip(), roles=tuple(roles), origin=origin)


def attach(name: str, func: Callable[..., Any]) -> None:
    """Attach the implementation of an already declared check."""
    _ensure_loaded()
    spec = _REGISTRY.get(name)
    if spec is None:
        raise CheckRegistryError(f"cannot implement unknown check {name!r}; declare it first")
    if spec.func is not None and spec.func is not func:
        raise CheckRegistryError(f"check {name!r} already has an implementation ({spec.func.__module__})")
    spec.func = func


def implementation(name: str) -> Callable[[T], T]:
    """Decorator: ``@implementation("power.rails")`` attaches a function to a declared check."""

    def decorate(func: T) -> T:
        attach(name, func)  # type: ignore[arg-type]
        return func

    return decorate


def _ensure_loaded() -> None:
    if not _LOADED["catalog"]:
        _LOADED["catalog"] = True
        import labctl.checks.catalog  # noqa: F401  (declares the built-in checks)


def load_plugins() -> list[str]:
    """Import every module of the ``labctl.checks`` entry-point group (once).

    Returns (and keeps in :data:`plugin_errors`) one line per plugin that failed to load;
    a broken plugin never hides the built-in checks.
    """
    _ensure_loaded()
    if _LOADED["plugins"]:
        return plugin_errors
    _LOADED["plugins"] = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
            if callable(obj) and not isinstance(obj, type):
                obj()  # a registration function
        except Exception as err:  # a third-party plugin may fail in any way
            plugin_errors.append(f"check plugin {ep.name!r} ({ep.value}) failed to load: {err}")
    return plugin_errors


def get_check(name: str) -> CheckSpec | None:
    """The declared check ``name`` (built-in or from a plugin), or None."""
    _ensure_loaded()
    spec = _REGISTRY.get(name)
    if spec is None and not _LOADED["plugins"]:
        load_plugins()
        spec = _REGISTRY.get(name)
    return spec


def all_checks() -> dict[str, CheckSpec]:
    """Every declared check by name (plugins included)."""
    load_plugins()
    return dict(sorted(_REGISTRY.items()))
