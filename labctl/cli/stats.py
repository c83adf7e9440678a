"""``labctl stats``: yield, Cpk, failure Pareto, trends and population comparisons of recorded runs."""

from __future__ import annotations

import math
import sys
from typing import Any

import click

from labctl.cli._common import db_option_callback, echo_json, run_filter_options
from labctl.cli.runs import DB_HELP

TITLES = {"yield": "yield per plan", "step_yield": "yield per step", "groups": "per group (largest shift first)",
          "drift": "drift over time", "capability": "capability (worst Cpk first)", "pareto": "failure Pareto",
          "compare": "comparison (differing first)"}
RATE = ("first_pass_yield", "final_yield", "share", "cumulative")
STYLE = {"not capable": "red", "marginal": "yellow", "capable": "green", True: "bold red"}


@click.command()
@click.option("--db", callback=db_option_callback, envvar="LABCTL_DB", metavar="PATH|URL", help=DB_HELP)
@run_filter_options
@click.option("--by", type=click.Choice(["plan", "step", "dut", "station", "corner", "date"]), default="plan",
              show_default=True, help="group yield and trends by this field")
@click.option("--compare", "compare_spec", metavar="FIELD=A,B",
              help="compare two populations, e.g. station=bench-1,bench-2 or dut='REVA-*,REVB-*' "
                   "(fields: plan, version, dut, station, corner, date, operator)")
@click.option("--top", type=click.IntRange(min=1), default=20, show_default=True, help="rows per table in the terminal")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True,
              help="json: every table; csv: the comparison, else the grouping (--by dut|station|corner|date; "
                   "--by step: the step yield), else the capability table")
def stats(db: str | None, filters: dict[str, Any], by: str, compare_spec: str | None, top: int, fmt: str) -> None:
    """Statistics of the recorded runs that match the filters: first-pass and final yield,
    Cp/Cpk per measurement (flagged below 1.33 and 1.0), failure Pareto, trends by DUT, station,
    corner or date, and the comparison of two populations.

    \b
    labctl stats --plan accelerator-evt --since 30d
    labctl stats --by station
    labctl stats --compare plan_version=1.1,1.2   (or version=…)
    """
    from labctl.analysis.summary import parse_compare, stats_tables
    from labctl.errors import UsageError
    from labctl.report.population import population
    from labctl.report.record import load_records
    from labctl.store import open_store
    from labctl.store.query import RunFilters

    if compare_spec:
        parse_compare(compare_spec)  # a bad spec fails before the store is read
    wanted = RunFilters(**filters)
    with open_store(db, reading=True) as store:
        records = load_records(store, filters=wanted, samples=False)
        where = store.display_url
    if not records:
        raise UsageError(f"no recorded run in {where} matches {'these filters' if wanted.any() else 'anything'}",
                         hint="`labctl runs` lists the recorded runs (with the same filters)")
    tables = stats_tables(population(records, samples=False), by, compare_spec)
    if fmt == "json":
        echo_json({k: _records(t) for k, t in tables.items()})
        return
    if fmt == "csv":
        key = ("compare" if "compare" in tables else "groups" if "groups" in tables
               else "step_yield" if by == "step" else "capability")
        tables[key].to_csv(sys.stdout, index=False, lineterminator="\n")
        return
    from labctl.console import make_console

    console = make_console()
    console.print(f"{len(records)} runs, {len({r.dut_serial for r in records})} DUTs", markup=False)
    for key, t in tables.items():
        console.print(_table(f"{TITLES[key]} ({len(t)})", t, top))
        if len(t) > top:
            console.print(f"… {len(t) - top} more rows: --top N, or --format csv|json", markup=False)


def _records(t) -> list[dict[str, Any]]:
    """Rows for JSON: NaN and ±inf (Cpk of values without spread) become null, so the output
    stays JSON; the row's rating (``n/a (σ = 0)``) and σ say why."""
    return [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
            for r in t.to_dict("records")]


def _cell(col: str, v: Any) -> str:
    from rich.markup import escape

    if isinstance(v, bool):
        return "[bold red]yes[/]" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if math.isinf(v):
            return "∞" if v > 0 else "-∞"
        return f"{100 * v:.1f} %" if col in RATE else f"{v:.4g}"
    text = escape(str(v))
    style = STYLE.get(v) if isinstance(v, str) else None
    return f"[{style}]{text}[/]" if style else text


def _table(title: str, t, top: int):
    from rich.table import Table

    table = Table(title=title, title_justify="left", header_style="bold")
    cols = [c for c in t.columns if c != "plan" or t["plan"].nunique() > 1]  # one plan: said once, above
    t = t.head(top)
    for c in cols:
        table.add_column(str(c), overflow="fold", justify="right" if t[c].dtype.kind in "if" else "left")
    for row in t[cols].itertuples(index=False):
        table.add_row(*[_cell(c, v) for c, v in zip(cols, row, strict=True)])
    return table
