"""How long `labctl report -F xlsx` takes to write its file, against pandas' ``to_excel``
through openpyxl writing the same three sheets, in one run.

For each size, synthetic run records (labctl.report.testing, 1,000 measurements a run) are
built before any clock starts; then, in alternating rounds, the export as labctl writes it
(``export(records, "xlsx", path)``: the frames and the sheets, xlsxwriter row by row) and the
library route it replaced (the same frames, ``DataFrame.to_excel`` with the openpyxl engine,
the header frozen and filtered, times formatted). The best CPU seconds of each count (other
jobs on the machine only ever add time); the ratio is the one to compare across machines.

    .venv/bin/python bench/xlsx_export.py [--runs 10,100] [--rounds 2]

Not a test: it never fails on time. openpyxl is among labctl's dependencies (pandas reads
xlsx back with it).
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path

from labctl.report.formats import ExportOptions, export
from labctl.report.tables import _frame, _naive_utc, instruments_frame, summary_frame
from labctl.report.testing import synthetic_records


def through_pandas(records, path: Path) -> None:  # noqa: ANN001
    """The three sheets as pandas and openpyxl wrote them before (labctl until commit
    cea1943): ``to_excel``, then filters, column widths and the time format cell by cell."""
    import pandas as pd
    from openpyxl.utils import get_column_letter

    sheets = {"Summary": summary_frame(records), "Measurements": _frame(records, ExportOptions()),
              "Instruments": instruments_frame(records)}
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        for name, df in sheets.items():
            _naive_utc(df).to_excel(writer, sheet_name=name, index=False, freeze_panes=(1, 0))
            sheet = writer.sheets[name]
            if sheet.max_row > 1:
                sheet.auto_filter.ref = sheet.dimensions
            for idx, col in enumerate(df.columns, start=1):
                letter = get_column_letter(idx)
                width = max([len(str(col)) + 6, *(len(str(v)) for v in df[col].head(200))])
                sheet.column_dimensions[letter].width = min(width + 2, 60)
                if getattr(df[col].dtype, "tz", None) is not None:
                    for cell in sheet[letter][1:]:
                        cell.number_format = "yyyy-mm-dd hh:mm:ss"


def cpu(fn, *args) -> float:  # noqa: ANN001
    gc.collect()
    start = time.process_time()
    fn(*args)
    return time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default="10,100", help="run counts (1,000 measurements each), comma-separated")
    ap.add_argument("--per-run", type=int, default=1000, help="measurements a run")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds; the best of each counts")
    args = ap.parse_args()
    print("  measurements | labctl (xlsxwriter) CPU s |  pandas + openpyxl CPU s | ratio |  file MB (labctl / pandas)")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for runs in (int(x) for x in args.runs.split(",")):
            records = synthetic_records(runs, args.per_run)
            n = sum(len(s.measurements) for r in records for s in r.final_steps)
            ours, theirs = float("inf"), float("inf")
            for _ in range(args.rounds):
                ours = min(ours, cpu(export, records, "xlsx", tmp / "labctl.xlsx"))
                theirs = min(theirs, cpu(through_pandas, records, tmp / "pandas.xlsx"))
            sizes = [(tmp / f).stat().st_size / 1e6 for f in ("labctl.xlsx", "pandas.xlsx")]
            print(f"  {n:>12,} | {ours:24.2f} | {theirs:24.2f} | {ours / theirs:5.2f} | "
                  f"{sizes[0]:8.2f} / {sizes[1]:.2f}", flush=True)


if __name__ == "__main__":
    main()
