"""How much do units cost? Import of pint, building labctl's registry, and parsing.

Run: ``python bench/units_import.py``. Prints numbers measured in fresh interpreters (the
import of pint is only paid once per process, so each figure comes from a new one).
Not a test: it never fails on time.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

SNIPPETS = {
    "import labctl.units (no pint yet)": "import labctl.units",
    "import pint": "import pint",
    "labctl registry (import pint + build)": "import labctl.units as u; u.registry()",
    "registry + parse 20 quantities": (
        "import labctl.units as u\n"
        "for t in ['0.75 V','750 mV','3 %','±25 mV','5 min','90 s','105 degC','56 Gbps','1e-12',"
        "'20 A','350 W','2 ms','1.5 degC/min','32 GT/s','20 MHz','10 TOPS/W','0.5 UI','1 kohm',"
        "'±0.5 degC','12 V']: u.parse_quantity(t)"
    ),
}


def measure(code: str, repeat: int = 5) -> float:
    wrapper = (
        "import time; t0 = time.perf_counter()\n" + code + "\nprint(time.perf_counter() - t0)"
    )
    times = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def main() -> None:
    results = {name: measure(code) for name, code in SNIPPETS.items()}
    base = max(results["import pint"], 1e-6)
    print(f"{'what (fresh interpreter, median of 5)':45s} {'ms':>8s} {'x import pint':>14s}")
    for name, t in results.items():
        print(f"{name:45s} {t * 1000:8.1f} {t / base:14.2f}")
    print("(pint is imported on first parse only; `labctl --help` never imports it)")


if __name__ == "__main__":
    main()
