"""Benchmark: how long and how much memory `labctl validate` takes to refuse hostile files.

Runs one `labctl validate FILE` per case in a fresh subprocess (so import time is included,
as a user sees it) and prints wall time and the child's peak resident memory; a reference
run on the smallest bundled plan is printed first. Never fails on time.

    .venv/bin/python bench/hostile_inputs.py            # the worst cases of issue 10
    .venv/bin/python bench/hostile_inputs.py --all      # every file of tests/data/hostile

The 50 MB plan is written to a temporary folder (it is too large to commit), and so is the
slowest file to refuse: one just under the size limit (4 MiB) made of the smallest values,
refused at the value limit (400,000).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "hostile"
WORST = ["laughs-9x10.yaml", "merge-bomb.yaml", "alias-count-5000.yaml", "alias-loop-steps.yaml",
         "deep-flow-seq-10000.yaml", "parens-5000.yaml", "nots-20000.yaml", "bigint-version-100000.yaml",
         "corners-6x10.yaml", "corners-9x10.yaml", "binary-00.yaml", "tag-0-map.yaml",
         "include-escape-1.yaml", "limit-0.yaml", "timeout-3.yaml", "fx-timeout-0.yaml", "fx-time-scale-0.yaml"]


def run(path: Path) -> tuple[float, float, int, str]:
    """(seconds, peak RSS MiB of this child, exit code, first line of stderr)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "labctl", "validate", str(path)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=600)
    seconds = time.perf_counter() - start
    usage = proc.rusage if hasattr(proc, "rusage") else None
    rss = usage.ru_maxrss / 1024 if usage else float("nan")
    text = err or out
    return seconds, rss, proc.returncode, text.splitlines()[0] if text else ""


def in_process(path: Path) -> float:
    """Seconds to check the file inside an already started labctl (no interpreter start-up)."""
    from labctl.fixture.loader import check_fixture_file
    from labctl.plan.loader import check_plan

    start = time.perf_counter()
    if path.name.startswith("fx-"):
        check_fixture_file(path)
    else:
        check_plan(path)
    return time.perf_counter() - start


class _Popen(subprocess.Popen):
    """Popen that keeps the child's own resource usage (os.wait4), not the sum of all children."""

    def _try_wait(self, wait_flags):  # noqa: ANN001, ANN202 - CPython's private hook
        try:
            pid, sts, self.rusage = os.wait4(self.pid, wait_flags)
        except ChildProcessError:
            pid, sts = self.pid, 0
        return pid, sts


subprocess.Popen = _Popen  # type: ignore[misc]


def main(argv: list[str]) -> None:
    names = [c["file"] for c in json.loads((CORPUS / "expected.json").read_text())] if "--all" in argv else WORST
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "fifty-megabytes.yaml"
        line = "  - {id: a, check: wait, args: {duration: 1 s}}\n"
        big.write_text("name: big\nsteps:\n" + line * (50_000_000 // len(line)), encoding="utf-8")
        cases = [("(reference) testplans/smoke.yaml", ROOT / "testplans" / "smoke.yaml")]
        tiny = Path(tmp) / "tiny-values.yaml"  # the slowest file to refuse: 4 MiB of the smallest values
        tiny.write_text("steps: [" + ",".join(["[]"] * ((4 << 20) // 3 - 4)) + "]\n", encoding="utf-8")
        cases += [(n, CORPUS / n) for n in names] + [("50 MB plan", big), ("4 MiB of [] (at the limits)", tiny)]
        in_process(ROOT / "testplans" / "smoke.yaml")  # warm up: pint, pydantic, the check catalog
        print(f"{'case':34} {'labctl validate':>15} {'peak RSS':>9} {'in-process':>10}  exit  first line")
        for label, path in cases:
            seconds, rss, code, first = run(path)
            inner = in_process(path)
            print(f"{label:34} {seconds:14.2f}s {rss:7.0f}MiB {inner:9.3f}s  {code:4d}  {first[:80]}")
        print("labctl validate: a fresh process (start-up and imports included); in-process: the check alone")


if __name__ == "__main__":
    main(sys.argv[1:])
