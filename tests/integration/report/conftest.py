"""Real runs for the report tests, made once per module with `labctl run` on the simulated lab
(a private copy of the bench): the sign-off sample on one board (fails at one corner, retried,
an operator prompt answered from a file) and the smoke plan on another (passes)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from labctl.sim.testing import isolated_fixture
from tests.conftest import ROOT, run_labctl

SIGNOFF = ROOT / "tests" / "data" / "report" / "signoff.yaml"


@dataclass
class Lab:
    db: Path
    fixture: Path
    folder: Path
    signoff_junit: Path  # what `labctl run --junit` wrote for the sign-off run


def make_runs(folder: Path, db: str) -> None:
    """Run the sign-off sample (fails) and the smoke plan (passes) into ``db``."""
    bench = isolated_fixture(folder, time_scale=600)
    answers = folder / "answers.yaml"
    answers.write_text("fan_installed: 'yes'\n", encoding="utf-8")
    res = run_labctl("run", str(SIGNOFF), "--fixture", str(bench), "--dut", "SIM-GOLD-0001", "--db", db,
                     "--answers", str(answers), "--junit", str(folder / "signoff.xml"))
    assert res.returncode == 1, res.stdout + res.stderr
    res = run_labctl("run", "smoke.yaml", "--fixture", str(bench), "--dut", "SIM-GOLD-0002", "--db", db)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Lab:
    folder = tmp_path_factory.mktemp("report-lab")
    db = folder / "results.db"
    make_runs(folder, str(db))
    return Lab(db=db, fixture=folder / "fixture-sim-bench.yaml", folder=folder, signoff_junit=folder / "signoff.xml")
