"""The measurements table as CSV, Parquet and xlsx: one row per measurement with every context
column (:data:`labctl.report.record.FRAME_COLUMNS`, documented in docs/reports.md).

xlsx adds a ``Summary`` sheet (one row per run: context, outcome, step and verdict counts,
first failure) and an ``Instruments`` sheet (identities and calibration due dates). Times are
UTC: ISO 8601 with ``Z`` in CSV, timezone-aware timestamps in Parquet, and plain date-times
in xlsx (Excel has no time zones). The column names are the same in all three.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labctl.errors import UsageError
from labctl.report.formats import ExportOptions
from labctl.report.record import Instrument, RunRecord, format_pairs, measurements_frame, utc_times

if TYPE_CHECKING:
    import pandas as pd

CSV_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
XLSX_MAX_ROWS = 1_048_575  # Excel's sheet limit, less the header

SUMMARY_COLUMNS: tuple[str, ...] = (
    "run_id", "plan", "plan_version", "plan_hash", "station", "slot", "dut", "operator", "started", "ended",
    "duration_s", "outcome", "sessions", "steps_passed", "steps_failed", "steps_error", "steps_skipped",
    "steps_aborted", "steps_interrupted", "measurements", "measurements_pass", "measurements_marginal", "measurements_fail",
    "first_failure", "message",
)
INSTRUMENT_COLUMNS: tuple[str, ...] = (
    "run_id", "session", "role", "driver", "identity", "asset_serial", "calibration_due", "calibrated_at_run",
    "resource",
)


def _frame(records: Sequence[RunRecord], options: ExportOptions) -> pd.DataFrame:
    return measurements_frame(records, final_only=not options.all_attempts)


def first_failure(rec: RunRecord) -> str:
    """The first plan step that did not pass, as ``step [corner]: message``; "" when none."""
    for s in rec.plan_steps():
        if s.outcome not in ("PASS", "SKIPPED") and rec.outcome_of(s) != "RUNNING":
            corner = f" [{format_pairs(s.corner)}]" if s.corner else ""
            return f"{s.step_id}{corner}: {rec.outcome_of(s)} {s.message}".strip()
    return ""


def summary_frame(records: Sequence[RunRecord]) -> pd.DataFrame:
    """One row per run (``SUMMARY_COLUMNS``): context, outcome, counts, first failure."""
    import pandas as pd

    rows = []
    for r in records:
        steps, verdicts = r.step_counts(), r.verdict_counts()
        rows.append((
            r.run_id, r.plan.name, r.plan.version, r.plan.hash, r.station, r.slot, r.dut_serial, r.operator,
            r.started_at, r.ended_at, r.duration, r.outcome, len(r.sessions), steps.get("PASS", 0),
            steps.get("FAIL", 0), steps.get("ERROR", 0), steps.get("SKIPPED", 0), steps.get("ABORTED", 0),
            steps.get("INTERRUPTED", 0), sum(verdicts.values()), verdicts.get("PASS", 0), verdicts.get("MARGINAL", 0), verdicts.get("FAIL", 0),
            first_failure(r), r.message,
        ))
    df = pd.DataFrame.from_records(rows, columns=list(SUMMARY_COLUMNS))
    for col in ("started", "ended"):
        df[col] = utc_times(df[col].astype("float64"))
    return df


def instruments_frame(records: Sequence[RunRecord]) -> pd.DataFrame:
    import pandas as pd

    rows = [(r.run_id, i.session, i.role, i.driver, i.idn, i.asset_serial, i.calibration_due,
             calibrated_at(i, r.started_at), i.resource) for r in records for i in r.instruments]
    return pd.DataFrame.from_records(rows, columns=list(INSTRUMENT_COLUMNS))


def calibrated_at(instrument: Instrument, t: float) -> bool | None:
    """Whether the instrument's calibration was still due on or after the day of ``t`` (its UTC
    date: every reader of the report gets the same answer, wherever the report is made); None
    when no due date is recorded or it cannot be read."""
    from datetime import UTC, date, datetime

    if not instrument.calibration_due:
        return None
    try:
        due = date.fromisoformat(instrument.calibration_due[:10])
    except ValueError:
        return None
    return due >= datetime.fromtimestamp(t, UTC).date()


def write_csv(records: Sequence[RunRecord], path: Path, options: ExportOptions) -> None:
    _as_text_cells(_frame(records, options)).to_csv(path, index=False, date_format=CSV_TIME_FORMAT, encoding="utf-8")


#: what a spreadsheet takes for the start of a formula (CSV injection: ``=cmd|' /C calc'!A0``)
_FORMULA_START = r"^[=+\-@\t\r]"


def _as_text_cells(frame: Any) -> Any:
    """Recorded text that a spreadsheet opening the CSV would run as a formula (an operator's
    answer, a message, a plan version beginning with ``=``, ``+``, ``-``, ``@``, a tab or a
    carriage return, other than a number) gets a leading ``'``: it shows as the text it is.
    Numbers and the other formats are untouched."""
    import pandas as pd

    out = None
    for col in frame.columns:
        column = frame[col]
        if not (pd.api.types.is_object_dtype(column) or pd.api.types.is_string_dtype(column)):
            continue
        try:
            risky = column.str.match(_FORMULA_START, na=False).astype(bool)
        except AttributeError:  # no text in it at all
            continue
        if not risky.any():
            continue
        risky &= pd.to_numeric(column.where(risky), errors="coerce").isna()  # "-0.5" stays a number
        if risky.any():
            out = frame.copy() if out is None else out
            out[col] = column.mask(risky, "'" + column.astype(str))
    return frame if out is None else out


def write_parquet(records: Sequence[RunRecord], path: Path, options: ExportOptions) -> None:
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from labctl import __version__
    from labctl.report.record import SCHEMA_VERSION

    table = pa.Table.from_pandas(_frame(records, options), preserve_index=False)
    meta = {**(table.schema.metadata or {}), b"labctl": json.dumps({
        "generator": f"labctl {__version__}", "schema_version": SCHEMA_VERSION,
        "runs": [r.run_id for r in records], "all_attempts": options.all_attempts}).encode()}
    pq.write_table(table.replace_schema_metadata(meta), path)


def _naive_utc(df: pd.DataFrame) -> pd.DataFrame:
    """Timezone-aware columns as plain UTC date-times (Excel cannot hold a time zone)."""
    out = df.copy()
    for col in out.columns:
        if getattr(out[col].dtype, "tz", None) is not None:
            out[col] = out[col].dt.tz_convert("UTC").dt.tz_localize(None)
    return out


def write_xlsx(records: Sequence[RunRecord], path: Path, options: ExportOptions) -> None:
    """Three sheets written row by row with xlsxwriter (in its ``constant_memory`` mode a sheet's
    rows go to disk as they are written). Headers frozen and filterable, columns as wide as
    their first 200 values (up to 60), times as ``yyyy-mm-dd hh:mm:ss``; every text is a text
    cell (never a formula or a link)."""
    import xlsxwriter
    from xlsxwriter.exceptions import FileCreateError

    measurements = _frame(records, options)
    if len(measurements) > XLSX_MAX_ROWS:
        raise UsageError(f"{len(measurements)} measurements do not fit in one Excel sheet ({XLSX_MAX_ROWS} rows)",
                         hint="select fewer runs, or use --format parquet or csv")
    sheets = {"Summary": summary_frame(records), "Measurements": measurements,
              "Instruments": instruments_frame(records)}
    book = xlsxwriter.Workbook(str(path), {
        "constant_memory": True, "default_date_format": "yyyy-mm-dd hh:mm:ss",
        # recorded text is data: a message or an instrument's reply that begins with "=" is not
        # a formula for Excel to run, and an address is not a link to follow
        "strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False})
    header = book.add_format({"bold": True})
    for name, df in sheets.items():
        _write_sheet(book.add_worksheet(name), _naive_utc(df), header)
    try:
        book.close()
    except FileCreateError as err:  # the OSError behind it says why (export() words it)
        cause = err.args[0] if err.args else None
        raise cause if isinstance(cause, OSError) else OSError(str(err)) from None


def _cells(df: pd.DataFrame) -> list[list[Any]]:
    """The frame's columns as Python values Excel takes: empty for NaN, NaT and None, ``inf`` and
    ``-inf`` as text (as pandas' ``to_excel`` writes them), times as ``datetime``."""
    import math

    columns = []
    for col in df.columns:
        series = df[col]
        values = series.astype(object).where(series.notna(), None).tolist()
        if series.dtype.kind in "fO":
            values = [repr(v) if v.__class__ is float and not math.isfinite(v) else v for v in values]
        columns.append(values)
    return columns


def _write_sheet(sheet: Any, df: pd.DataFrame, header: Any) -> None:
    """The header, then every row in order (constant_memory wants them in order); filters on
    the header row, the header frozen, column widths that fit (up to a point)."""
    columns = _cells(df)
    for idx, (col, values) in enumerate(zip(df.columns, columns, strict=True)):
        width = max([len(str(col)) + 6, *(len(str(v)) for v in values[:200] if v is not None)])
        sheet.set_column(idx, idx, min(width + 2, 60))
    sheet.freeze_panes(1, 0)
    if len(df):
        sheet.autofilter(0, 0, len(df), len(df.columns) - 1)
    sheet.write_row(0, 0, [str(c) for c in df.columns], header)
    write_row = sheet.write_row
    for row, values in enumerate(zip(*columns, strict=True), start=1):
        write_row(row, 0, values)
