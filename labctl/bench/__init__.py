"""labctl's benchmarks: every figure of docs' Performance section, measured in one run.

``python -m labctl.bench`` runs them all and prints one table (figure, target, measured,
ratio, pass/miss); ``--quick`` runs each with small sizes (the test suite does, so none
rots). Figures are ratios to a floor measured in the same run (a raw pyvisa loop, an echo
server) or slopes, so a loaded machine moves both sides. Nothing here fails on time.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Row:
    """One line of the table. ``ratio`` is measured / target (≤ 1 meets it)."""

    figure: str
    target: str
    measured: str
    ratio: float

    @property
    def met(self) -> bool:
        return self.ratio <= 1.0


def table(rows: list[Row]) -> str:
    """The rows as a Markdown table (the README quotes it as printed)."""
    head = ["figure", "target", "measured", "ratio", ""]
    body = [[r.figure, r.target, r.measured, f"{r.ratio:.2f}", "pass" if r.met else "MISS"] for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body, strict=True)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) + " |" for row in body]
    return "\n".join(lines)
