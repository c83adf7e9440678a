"""SIGKILL a writer at many points; nothing it reported is lost; the run resumes cleanly."""

from __future__ import annotations

import random
import time

import pytest
from childproc import Child
from kill_child import value_of
from sqlalchemy import select

from labctl.store import open_store, split_step_key
from labctl.store.schema import measurements, samples, steps
from labctl.store.testing import verify_after_kill

STEPS = 20
PER_STEP = 2000
ORDER = ["setup/power_on[0]"] + [f"steps/s{i}[0]" for i in range(1, STEPS + 1)] + ["teardown/power_off[0]"]
_rng = random.Random(20261130)  # fixed seed: the same "random" kill points every run
RANDOM_DELAYS = [round(_rng.uniform(0.05, 1.0), 3) for _ in range(3)]


def stored_values(store, run_id: str) -> dict[str, list[float]]:
    """logical step key -> sorted measurement values, over every session and attempt."""
    with store.read_engine.connect() as conn:
        rows = conn.execute(
            select(steps.c.step_key, measurements.c.value)
            .join(measurements, measurements.c.step_ref == steps.c.id)
            .where(steps.c.run_id == run_id, steps.c.step_group == "steps")
        ).all()
    out: dict[str, list[float]] = {}
    for key, value in rows:
        out.setdefault(split_step_key(key)[0], []).append(value)
    return {k: sorted(v) for k, v in out.items()}


def soak_samples(store, run_id: str, step_key: str) -> list[float]:
    with store.read_engine.connect() as conn:
        return conn.execute(
            select(samples.c.value).join(steps, samples.c.step_ref == steps.c.id)
            .where(steps.c.run_id == run_id, steps.c.step_key == step_key, samples.c.series == "soak")
        ).scalars().all()


def wait_for_soak_samples(db: str, run_id: str, step_key: str, want: int = 5, timeout: float = 30.0) -> list[float]:
    """Poll as a reader until the paused step's soak samples show up (the writer is alive)."""
    deadline = time.monotonic() + timeout
    with open_store(db) as store:
        while time.monotonic() < deadline:
            got = soak_samples(store, run_id, step_key)
            if len(got) >= want:
                assert store.resume_info(run_id).outcome == "running"  # a live writer is never marked
                return got
            time.sleep(0.1)
    raise AssertionError(f"soak samples of {step_key} never reached the database")


def expected_values(logical: str) -> list[float]:
    index = int(logical.split("/s")[1].split("[")[0])
    return [value_of(index, j) for j in range(PER_STEP)]


def check_after_kill(db: str, run_id: str, child: Child) -> None:
    committed = child.committed()
    with open_store(db) as store:  # opening marks the dead child's run interrupted
        kc = verify_after_kill(store, run_id)
        assert kc.integrity == "ok"
        assert kc.outcome == ("passed" if child.done else "interrupted")
        for key, n in committed.items():  # everything reported is there, exactly
            assert kc.measurement_counts.get(key) == n, key
        for logical, values in stored_values(store, run_id).items():
            assert values == expected_values(logical)
        if child.done:
            return
        info = store.resume_info(run_id)
        assert info.resumable and info.plan_hash.endswith("1") and info.dut_serial == "DUT-0001"
        done_logical = {split_step_key(k)[0] for k in committed}
        last = max((ORDER.index(k) for k in done_logical), default=-1)
        following = {ORDER[last + 1]} if last + 1 < len(ORDER) else set()
        # finished: what was reported, plus at most the step whose report the kill cut off
        assert done_logical <= set(info.finished) <= done_logical | following
        assert {c.logical_key for c in info.cut_off} <= following - set(info.finished)
        # a step that did not finish left no measurement behind
        for key in kc.measurement_counts:
            assert split_step_key(key)[0] in info.finished, key


def resume_and_check(db: str, run_id: str) -> None:
    child = Child(db, run_id, "--resume", "--steps", str(STEPS), "--per-step", str(PER_STEP))
    rc = child.finish()
    assert rc == 0 and child.done, child.stderr
    assert "DONE passed True" in child.lines
    with open_store(db) as store:
        kc = verify_after_kill(store, run_id)
        assert kc.outcome == "passed"
        assert kc.integrity == "ok"
        assert kc.duplicated_steps == []
        values = stored_values(store, run_id)
        assert sorted(values) == sorted(ORDER[1:-1])
        for logical, got in values.items():
            assert got == expected_values(logical), logical  # each value exactly once
        info = store.resume_info(run_id)
        assert set(info.finished) == set(ORDER) and info.cut_off == ()
        assert info.next_session == 2


KILL_POINTS = [
    pytest.param(("after-steps", 3), id="after-3-committed-steps"),
    pytest.param(("after-steps", 0), id="right-after-run-start"),
    pytest.param(("die-after-measurements", 4 * PER_STEP + 777), id="mid-step-after-N-measurements"),
    pytest.param(("die-in-commit", 4), id="inside-4th-commit"),
    pytest.param(("pause", 5), id="during-a-long-step-with-samples"),
    pytest.param(("die-in-commit", 9), id="inside-9th-commit"),
    *(pytest.param(("random", d), id=f"random-{d}s") for d in RANDOM_DELAYS),
]


@pytest.mark.parametrize("point", KILL_POINTS)
def test_sigkill_loses_nothing_reported_and_resume_completes(db_url, point):
    kind, arg = point
    run_id = f"kill-{kind}-{arg}"
    extra = ["--steps", str(STEPS), "--per-step", str(PER_STEP)]
    if kind == "die-after-measurements":
        extra += ["--die-after-measurements", str(arg)]
    elif kind == "die-in-commit":
        extra += ["--die-in-commit", str(arg)]
    elif kind == "pause":
        extra += ["--pause-in-step", str(arg)]
    child = Child(db_url, run_id, *extra)
    assert child.wait_for("READY") or kind == "die-in-commit", child.stderr
    if kind == "after-steps":
        if arg:
            assert child.wait_for("COMMITTED", arg)
        child.kill()
    elif kind == "pause":
        assert child.wait_for("PAUSED")
        paused = child.lines[-1].split()[1]
        soak = wait_for_soak_samples(db_url, run_id, paused)  # flushed with no event to trigger it
        child.kill()
    elif kind == "random":
        time.sleep(arg)
        child.kill()
    else:
        child.finish()  # it kills itself
    assert not child.done or kind == "random"
    with open_store(db_url, mark_interrupted=False) as store:
        if store.next_session(run_id) == 0:  # killed before its first commit: nothing to resume
            assert kind == "die-in-commit" and not child.committed()
            return
    check_after_kill(db_url, run_id, child)
    if kind == "pause":
        with open_store(db_url) as store:
            info = store.resume_info(run_id)
            assert [c.step_key for c in info.cut_off] == [paused]
            assert info.cut_off[0].next_attempt == 2
            assert len(soak_samples(store, run_id, paused)) >= len(soak)  # nothing flushed was lost
    if not child.done:
        resume_and_check(db_url, run_id)
