"""Promise: `labctl resume` after a `kill -9` gives the verdict an uninterrupted run would
have given, whatever the dead run left behind: the simulated lab died with it (a fresh,
unpowered bench), the bench was made safe by hand, or it was left live. No committed
measurement is lost and none is recorded twice; the steps that establish the board's state
are replayed (and recorded as replays) before the cut-off.

Default: a seeded sample of kill points per bench state. Every step of the flagship in
every bench state (87 kills, about 18 minutes):

    LABCTL_FULL=1 .venv/bin/python -m pytest tests/reliability/test_resume_verdict.py -q

``LABCTL_SEED=N`` draws another sample.
"""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
import subprocess
import sys
from collections import Counter

import pytest
import yaml
from bench_support import (
    FLAGSHIP,
    FULL,
    GOLDEN,
    SEED,
    RunProcess,
    ServedLab,
    bench_state,
    flagship_keys,
    make_safe_by_hand,
    run_and_kill,
    run_outcome,
    step_rows,
    stored_measurements,
)

from labctl.engine.replay import REPLAY_MESSAGE, REPLAY_TAG
from labctl.sim.testing import isolated_fixture, served_lab

BENCH = ("lab-died", "made-safe-by-hand", "left-live")
KEYS = flagship_keys()


def _cases() -> list[tuple[str, str]]:
    if FULL:
        return [(bench, key) for bench in BENCH for key in KEYS]
    rng = random.Random(SEED)
    return [(bench, key) for bench in BENCH for key in rng.sample(KEYS[1:], 2)]


def _logical(key: str) -> str:
    return key.rsplit("#", 1)[0]


def _verdicts(db: str, run_id: str) -> dict[str, str]:
    """Logical step -> outcome of its final attempt (setup and steps; replays are not final)."""
    from labctl.store import open_store, query

    store = open_store(db, mark_interrupted=False)
    try:
        rows = query.step_rows(store, run_id)
    finally:
        store.close()
    return {_logical(r["step_key"]): r["outcome"] for r in rows if r["final"] and r["group"] != "teardown"}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The flagship on a golden board, not interrupted: the verdict to reproduce."""
    tmp = tmp_path_factory.mktemp("reference")
    fixture, db = isolated_fixture(tmp, time_scale=600), str(tmp / "r.db")
    run = RunProcess("run", FLAGSHIP, "--fixture", str(fixture), "--dut", GOLDEN, "--db", db, "--json")
    assert run.finish(timeout=300) == 0, run.output
    run_id = json.loads(run.lines[-1])["run_id"]
    final = Counter((_logical(k), n, lab) for k, n, lab in stored_measurements(db, run_id, final_only=True))
    return _verdicts(db, run_id), final


@pytest.mark.parametrize(("bench", "step"), _cases(), ids=[f"{b}-{k}" for b, k in _cases()])
def test_resume_after_kill_gives_the_uninterrupted_verdict(tmp_path, uninterrupted, bench, step):
    verdicts, final = uninterrupted
    fixture, db = isolated_fixture(tmp_path, time_scale=600), str(tmp_path / "r.db")
    rng = random.Random(f"{SEED}-{bench}-{step}")
    with contextlib.ExitStack() as stack:
        lab = None
        if bench != "lab-died":  # else the run starts the simulated lab in its own process
            lab = ServedLab(fixture, stack.enter_context(served_lab(fixture)))
        killed = run_and_kill(fixture, db, step, rng)
        if bench == "made-safe-by-hand":
            make_safe_by_hand(lab)
            state = bench_state(lab)
            assert (state["psu.1"], state["load"], float(state["chamber.setpoint"])) == ("0", "0", 25.0), state

        from labctl.store import open_store

        open_store(db).close()  # any open of the store marks the dead run interrupted
        assert run_outcome(db, killed.run_id) == "interrupted"
        with contextlib.closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = Counter(stored_measurements(db, killed.run_id, final_only=False))
        lost = [m for m in killed.committed if stored[m] < 1]
        assert not lost, f"committed measurements lost after kill -9 in {step}: {lost[:5]}"

        resumed = RunProcess("resume", killed.run_id, "--db", db, "--fixture", str(fixture))
        rc = resumed.finish(timeout=300)
        assert rc == 0, f"resume after kill -9 in {step} ({bench}):\n{resumed.output}"
        assert "Traceback" not in resumed.output
    assert run_outcome(db, killed.run_id) == "passed"

    rows = stored_measurements(db, killed.run_id, final_only=False)
    counted = Counter((_logical(k), n, lab) for k, n, lab in rows if not k.startswith("teardown/"))
    duplicates = {m: n for m, n in counted.items() if n > 1}
    assert not duplicates, f"measurements recorded twice: {list(duplicates)[:5]}"
    assert all(Counter(stored_measurements(db, killed.run_id, final_only=False))[m] >= 1 for m in killed.committed)
    got = Counter((_logical(k), n, lab) for k, n, lab in stored_measurements(db, killed.run_id, final_only=True))
    assert got == final, f"final measurements differ from an uninterrupted run: {sorted(set(final) ^ set(got))[:5]}"
    assert _verdicts(db, killed.run_id) == verdicts

    listed = subprocess.run([sys.executable, "-m", "labctl", "runs", "--db", db, "--format", "json"],
                            capture_output=True, text=True, timeout=60)
    assert [r["outcome"] for r in json.loads(listed.stdout)] == ["passed"]
    # the steps that establish state before the cut-off were replayed, and recorded as replays
    rows = step_rows(db, killed.run_id)
    replays = {_logical(r["step_key"]): r for r in rows if REPLAY_TAG in (r["tags"] or "")}
    # the cut-off: the first step the killed session did not finish (a short step may have
    # ended, and the next begun, before the kill landed)
    done = {_logical(r["step_key"]) for r in rows if r["session"] == 0 and r["outcome"] is not None}
    cut = next((k for k in KEYS if k not in done), None)
    if cut is None:  # killed in teardown: nothing to re-establish
        assert not replays, sorted(replays)
        return
    before = KEYS[:KEYS.index(cut)]
    if "steps/power_on" in before:
        assert "steps/power_on" in replays, sorted(replays)
    corner = cut.partition("@")[2]
    if corner and f"steps/soak@{corner}" in before:
        assert f"steps/soak@{corner}" in replays, sorted(replays)
    assert all(r["session"] == 1 and r["outcome"] == "PASS" and r["message"].startswith(REPLAY_MESSAGE)
               and r["n"] == 0 for r in replays.values()), [dict(r) for r in replays.values()]
    assert not [k for k in replays if "@" in k and not k.endswith(f"@{corner}")], sorted(replays)


def test_resume_keeps_an_earlier_failure_in_the_verdict(tmp_path):
    """A marginal board fails BER at the hot corner; killed after that, the resumed run fails
    as the uninterrupted one does (the failure is kept, not forgotten)."""
    fixture, db = isolated_fixture(tmp_path, time_scale=600), str(tmp_path / "r.db")
    killed = run_and_kill(fixture, db, "steps/workload_idle@2", random.Random(3), dut="SIM-MARG-0003")
    assert '"outcome": "FAIL"' in killed.output  # link_ber_hot@2 failed before the kill
    resumed = RunProcess("resume", killed.run_id, "--db", db, "--fixture", str(fixture))
    assert resumed.finish(timeout=300) == 1, resumed.output
    assert run_outcome(db, killed.run_id) == "failed"
    assert _verdicts(db, killed.run_id)["steps/link_ber_hot@2"] == "FAIL"


def test_a_failing_replay_makes_the_resumed_run_error(tmp_path):
    """The supply now refuses its voltage setting: replaying power_on fails, so the resumed
    run errors (the steps after it are not run on a board that is not powered)."""
    fixture, db = isolated_fixture(tmp_path, time_scale=600), str(tmp_path / "r.db")
    with served_lab(fixture):
        killed = run_and_kill(fixture, db, "steps/under_load@0", random.Random(4))
    data = yaml.safe_load(fixture.read_text())
    data["sim"]["faults"] = [{"fault": "scpi_error", "role": "psu", "match": "VOLT"}]
    fixture.write_text(yaml.safe_dump(data, sort_keys=False))
    with served_lab(fixture):
        resumed = RunProcess("resume", killed.run_id, "--db", db, "--fixture", str(fixture))
        assert resumed.finish(timeout=300) == 2, resumed.output
    assert run_outcome(db, killed.run_id) == "error"
    rows = [r for r in step_rows(db, killed.run_id) if r["session"] == 1]
    (replay,) = [r for r in rows if r["step_key"].startswith("steps/power_on#")]
    assert replay["outcome"] == "ERROR" and replay["message"].startswith(REPLAY_MESSAGE), dict(replay)
    assert REPLAY_TAG in replay["tags"]
    # nothing after the failed replay ran: every later step is recorded "not run"
    later = [r for r in rows if r["step_group"] == "steps" and REPLAY_TAG not in (r["tags"] or "")]
    assert later and all(r["outcome"] == "SKIPPED" and r["message"].startswith("not run") for r in later), \
        [dict(r) for r in later]
    assert _verdicts(db, killed.run_id)["steps/power_on"] == "ERROR"
