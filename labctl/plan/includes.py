"""``- include: lib/power-up.yaml`` in setup/steps/teardown: splice a step library in place.

Paths are relative to the including file (a relative path not found there is looked up in
the plan libraries), and must stay inside the top plan's folder tree or a plan library:
``include: /etc/passwd`` is refused without reading the file. Includes nest; a cycle is an error at the include
line that closes it. A library's ``parameters`` become defaults (the plan's own win) and its
``requires`` add to the plan's. Positions of the spliced steps point into the library file.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from labctl.errors import LabctlError, PlanError
from labctl.plan.bounds import ENV_MAX_EXPANDED_STEPS, InputLimits, raise_hint
from labctl.plan.source import Pos, SourceMap, load_yaml, pydantic_errors
from labctl.resources import data_dir

#: folders of step libraries a plan may include from, besides its own folder tree
ENV_LIBRARIES = "LABCTL_PLAN_LIBRARIES"
#: include lines followed for one plan, nested ones included
MAX_INCLUDES = 200

GROUPS = ("setup", "steps", "teardown")
_INVALID = object()  # a library whose steps or parameters are wrong (said once)


@dataclass
class IncludeResult:
    data: Any
    smap: SourceMap
    files: list[Path] = field(default_factory=list)
    errors: list[LabctlError] = field(default_factory=list)
    #: roles an included library requires, and where (looked up only when one is missing)
    lib_requires: list[tuple[str, Callable[[], Pos | None]]] = field(default_factory=list)
    roots: list[Path] = field(default_factory=list)
    includes: int = 0  # include lines followed so far (each nested one counts)
    spliced: int = 0  # steps spliced so far, over setup, steps and teardown
    limits: InputLimits = field(default_factory=InputLimits.from_env)
    stopped: bool = False  # a limit was crossed: splice nothing more
    #: how the spliced plan's positions are made from its files' maps (:func:`_fill`), in order
    grafts: list[tuple[Any, ...]] = field(default_factory=list)
    #: each library read once, however often it is included: path -> (data, map, its
    #: ``StepLibrary``, None when it is not a step library or ``_INVALID``)
    libraries: dict[Path, tuple[Any, SourceMap, Any]] = field(default_factory=dict)


def library_roots() -> list[Path]:
    """The plan libraries: the built-in ``testplans/`` and each folder in
    ``$LABCTL_PLAN_LIBRARIES`` (separated by ``os.pathsep``)."""
    roots = [data_dir("testplans").resolve()]
    for part in os.environ.get(ENV_LIBRARIES, "").split(os.pathsep):
        if part.strip():
            roots.append(Path(part.strip()).expanduser().resolve())
    return roots


def _locate(file: Path, include: str, roots: list[Path]) -> Path:
    """Relative to the including file; a relative path not found there is looked up in the
    plan libraries (``include: lib/power-up.yaml`` finds the built-in one)."""
    target = (file.parent / include).resolve()
    if target.exists() or os.path.isabs(include):
        return target
    for root in roots[1:]:
        candidate = (root / include).resolve()
        if candidate.is_file():
            return candidate
    return target


def _refuse(target: Path, include: str, roots: list[Path]) -> tuple[str, str] | None:
    """Why ``target`` may not be included (outside every root, or not a YAML file), or None."""
    if not any(target.is_relative_to(root) for root in roots):
        return (f"include {include!r} leads outside the plan's folder and the plan libraries",
                f"includes resolve inside {roots[0]} and the plan libraries "
                f"({', '.join(str(r) for r in roots[1:])}); add a library folder with "
                f"{ENV_LIBRARIES}=DIR")
    if target.suffix.lower() not in (".yaml", ".yml"):
        return (f"include {include!r} is not a YAML file (.yaml or .yml)",
                "a step library is a .yaml file with a steps: list")
    return None


def expand_includes(data: Any, smap: SourceMap, path: Path, display: str) -> IncludeResult:
    """Return the plan with every include spliced in and a source map renumbered to match.

    Includes are confined to the plan's folder tree and the plan libraries
    (:func:`library_roots`); symbolic links are followed before the check."""
    res = IncludeResult(data=data, smap=SourceMap(files=list(smap.files)), files=[path.resolve()],
                        roots=[path.resolve().parent, *library_roots()])
    if not isinstance(data, dict):
        res.smap = smap
        return res
    lists = [data[g] for g in GROUPS if isinstance(data.get(g), list)]
    if sum(map(len, lists)) <= res.limits.max_expanded_steps and not any(
            isinstance(item, dict) and "include" in item for items in lists for item in items):
        res.smap = smap  # nothing to splice: every position stays where it is (linear, no copy)
        res.spliced = sum(map(len, lists))
        return res
    res.grafts.append(("outside", smap, {g for g in GROUPS if isinstance(data.get(g), list)}))
    new = dict(data)
    lib_params: dict[str, Any] = {}
    lib_param_pos: dict[str, tuple[SourceMap, Any]] = {}
    for group in GROUPS:
        items = data.get(group)
        if not isinstance(items, list):
            continue
        out: list[Any] = []
        _splice(items, smap, (group,), res, (group,), out, path.resolve(), display, [path.resolve()],
                lib_params, lib_param_pos, "")
        new[group] = out
    # library parameters are defaults: the plan's own win
    if lib_params:
        params = new.get("parameters")
        if params is None:
            params = {}
        if isinstance(params, dict):
            merged = dict(params)
            for name, value in lib_params.items():
                if name not in merged:
                    merged[name] = value
                    lib_map, lib_path = lib_param_pos[name]
                    res.grafts.append(("graft", lib_map, ("parameters", name), lib_path))
            new["parameters"] = merged
    res.data = new
    grafts = res.grafts
    res.smap.later(lambda: _fill(grafts))
    return res


def _fill(grafts: list[tuple[Any, ...]]) -> SourceMap:
    """The spliced plan's positions: what :func:`expand_includes` noted, done in its order.

    Splicing only notes where each item's positions go; they are copied the first time one
    is wanted (only ever to word a problem), so a plan built from libraries that is right
    never reads or copies a position."""
    out = SourceMap()
    values, keys = out.values, out.keys
    for op in grafts:
        if op[0] == "outside":  # everything outside the step lists keeps its position
            _kind, src, groups = op
            for table_from, table_to in ((src.values, values), (src.keys, keys)):
                for p, pos in table_from.items():
                    if not (len(p) >= 2 and p[0] in groups):
                        table_to[p] = pos
        elif op[0] == "items":  # items i of the list at src_prefix became items j at dst_prefix
            _kind, src, src_prefix, dst_prefix, moved = op
            n = len(src_prefix)
            for table_from, table_to in ((src.values, values), (src.keys, keys)):
                for p, pos in table_from.items():
                    if len(p) > n and p[:n] == src_prefix:
                        j = moved.get(p[n])
                        if j is not None:
                            table_to[(*dst_prefix, j, *p[n + 1:])] = pos
        else:
            _kind, src, at, src_path = op
            out.graft(src, at, src_path)
    return out


def _splice(
    items: list[Any],
    src: SourceMap,
    src_prefix: tuple[Any, ...],
    res: IncludeResult,
    dst_prefix: tuple[Any, ...],
    out: list[Any],
    file: Path,
    display: str,
    stack: list[Path],
    lib_params: dict[str, Any],
    lib_param_pos: dict[str, tuple[SourceMap, Any]],
    id_prefix: str,
) -> None:
    from labctl.plan.model import Include, StepLibrary

    moved: dict[int, int] = {}  # item i of this list -> item j of out (positions copied later)
    res.grafts.append(("items", src, src_prefix, dst_prefix, moved))
    for i, item in enumerate(items):
        if res.stopped:
            return
        here = (*src_prefix, i)
        if not (isinstance(item, dict) and "include" in item):
            res.spliced += 1
            if res.spliced > res.limits.max_expanded_steps:
                res.stopped = True
                res.errors.append(_at(src.value(here), f"more than {res.limits.max_expanded_steps:,} steps once "
                                      "includes are spliced in (an include bomb?)",
                                      raise_hint(ENV_MAX_EXPANDED_STEPS, res.limits.max_expanded_steps)))
                return
            j = len(out)
            if id_prefix and isinstance(item, dict) and isinstance(item.get("id"), str):
                item = {**item, "id": id_prefix + item["id"]}
            moved[i] = j
            out.append(item)
            continue
        try:
            inc = Include.model_validate(item)
        except ValidationError as err:
            res.errors.extend(pydantic_errors(err, src, prefix=here, model=Include, what="include"))
            continue
        pos = src.value((*here, "include")) or src.value(here)
        prefix = _checked_prefix(inc.prefix, src, here, res)
        res.includes += 1
        if res.includes > MAX_INCLUDES:
            res.stopped = True
            res.errors.append(_at(pos, f"more than {MAX_INCLUDES} includes once nested includes are followed "
                                  "(an include bomb?)", "a plan includes a few libraries; flatten the chain"))
            return
        target = _locate(file, inc.include, res.roots)
        shown = os.path.normpath(os.path.join(os.path.dirname(display), inc.include))
        refusal = _refuse(target, inc.include, res.roots)
        if refusal is not None:
            res.errors.append(_at(pos, *refusal))
            continue
        if target in stack:
            chain = " -> ".join([_rel(p, stack[0]) for p in stack] + [_rel(target, stack[0])])
            res.errors.append(_at(pos, f"include cycle: {chain}", "a library must not include itself, directly or through others"))
            continue
        if not target.is_file():
            res.errors.append(
                _at(pos, f"included file not found: {inc.include}",
                    f"include paths are relative to the including file ({os.path.dirname(display) or '.'})")
            )
            continue
        known = res.libraries.get(target)
        if known is None:  # read and validated once, however often it is included
            try:
                lib_data, lib_map, lib_errors = load_yaml(target, display=shown)
            except LabctlError as err:
                res.errors.append(err)
                continue
            res.errors.extend(lib_errors)
            res.errors.extend(empty_steps(lib_data, lib_map, "the step library"))
            lib: Any = None  # not a step library: said at each include line below
            if isinstance(lib_data, dict) and isinstance(lib_data.get("steps"), list):
                try:
                    lib = StepLibrary.model_validate(lib_data)
                except ValidationError as err:
                    res.errors.extend(pydantic_errors(err, lib_map, model=StepLibrary, what="step library"))
                    lib = _INVALID
            known = res.libraries[target] = (lib_data, lib_map, lib)
        lib_data, lib_map, lib = known
        if lib is None:
            # say nothing of what the file holds: it may be anything but a plan
            res.errors.append(_at(pos, f"{inc.include} is not a step library",
                                  "a step library is a YAML mapping with a steps: list (see docs/plans.md)"))
            continue
        if target not in res.files:
            res.files.append(target)
        for f in lib_map.files:
            if f not in res.smap.files:
                res.smap.files.append(f)
        if lib is _INVALID:
            continue
        for name in lib.parameters:
            if name not in lib_params:
                lib_params[name] = lib_data["parameters"][name]
                lib_param_pos[name] = (lib_map, ("parameters", name))
        for k, role in enumerate(lib.requires):
            res.lib_requires.append((role, functools.partial(lib_map.value, ("requires", k))))
        _splice(lib_data["steps"], lib_map, ("steps",), res, dst_prefix, out, target, shown,
                [*stack, target], lib_params, lib_param_pos, id_prefix + prefix)


STEP_EXAMPLE = "- {id: settle, check: wait, args: {duration: 1 s}}"


def empty_steps(data: Any, smap: SourceMap, what: str) -> list[LabctlError]:
    """``steps: []`` written as such in a plan or a step library (``what``): a refusal at
    the ``[]``, not a plan that passes and checks nothing."""
    if not isinstance(data, dict) or data.get("steps") != []:
        return []
    return [_at(smap.value(("steps",)), f"steps: is an empty list: {what} has no steps there",
                    f"add at least one step, e.g. {STEP_EXAMPLE}"
                    + ("; a plan with only setup: and teardown: leaves steps: out" if what == "the plan" else
                       "; or remove the include lines of this library"))]


def _checked_prefix(prefix: str, src: SourceMap, here: tuple[Any, ...], res: IncludeResult) -> str:
    """The include's ``prefix:``; one that cannot start a step id is reported once, at itself,
    and the library's steps are checked with a stand-in (bad characters as ``_``), not
    reported again for each id it would have spoiled."""
    from labctl.plan.model import ID_PATTERN

    if not prefix or re.match(ID_PATTERN, prefix):
        return prefix
    usable = re.sub(r"[^A-Za-z0-9_.-]", "_", prefix)
    usable = usable if re.match(r"[A-Za-z_]", usable) else "_" + usable
    res.errors.append(_at(src.value((*here, "prefix")) or src.value(here),
                          f"prefix {prefix!r} cannot start a step id (letters, digits, _ . -; starting "
                          "with a letter or _)",
                          "the prefix goes before each included step's id (prefix: second_ makes "
                          f"second_power_on); e.g. prefix: {usable}"))
    return usable


def _rel(p: Path, root: Path) -> str:
    try:
        return os.path.relpath(p, root.parent)
    except ValueError:
        return str(p)


def _at(pos: Pos | None, message: str, hint: str | None = None) -> PlanError:
    if pos is None:
        return PlanError(message, hint=hint)
    return PlanError(message, file=pos.file, line=pos.line, column=pos.column, hint=hint)
