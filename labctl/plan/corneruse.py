"""A step that runs once must not use what a corner changes.

A step with ``per_corner: false`` runs between the corner blocks, at no corner. A parameter
that a corner axis overrides (``vin`` under ``parameters:`` and ``corners:``), or one computed
from such a parameter (``vlow: ${vin * 0.9}``), would silently be its default there, and the
step's arguments and limits with it. Setup and teardown run before and after every corner
and see the parameters as written (docs/plans.md, "Corners").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from labctl.errors import ExpressionError, LabctlError
from labctl.plan.expr import Template, names, parse
from labctl.plan.loaded import LoadedPlan, _when_text, located
from labctl.plan.model import Expr, Step

Path_ = tuple[Any, ...]
_LIMIT_FIELDS = ("min", "max", "nominal", "tol", "marginal", "equals")


def swept_parameters(loaded: LoadedPlan) -> dict[str, str]:
    """Parameter -> the corner axis that changes it (its own name, or an input's)."""
    axes = loaded.corners[0].values if loaded.corners else {}
    swept = {name: name for name in axes if name in loaded.parameters}
    for name, template in loaded.derived:  # inputs first
        for ref, _path, _offset in _uses(template.text, ()):
            if ref in swept and name not in swept:
                swept[name] = swept[ref]
    return swept


def once_step_errors(loaded: LoadedPlan, step: Step, swept: dict[str, str]) -> list[LabctlError]:
    """A ``per_corner: false`` step's uses of swept parameters, each name once (at its first use)."""
    if not swept:
        return []
    errors: list[LabctlError] = []
    seen: set[str] = set()
    for name, path, offset in _step_uses(loaded, step):
        if name not in swept or name in seen:
            continue
        seen.add(name)
        axis = swept[name]
        value, base = _shown(loaded.parameters.get(name)), _shown(loaded.parameters.get(axis))
        how = (f"which is also a corner axis: it would get the parameter's {value}" if axis == name else
               f"which is computed from the corner axis {axis}: it would get {value} (from {axis} = {base})")
        pos = loaded.pos(path)
        errors.append(located(
            pos.shifted(offset) if pos else None,
            f"step {step.id!r} runs once (per_corner: false) but uses {name}, {how}, not a corner's value",
            f"remove per_corner: false to run it at every corner, or use a parameter that no axis "
            f"changes (e.g. {axis}_nominal: {base})",
        ))
    return errors


def _step_uses(loaded: LoadedPlan, step: Step) -> Iterator[tuple[str, Path_, int]]:
    """Every name the step's ``${…}`` values and ``when:`` use: (name, path, offset in the value)."""
    sp = loaded.step_path(step)
    yield from _walk(step.args, (*sp, "args"))
    for key, limit in (step.limits or {}).items():
        base = (*sp, "limits") if key == "*" else (*sp, "limits", key)
        for f in _LIMIT_FIELDS:
            yield from _walk(getattr(limit, f), (*base, f))
    if isinstance(step.timeout, Expr):
        yield from _uses(str(step.timeout), (*sp, "timeout"))
    if step.when is not None:
        text, offset = _when_text(step.when)
        yield from ((n, p, offset + o) for n, p, o in _expression_uses(text, (*sp, "when")))


def _walk(value: Any, path: Path_) -> Iterator[tuple[str, Path_, int]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, (*path, i))
    elif isinstance(value, str) and "${" in value:
        yield from _uses(value, path)


def _uses(text: str, path: Path_) -> Iterator[tuple[str, Path_, int]]:
    try:
        parts = Template(text).parts()
    except ExpressionError:
        return  # reported where it is evaluated
    for body, start in parts:
        yield from ((n, p, start + o) for n, p, o in _expression_uses(body, path))


def _expression_uses(body: str, path: Path_) -> Iterator[tuple[str, Path_, int]]:
    try:
        used = names(parse(body))
    except ExpressionError:
        return
    for name, offset in used:
        yield name, path, offset


def _shown(value: Any) -> str:
    return str(value) if value is not None else "?"
