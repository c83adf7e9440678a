"""Whatever ends a run — Ctrl-C (twice), SIGTERM, a tripped interlock — the bench ends in its
safe state: checked by asking the simulated instruments themselves afterwards."""

from __future__ import annotations

import signal
import time

import pytest
from engine_support import DATA, RunProcess, assert_bench_safe

PLAN = str(DATA / "abortable.yaml")




def start_soaking(lab, tmp_path, *extra: str) -> RunProcess:
    run = RunProcess("run", PLAN, "--fixture", str(lab.fixture), "--db", str(tmp_path / "results.db"), *extra)
    run.wait_for("soak", timeout=90)
    # the soak is under way: supply and load are on, the chamber is heading for 60 degC
    assert lab.scpi("psu", "OUTP? (@1)") == "1"
    assert lab.scpi("load", "INP?") == "1"
    time.sleep(1.0)
    return run


@pytest.mark.parametrize("signals", [[signal.SIGINT], [signal.SIGINT, signal.SIGINT], [signal.SIGTERM]],
                         ids=["ctrl-c", "ctrl-c-twice", "sigterm"])
def test_signal_mid_soak_leaves_the_bench_safe(served_lab, tmp_path, signals):
    run = start_soaking(served_lab, tmp_path)
    for sig in signals:
        run.proc.send_signal(sig)
        time.sleep(0.1)
    rc = run.finish()
    assert rc == 3, run.output
    assert "ABORTED" in run.output
    assert_bench_safe(served_lab)


def test_tripped_interlock_aborts_to_the_safe_state(served_lab, tmp_path):
    run = RunProcess("run", PLAN, "--fixture", str(served_lab.fixture), "--db", str(tmp_path / "results.db"),
                     "--set", "chamber_max=35 degC")
    rc = run.finish(timeout=180)
    assert rc == 3, run.output
    assert "safety interlock tripped" in run.output
    assert "chamber.temperature" in run.output
    assert_bench_safe(served_lab)


def test_interlock_tripped_at_start_refuses_the_run(served_lab, tmp_path):
    run = RunProcess("run", PLAN, "--fixture", str(served_lab.fixture), "--db", str(tmp_path / "results.db"),
                     "--set", "chamber_max=10 degC")
    rc = run.finish(timeout=120)
    assert rc == 3, run.output
    assert "refused to start" in run.output
    assert served_lab.scpi("psu", "OUTP? (@1)") == "0"


def test_a_second_run_on_a_busy_bench_is_refused_before_it_touches_anything(served_lab, tmp_path):
    """Two runs on one bench would power the same supply and steal each other's error queues:
    the second is refused at once, records nothing, and the first goes on undisturbed."""
    run = start_soaking(served_lab, tmp_path)
    second_db = tmp_path / "second.db"
    other = RunProcess("run", "smoke.yaml", "--fixture", str(served_lab.fixture), "--db", str(second_db))
    rc_other = other.finish(timeout=60)
    assert rc_other == 2, other.output
    assert f"is in use by process {run.proc.pid}" in other.output, other.output
    assert "Traceback" not in other.output
    assert not second_db.exists() or "smoke" not in second_db.read_bytes().decode("latin-1")
    # the first run's bench was not touched: still powered and soaking
    assert served_lab.scpi("psu", "OUTP? (@1)") == "1"
    run.proc.send_signal(signal.SIGINT)
    assert run.finish() == 3, run.output
    assert_bench_safe(served_lab)
    # the bench is free again
    again = RunProcess("run", "smoke.yaml", "--fixture", str(served_lab.fixture), "--db", str(second_db),
                       "--no-preflight")
    assert again.finish(timeout=120) in (0, 1), again.output


def test_each_roles_safe_state_keeps_its_own_instrument_io(served_lab, tmp_path):
    """Every role is made safe at once and recorded as a step of its own: each step's I/O log
    holds its own role's commands (all of them had gone to the first role's step)."""
    import sqlite3

    from tests.conftest import run_labctl

    db = tmp_path / "r.db"
    res = run_labctl("run", "smoke.yaml", "--fixture", str(served_lab.fixture), "--db", str(db), "--no-preflight")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT step_key, instrument FROM io_log WHERE step_key LIKE 'teardown/safe-state.%'").fetchall()
    by_step: dict[str, set[str]] = {}
    for key, instrument in rows:
        by_step.setdefault(key, set()).add(instrument)
    assert by_step and all(insts == {key.split(".", 1)[1].split("#")[0]} for key, insts in by_step.items()), by_step
    assert {"teardown/safe-state.psu#1", "teardown/safe-state.dut#1", "teardown/safe-state.daq#1"} <= set(by_step)
