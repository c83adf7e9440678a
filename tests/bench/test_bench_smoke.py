"""Every benchmark of ``python -m labctl.bench`` runs (small sizes) and prints its figures.

No timing is asserted: benchmarks never fail on time; this only keeps them from rotting."""

from __future__ import annotations

import subprocess
import sys

from labctl.bench.__main__ import BENCHES


def test_every_benchmark_runs_and_prints_one_row_per_figure():
    res = subprocess.run([sys.executable, "-m", "labctl.bench", "--quick"], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    for name in BENCHES:
        assert f"  {name}: " in out, out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| figure")]
    assert len(rows) == 21, out
    for row in rows:
        assert row.rstrip().endswith(("| pass |", "| MISS |")), row
    assert "targets met" in out
