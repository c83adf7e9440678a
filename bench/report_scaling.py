"""How building the HTML report and the Parquet export grows with the number of measurements,
from 10,000 to 1,000,000 (1,000 runs of 1,000 measurements), against the targets on this
machine: HTML < 10 s and < 20 MB, Parquet < 3 s at 1M.

The runs are synthetic run records (labctl.report.testing), built before the clock starts;
each export goes through the same path as `labctl report -F html|parquet`: records ->
measurements frame -> file. The frame's share is printed separately because both share it.

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
from labctl.report.record import measurements_frame
from labctl.report.testing import synthetic_records

TARGETS = {"html_s": 10.0, "html_mb": 20.0, "parquet_s": 3.0}


def timed(fn, *args):
    gc.collect()
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def measure(runs: int, per_run: int, folder: Path) -> dict[str, float]:
    records = synthetic_records(runs, per_run)
    n = sum(len(s.measurements) for r in records for s in r.steps)
    frame_s, _ = timed(measurements_frame, records)
    html_s, html = timed(export, records, "html", folder / f"r{runs}.html")
    parquet_s, pq = timed(export, records, "parquet", folder / f"r{runs}.parquet")
    return {"runs": runs, "n": n, "frame_s": frame_s, "html_s": html_s, "html_mb": html.stat().st_size / 1e6,
            "parquet_s": parquet_s, "parquet_mb": pq.stat().st_size / 1e6}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default="10,100,1000", help="run counts, comma-separated")
    ap.add_argument("--per-run", type=int, default=1000, help="measurements per run")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for runs in (int(x) for x in args.runs.split(",")):
            rows.append(measure(runs, args.per_run, Path(tmp)))
            r = rows[-1]
            print(f"{r['runs']:>5} runs {r['n']:>9,} measurements: frame {r['frame_s']:6.2f} s | "
                  f"HTML {r['html_s']:6.2f} s {r['html_mb']:6.2f} MB | Parquet {r['parquet_s']:6.2f} s "
                  f"{r['parquet_mb']:6.2f} MB", flush=True)
    first, last = rows[0], rows[-1]
    if len(rows) > 1:
        scale = last["n"] / first["n"]
        print(f"growth ×{scale:g} measurements: HTML time ×{last['html_s'] / first['html_s']:.1f}, "
              f"HTML size ×{last['html_mb'] / first['html_mb']:.1f}, Parquet time ×"
              f"{last['parquet_s'] / first['parquet_s']:.1f}")
    for key, target in TARGETS.items():
        print(f"at {last['n']:,}: {key} = {last[key]:.2f} (target < {target:g}: {last[key] / target:.2f} of it)")
    print(f"the records -> measurements frame step takes {last['frame_s']:.2f} s of each export at {last['n']:,}")


if __name__ == "__main__":
    main()
