"""``labctl validate PATH... [--fixture F] [--set NAME=VALUE]``: check plans and fixtures.

Every problem is printed as ``file:line:col: message`` plus a ``hint:`` line, all at once;
the exit code is 4 when anything is wrong, 0 otherwise (one summary line per file).
A file with a top-level ``station:`` is a fixture; one with ``steps:`` but no ``name:`` is a
step library; anything else is a plan. A directory means every ``*.yaml`` in it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click


@click.command()
@click.argument("paths", nargs=-1)
@click.option("--fixture", "-f", "fixture_path", metavar="FIXTURE",
              help="also check that the station offers every required role and named channel")
@click.option("--set", "overrides", multiple=True, metavar="NAME=VALUE",
              help="override a plan parameter (repeatable), e.g. --set vin=11.4V")
@click.option("--list-checks", is_flag=True, help="list every known check with its arguments and exit")
@click.option("--show", is_flag=True, help="also print each valid plan's parameters and run order")
@click.option("--format", "fmt", type=click.Choice(["text", "github"]), default="text", show_default=True,
              help="github: also print each problem as a GitHub Actions annotation on stdout")
def validate(paths: tuple[str, ...], fixture_path: str | None, overrides: tuple[str, ...],
             list_checks: bool, show: bool, fmt: str) -> None:
    """Check test plans, step libraries and fixtures before anything is powered.

    Exit 0 when every file is valid (one summary line each), 4 when anything is wrong
    (every problem as file:line:col: message, with a hint).
    """
    from labctl.errors import ExitCode, LabctlError, UsageError

    _OUTPUT["format"] = fmt
    if list_checks:
        _list_checks()
        return
    if not paths:
        raise UsageError("give at least one plan or fixture file", hint="e.g. labctl validate testplans/smoke.yaml")

    from labctl.fixture.loader import check_fixture_file
    from labctl.plan.loader import parse_overrides

    sets = parse_overrides(overrides)
    problems: list[LabctlError] = []
    bad_files = 0
    fixture = None
    if fixture_path is not None:
        fixture, errs, warns = check_fixture_file(fixture_path)
        _warn(warns)
        if errs:
            problems.extend(errs)
            bad_files += 1
            _print_errors(errs)
            _echo(f"note: {fixture_path} is broken; plans are checked without it", err=True)

    for path in _expand(paths):
        try:
            kind_errors = _check_one(path, sets, fixture, show)
        except LabctlError as err:
            kind_errors = [err]
        except BrokenPipeError:
            raise  # the reader went away (`labctl validate … --show | head`): no bug, nothing to say
        except Exception as err:  # a bug in labctl: one line, never a traceback
            kind_errors = [LabctlError(
                f"internal error while checking {path}: {type(err).__name__}: {err}",
                hint="this is a bug in labctl; please report it with the file",
            )]
        if kind_errors:
            bad_files += 1
            problems.extend(kind_errors)
            _print_errors(kind_errors)
    if problems:
        _echo(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in {bad_files} "
                   f"file{'s' if bad_files != 1 else ''}", err=True)
        raise SystemExit(int(ExitCode.BAD_INPUT))


def _check_one(path: str, sets: dict[str, str], fixture: Any, show: bool = False) -> list[Any]:
    """Check one file (plan, step library or fixture); print its summary when valid."""
    from labctl.gcpause import gc_paused
    from labctl.resources import resolve_data_path

    folder = "fixtures" if "fixture" in path.lower() else "testplans"
    real = resolve_data_path(path, folder)
    if not real.exists():
        real = resolve_data_path(path, "fixtures" if folder == "testplans" else "testplans")
    with gc_paused():
        return _check_loaded(path, real, sets, fixture, show)


def _check_loaded(path: str, real: Any, sets: dict[str, str], fixture: Any, show: bool) -> list[Any]:
    from labctl.errors import LabctlError
    from labctl.fixture.loader import check_fixture_file, is_fixture_data
    from labctl.plan.loader import check_library, check_plan, check_plan_loaded, is_step_library
    from labctl.plan.source import load_yaml

    try:
        data, smap, yaml_errors = load_yaml(real, display=path)
    except LabctlError as err:
        return [err]
    if is_fixture_data(data):
        fx, errs, warns = check_fixture_file(real if real.exists() else path)
        errs = [_redisplay(e, str(real), path) for e in errs]
        _warn(warns)
        if not errs and fx is not None:
            _echo(f"ok  {path}: station {fx.station}: {len(fx.roles)} roles, "
                       f"{len(fx.channels)} channels" + (f", {len(fx.slots)} slots" if fx.slots else "")
                       + (", simulated lab" if fx.sim and fx.sim.enabled else ""))
        kind_errors = errs
    elif is_step_library(data):
        loaded, kind_errors = _per_slot(lambda fx: check_library(real, fx), fixture)
        kind_errors = [_redisplay(e, str(real), path) for e in kind_errors]
        if loaded is not None and not kind_errors:
            n = len(loaded.plan.steps)
            _echo(f"ok  {path}: step library, {n} step{'s' if n != 1 else ''}")
    else:
        if fixture is None or not fixture.slots:
            loaded, kind_errors = check_plan_loaded(data, smap, yaml_errors, real, path, sets, fixture)
        else:  # each slot's view of the station: the plan is checked (and read) once per slot
            loaded, kind_errors = _per_slot(
                lambda fx: check_plan(path if Path(path).exists() else real, sets, fx), fixture)
        if loaded is not None and not kind_errors:
            _echo(f"ok  {path}: {loaded.summary()}")
            _warn(loaded.warnings)
            if show:
                _show(loaded)
    return list(kind_errors)


def _per_slot(check: Any, fixture: Any) -> tuple[Any, list[Any]]:
    """Check against the fixture, or, when it has slots, against what each slot sees (the
    fixture merged with the slot's roles and channels); each distinct problem once."""
    if fixture is None or not fixture.slots:
        return check(fixture)
    from labctl.errors import LabctlError

    loaded, errors, seen = None, [], set()
    for slot in fixture.slots:
        got, errs = check(fixture.slot_view(slot.id))
        loaded = loaded if loaded is not None else got
        for err in errs:
            text = err.format() if isinstance(err, LabctlError) else str(err)
            if text not in seen:
                seen.add(text)
                errors.append(err)
    return loaded, errors


def _as_written(value: Any) -> str:
    """A parameter's value as a plan would write it: ``true``, ``null``, ``[1 V, 2 V]``, not
    Python's ``True``, ``None``, ``['1 V', '2 V']``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_as_written(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_as_written(v)}" for k, v in value.items()) + "}"
    return str(value)


def _show(loaded: Any) -> None:
    for name, value in loaded.parameters.items():
        _echo(f"      parameter {name} = {_as_written(value)}")
    for line in loaded.describe_expansion():
        _echo(f"    {line}")


def _expand(paths: tuple[str, ...]) -> list[str]:
    """The files to check: a folder stands for its ``*.yaml`` / ``*.yml`` files (not its
    subfolders'); a folder with none is a usage error, never "nothing wrong" (CI would pass
    having checked nothing)."""
    from labctl.errors import UsageError

    out: list[str] = []
    for p in paths:
        folder = Path(p)
        if not folder.is_dir():
            out.append(p)
            continue
        found = sorted(f for f in folder.iterdir() if f.suffix in (".yaml", ".yml") and f.is_file())
        if not found:
            deeper = sorted({str(f.parent) for f in folder.rglob("*.y*ml") if f.suffix in (".yaml", ".yml")})
            raise UsageError(f"{p}: no .yaml or .yml file in this folder",
                             hint=(f"its subfolders have some: labctl validate {' '.join(deeper[:5])}" if deeper
                                   else "give the plans' folder or files"))
        out.extend(str(f) for f in found)
    return out


def _redisplay(err, real: str, shown: str):  # noqa: ANN001, ANN202 - tiny helper
    if err.file == real:
        err.file = shown
    return err


_OUTPUT = {"format": "text"}
_LOCATED = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$")


def _data(text: str) -> str:
    """A workflow command's message, escaped as GitHub reads it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(value: object) -> str:
    """A workflow command's property value: its message escapes, and ``:`` and ``,`` (a file
    named ``a,line=99::x.yaml`` must not become other properties)."""
    return _data(str(value)).replace(":", "%3A").replace(",", "%2C")


def _echo(text: str, *, err: bool = False) -> None:
    """One line of output; control characters in it (a plan's name or text) shown as escapes."""
    from labctl.console import visible

    click.echo(visible(text), err=err)


def _annotation(kind: str, file: str | None, line: int | None, col: int | None, message: str) -> str:
    """A GitHub Actions workflow command: ``::error file=F,line=L,col=C::message``."""
    props = ",".join(f"{k}={_property(v)}" for k, v in (("file", file), ("line", line), ("col", col)) if v is not None)
    text = _data(message)
    return f"::{kind} {props}::{text}" if props else f"::{kind}::{text}"


def _print_errors(errors) -> None:  # noqa: ANN001
    for e in errors:
        _echo(e.format(), err=True)
        if _OUTPUT["format"] == "github":
            msg = e.message + (f" (hint: {e.hint})" if e.hint else "")
            _echo(_annotation("error", e.file, e.line, e.column, msg))


def _warn(warnings: list[str]) -> None:
    for w in warnings:
        _echo(f"warning: {w}", err=True)
        if _OUTPUT["format"] == "github":
            m = _LOCATED.match(w)
            if m:
                _echo(_annotation("warning", m["file"], int(m["line"]), int(m["col"]), m["msg"]))
            else:
                _echo(_annotation("warning", None, None, None, w))


def _list_checks() -> None:
    import labctl.checks.builtin  # noqa: F401  (attaches the built-in implementations, as a run does)
    from labctl.checks.registry import all_checks, plugin_errors

    for name, spec in all_checks().items():
        fields = []
        for fname, f in spec.args.model_fields.items():
            fields.append(fname if f.is_required() else f"[{fname}]")
        state = "" if spec.implemented else "  (declared only: no implementation installed, a step using it is an ERROR)"
        _echo(f"{name:22s} {spec.summary}{state}")
        _echo(f"{'':22s}   args: {', '.join(fields)}")
    for line in plugin_errors:
        _echo(f"warning: {line}", err=True)
