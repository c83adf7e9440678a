"""An aborted run resumed: a step the abort kept from running was never attempted, so its first
run after the resume is its attempt 1 (it had been numbered attempt 2, as if the ``not run``
record were a try); the step the abort cut short did run, so its next try is attempt 2."""

from __future__ import annotations

import sqlite3
import threading

from labctl.engine.abort import AbortController
from labctl.engine.events import StepEnded
from labctl.launch import RunRequest, execute
from labctl.resume import resume_run
from labctl.sim.testing import isolated_fixture, served_lab

PLAN = """\
name: attempts
steps:
  - {id: first, check: wait, args: {duration: 0.05 s}}
  - {id: cut, check: wait, args: {duration: 1 min}}
  - {id: later, check: wait, args: {duration: 0.05 s}}
"""


def test_a_step_the_abort_kept_from_running_is_attempt_1_after_the_resume(tmp_path):
    fixture = isolated_fixture(tmp_path / "lab", time_scale=60)
    plan = tmp_path / "attempts.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    db = str(tmp_path / "r.db")
    abort = AbortController()

    def cut_short(e):
        if isinstance(e, StepEnded) and e.step_key.startswith("steps/first"):
            threading.Timer(0.3, abort.request, ("operator", "stop for lunch")).start()

    with served_lab(fixture):
        out = execute(RunRequest(plan=str(plan), fixture=str(fixture), db=db, preflight=False), [cut_short],
                      say=lambda _t: None, abort=abort, handle_signals=False)
        assert out.result.outcome.value == "aborted"
        again = resume_run(out.result.run_id, db=db, fixture=str(fixture), preflight=False, say=lambda _t: None,
                           handle_signals=False)
    assert again.exit_code == 0
    rows = sqlite3.connect(db).execute(
        "SELECT session, step_key, outcome FROM steps WHERE step_group = 'steps' ORDER BY session, seq").fetchall()
    assert rows == [
        (0, "steps/first#1", "PASS"),
        (0, "steps/cut#1", "ABORTED"),  # cut short: it ran
        (0, "steps/later#1", "ABORTED"),  # not run
        (1, "steps/cut#2", "PASS"),  # (first finished and sets no state: kept, not replayed)
        (1, "steps/later#1", "PASS"),
    ], rows
