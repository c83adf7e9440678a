"""Helpers shared by the command modules."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any

import click


def db_option_callback(ctx: Any, param: Any, value: str | None) -> str | None:
    """``--db`` of every command (or ``$LABCTL_DB``, which every ``--db`` reads): an explicit
    SQLite file's folder must exist (exit 4 otherwise); the error names where the value came from.
    An empty ``--db ''`` (a script's unset variable) is refused: it would record elsewhere."""
    if value is not None and not value.strip():
        from labctl.errors import UsageError
        from labctl.store.location import default_db_path

        raise UsageError("--db is empty", hint="give a SQLite file or a postgresql:// URL; leave --db out for "
                                               f"$LABCTL_DB or, without it, {default_db_path()}")
    if value:
        from labctl.store.location import check_db_folder

        source = ctx.get_parameter_source(param.name) if ctx is not None and param is not None else None
        check_db_folder(value, named="$LABCTL_DB" if source is click.core.ParameterSource.ENVIRONMENT else "--db")
    return value


def not_empty(ctx: Any, param: Any, value: str | None) -> str | None:
    """An option or argument given as ``''`` (a script's unset variable) is refused, not read as
    "not given": ``--dut ''`` would otherwise take the console's serial, ``--operator ''`` the login."""
    if value is not None and not str(value).strip():
        from labctl.errors import UsageError

        option = param is not None and param.param_type_name == "option"
        name = f"--{param.name.replace('_', '-')}" if option else (param.human_readable_name if param else "the value")
        raise UsageError(f"{name} is empty",
                         hint=f"give {name} a value" + (", or leave it out for its default" if option else ""))
    return value


RUN_FILTERS = ("plan", "plan_version", "dut", "station", "outcome", "since", "until")


def run_filter_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The run filters of ``labctl runs`` and ``labctl report``: the command receives them as
    one ``filters`` dict (the fields of :class:`labctl.store.query.RunFilters`)."""
    options = [
        click.option("--plan", help="only runs of this plan (name; * wildcards)"),
        click.option("--plan-version", help="only runs of this plan version (* wildcards)"),
        click.option("--dut", help="only runs of this DUT serial (* wildcards)"),
        click.option("--station", help="only runs on this station (* wildcards)"),
        click.option("--outcome", help="only these outcomes, comma-separated "
                                       "(passed,failed,error,aborted,interrupted,running)"),
        click.option("--since", help="only runs started since: an age (30m, 12h, 7d) or a date (2026-11-30[T08:00])"),
        click.option("--until", help="only runs started before: an age or a date (a date includes that whole day)"),
    ]

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs["filters"] = {k: kwargs.pop(k) for k in RUN_FILTERS}
        return f(*args, **kwargs)

    for opt in reversed(options):
        wrapper = opt(wrapper)
    return wrapper


def echo_json(value: Any, default: Callable[[Any], Any] = str) -> None:
    """``value`` as JSON on standard output, written as it is made (a run of 100,000 steps is
    never one string): an object a key per line (and an object in it), a list of objects an
    element per line, every other value on one line, indented by two (:mod:`labctl.jsonlayout`)."""
    from labctl import jsonlayout

    out = sys.stdout
    batch: list[str] = []

    def write(piece: str) -> None:
        batch.append(piece)
        if len(batch) >= 2048:
            out.write("".join(batch))
            batch.clear()

    try:
        jsonlayout.write(write, _laid(value, 0), json.JSONEncoder(default=default).encode)
        batch.append("\n")
        out.write("".join(batch))
        out.flush()
    except BrokenPipeError:  # the reader went away (`… --format json | head`): that is all it wanted
        from labctl.console import stdout_to_devnull

        stdout_to_devnull()


def _laid(value: Any, depth: int) -> Any:
    """The objects of the top two levels laid out a key per line."""
    from labctl.jsonlayout import Laid

    if isinstance(value, dict) and value and depth < 2:
        return Laid({k: _laid(v, depth + 1) for k, v in value.items()})
    return value
