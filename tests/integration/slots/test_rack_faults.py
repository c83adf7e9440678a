"""A fault in one slot of a rack, as an operator meets it (docs/slots.md, docs/simulated-lab.md):
`labctl sim serve` serves the 4-slot rack, the fault goes into slot 2 with `labctl sim dut` or
`labctl sim inject` (or, once slot 2's board is powered, through the lab's control socket, as
`labctl sim inject [--slot 2]` does),
and `labctl run --slots all` runs the plan. Only slot 2 fails or errors, its row saying what
the fault did; the other slots pass; the exit code is the worst slot's; every slot's outputs
are off and the shared chamber at its safe temperature, read back after the run over SCPI, the
chamber's serial line and the lab's own state, and in every run's recorded safe state."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from slots_support import DATA, chamber_setpoint, inject, rack, scpi, slot_supplies

from labctl.sim.testing import served_lab
from tests.conftest import run_labctl

PLAN = DATA / "rails-hold.yaml"
DEAD_HBM = "SIM-DEAD-0002"  # a board whose VDD_HBM regulator never comes up
PASSED = "6 step(s) passed; safe state: 4 role(s) OK"


def _rack_with_a_dead_rail_board(tmp_path: Path) -> Path:
    fx = rack(tmp_path, time_scale=60)
    data = yaml.safe_load(fx.read_text())
    data["sim"]["duts"][DEAD_HBM] = {"faults": [{"fault": "dead_rail", "rail": "VDD_HBM"}]}
    fx.write_text(yaml.safe_dump(data, sort_keys=False))
    return fx


def _run_slots(tmp_path: Path, fx: Path, on_line=None) -> tuple[int, str, str]:
    """`labctl run PLAN --slots all` in its own process; ``on_line`` sees each console line as it comes."""
    err = tmp_path / "stderr.txt"
    with err.open("w") as err_file:
        proc = subprocess.Popen([sys.executable, "-m", "labctl", "run", str(PLAN), "--fixture", str(fx), "--slots", "all",
                                 "--db", str(tmp_path / "r.db")], stdout=subprocess.PIPE, stderr=err_file, text=True,
                                env={**os.environ, "COLUMNS": "400", "PYTHONUNBUFFERED": "1"})
        lines = []
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if on_line is not None:
                on_line(line)
        code = proc.wait(timeout=120)
    return code, "".join(lines), err.read_text()


def _table(out: str) -> dict[str, list[str]]:
    """The summary table's rows by slot: [DUT, outcome, steps pass/fail/err, run, details]."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if line.startswith("│") and len(cells) == 6 and cells[0].isdigit():
            rows[cells[0]] = cells[1:]
    return rows


def _stored_safe_states(db: Path) -> dict[str, list[tuple[str, str]]]:
    """slot -> (step, outcome) of each safe-state step its run recorded."""
    with sqlite3.connect(db) as c:
        got = c.execute("SELECT r.slot, s.step_id, s.outcome FROM steps s JOIN runs r ON r.id = s.run_id "
                        "WHERE s.check_name = 'safe_state' ORDER BY r.slot, s.step_id").fetchall()
    out: dict[str, list[tuple[str, str]]] = {}
    for slot, step, outcome in got:
        out.setdefault(slot, []).append((step, outcome))
    return out


def _put_in(fx: Path, *args: str) -> None:
    res = run_labctl("sim", *args, "--fixture", str(fx))
    assert res.returncode == 0, res.stdout + res.stderr


def _dead_rail_board(fx: Path) -> None:
    _put_in(fx, "dut", "--slot", "2", DEAD_HBM)


def _supply_refuses_settings(fx: Path) -> None:
    _put_in(fx, "inject", "scpi_error", "role=2/psu", "match=VOLT")


HANG_ONCE = ({"fault": "instrument_timeout", "role": "2/psu", "count": 1}, None)  # one command lost
HBM_DIES = ({"fault": "dead_rail", "rail": "VDD_HBM"}, "2")  # `labctl sim inject --slot 2 dead_rail …`
CASES = {
    # what goes into slot 2 before the run, what when its power_on has passed (its board
    # powered), slot 2's outcome, what its row says, the exit code and the table's title
    "dut-dead-rail": (_dead_rail_board, None, "failed", ["rails: VDD_HBM", "outside 1.164 V"], 1, "3 passed, 1 failed"),
    "dut-rail-dies-while-powered": (None, HBM_DIES, "failed", ["rails: VDD_HBM", "outside 1.164 V"], 1,
                                    "3 passed, 1 failed"),
    "psu-refuses-settings": (_supply_refuses_settings, None, "error",
                             ["power_on: instrument error: psu: -221,\"Settings conflict\""], 2, "3 passed, 1 error"),
    "psu-hangs-while-powered": (None, HANG_ONCE, "error",
                                ["input: no answer within 2 s (instrument psu", "command 'MEAS:CURR? (@1)'"], 2,
                                "3 passed, 1 error"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_fault_in_one_slot_fails_that_slot_only_and_leaves_every_bench_safe(tmp_path, case):
    before, mid_run, outcome, says, exit_code, title = CASES[case]
    fx = _rack_with_a_dead_rail_board(tmp_path)
    injected = []

    def when_slot_2_is_powered(line: str) -> None:
        if mid_run and not injected and line.startswith("slot   2") and "PASS    power_on" in line:
            inject(fx, *mid_run)
            injected.append(line)

    with served_lab(fx):
        if before is not None:
            before(fx)
        code, out, err = _run_slots(tmp_path, fx, when_slot_2_is_powered)
        supplies = {slot: scpi(resource, "OUTP? (@1,2,3)") for slot, resource in slot_supplies(fx).items()}
        setpoint = chamber_setpoint(fx)
        res = run_labctl("sim", "state", "--json", "--fixture", str(fx))
    assert bool(injected) == bool(mid_run)
    assert code == exit_code, out + err
    assert "Traceback" not in out + err
    rows = _table(out)
    assert {slot: row[1] for slot, row in rows.items()} == {"1": "passed", "2": outcome, "3": "passed", "4": "passed"}, out
    for phrase in says:
        assert phrase in rows["2"][4], rows["2"]
    assert all(rows[s][4] == PASSED for s in "134"), rows
    # an ERROR step is counted as an error, not a failure (as `labctl runs` counts them)
    _passed, failed, errors = map(int, rows["2"][2].split("/"))
    assert (failed > 0, errors > 0) == (outcome == "failed", outcome == "error"), rows["2"]
    assert f"4 slot(s) on station sim-rack4: {title}" in out
    # what the bench was left in: each slot's outputs off, the chamber at its safe temperature
    assert "bench safe state chamber: PASS" in out and "bench safe state daq: PASS" in out
    assert supplies == {slot: "0,0,0" for slot in "1234"}
    assert setpoint == 25.0
    state = json.loads(res.stdout)
    assert {s: (b["powered"], b["psu_output_on"]) for s, b in state["slots"].items()} == \
        {s: (False, False) for s in "1234"}
    # and what every run recorded of its own safe state: each role confirmed
    safe = _stored_safe_states(tmp_path / "r.db")
    assert sorted(safe) == ["1", "2", "3", "4"]
    assert all(steps and {o for _s, o in steps} == {"PASS"} for steps in safe.values()), safe
