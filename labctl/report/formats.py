"""The report formats: name -> exporter. An exporter is a callable
``write(records, path, options) -> None`` that reads only :class:`~labctl.report.record.RunRecord`
objects. Modules are imported when their format is used (``labctl --help`` stays fast).

A new format is one line in ``FORMATS`` naming ``"module:function"``.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import secrets
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from labctl.errors import UsageError

if TYPE_CHECKING:
    from labctl.report.record import RunRecord


@dataclass(frozen=True)
class ExportOptions:
    all_attempts: bool = False  # tables: every attempt of a retried step, not only the one that counts
    title: str | None = None  # a report's title (default: made from the runs)


Exporter = Callable[[Sequence["RunRecord"], Path, ExportOptions], None]


@dataclass(frozen=True)
class Format:
    target: str  # "module:function"
    suffix: str  # the usual file name ending
    description: str


FORMATS: dict[str, Format] = {
    "html": Format("labctl.report.html:write_html", ".html", "one self-contained page: summary, yield, Cpk, charts, runs"),
    "csv": Format("labctl.report.tables:write_csv", ".csv", "one row per measurement with every context column"),
    "parquet": Format("labctl.report.tables:write_parquet", ".parquet", "the CSV's table, typed, for pandas/Arrow"),
    "xlsx": Format("labctl.report.tables:write_xlsx", ".xlsx", "Summary (a row per run), Measurements and Instruments sheets"),
    "junit": Format("labctl.report.junit:write_junit", ".xml", "JUnit XML: steps as test cases, per run and corner"),
    "json": Format("labctl.report.json_export:write_json", ".json", "the run records (docs/schema/run-record.v1.json)"),
    "ocp": Format("labctl.report.ocp:write_ocp", ".jsonl", "OCP Test & Validation results (JSON lines)"),
}


def exporter(name: str) -> Exporter:
    """The exporter of format ``name``; an unknown name is a usage error listing the formats."""
    fmt = FORMATS.get(name)
    if fmt is None:
        raise UsageError(f"unknown report format {name!r}", hint=f"use one of: {', '.join(FORMATS)}")
    module, attr = fmt.target.split(":")
    return getattr(importlib.import_module(module), attr)


_SQLITE_HEADER = b"SQLite format 3\x00"


def check_output(path: str | Path, what: str, option: str = "-o", *, try_folder: bool = False) -> Path:
    """``path`` as a report's file, refused before anything is written (or run) when it is a
    folder or a SQLite database: writing there would destroy the results (``-o results.db``).
    ``try_folder``: also make its folder and try a file there now (a run's ``--junit``, checked
    before the run rather than found unwritable after it)."""
    p = Path(path)
    if str(path) in ("", "-"):
        raise UsageError(f"{option} {str(path)!r} is no file name for the {what}",
                         hint=f"give {option} a file's path")
    if p.is_dir():
        raise UsageError(f"{option} {p} is a folder, not a file for the {what}", hint=f"give {option} a file's path")
    if p.exists() and not p.is_file():  # a pipe, a terminal, a device: reading it for the check would block
        raise UsageError(f"{option} {p} is not a regular file (a pipe, a terminal or a device)",
                         hint=f"give {option} a file's path" + ("; `labctl report … -o -` writes it to standard output"
                                                               if option == "-o" else ""))
    try:
        with p.open("rb") as f:
            database = f.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER
    except OSError:
        database = False
    if database:
        raise UsageError(f"refusing to write the {what} over {p}: it is a SQLite database (results, a spool)",
                         hint=f"give {option} another path; nothing was written")
    if try_folder:
        import tempfile

        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=p.parent):
                pass
        except OSError as err:
            raise UsageError(f"cannot write the {what} to {p}: {err.strerror or err}",
                             hint=f"give {option} a path in a folder you can write to; nothing was run") from None
    return p


def export(records: Sequence[RunRecord], name: str, path: str | Path, options: ExportOptions | None = None) -> Path:
    """Write ``records`` as format ``name`` to ``path`` (its folder is made); returns the path."""
    write = exporter(name)
    p = check_output(path, f"{name} report")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        with _replacing(p) as part:
            write(records, part, options or ExportOptions())
    except OSError as err:
        raise UsageError(f"cannot write the {name} report to {p}: {err.strerror or err}",
                         hint="give -o a path in a folder you can write to; a report that was there is kept") from None
    return p


@contextlib.contextmanager
def _replacing(path: Path) -> Iterator[Path]:
    """A new file beside ``path`` to write the report into (same suffix); it becomes ``path``
    (at once, whole) when the writing succeeded, and is removed when it failed: a full disk or
    a crash never leaves a truncated report where a good one was."""
    part = path.with_name(f".{path.stem}.{secrets.token_hex(4)}.part{path.suffix}")
    try:
        yield part
        if path.exists():  # the report replaced keeps its permissions
            shutil.copymode(path, part)
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)


def export_stored_run(run_id: str, name: str, path: str | Path, db: str | None, what: str) -> tuple[str | None, str | None]:
    """Write run ``run_id`` as format ``name``, built from its record in the store (``db``): (the
    file's path, None), or (None, a note saying why not, with the `labctl report` command that
    makes it later). Never raises: the run's verdict stands whatever happens to its file."""
    from labctl.report.record import load_records

    try:
        return str(export(load_records(db, [run_id]), name, path).resolve()), None
    except Exception as err:  # noqa: BLE001 - the report can be made later
        return None, (f"{what} not written: {getattr(err, 'message', None) or err}; "
                      f"run `labctl report {run_id} --format {name} -o {path}` later")
