"""Progress lines are stored for watchers: the newest one per run, at most twice a second,
and a re-run references the run it re-ran."""

from __future__ import annotations

import time

from eventkit import Script
from sqlalchemy import event

from labctl.engine import events as ev
from labctl.store import Recorder, query


def _count_progress_writes(store) -> list[str]:
    seen: list[str] = []

    @event.listens_for(store.engine, "before_cursor_execute")
    def _count(conn, cursor, statement, params, context, executemany):  # noqa: ARG001
        if "progress" in statement.lower() and statement.lstrip().upper().startswith("INSERT"):
            seen.append(statement)

    return seen


def test_a_stream_of_progress_lines_is_stored_throttled_and_the_newest_one_wins(store):
    rec = Recorder(store, progress_interval=0.5, flush_interval=0.2)
    writes = _count_progress_writes(store)
    s = Script(rec, "run-p")
    s.start()
    s.emit(ev.StepStarted, step_key="steps/soak#1", step_id="soak", group="steps", check="thermal.soak")
    began = time.monotonic()
    for i in range(60):  # 50 lines a second for 1.2 s
        rec(ev.Progress(run_id="run-p", time=time.time(), step_key="steps/soak#1",
                        text=f"chamber {40 + i / 10:.1f} → 45.0 degC, stable 0 s of 2 min", fraction=i / 100))
        time.sleep(0.02)
    elapsed = time.monotonic() - began
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:  # the background thread writes the newest held line
        latest = query.follow(store, "run-p")[0]["progress"]
        if latest and latest["text"].startswith("chamber 45.9"):
            break
        time.sleep(0.05)
    assert latest["text"] == "chamber 45.9 → 45.0 degC, stable 0 s of 2 min"
    assert latest["step_key"] == "steps/soak#1" and abs(latest["fraction"] - 0.59) < 1e-9
    assert 2 <= len(writes) <= elapsed / 0.5 + 2  # ≤ 2 writes per second, not 60
    s.end()
    rec.close()


def test_progress_is_never_written_while_the_database_is_failed(store):
    rec = Recorder(store, progress_interval=0.0)
    writes = _count_progress_writes(store)
    s = Script(rec, "run-q")
    s.start()
    rec.spooled = True  # what a failed database write sets
    rec(ev.Progress(run_id="run-q", time=time.time(), step_key="steps/x#1", text="waiting"))
    assert writes == [] and query.follow(store, "run-q")[0]["progress"] is None
    rec.spooled = False
    rec.close()


def test_a_rerun_references_the_run_it_re_ran(store):
    rec = Recorder(store)
    old = Script(rec, "run-old")
    old.start()
    old.step("rails", {"vcore": 0.9}, outcome=ev.StepOutcome.FAIL)
    old.end(ev.RunOutcome.FAILED)
    new = Script(rec, "run-new", t0=old.t + 60)
    new.start(rerun_of="run-old")
    new.step("rails", {"vcore": 0.75})
    new.end()
    rec.close()
    rows = {r["id"]: r for r in query.list_runs(store)}
    assert rows["run-new"]["rerun_of"] == "run-old" and rows["run-old"]["rerun_of"] is None
    assert query.previous_run(store, "run-new")["id"] == "run-old"
    assert query.previous_run(store, "run-old") is None


def test_a_stalled_database_never_holds_up_the_thread_running_the_plan(store):
    """Progress lines, a log line past the flush interval and a prompt are written by the
    recorder's background thread: with every database write stalled (here 2 s each, as a
    server that stopped answering), publishing them returns at once. It had waited up to the
    write timeout inside a step, which ran the step past its `timeout:` (a false ERROR)."""
    import threading

    rec = Recorder(store, progress_interval=0.0, flush_interval=0.1, commit_window=0.1)
    s = Script(rec, "run-s")
    s.start()
    key = "steps/w#1"
    s.emit(ev.StepStarted, step_key=key, step_id="w", group="steps", check="wait")
    stalled, real_write, real_progress = threading.Event(), rec._sink.write, rec._sink.write_progress

    def slow(real):
        def call(*args):
            stalled.set()
            time.sleep(2.0)
            return real(*args)
        return call

    rec._sink.write, rec._sink.write_progress = slow(real_write), slow(real_progress)
    began = time.monotonic()
    for i in range(20):
        rec(ev.Progress(run_id="run-s", time=time.time(), step_key=key, text=f"wait: {i}s of 20s", fraction=i / 20))
        rec(ev.LogMessage(run_id="run-s", time=time.time(), level="info", message=f"tick {i}", step_key=key))
        time.sleep(0.02)
    rec(ev.PromptAsked(run_id="run-s", time=time.time(), step_key=key, prompt_id="w", text="ok?", choices=("yes",)))
    assert stalled.wait(5)  # the background thread is in the stalled database meanwhile
    assert time.monotonic() - began < 1.5, "the run's thread waited for the database"
    rec._sink.write, rec._sink.write_progress = real_write, real_progress
    s.emit(ev.StepEnded, step_key=key, outcome=ev.StepOutcome.PASS)
    s.end()
    rec.close()
    d = query.run_detail(store, "run-s")
    assert d["prompts"][0]["prompt_id"] == "w" and d["log_count"] >= 20
