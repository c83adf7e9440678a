"""The start form's pre-flight (labctl.tui.start.check_start) words what blocks a start."""

from __future__ import annotations

from pathlib import Path

from labctl.fixture import load_fixture
from labctl.tui.catalog import PlanEntry
from labctl.tui.start import check_start
from labctl.tui.status import StationStatus

ROOT = Path(__file__).resolve().parents[3]


def test_a_bench_held_by_another_run_is_the_one_blocker_not_a_dut_that_did_not_answer():
    """While another run holds the bench the console is not read: the form said the bench is
    in use and also "the DUT console did not answer", which sent the operator to the board."""
    busy = "bench in use, not polled: instrument TCPIP0::127.0.0.1::50251::SOCKET is in use by process 4821"
    status = StationStatus("sim-bench-1", problems=(busy,), busy=busy)
    entry = PlanEntry(str(ROOT / "testplans" / "smoke.yaml"), "smoke", "built-in")
    check = check_start(entry, load_fixture("sim-bench.yaml"), status, "", {})
    assert check.blocking == [busy]
    idle = check_start(entry, load_fixture("sim-bench.yaml"), StationStatus("sim-bench-1"), "", {})
    assert idle.blocking == ["the DUT console did not answer: is the board on the fixture?"]
