"""How building the HTML report and the Parquet export grows with the number of measurements,
from 10,000 to 1,000,000 (1,000 runs of 1,000 measurements), against the targets on this
machine at 1M: HTML < 10 s and < 20 MB, Parquet < 3 s.

The runs are synthetic run records (labctl.report.testing), built before any clock starts.
Three figures per size, each in wall-clock and CPU seconds (the CPU figure is the one to
compare on a shared machine):

- frames: records -> the measurements frame and the run/step/sample frames (what every table
  exporter and the HTML report start from: labctl.report.record.measurements_frame);
- HTML: those frames -> the HTML file (analytics, charts, template);
- Parquet: the frame -> the Parquet file; and the whole `labctl report -F parquet` path
  (records -> file) for comparison.

    .venv/bin/python bench/report_scaling.py
    .venv/bin/python bench/report_scaling.py --runs 10,100 --per-run 1000

Not a test: it never fails on time.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path

from labctl.report.formats import export
from labctl.report.html import write_report
from labctl.report.population import population
from labctl.report.testing import synthetic_records

TARGETS = {"html": 10.0, "parquet": 3.0}
HTML_MB = 20.0


def timed(fn, *args):
    """(wall s, cpu s, result)."""
    gc.collect()
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args)
    return time.perf_counter() - w, time.process_time() - c, out


def write_parquet_frame(frame, path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pandas(frame[frame["final"]], preserve_index=False), path)
    return path


def measure(runs: int, per_run: int, folder: Path) -> dict[str, float]:
    records = synthetic_records(runs, per_run)
    n = sum(len(s.measurements) for r in records for s in r.steps)
    out: dict[str, float] = {"runs": runs, "n": n}
    out["frames_w"], out["frames_c"], pop = timed(population, records)
    out["html_w"], out["html_c"], html = timed(write_report, pop, folder / f"r{runs}.html")
    out["parquet_w"], out["parquet_c"], pq = timed(write_parquet_frame, pop.measurements, folder / f"r{runs}.parquet")
    out["export_w"], out["export_c"], _ = timed(export, records, "parquet", folder / f"e{runs}.parquet")
    out["html_mb"], out["parquet_mb"] = html.stat().st_size / 1e6, pq.stat().st_size / 1e6
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default="10,100,1000", help="run counts, comma-separated")
    ap.add_argument("--per-run", type=int, default=1000, help="measurements per run")
    args = ap.parse_args()
    rows = []
    print("   runs  measurements |  frames (wall/cpu s) |  HTML (wall/cpu s, MB) | Parquet from frame | "
          "records->Parquet")
    with tempfile.TemporaryDirectory() as tmp:
        for runs in (int(x) for x in args.runs.split(",")):
            rows.append(measure(runs, args.per_run, Path(tmp)))
            r = rows[-1]
            print(f"{r['runs']:>7} {r['n']:>13,} | {r['frames_w']:7.2f} / {r['frames_c']:6.2f}    | "
                  f"{r['html_w']:6.2f} / {r['html_c']:6.2f}, {r['html_mb']:5.2f} | "
                  f"{r['parquet_w']:5.2f} / {r['parquet_c']:5.2f} s   | {r['export_w']:6.2f} / {r['export_c']:6.2f} s",
                  flush=True)
    first, last = rows[0], rows[-1]
    if len(rows) > 1:
        print(f"growth ×{last['n'] / first['n']:g} measurements (CPU): frames ×{last['frames_c'] / first['frames_c']:.1f}, "
              f"HTML ×{last['html_c'] / first['html_c']:.1f} (size ×{last['html_mb'] / first['html_mb']:.1f}), "
              f"Parquet ×{last['parquet_c'] / first['parquet_c']:.1f}")
    n = f"{last['n']:,}"
    print(f"at {n}, CPU seconds against the targets:")
    print(f"  HTML from frames {last['html_c']:.2f} s = {last['html_c'] / TARGETS['html']:.2f} of {TARGETS['html']:g} s; "
          f"with the records -> frames step {last['html_c'] + last['frames_c']:.2f} s = "
          f"{(last['html_c'] + last['frames_c']) / TARGETS['html']:.2f}")
    print(f"  HTML size {last['html_mb']:.2f} MB = {last['html_mb'] / HTML_MB:.2f} of {HTML_MB:g} MB")
    print(f"  Parquet from the frame {last['parquet_c']:.2f} s = {last['parquet_c'] / TARGETS['parquet']:.2f} of "
          f"{TARGETS['parquet']:g} s; records -> Parquet {last['export_c']:.2f} s = "
          f"{last['export_c'] / TARGETS['parquet']:.2f}")

if __name__ == "__main__":
    main()
