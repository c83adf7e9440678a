"""The plans a station can run: the built-in ``testplans/`` and folders given with ``--plans``.

Loading is done off the UI thread (plans are validated against the fixture, which takes a
moment for large ones); a plan that does not load is listed with its first error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labctl.errors import LabctlError, ValidationErrors


@dataclass(frozen=True)
class PlanEntry:
    path: str
    name: str
    source: str  # "built-in" or the --plans folder
    description: str = ""
    requires: tuple[str, ...] = ()
    steps: int = 0
    expanded: int = 0
    corners: int = 0
    estimate: str = "?"
    parameters: dict[str, str] = field(default_factory=dict)  # name -> default (as written)
    interlocks: tuple[tuple[str, str, str], ...] = ()  # (name, signal, limit text)
    error: str = ""  # first problem when the plan does not load

    @property
    def ok(self) -> bool:
        return not self.error


def _plan_folders(folders: tuple[str, ...]) -> list[tuple[str, Path]]:
    """(source label, folder): the built-in ``testplans/``, then each ``--plans`` folder."""
    from labctl.resources import data_dir

    return [("built-in", data_dir("testplans")), *((f, Path(f)) for f in folders)]


def plan_files(folders: tuple[str, ...] = ()) -> list[tuple[str, Path]]:
    """(source label, path) of every plan file: built-ins first, then each ``--plans`` folder,
    sorted by name; step libraries (``lib/``) and hidden files are left out."""
    out: list[tuple[str, Path]] = []
    for label, folder in _plan_folders(folders):
        if not folder.is_dir():
            continue
        for p in sorted(folder.glob("*.y*ml")):
            if p.suffix in (".yaml", ".yml") and not p.name.startswith("."):
                out.append((str(label), p))
    return out


def describe_plan(path: Path, source: str, fixture: Any) -> PlanEntry:
    """Load one plan against the fixture and summarise it (never raises for a bad plan)."""
    from labctl.plan.loaded import format_seconds
    from labctl.plan.loader import load_plan

    try:
        loaded = load_plan(path, {}, fixture)
    except LabctlError as err:
        # its first error where it is (file:line:col: message), not "N problem(s) found"
        shown = err.errors[0] if isinstance(err, ValidationErrors) and err.errors else err
        text = shown.format() if isinstance(shown, LabctlError) else str(shown)
        first = text.strip().splitlines()[0] if text.strip() else type(err).__name__
        more = len(err.errors) - 1 if isinstance(err, ValidationErrors) else 0
        return PlanEntry(str(path), path.stem, source, error=first + (f" (+{more} more)" if more > 0 else ""))
    p = loaded.plan
    seconds, unknown = loaded.estimate_seconds()
    estimate = "?" if unknown and not seconds else f"{'≥' if unknown else ''}{format_seconds(seconds)}"
    params = {name: _default_text(decl) for name, decl in p.parameters.items()}
    locks: list[tuple[str, str, str]] = []
    if p.safety is not None:
        env = loaded.env(None)
        for i, lock in enumerate(p.safety.interlocks):
            bounds = [f"{sign} {_rendered(loaded, value, ('safety', 'interlocks', i, key), env)}"
                      for sign, key, value in (("≥", "min", lock.min), ("≤", "max", lock.max)) if value is not None]
            locks.append((lock.name or lock.signal, lock.signal, " ".join(bounds)))
    return PlanEntry(
        path=str(path), name=p.name, source=source, description=p.description.strip(),
        requires=tuple(p.requires), steps=len(p.setup) + len(p.steps) + len(p.teardown),
        expanded=len(loaded.expand()), corners=len(loaded.corners), estimate=estimate,
        parameters=params, interlocks=tuple(locks))


def _rendered(loaded: Any, value: Any, path: tuple[Any, ...], env: dict[str, Any]) -> str:
    """``${die_max}`` as its value with the plan's defaults (as written when it cannot be)."""
    try:
        return str(loaded.render(str(value), path, env))
    except LabctlError:
        return str(value)


def _default_text(decl: Any) -> str:
    value = getattr(decl, "default", decl)
    return "" if value is None else str(value)


def load_catalog(fixture: Any, folders: tuple[str, ...] = ()) -> list[PlanEntry]:
    return [describe_plan(path, source, fixture) for source, path in plan_files(folders)]


Stamp = tuple[tuple[str, int, int], ...]


def catalog_stamp(folders: tuple[str, ...] = ()) -> Stamp:
    """What the catalog is read from, as (path, mtime in ns, size) of every YAML file in the
    plan folders and one folder down (the step libraries plans include): a plan added, edited
    or deleted, or a library edited, changes it. A few ``stat`` calls: cheap enough for every poll."""
    seen: list[tuple[str, int, int]] = []
    for _label, folder in _plan_folders(folders):
        if not folder.is_dir():
            continue
        for pattern in ("*.y*ml", "*/*.y*ml"):
            for p in folder.glob(pattern):
                try:
                    st = p.stat()
                except OSError:
                    continue  # deleted meanwhile: the next stamp leaves it out
                seen.append((str(p), st.st_mtime_ns, st.st_size))
    return tuple(sorted(seen))
