"""Cpk when every board records the same value (σ = 0) inside the limits: the index is
unbounded, and the HTML report, `labctl stats` (terminal, CSV, JSON) all say so with the reason
instead of a bare '-'; the JSON stays strict JSON (docs/reports.md, "Capability")."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from labctl.sim.testing import isolated_fixture
from tests.conftest import ROOT, run_labctl

PLAN = ROOT / "tests" / "data" / "report" / "no-spread.yaml"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """Three boards through a plan whose OVP level (programmed, 5.7 V) has limits 5.5 … 6 V."""
    tmp = tmp_path_factory.mktemp("no-spread")
    bench = isolated_fixture(tmp, time_scale=600)
    path = tmp / "results.db"
    for serial in ("SIM-GOLD-0001", "SIM-GOLD-0002", "SIM-GOLD-0003"):
        res = run_labctl("run", str(PLAN), "--fixture", str(bench), "--dut", serial, "--db", str(path), cwd=tmp)
        assert res.returncode == 0, res.stdout + res.stderr
    return path


def strict_json(text: str):
    def refuse(word):
        raise ValueError(f"not JSON: {word}")
    return json.loads(text, parse_constant=refuse)


def test_stats_shows_infinite_cpk_with_the_reason_in_every_format(db):
    table = run_labctl("stats", "--db", str(db), env={**os.environ, "COLUMNS": "250"})  # one line per row
    assert table.returncode == 0, table.stderr
    line = next(x for x in table.stdout.splitlines() if "ovp_level" in x)
    cells = [c.strip() for c in re.split(r"[│|]", line) if c.strip()]
    assert cells[-4:] == ["∞", "∞", "LSL", "n/a (σ = 0)"]  # cp, cpk, side, rating

    csv = run_labctl("stats", "--db", str(db), "--format", "csv")
    row = pd.read_csv(io.StringIO(csv.stdout)).iloc[0]
    assert (row["std"], row["cp"], row["cpk"], row["rating"]) == (0.0, float("inf"), float("inf"), "n/a (σ = 0)")

    doc = strict_json(run_labctl("stats", "--db", str(db), "--format", "json").stdout)
    cap = doc["capability"][0]
    assert (cap["std"], cap["cp"], cap["cpk"], cap["rating"]) == (0.0, None, None, "n/a (σ = 0)")


def test_html_report_shows_infinite_cpk_and_why_it_is_not_rated(db, tmp_path):
    out = tmp_path / "r.html"
    res = run_labctl("report", "--db", str(db), "--format", "html", "-o", str(out))
    assert res.returncode == 0, res.stdout + res.stderr
    page = out.read_text(encoding="utf-8")
    section = page[page.index('id="capability"'):]
    row = re.search(r"<tr[^>]*><td>power_on</td><td>ovp_level</td>(.*?)</tr>", section, re.S).group(1)
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    assert cells[-4:] == ["∞", "∞", "n/a (σ = 0)", "0"]  # Cp, Cpk, rating, fails
    assert "Cpk ∞ (σ = 0)" in section  # the distribution chart's title
