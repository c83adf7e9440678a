"""What the safety tests of the reliability suite share: the served lab and `labctl run` helpers of
the engine's integration tests, plus steering the served lab the way a technician would."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration" / "engine"))

from engine_support import DATA, RunProcess, ServedLab, served_lab_fixture  # noqa: E402

from labctl.fixture import load_fixture  # noqa: E402
from labctl.sim.control import control_request, default_control_path  # noqa: E402

__all__ = ["DATA", "RunProcess", "ServedLab", "served_lab_fixture", "control", "start_soaking", "safe_lines"]


def control(lab: ServedLab, request: dict) -> dict:
    """One request to the served lab's control socket (inject, clear, state)."""
    return control_request(default_control_path(load_fixture(str(lab.fixture))), request)


def start_soaking(lab: ServedLab, tmp_path: Path, *extra: str) -> RunProcess:
    """`labctl run abortable.yaml` until its soak is under way: supply and load on, chamber at 60 degC."""
    run = RunProcess("run", str(DATA / "abortable.yaml"), "--fixture", str(lab.fixture),
                     "--db", str(tmp_path / "results.db"), *extra)
    run.wait_for("soak", timeout=90)
    assert lab.scpi("psu", "OUTP? (@1)") == "1"
    assert lab.scpi("load", "INP?") == "1"
    # the soak's first commands may still be on their way; ask the lab's control socket (the
    # chamber's pty is in use by the run: a second reader there would steal its replies)
    deadline = time.monotonic() + 30
    while control(lab, {"op": "state"})["chamber"]["setpoint"] != pytest.approx(60.0):
        assert time.monotonic() < deadline, "the soak never set the chamber to 60 degC"
        time.sleep(0.1)
    return run


def safe_lines(output: str) -> dict[str, str]:
    """role -> what the console printed for its safe state."""
    out = {}
    for line in output.splitlines():
        text = line.strip()
        if text.startswith("safe state "):
            role, _, rest = text.removeprefix("safe state ").partition(": ")
            out[role] = rest
    return out
