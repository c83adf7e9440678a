"""The statistics of a population as named tables (what ``labctl stats`` prints and exports):
yield per plan (or per station/DUT), per step, capability, Pareto, per-group trends, drift and
the comparison of two populations."""

from __future__ import annotations

from typing import Any

import pandas as pd

from labctl.analysis.capability import capability
from labctl.analysis.compare import compare
from labctl.analysis.frames import field_column, final_only, prepare
from labctl.analysis.pareto import pareto
from labctl.analysis.trends import by_group, drift
from labctl.analysis.yields import run_yield, step_yield

BY = ("plan", "step", "dut", "station", "corner", "date")


def stats_tables(pop: Any, by: str = "plan", compare_spec: str | None = None) -> dict[str, pd.DataFrame]:
    """Tables of a :class:`labctl.report.population.Population`, in the order they are shown.
    ``by`` picks the yield/trend grouping; ``compare_spec`` is ``FIELD=A,B``."""
    m_all = prepare(pop.measurements, last_attempt=False)
    m = final_only(m_all)
    tables: dict[str, pd.DataFrame] = {}
    if by in ("dut", "station"):
        tables["yield"] = run_yield(pop.runs, by=[field_column(by)])
    else:
        tables["yield"] = run_yield(pop.runs)
    if by == "step" or by == "plan":
        tables["step_yield"] = step_yield(pop.steps, pop.runs)
    if by in ("dut", "station", "corner", "date"):
        g = by_group(m, field_column(by))
        tables["groups"] = g.reindex(g["shift_sigma"].abs().sort_values(ascending=False, na_position="last").index)
    if by == "date":
        tables["drift"] = drift(m)
    tables["capability"] = capability(m)
    tables["pareto"] = pareto(m_all, pop.steps, pop.runs)
    if compare_spec:
        field, a, b = parse_compare(compare_spec)
        tables["compare"] = compare(m, field_column(field), a, b)
    return tables


def parse_compare(spec: str) -> tuple[str, str, str]:
    """``FIELD=A,B`` -> (field, a, b); a clear usage error otherwise."""
    from labctl.errors import UsageError

    field, _, values = spec.partition("=")
    parts = [v.strip() for v in values.split(",")]
    if not field or len(parts) != 2 or not all(parts):
        raise UsageError(f"--compare {spec!r}: expected FIELD=A,B",
                         hint="e.g. --compare station=bench-1,bench-2 or --compare dut='REVA-*,REVB-*'")
    field_column(field)
    return field.strip(), parts[0], parts[1]
