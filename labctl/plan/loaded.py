"""A loaded plan: the validated :class:`Plan` plus everything the engine needs to run it.

:class:`LoadedPlan` keeps the source positions, the resolved parameter values and the
corners, and resolves a step for one corner: ``${…}`` in arguments, limits, timeout and
``when:``, the check's argument model, and the limits as numbers in each measurement's
unit. Errors it raises are located (``file:line:col``).

Step expansion (:meth:`LoadedPlan.expand`): ``setup`` runs once; in ``steps`` each run of
consecutive per-corner steps is a *block* that runs for every corner (corner-major: all of
the block at the first corner, then all of it at the next); a step with
``per_corner: false`` runs once at its place; ``teardown`` runs once.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from labctl.errors import ExpressionError, LabctlError, PlanError, UnitError, ValidationErrors
from labctl.plan.expr import (
    CONDITION_HINT,
    NotACondition,
    Template,
    kind_of,
    names,
    parse,
    show_value,
)
from labctl.plan.limits import ResolvedLimit, resolve
from labctl.plan.model import Expr, Limit, Plan, Step, plain_key
from labctl.plan.source import Pos, SourceMap, pydantic_errors, suggest
from labctl.plan.temperatures import off_scale
from labctl.units import DIMENSIONS, Quantity, describe_dimension, parse_duration, parse_quantity


@dataclass(frozen=True)
class Corner:
    """One point of the sweep matrix."""

    index: int
    values: dict[str, Any]

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.values.items())


@dataclass(frozen=True)
class PlannedStep:
    """One step to run, at one corner (None: runs once)."""

    group: str
    step: Step
    corner: Corner | None
    index: int

    @property
    def key(self) -> str:
        return self.step.id if self.corner is None else f"{self.step.id}@{self.corner.index}"


def located(pos: Pos | None, message: str, hint: str | None = None, cls: type[LabctlError] = PlanError) -> LabctlError:
    if pos is None:
        return cls(message, hint=hint)
    return cls(message, file=pos.file, line=pos.line, column=pos.column, hint=hint)


class RequiredAt(Mapping[str, "Pos | None"]):
    """Where each required role is written (``requires:`` or an included library's), looked
    up in the source map only when a role is missing (positions of a plain file are read only
    when one is wanted: :meth:`SourceMap.later`)."""

    def __init__(self, smap: SourceMap | None = None, paths: dict[str, tuple[Any, ...]] | None = None) -> None:
        self._at: dict[str, Callable[[], Pos | None]] = {
            role: functools.partial(smap.value, path) for role, path in (paths or {}).items()}  # type: ignore[union-attr]

    def add(self, role: str, at: Callable[[], Pos | None]) -> None:
        """``role`` is written where ``at()`` says (an included library's ``requires:``)."""
        self._at[role] = at

    def __getitem__(self, role: str) -> Pos | None:
        return self._at[role]()

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)


@dataclass
class LoadedPlan:
    plan: Plan
    path: str
    smap: SourceMap
    parameters: dict[str, Any]
    corners: list[Corner]
    sha256: str = ""
    files: list[str] = field(default_factory=list)
    requires_pos: Mapping[str, Pos | None] = field(default_factory=RequiredAt)
    index_map: dict[tuple[str, int], int] = field(default_factory=dict, repr=False)
    #: non-fatal findings, already located ("file:line:col: text")
    warnings: list[str] = field(default_factory=list)
    #: parameters computed from others, inputs first: ``(name, template)`` (see :meth:`env`)
    derived: list[tuple[str, Any]] = field(default_factory=list, repr=False)
    _corner_env: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)
    _paths: dict[int, tuple[str, int]] = field(default_factory=dict, repr=False)
    #: resolved args and limits per (step, corner): the loader's checks, the station checks and
    #: the runner each ask for them; they depend only on parameters and the corner
    _resolved: dict[tuple[Any, ...], Any] = field(default_factory=dict, repr=False)
    # equal limits of different steps are one object, so what is derived from a limit once
    # (its event form and text, see engine.context.to_event_limits) serves every step using it
    _limits_seen: dict[Any, Any] = field(default_factory=dict, repr=False)
    # validated args by (check, args as written) for args without ${…}: steps that read the same
    # property of the same role share one (immutable in use) args object
    _args_seen: dict[tuple[str, Any], Any] = field(default_factory=dict, repr=False)
    # resolved limits by (check, id of the args (kept alive in _resolved), limits as written)
    _limits_by_text: dict[tuple[str, int, Any], dict[str, ResolvedLimit]] = field(default_factory=dict, repr=False)
    # those written-alike keys by ("args" or "limits", id of the step's args or limits object (kept
    # alive by the plan))
    _step_keys: dict[tuple[str, int], Any] = field(default_factory=dict, repr=False)
    # a number per limit as written, and by the id of each Limit object of the plan's steps
    _written_numbers: dict[Any, int] = field(default_factory=dict, repr=False)
    _limit_numbers: dict[int, int | None] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for group in ("setup", "steps", "teardown"):
            for i, step in enumerate(getattr(self.plan, group)):
                self._paths[id(step)] = (group, self.index_map.get((group, i), i))

    # -- positions --------------------------------------------------------------------------
    def step_path(self, step: Step) -> tuple[str, int]:
        return self._paths[id(step)]

    def pos(self, path: tuple[Any, ...], *, key: bool = False) -> Pos | None:
        p, _ = self.smap.nearest(path, key=key)
        return p

    # -- environment ------------------------------------------------------------------------
    def env(self, corner: Corner | None) -> dict[str, Any]:
        """The names a step's ``${…}`` sees: the parameters, and at a corner its axis values.
        An axis that overrides a parameter overrides what is computed from it too
        (``vlow: ${vin * 0.9}`` at the corner ``vin: 6 V`` is 5.4 V)."""
        env = dict(self.parameters)
        if corner is None:
            return env
        env.update(corner.values)
        if not self.derived or not any(k in self.parameters for k in corner.values):
            return env
        known = self._corner_env.get(corner.index)
        if known is not None:
            return dict(known)
        for name, template in self.derived:
            if name in corner.values:
                continue  # the axis itself names it
            try:
                env[name] = template.render(env)
            except ExpressionError as err:
                raise self._expr_error(err, ("parameters", name), env) from None
        self._corner_env[corner.index] = dict(env)
        return env

    def _env_for(self, step: Step, corner: Corner | None) -> dict[str, Any]:
        return self.env(corner)

    def render(self, value: Any, path: tuple[Any, ...], env: dict[str, Any]) -> Any:
        """Resolve every ``${…}`` inside ``value`` (dicts and lists too)."""
        if isinstance(value, dict):
            return {k: self.render(v, (*path, k), env) for k, v in value.items()}
        if isinstance(value, list):
            return [self.render(v, (*path, i), env) for i, v in enumerate(value)]
        t = Template.find(value)
        if t is None:
            return value
        try:
            _refuse_broken(t, env, lambda: self.pos(path))
            return t.render(env)
        except ExpressionError as err:
            raise self._expr_error(err, path, env) from None

    def _expr_error(self, err: ExpressionError, path: tuple[Any, ...], env: dict[str, Any]) -> PlanError:
        base = self.pos(path)
        pos = base.shifted(err.column or 0) if base else None
        hint = err.hint
        if err.message.startswith("undefined parameter"):
            name = err.message.split("'")[1]
            close = suggest(name, env)
            axes = {k for c in self.corners for k in c.values}
            if name in axes:
                hint = f"{name!r} is a corner axis; this step runs once (per_corner: false, setup or teardown), so it has no corner value"
            elif err.hint and not close:  # a bare word compared with: it was meant as text
                hint = err.hint
            else:
                hint = (f"did you mean {close!r}? " if close else "") + "define it under parameters: or as a corner axis"
        return located(pos, err.message, hint, ExpressionError)  # type: ignore[return-value]

    # -- resolution -------------------------------------------------------------------------
    def resolve_args(self, step: Step, corner: Corner | None = None) -> Any:
        """The check's argument model for ``step`` at ``corner`` (ValidationErrors if bad)."""
        key = ("args", id(step), corner.index if corner is not None else None)
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = self._resolve_args(step, corner)
        return found

    def _resolve_args(self, step: Step, corner: Corner | None) -> Any:
        from labctl.checks.registry import get_check

        plain = self._step_key("args", step)  # no ${…}: the same args validate the same everywhere
        if plain is not None:
            known = self._args_seen.get((step.check, plain))
            if known is not None:
                return known
        spec = get_check(step.check)
        path = (*self.step_path(step), "args")
        if spec is None:
            raise located(self.pos((*self.step_path(step), "check")), f"unknown check {step.check!r}")
        env = self.env(corner)
        errors: list[LabctlError] = []
        args: dict[str, Any] = {}
        for k, v in step.args.items():
            try:
                args[k] = self.render(v, (*path, k), env)
            except LabctlError as err:
                errors.append(err)
        failed = {k for k in step.args if k not in args}
        try:
            result = spec.args.model_validate(args)
        except ValidationError as err:
            for e in pydantic_errors(err, self.smap, prefix=path, model=spec.args, what=f"args of {step.check}"):
                if not any(f"missing required key {k!r}" in e.message for k in failed):
                    errors.append(e)
            result = None
        if errors:
            raise ValidationErrors(errors)
        if plain is not None:
            self._args_seen[(step.check, plain)] = result
        return result

    def _step_key(self, what: str, step: Step) -> Any:
        """The written-alike key of a step's ``"args"`` or ``"limits"``, made once per object
        (not once per corner; steps written alike share their args and limits objects, see
        ``model._shared``, so a plan of many such steps keeps one key, not one a step)."""
        where = (what, id(step.args) if what == "args" else id(step.limits))
        found = self._step_keys.get(where, _UNSEEN)
        if found is _UNSEEN:
            found = self._step_keys[where] = plain_key(step.args) if what == "args" else self._written_limits(step)
        return found

    def _written_limits(self, step: Step) -> Any:
        """The step's limits as written, as a key of small numbers (the same for limits written
        alike), or None when one holds a ``${…}`` or an unhashable value. Steps written alike
        share their :class:`Limit` objects (see ``model._shared``): each is read once."""
        out = []
        for name, limit in step.limits.items():
            number = self._limit_numbers.get(id(limit), _UNSEEN)
            if number is _UNSEEN:
                written = _written_limit(limit)
                number = None if written is None else self._written_numbers.setdefault(written, len(self._written_numbers))
                self._limit_numbers[id(limit)] = number
            if number is None:
                return None
            out.append((name, number))
        return tuple(out)

    def resolve_timeout(self, step: Step, corner: Corner | None = None) -> float | None:
        if step.timeout is None:
            return None
        path = (*self.step_path(step), "timeout")
        value = self.render(str(step.timeout), path, self.env(corner)) if isinstance(step.timeout, Expr) else step.timeout
        try:
            return parse_duration(value, what="timeout")
        except UnitError as err:
            raise located(self.pos(path), err.message, err.hint) from None

    def should_run(self, step: Step, corner: Corner | None = None) -> bool:
        """Evaluate ``when:`` (True when there is none)."""
        if step.when is None:
            return True
        text, offset = _when_text(step.when)
        path = (*self.step_path(step), "when")
        env = self.env(corner)
        try:
            if text.lower() in _YAML11_WORDS and text not in env:
                raise ExpressionError(f"step {step.id!r}: when: {text} is not true or false", column=2,
                                      hint="only true and false are booleans (YAML 1.2): write when: true or when: false")
            template = Template(f"${{{text}}}")
            _refuse_broken(template, env, lambda: self.pos(path))
            value = template.render(env)
        except ExpressionError as err:
            err.column = (err.column or 0) - 2 + offset
            if isinstance(err, NotACondition):
                err.message = f"step {step.id!r}: when: {err.message}"
            raise self._expr_error(err, path, env) from None
        if not isinstance(value, bool):  # a number or text is no condition (it was read by its truthiness)
            shown = show_value(value)
            what = kind_of(value) + ("" if shown == text else f" ({shown})")
            base = self.pos(path)
            raise located(base.shifted(offset) if base else None,
                          f"step {step.id!r}: when: {text} is {what}, not true or false", CONDITION_HINT, ExpressionError)
        return value

    def resolve_limits(
        self, step: Step, corner: Corner | None = None, args: Any = None
    ) -> dict[str, ResolvedLimit]:
        """Measurement name -> limit in the measurement's unit (ValidationErrors if bad)."""
        if not step.limits:
            return {}
        if args is None:
            args = self.resolve_args(step, corner)
        where = (id(step), corner.index if corner is not None else None)
        if args is not self._resolved.get(("args", *where)):
            return self._resolve_limits(step, corner, args)  # args of its own: not kept
        found = self._resolved.get(("limits", *where))
        if found is None:
            # limits written alike (no ${…}) for the same args (shared when written alike) resolve alike
            written = self._step_key("limits", step)
            key = (step.check, id(args), written) if written is not None else None
            found = self._limits_by_text.get(key) if key is not None else None
            if found is None:
                found = {name: self._shared_limit(limit)
                         for name, limit in self._resolve_limits(step, corner, args).items()}
                if key is not None:
                    self._limits_by_text[key] = found
            self._resolved[("limits", *where)] = found
        return found

    def _shared_limit(self, limit: ResolvedLimit) -> ResolvedLimit:
        try:  # equal and of the same kinds (``equals: true`` is not ``equals: 1``)
            return self._limits_seen.setdefault((limit, type(limit.equals), type(limit.nominal)), limit)
        except TypeError:  # an unhashable ``equals`` value: kept as it is
            return limit

    def resolve_limit_as(self, step: Step, corner: Corner | None, args: Any, name: str,
                         unit: str) -> ResolvedLimit | None:
        """The limit of measurement ``name`` in ``unit``, the unit its reading came in, for
        a measurement whose unit is known only from the instrument (``measure`` without
        ``unit:`` records the property's own unit): checked as validation checks a declared
        unit (a limit of another dimension, or a temperature on another scale, is an error at
        the value) and converted to it. Kept per step, corner and unit."""
        from dataclasses import replace

        from labctl.units import dimension_of

        key = ("limit-as", id(step), corner.index if corner is not None else None, name, unit)
        if key in self._resolved:
            return self._resolved[key]
        measures = dict(args.measurements())
        m = measures.get(name)
        if m is not None and not m.text:
            dimension = m.dimension or (dimension_of(unit) if unit else None)
            measures[name] = replace(m, dimension=dimension if dimension in DIMENSIONS else None, unit=unit)
        try:
            found = self._resolve_limits(step, corner, args, measures).get(name)
        except ValidationErrors as errs:  # one step's limit: its first problem, where it is
            first = errs.errors[0]
            if len(errs.errors) > 1:
                first.message += f" (+{len(errs.errors) - 1} more)"
            raise first from None
        self._resolved[key] = found
        return found

    def _resolve_limits(self, step: Step, corner: Corner | None, args: Any,
                        measures: Mapping[str, Any] | None = None) -> dict[str, ResolvedLimit]:
        measures = args.measurements() if measures is None else measures
        env = self.env(corner)
        base = (*self.step_path(step), "limits")
        errors: list[LabctlError] = []
        out: dict[str, ResolvedLimit] = {}
        for key, limit in step.limits.items():
            lpath = base if key == "*" else (*base, key)
            if key == "*":
                targets = _targets_for_single(limit, measures)
                if not measures:
                    errors.append(located(self.pos(base, key=True),
                                          f"check {step.check} records no measurement, so it takes no limits",
                                          "remove limits: from this step"))
                    continue
                kinds = {(measures[n].dimension, measures[n].delta) for n in targets}
                if len(kinds) > 1:
                    names = ", ".join(targets)
                    errors.append(located(self.pos(base, key=True),
                                          f"one limit for measurements of different kinds ({names})",
                                          "name the measurement: limits: {NAME: {min: ..., max: ...}}"))
                    continue
            elif key not in measures:
                close = suggest(key, measures)
                errors.append(located(
                    self.pos(lpath, key=True),
                    f"{step.check} has no measurement {key!r}" + (f"; did you mean {close!r}?" if close else ""),
                    "its measurements: " + (", ".join(measures) or "none"),
                ))
                continue
            else:
                targets = [key]
            try:
                concrete = self._concrete_limit(limit, lpath, env)
            except LabctlError as err:
                errors.append(err)
                continue
            for name in targets:
                m = measures[name]
                errs = _check_limit_units(concrete, m, name, lambda f, lp=lpath: self.pos((*lp, f)))
                if errs:
                    errors.extend(errs)
                    break
                unit = m.unit if m.unit is not None else (DIMENSIONS.get(m.dimension or "") if m.dimension else None)
                try:
                    out[name] = resolve(concrete, unit=unit, dimension=m.dimension, delta=m.delta)
                except LabctlError as err:
                    errors.append(located(self.pos(lpath), err.message, err.hint))
                    break
        if errors:
            raise ValidationErrors(errors)
        return out

    def _concrete_limit(self, limit: Limit, path: tuple[Any, ...], env: dict[str, Any]) -> Limit:
        update: dict[str, Any] = {}
        for f in ("min", "max", "nominal", "tol", "marginal", "equals"):
            v = getattr(limit, f)
            if _templated(v):
                value = self.render(str(v), (*path, f), env)
                if value is None:
                    raise located(self.pos((*path, f)), f"{f}: {v} has no value",
                                  "a parameter it uses is broken; see the error at its definition")
                if f in ("tol", "marginal") and isinstance(value, int | float):
                    value = Quantity(float(value), "")
                if f in ("tol", "marginal") and isinstance(value, Quantity):
                    value = Quantity(value.magnitude, value.unit, delta=True)
                if f != "equals" and isinstance(value, int | float):
                    value = Quantity(float(value), "")
                update[f] = value
        return limit.model_copy(update=update) if update else limit

    # -- expansion --------------------------------------------------------------------------
    def expand(self) -> list[PlannedStep]:
        out: list[PlannedStep] = []

        def add(group: str, step: Step, corner: Corner | None) -> None:
            out.append(PlannedStep(group, step, corner, len(out)))

        for s in self.plan.setup:
            add("setup", s, None)
        block: list[Step] = []

        def flush() -> None:
            for corner in self.corners or [None]:
                for s in block:
                    add("steps", s, corner)
            block.clear()

        for s in self.plan.steps:
            if s.per_corner and self.corners:
                block.append(s)
            else:
                flush()
                add("steps", s, None)
        flush()
        for s in self.plan.teardown:
            add("teardown", s, None)
        return out

    def estimate_seconds(self, planned: list[PlannedStep] | None = None) -> tuple[float, int]:
        """(known seconds, number of expanded steps whose duration is unknown) of ``planned``
        (default: :meth:`expand`)."""
        total, unknown = 0.0, 0
        for ps in self.expand() if planned is None else planned:
            try:
                if not self.should_run(ps.step, ps.corner):
                    continue
                args = self.resolve_args(ps.step, ps.corner)
                est = args.estimate_seconds()
            except LabctlError:
                est = None
            if est is None:
                unknown += 1
            else:
                total += est
        return total, unknown

    def describe_expansion(self) -> list[str]:
        """One line per planned step, in run order, with its corner and estimated duration."""
        lines = []
        for ps in self.expand():
            try:
                runs = self.should_run(ps.step, ps.corner)
                est = self.resolve_args(ps.step, ps.corner).estimate_seconds()
            except LabctlError:
                runs, est = True, None
            corner = f" [{ps.corner.label}]" if ps.corner else ""
            skip = "  (skipped: when is false)" if not runs else ""
            dur = format_seconds(est) if est is not None else "?"
            lines.append(f"{ps.index + 1:4d}  {ps.group:8s} {ps.step.id} ({ps.step.check}){corner}  ~{dur}{skip}")
        return lines

    def summary(self) -> str:
        p = self.plan
        n = len(p.setup) + len(p.steps) + len(p.teardown)
        planned = self.expand()
        expanded = len(planned)
        seconds, unknown = self.estimate_seconds(planned)
        if unknown and not seconds:
            est = "duration unknown"
        else:
            est = f"est. {'≥ ' if unknown else ''}{format_seconds(seconds)}"
        corners = f"{len(self.corners)} corner{'s' if len(self.corners) != 1 else ''}"
        return (
            f"{p.name} v{p.version}: {n} steps ({len(p.setup)} setup, {len(p.steps)} steps, "
            f"{len(p.teardown)} teardown), {corners}, {expanded} expanded, {est}"
        )


class BrokenInput(PlanError):
    """A value uses a parameter that is broken (reported at its definition): this follow-up
    is dropped from the report (see ``loader._dedupe``)."""


def _refuse_broken(t: Template, env: dict[str, Any], pos: Callable[[], Pos | None]) -> None:
    """``pos``: where the template is written (asked only to word the refusal)."""
    if not any(v is None for v in env.values()):
        return
    try:
        used = [n for body, _ in t.parts() for n, _ in names(parse(body))]
    except ExpressionError:
        return  # reported by the evaluation
    broken = [n for n in used if n in env and env[n] is None]
    if broken:
        raise located(pos(), f"uses the broken parameter {broken[0]!r}", cls=BrokenInput)


def format_seconds(seconds: float) -> str:
    """``5ms``, ``0.5s``, ``42s``, ``2m05s``, ``1h02m``."""
    if seconds < 1:
        return f"{seconds * 1000:.3g}ms" if seconds < 0.1 else f"{seconds:.2g}s"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{sec:02d}s"


def _when_text(text: str) -> tuple[str, int]:
    stripped = text.strip()
    lead = len(text) - len(text.lstrip())
    if stripped.startswith("${") and stripped.endswith("}"):
        return stripped[2:-1], lead + 2
    return stripped, lead


#: YAML 1.1's booleans, words in a plan (YAML 1.2): ``when: yes`` is no parameter but a mistake
_YAML11_WORDS = ("yes", "no", "on", "off", "y", "n")


def _targets_for_single(limit: Limit, measures: dict[str, Any]) -> list[str]:
    text_rule = limit.regex is not None or (isinstance(limit.equals, str) and "${" not in limit.equals)
    wanted = [n for n, m in measures.items() if m.text == text_rule]
    return wanted or list(measures)


def _check_limit_units(limit: Limit, m: Any, name: str, pos_of: Any) -> list[LabctlError]:
    """Dimension checks of a concrete limit against one measurement."""
    errors: list[LabctlError] = []
    numeric_fields = [f for f in ("min", "max", "nominal") if getattr(limit, f) is not None]
    if m.text:
        for f in numeric_fields + [f for f in ("tol", "marginal") if getattr(limit, f) is not None]:
            errors.append(located(pos_of(f), f"{name} is text: {f} does not apply",
                                  "judge text with equals: or regex:"))
        return errors
    if limit.regex is not None:
        errors.append(located(pos_of("regex"), f"{name} is a number: regex does not apply",
                              "use min/max, nominal + tol, or equals"))
        return errors
    if m.dimension is None:
        return errors
    dim = m.dimension
    for f in numeric_fields + (["equals"] if limit.equals is not None else []):
        v = getattr(limit, f)
        try:
            q = parse_quantity(v, dim, what=f"{f}", unit_hint=m.unit)
        except UnitError as err:
            msg = err.message
            if "expected" in msg:
                msg = msg.replace("expected", f"but {name} is measured as", 1)
                msg = msg.split(" (e.g.")[0] + f" ({m.unit or DIMENSIONS[dim]})" if m.unit or DIMENSIONS.get(dim) else msg
            errors.append(located(pos_of(f), msg, err.hint, UnitError))
            continue
        off = None if m.delta or not m.unit else off_scale(q, m.unit, f"{name} is measured in")
        if off is not None:  # max: 378 K on a degC reading: a temperature or a rise?
            errors.append(located(pos_of(f), f"{f}: {off[0]}", off[1], UnitError))
    for f in ("tol", "marginal"):
        v = getattr(limit, f)
        if v is None or (isinstance(v, Quantity) and (v.is_ratio or not v.unit)):
            continue
        if isinstance(v, Quantity) and not v.compatible(dim):
            errors.append(located(
                pos_of(f),
                f"{f}: {v} is not a relative tolerance (%) nor {describe_dimension(dim).split(' (e.g.')[0]} like {name}",
                f"write it as a percentage (3 %) or in {m.unit or DIMENSIONS[dim]}",
                UnitError,
            ))
    return errors


def check_when_syntax(text: str) -> None:
    body, _ = _when_text(text)
    parse(body)


def corners_product(axes: dict[str, list[Any]], order: list[str]) -> list[Corner]:
    if not axes:
        return []
    names = order
    out = []
    for i, combo in enumerate(itertools.product(*(axes[n] for n in names))):
        out.append(Corner(i, dict(zip(names, combo, strict=True))))
    return out


_UNSEEN = object()
_LIMIT_FIELDS = ("min", "max", "nominal", "tol", "marginal", "equals", "regex")


def _templated(value: Any) -> bool:
    """A limit field whose value is only known once its ``${…}`` is rendered."""
    return isinstance(value, Expr) or isinstance(value, str) and "${" in value


def _written_limit(limit: Limit) -> Any:
    """The limit as written, hashable (each value with its type), or None when a field holds a
    ``${…}`` or an unhashable value."""
    fields = limit.__dict__
    parts = []
    for f in _LIMIT_FIELDS:
        v = fields[f]
        if v is not None and v.__class__ is not Quantity and _templated(v):
            return None
        parts.append((type(v), v))
    written = tuple(parts)
    try:
        hash(written)
    except TypeError:
        return None
    return written
