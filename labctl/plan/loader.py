"""Load and check a test plan, reporting every problem at its ``file:line:col``.

:func:`check_plan` never raises for a bad plan: it returns the :class:`LoadedPlan` (or None)
and the list of every error found. :func:`load_plan` raises :class:`ValidationErrors` instead.
The order of work: YAML with positions -> includes -> pydantic structure -> parameters and
``--set`` -> corners -> each step (check, args, limits, timeout, when, roles) -> safety ->
the fixture (roles and named channels), when one is given.
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from labctl.errors import (
    ExpressionError,
    LabctlError,
    PlanError,
    UnitError,
    ValidationErrors,
)
from labctl.gcpause import gc_paused
from labctl.plan.bounds import ENV_MAX_EXPANDED_STEPS, InputLimits, raise_hint
from labctl.plan.corneruse import once_step_errors, swept_parameters
from labctl.plan.crosschecks import StationChecks
from labctl.plan.expr import Template, names, parse
from labctl.plan.includes import STEP_EXAMPLE, empty_steps, expand_includes
from labctl.plan.loaded import BrokenInput, Corner, LoadedPlan, RequiredAt, corners_product, located
from labctl.plan.model import KEYWORDS, NAME_PATTERN, Parameter, Plan, Step
from labctl.plan.overrides import Overrides, parse_overrides
from labctl.plan.partialargs import measurable_args
from labctl.plan.source import Pos, SourceMap, drop_followups, load_yaml, pydantic_errors, suggest
from labctl.resources import resolve_data_path
from labctl.units import Quantity, looks_like_quantity, parse_quantity


def load_plan(
    path: str | Path, overrides: dict[str, str] | None = None, fixture: Any = None
) -> LoadedPlan:
    """Load a plan for running; raise :class:`ValidationErrors` listing every problem."""
    loaded, errors = check_plan(path, overrides, fixture)
    if errors or loaded is None:
        raise ValidationErrors(errors or [PlanError("plan could not be loaded", file=str(path))])
    return loaded


def check_plan(
    path: str | Path, overrides: dict[str, str] | None = None, fixture: Any = None
) -> tuple[LoadedPlan | None, list[LabctlError]]:
    """Check a plan completely; returns (the loaded plan or None, every error found)."""
    with gc_paused() as pause:
        loaded, errors = _check_plan(path, overrides, fixture)
        pause.kept = loaded is not None  # a plan without errors: no garbage cycles in what was built
        return loaded, errors


def _check_plan(
    path: str | Path, overrides: dict[str, str] | None, fixture: Any
) -> tuple[LoadedPlan | None, list[LabctlError]]:
    display = str(path)
    real = resolve_data_path(path, "testplans")
    try:
        data, smap, errors = load_yaml(real, display=display)
    except LabctlError as err:
        return None, [err]
    return check_plan_loaded(data, smap, errors, real, display, overrides, fixture)


def check_plan_loaded(
    data: Any, smap: SourceMap, errors: list[LabctlError], real: Path, display: str,
    overrides: dict[str, str] | None = None, fixture: Any = None,
) -> tuple[LoadedPlan | None, list[LabctlError]]:
    """:func:`check_plan` of a file already read with :func:`load_yaml` (read once, checked once)."""
    if data is None:
        return None, [PlanError("the plan is empty", file=display, line=1, column=1,
                                hint="a plan needs at least name: and steps:")]
    if not isinstance(data, dict):
        p = smap.value(())
        return None, [located(p, "a plan must be a mapping of keys (name:, steps: …), not a "
                              + type(data).__name__, "see docs/plans.md for the layout")]
    fields = {f.alias or n for n, f in Plan.model_fields.items()}
    if not any(isinstance(k, str) and k in fields for k in data):
        # say nothing of what the file holds: it may be anything but a plan
        return None, [PlanError("this is not a test plan: none of its top-level keys is a plan key",
                                file=display, line=1, column=1,
                                hint="a plan starts with name: and has steps: (see docs/plans.md)")]
    return check_plan_data(data, smap, errors, real, display, overrides, fixture)


def is_step_library(data: Any) -> bool:
    """A step library has ``steps:`` but no ``name:`` plan header (see docs/plans.md)."""
    return isinstance(data, dict) and "steps" in data and "name" not in data


def check_library(
    path: str | Path, fixture: Any = None
) -> tuple[LoadedPlan | None, list[LabctlError]]:
    """Check a step library on its own: as a plan that includes it and nothing else."""
    real = resolve_data_path(path, "testplans")
    display = str(path)
    data = {"name": real.stem, "steps": [{"include": real.name}]}
    anchor = real.parent / "__library_check__.yaml"
    return check_plan_data(data, SourceMap(files=[display]), [], anchor,
                           str(Path(display).parent / anchor.name), None, fixture)


def check_plan_data(
    data: dict[str, Any],
    smap: SourceMap,
    errors: list[LabctlError],
    real: Path,
    display: str,
    overrides: dict[str, str] | None = None,
    fixture: Any = None,
) -> tuple[LoadedPlan | None, list[LabctlError]]:
    errors.extend(empty_steps(data, smap, "the plan"))
    inc = expand_includes(data, smap, real, display)
    errors.extend(inc.errors)
    if inc.stopped:  # an include bomb: what was spliced so far is not worth checking
        return None, _dedupe(errors)
    data, smap = inc.data, inc.smap
    sha = hashlib.sha256()
    for f in inc.files:
        if f.is_file():
            sha.update(f.read_bytes())

    ctx = _Context(display, smap, errors)
    ctx.duplicate_ids(data)
    plan, index = ctx.validate_structure(data)
    params = ctx.parameters(data, plan, overrides or {})
    axes, order = ctx.corners(data, params)
    if plan is None:
        return None, _dedupe(errors)
    if not ctx.expansion_fits(plan, axes, order):
        return None, _dedupe(errors)  # nothing is expanded: the count alone is the error
    corners = corners_product(axes, order) if axes else []

    requires_pos = RequiredAt(smap, {r: ("requires", i) for i, r in enumerate(plan.requires)})
    for role, at in inc.lib_requires:
        if role not in plan.requires:
            plan.requires.append(role)
            requires_pos.add(role, at)
    loaded = LoadedPlan(plan, display, smap, params, corners, sha.hexdigest(),
                        [str(f) for f in inc.files if f.is_file()], requires_pos, index_map=index,
                        derived=ctx.derived)
    if not plan.all_steps() and not errors:  # no steps: key, nothing in setup: or teardown: either
        errors.append(located(smap.key(("name",)), "the plan has no steps: nothing to run",
                              f"add steps: with at least one step, e.g. {STEP_EXAMPLE}"))
    ctx.check_steps(loaded)
    ctx.check_safety(loaded)
    if fixture is not None:
        ctx.check_fixture(loaded, fixture)
    return (loaded if not errors else None), _dedupe(errors)


def _dedupe(errors: list[LabctlError]) -> list[LabctlError]:
    seen: set[tuple[Any, ...]] = set()
    out = []
    for e in drop_followups([e for e in errors if not isinstance(e, BrokenInput)]):
        k = (e.file, e.line, e.column, e.message)
        if k not in seen:
            seen.add(k)
            out.append(e)
    out.sort(key=lambda e: (e.file or "", e.line or 0, e.column or 0))
    return out


class _Context(StationChecks, Overrides):
    def __init__(self, display: str, smap: SourceMap, errors: list[LabctlError]) -> None:
        self.display = display
        self.smap = smap
        self.errors = errors
        self.broken: set[tuple[Any, ...]] = set()
        #: parameters computed from others (``vlow: ${vin * 0.9}``), inputs first: a corner
        #: that overrides an input computes them again (LoadedPlan.env)
        self.derived: list[tuple[str, Template]] = []
        #: a step's keys that are broken (reported), by the step's path: ``("steps", 3) -> {"args"}``
        self.bad_fields: dict[tuple[Any, ...], set[Any]] = {}

    def pos(self, path: tuple[Any, ...], key: bool = False) -> Pos | None:
        p, _ = self.smap.nearest(path, key=key)
        return p

    def err(self, path: tuple[Any, ...], message: str, hint: str | None = None, *, key: bool = False,
            cls: type[LabctlError] = PlanError, offset: int | None = None) -> None:
        p = self.pos(path, key=key)
        if p is not None and offset is not None:
            p = p.shifted(offset)
        self.errors.append(located(p, message, hint, cls))

    # -- structure --------------------------------------------------------------------------
    def validate_structure(self, data: dict[str, Any]) -> tuple[Plan | None, dict[tuple[str, int], int]]:
        """Validate the plan's shape. On errors, report them all and keep checking what is
        valid: the plan without its broken parts (steps keep their original positions)."""
        try:  # args and limits written alike are validated once (see model._shared)
            return Plan.model_validate(data, context={"limits": {}, "args": {}}), {}
        except ValidationError as exc:
            err = exc
        for e in err.errors():
            self.broken.add(tuple(p for p in e["loc"][:2]))
        self.errors.extend(pydantic_errors(err, self.smap, model=Plan, what="the plan"))
        bad_fields = self.bad_fields
        for e in err.errors():
            loc = e["loc"]
            if len(loc) >= 3 and loc[0] in ("setup", "steps", "teardown") and isinstance(loc[1], int):
                bad_fields.setdefault(loc[:2], set()).add(loc[2])
            elif len(loc) >= 2 and loc[0] in ("setup", "steps", "teardown"):
                bad_fields.setdefault(loc[:2], set()).add(None)  # the step as a whole
        partial: dict[str, Any] = {}
        index: dict[tuple[str, int], int] = {}
        for key, value in data.items():
            if key in ("setup", "steps", "teardown") and isinstance(value, list) and (key,) not in self.broken:
                kept = []
                for i, item in enumerate(value):
                    bad = bad_fields.get((key, i))
                    if bad is None:
                        kept.append((i, item))
                        continue
                    if None in bad or not isinstance(item, dict):
                        continue
                    # keep checking the step without its broken fields (e.g. its args)
                    cleaned = {k: v for k, v in item.items() if k not in bad}
                    try:
                        Step.model_validate(cleaned)
                    except ValidationError:
                        continue
                    kept.append((i, cleaned))
                partial[key] = [item for _, item in kept]
                for new_i, (old_i, _) in enumerate(kept):
                    index[(key, new_i)] = old_i
            elif not any(b[:1] == (key,) for b in self.broken):
                partial[key] = value
        partial.setdefault("name", "?")
        try:
            return Plan.model_validate(partial), index
        except ValidationError:
            return None, {}

    # -- parameters -------------------------------------------------------------------------
    def convert(self, value: Any, path: tuple[Any, ...]) -> Any:
        """YAML value -> plan value: quantities parsed, ``${…}`` kept as templates."""
        if isinstance(value, list):
            return [self.convert(v, (*path, i)) for i, v in enumerate(value)]
        if isinstance(value, str):
            if "${" in value:
                return Template(value)
            if looks_like_quantity(value):
                try:
                    q = parse_quantity(value)
                except UnitError as err:
                    self.err(path, err.message, err.hint, cls=UnitError)
                    return None
                if not q.unit and not q.delta:
                    where = self.smap.value(path)
                    if where is not None and where.quoted:
                        return value  # a quoted number is text in YAML: serial: "0001" keeps its zeros
                    return q.magnitude
                return q
        return value

    def _usable_name(self, name: Any, section: str) -> bool:
        """Parameter and corner names are words the expression language can use."""
        what = "parameter" if section == "parameters" else "corner axis"
        if not re.match(NAME_PATTERN, str(name)):
            self.err((section, name), f"{what} name {name!r} must be a word (letters, digits, _)",
                     "it is used as ${name} in expressions", key=True)
            return False
        if str(name).lower() in KEYWORDS:
            self.err((section, name), f"{what} name {name!r} is a word of the expression language",
                     "choose another name (and, or, not, true, false are reserved)", key=True)
            return False
        return True

    def parameters(self, data: dict[str, Any], plan: Plan | None, overrides: dict[str, str]) -> dict[str, Any]:
        raw = data.get("parameters")
        if not isinstance(raw, dict):
            raw = {}
        decls: dict[str, Parameter] = {}
        for name, value in raw.items():
            if not self._usable_name(name, "parameters"):
                continue
            if ("parameters", name) in self.broken or ("parameters",) in self.broken:
                continue
            try:
                decls[str(name)] = Parameter.model_validate(value if isinstance(value, dict) and "default" in value else {"default": value})
            except ValidationError:
                continue
        values: dict[str, Any] = {}
        default_path = {}
        for name, decl in decls.items():
            vpath = ("parameters", name, "default") if isinstance(raw.get(name), dict) else ("parameters", name)
            default_path[name] = vpath
            values[name] = self.convert(decl.default, vpath)
        computed = self.apply_overrides(overrides, values, default_path)
        # choices
        for name, decl in decls.items():
            if decl.choices is not None and not isinstance(values.get(name), Template):
                choices = [self.convert(c, ("parameters", name, "choices", i)) for i, c in enumerate(decl.choices)]
                if values.get(name) not in choices:
                    where = default_path.get(name)
                    got = values.get(name)
                    msg = f"parameter {name}: {got!r} is not one of {', '.join(str(c) for c in choices)}"
                    close = suggest(str(got), [str(c) for c in choices])
                    if close:
                        msg += f"; did you mean {close!r}?"
                    if where is None:
                        self.set_error(f"--set {name}={overrides.get(name)}", name, msg,
                                       "write one of " + ", ".join(f"--set {name}={c}" for c in choices))
                    else:
                        self.err(where, msg, "make the default one of the choices, or add it to choices:")
        resolved = self._resolve_templates(values, default_path, overrides)
        self.check_computed(computed, resolved)
        return resolved

    def _resolve_templates(self, values: dict[str, Any], paths: dict[str, Any],
                           overrides: dict[str, str] | None = None) -> dict[str, Any]:
        done: dict[str, Any] = {}
        visiting: list[str] = []

        def resolve(name: str) -> None:
            if name in done:
                return
            value = values[name]
            if not isinstance(value, Template):
                done[name] = value
                return
            path = paths.get(name) or ("parameters", name)
            if name in visiting:
                chain = " -> ".join([*visiting[visiting.index(name):], name])
                given = next((n for n in visiting[visiting.index(name):] if overrides and n in overrides), None)
                if given is not None:  # the cycle is the command line's: say so, not only the plan's line
                    self.set_error(f"--set {given}={overrides[given]}", given, f"parameter cycle: {chain}",
                                   f"a parameter cannot depend on itself: give --set {given} a value")
                else:
                    self.err(path, f"parameter cycle: {chain}", "a parameter cannot depend on itself")
                done[name] = None
                return
            visiting.append(name)
            try:
                for body, offset in value.parts():
                    for ref, ref_off in names(parse(body, offset)):
                        if ref in values:
                            resolve(ref)  # noqa: F821 - deleted only once every name is resolved (below)
                            if done.get(ref) is None and isinstance(values[ref], Template):
                                done[name] = None  # its input is broken (reported there)
                                return
                        else:
                            close = suggest(ref, values)
                            raise ExpressionError(f"undefined parameter {ref!r}", column=offset + ref_off,
                                                  hint=(f"did you mean {close!r}? " if close else "")
                                                  + "parameters may use other parameters only")
                done[name] = value.render({k: v for k, v in done.items() if v is not None})
            except ExpressionError as err:
                self.err(path, err.message, err.hint, offset=err.column or 0, cls=ExpressionError)
                done[name] = None
            finally:
                visiting.pop()

        try:
            for n in values:
                resolve(n)
        finally:
            del resolve  # it refers to itself: a cycle holding this context (and its source map)
        self.derived = [(n, values[n]) for n in done if isinstance(values[n], Template) and done[n] is not None]
        return done

    # -- corners ----------------------------------------------------------------------------
    def corners(self, data: dict[str, Any], params: dict[str, Any]) -> tuple[dict[str, list[Any]], list[str]]:
        raw = data.get("corners")
        if not isinstance(raw, dict) or ("corners",) in self.broken:
            return {}, []
        axes: dict[str, list[Any]] = {}
        for axis, values in raw.items():
            if not self._usable_name(axis, "corners"):
                continue
            if not isinstance(values, list) or not values:
                continue
            converted = []
            kind = None
            for i, v in enumerate(values):
                path = ("corners", axis, i)
                c = self.convert(v, path)
                if isinstance(c, Template):
                    try:
                        c = c.render(params)
                    except ExpressionError as err:
                        self.err(path, err.message, err.hint, offset=err.column or 0, cls=ExpressionError)
                        continue
                this = c.dimension if isinstance(c, Quantity) else type(c).__name__
                if this in ("int", "float"):
                    this = "ratio"
                if kind is None:
                    kind = this
                elif this != kind:
                    self.err(path, f"corner {axis}: {c} does not match the axis's other values ({kind.replace('_', ' ')})",
                             "every value of one axis has the same unit kind", cls=UnitError)
                converted.append(c)
            old = params.get(str(axis))
            if isinstance(old, Quantity) and kind and kind != old.dimension:
                self.err(("corners", axis), f"corner axis {axis} overrides parameter {axis} ({old}) with "
                         f"values of another kind ({kind.replace('_', ' ')})",
                         f"give the axis values of the parameter's kind (e.g. {old}), or another name",
                         key=True, cls=UnitError)
            axes[str(axis)] = converted
        order = list(axes)
        given = data.get("corner_order")
        if isinstance(given, list) and ("corner_order",) not in self.broken:
            for i, name in enumerate(given):
                if name not in axes:
                    close = suggest(str(name), axes)
                    self.err(("corner_order", i), f"corner_order: {name!r} is not a corner axis"
                             + (f"; did you mean {close!r}?" if close else ""),
                             "axes: " + (", ".join(axes) or "none (add corners:)"))
            missing = [a for a in axes if a not in given]
            if missing:
                self.err(("corner_order",), f"corner_order does not list {', '.join(missing)}",
                         "list every axis once, slowest-changing first", key=True)
            if len(set(given)) != len(given):
                self.err(("corner_order",), "corner_order lists an axis twice",
                         "list every axis once, slowest-changing first", key=True)
            order = [a for a in given if a in axes] + [a for a in axes if a not in given]
            order = list(dict.fromkeys(order))
        return axes, order

    def expansion_fits(self, plan: Plan, axes: dict[str, list[Any]], order: list[str]) -> bool:
        """Count the expanded steps arithmetically (before expanding anything) against the
        limit: setup + teardown + steps run once + per-corner steps × corners."""
        limits = InputLimits.from_env()
        sizes = [len(axes[a]) for a in order]
        n_corners = math.prod(sizes) if sizes else 0
        per_corner = sum(1 for s in plan.steps if s.per_corner) if n_corners else 0
        once = len(plan.setup) + len(plan.teardown) + len(plan.steps) - per_corner
        expanded = once + per_corner * n_corners
        if expanded <= limits.max_expanded_steps and n_corners <= limits.max_expanded_steps:
            return True
        hint = raise_hint(ENV_MAX_EXPANDED_STEPS, limits.max_expanded_steps)
        if n_corners > 1 and (per_corner * n_corners > once or n_corners > limits.max_expanded_steps):
            product = " × ".join(str(n) for n in sizes)
            self.err(("corners",), f"corners: {product} = {n_corners:,} corners; with {per_corner} "
                     f"per-corner step(s) that is {expanded:,} steps to run, more than the limit of "
                     f"{limits.max_expanded_steps:,}", hint + "; or sweep fewer values", key=True)
        else:
            self.err(("steps",), f"{expanded:,} steps to run, more than the limit of "
                     f"{limits.max_expanded_steps:,}", hint, key=True)
        return False

    # -- steps ------------------------------------------------------------------------------
    def duplicate_ids(self, data: dict[str, Any]) -> None:
        seen: dict[str, tuple[Any, ...]] = {}  # id -> path of its first use (located only when repeated)
        for group in ("setup", "steps", "teardown"):
            items = data.get(group)
            if not isinstance(items, list):
                continue
            for i, item in enumerate(items):
                sid = item.get("id") if isinstance(item, dict) else None
                if not isinstance(sid, str):
                    continue
                path = (group, i, "id")
                if sid in seen:
                    first = self.pos(seen[sid])
                    where = f"{first.file}:{first.line}" if first else "above"
                    self.err(path, f"duplicate step id {sid!r} (first used at {where})",
                             "step ids must be unique across setup, steps and teardown; "
                             "when including a library twice, give each include a prefix:")
                else:
                    seen[sid] = path

    def _collect(self, fn: Any, *args: Any) -> Any:
        """Run one resolution; record its errors instead of raising. Returns None on error."""
        try:
            return fn(*args)
        except ValidationErrors as err:
            self.errors.extend(err.errors)
        except LabctlError as err:
            self.errors.append(err)
        return None

    def check_steps(self, loaded: LoadedPlan) -> None:
        from labctl.checks.registry import all_checks, get_check

        swept = swept_parameters(loaded)
        for group, step in loaded.plan.all_steps():
            sp = loaded.step_path(step)
            runs_per_corner = group == "steps" and step.per_corner and bool(loaded.corners)
            if group == "steps" and not step.per_corner:
                self.errors.extend(once_step_errors(loaded, step, swept))
            corners: list[Corner | None] = list(loaded.corners) if runs_per_corner else [None]
            # what does not depend on the check: when:, timeout:
            if step.when is not None:
                for c in corners:
                    if self._collect(loaded.should_run, step, c) is None:
                        break
            timeout = self._collect(loaded.resolve_timeout, step, corners[0]) if step.timeout is not None else None
            spec = get_check(step.check)
            if spec is None:
                close = suggest(step.check, all_checks())
                families = sorted({n.split(".")[0] for n in all_checks()})
                hint = (f"check families: {', '.join(families)}" if close
                        else "checks: " + ", ".join(sorted(all_checks())))
                self.err((*sp, "check"), f"unknown check {step.check!r}"
                         + (f"; did you mean {close!r}?" if close else ""), hint)
                continue
            # the arguments and limits, at every corner the step runs at
            args = None
            for c in corners:
                # args: that are no mapping were reported; checked as none they only miss keys
                args = None if "args" in self.bad_fields.get(sp, ()) else self._collect(loaded.resolve_args, step, c)
                if args is None:
                    # the arguments are broken: the limits are still checked against what the
                    # check measures, when the arguments that are right say it
                    partial = measurable_args(loaded, step, c, spec) if step.limits else None
                    if partial is not None:
                        self._collect(loaded.resolve_limits, step, c, partial)
                    break
                if self._collect(loaded.resolve_limits, step, c, args) is None and step.limits:
                    break
            if args is not None:
                self._check_roles(loaded, step, spec, args)
                self._timeout_vs_estimate(loaded, step, args, timeout)

    def _timeout_vs_estimate(self, loaded: LoadedPlan, step: Step, args: Any, timeout: float | None) -> None:
        """A step timeout, or a check's own time limit, shorter than what the check needs to
        do its job is a warning."""
        if args is None:
            return
        for field, text in args.time_warnings():
            pos = self.pos((*loaded.step_path(step), "args", field))
            where = f"{pos.file}:{pos.line}:{pos.column}: " if pos else ""
            loaded.warnings.append(f"{where}step {step.id!r}: {text}")
        if timeout is None:
            return
        est = args.estimate_seconds()
        if est is not None and est > timeout:
            from labctl.plan.loaded import format_seconds

            pos = self.pos((*loaded.step_path(step), "timeout"))
            where = f"{pos.file}:{pos.line}:{pos.column}: " if pos else ""
            loaded.warnings.append(
                f"{where}step {step.id!r}: timeout {format_seconds(timeout)} is shorter than the "
                f"{format_seconds(est)} {step.check} is expected to take"
            )

    def _check_roles(self, loaded: LoadedPlan, step: Step, spec: Any, args: Any) -> None:
        requires = loaded.plan.requires
        if not requires:
            return
        used = list(dict.fromkeys([*spec.roles, *args.roles()]))
        missing = [r for r in used if r not in requires]
        if missing:
            sp = loaded.step_path(step)
            self.err((*sp, "check"),
                     f"step {step.id!r} ({step.check}) uses role{'s' if len(missing) > 1 else ''} "
                     f"{', '.join(missing)}, not listed in requires:",
                     _requires_hint(missing, self.pos((*sp, "check")), loaded.path))



def _requires_hint(missing: list[str], pos: Pos | None, plan_path: str) -> str:
    roles = ", ".join(missing)
    if pos is not None and pos.file != plan_path:  # the step comes from a step library
        return f"add {roles} to requires: at the top of {pos.file} (the step library), or of the plan"
    return f"add {roles} to requires: at the top of the plan"


__all__ = ["Corner", "LoadedPlan", "check_library", "check_plan", "is_step_library", "load_plan", "parse_overrides"]
