"""The recorder against real databases: what is stored, and when it becomes visible to readers."""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
import threading
import time

import pytest
from eventkit import Script
from sqlalchemy import func, select, update

from labctl.engine import events as ev
from labctl.errors import StoreError
from labctl.store import Recorder, open_store, query
from labctl.store.schema import io_log, measurements, runs, samples, steps


def poll(fn, *, timeout: float = 15.0, every: float = 0.05):
    """Call ``fn`` until it returns something truthy (no timing assertion: just a bound)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = fn()
        if got:
            return got
        time.sleep(every)
    raise AssertionError(f"condition not met within {timeout} s")


def count(store, table, **where):
    with store.read_engine.connect() as conn:
        q = select(func.count()).select_from(table)
        for k, v in where.items():
            q = q.where(table.c[k] == v)
        return conn.execute(q).scalar()


def test_a_full_run_is_stored_with_every_context_column(store, tmp_path):
    rec = Recorder(store)
    s = Script.on_bus(rec, run_id="full-1")
    s.start()
    s.step("power_on", {"vin": 12.0}, group="setup", low=11.5, high=12.5)
    key = s.step("rails", {"vdd": 0.75, "vddq": 0.81}, outcome=ev.StepOutcome.FAIL)
    s.step("rails", {"vdd": 0.75, "vddq": 0.79}, attempt=2)
    soak = s.step("soak", {}, end=False)
    for i in range(5):
        s.emit(ev.SampleRecorded, step_key=soak, series="chamber_temp", value=44.0 + i / 10, unit="degC")
    s.emit(ev.LogMessage, level="warning", message="chamber slow to settle", step_key=soak)
    s.emit(ev.Progress, step_key=soak, text="chamber 44.4/45.0 degC", fraction=0.5)
    s.emit(ev.PromptAsked, step_key=soak, prompt_id="fan", text="Is the fan spinning?", choices=("yes", "no"))
    s.emit(ev.PromptAnswered, step_key=soak, prompt_id="fan", answer="yes")
    s.emit(ev.InstrumentErrorReported, step_key=soak, role="psu", code=-222, message="Data out of range")
    shot = tmp_path / "eye.png"
    shot.write_bytes(b"\x89PNG fake eye diagram")
    s.emit(ev.AttachmentAdded, step_key=soak, name="eye", media_type="image/png", path=str(shot))
    rec.add_session_log("full-1", [{"t": s.t, "instrument": "psu", "resource": "TCPIP0::x", "kind": "query",
                                    "text": "MEAS:VOLT?"}, {"t": s.t, "instrument": "psu", "resource": "TCPIP0::x",
                                                             "kind": "reply", "text": "0.75", "elapsed_s": 0.002}])
    s.emit(ev.StepEnded, step_key=soak, outcome=ev.StepOutcome.PASS)
    s.end(ev.RunOutcome.FAILED)
    assert s.bus.errors == [] and rec.saved

    [row] = query.list_runs(store)
    assert (row["id"], row["outcome"], row["dut_serial"], row["station"]) == ("full-1", "failed", "DUT-1", "bench-1")
    # the plan's steps, each by its final attempt: rails failed once, then passed on its retry
    assert (row["steps_passed"], row["steps_failed"]) == (3, 0) and row["duration"] > 0
    d = query.run_detail(store, "full")  # a unique prefix is enough
    assert d["run"]["plan_text"] == "name: power-smoke\n" and d["run"]["parameters"] == {"vout": 0.75}
    assert d["instruments"][0]["asset_serial"] == "PSU-007"
    assert d["prompts"][0]["answer"] == "yes" and d["prompts"][0]["choices"] == ["yes", "no"]
    assert d["instrument_errors"][0]["code"] == -222
    assert d["attachments"][0]["sha256"] == hashlib.sha256(shot.read_bytes()).hexdigest()
    assert d["log_count"] == 1
    # final attempts only: the failed first attempt of "rails" is superseded by attempt 2
    assert [(m["name"], m["attempt"]) for m in d["measurements"]] == [("vin", 1), ("vdd", 2), ("vddq", 2)]
    assert count(store, io_log, run_id="full-1") == 2

    df = query.measurements(store, "full-1", final_only=False)
    assert len(df) == 5
    assert {"plan_name", "plan_version", "plan_hash", "station", "dut_serial", "step_key", "corner_index",
            "attempt", "low", "high", "verdict", "rail", "t"} <= set(df.columns)
    failed = df[df.verdict == "FAIL"]
    assert list(failed.step_key) == [key] and list(failed.value) == [0.81]
    assert str(df.t.dtype).startswith("datetime64")
    sdf = query.samples(store, "full-1", series="chamber_temp")
    assert list(sdf.value) == [44.0, 44.1, 44.2, 44.3, 44.4]
    steps_df = query.steps(store, "full-1")
    assert list(steps_df[steps_df.step_id == "rails"].final) == [False, True]
    assert len(query.runs(store, outcome="failed")) == 1 and len(query.runs(store, outcome="passed")) == 0


def test_a_step_is_committed_before_publish_of_its_end_returns(store, db_url):
    reader = open_store(db_url, mark_interrupted=False)
    seen: list[tuple[str, int]] = []

    def probe(e: ev.Event) -> None:  # subscribed after the recorder: runs when it is done
        if isinstance(e, ev.MeasurementRecorded | ev.StepEnded):
            seen.append((e.kind, count(reader, measurements, run_id="dur-1")))

    s = Script.on_bus(Recorder(store), probe, run_id="dur-1")
    s.start()
    assert reader.resume_info("dur-1").outcome == "running"  # the run row is there at once
    s.step("a", {"x": 0.75, "y": 0.76})
    s.step("b", {"z": 0.77})
    reader.close()
    assert seen == [("MeasurementRecorded", 0), ("MeasurementRecorded", 0), ("StepEnded", 2),
                    ("MeasurementRecorded", 2), ("StepEnded", 3)]


def test_samples_and_the_running_step_reach_readers_without_further_events(store, db_url):
    rec = Recorder(store, flush_interval=0.2)
    s = Script(rec, "flush-1")
    s.start()
    key = s.step("soak", {}, end=False)
    for i in range(3):
        s.emit(ev.SampleRecorded, step_key=key, series="temp", value=float(i))
    with open_store(db_url, mark_interrupted=False) as reader:
        poll(lambda: count(reader, samples, run_id="flush-1") == 3)
        assert count(reader, steps, run_id="flush-1") == 1
    rec.close()


def test_heartbeat_is_refreshed_while_open_and_stops_at_run_end(store):
    rec = Recorder(store, heartbeat_interval=0.2)
    s = Script(rec, "hb-1", t0=time.time() - 1e6)  # the run's clock may be simulated
    s.start()

    def heartbeat():
        with store.read_engine.connect() as conn:
            return conn.execute(select(runs.c.heartbeat_at).where(runs.c.id == "hb-1")).scalar()

    first = heartbeat()
    assert abs(first - time.time()) < 3600  # heartbeats are wall-clock time
    poll(lambda: heartbeat() > first)
    s.end()
    assert rec._keeper is None  # the background thread is gone with the last open run


def test_readers_are_not_blocked_by_an_open_write_transaction(store, db_url):
    Script(Recorder(store), "busy-1").start()
    result: list[int] = []
    with store.engine.begin() as conn:  # a writer mid-commit (SQLite: holds the write lock)
        conn.execute(update(runs).where(runs.c.id == "busy-1").values(message="writing"))
        with open_store(db_url, mark_interrupted=False) as reader:
            t = threading.Thread(target=lambda: result.append(len(query.list_runs(reader))))
            t.start()
            t.join(timeout=20)
    assert result == [1]


def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_runs_of_dead_owners_are_interrupted_but_live_ones_never(store, db_url):
    now = time.time()
    for rid, host, t in (("far-fresh", "lab-pc-7", now), ("far-stale", "lab-pc-8", now - 3600),
                         ("here-dead", None, now), ("here-reused", None, now), ("here-alive", None, now)):
        rec = Recorder(store)
        Script(rec, rid, t0=t - 0.5).start(**({"host": host, "pid": 4242} if host else {}))
        rec.close()
    with store.engine.begin() as conn:
        conn.execute(update(runs).where(runs.c.id == "far-stale").values(heartbeat_at=now - 3600))
        conn.execute(update(runs).where(runs.c.id == "here-dead").values(pid=dead_pid()))
        conn.execute(update(runs).where(runs.c.id == "here-reused").values(owner_token="12345"))
    with open_store(db_url) as again:
        outcomes = {r["id"]: r["outcome"] for r in query.list_runs(again)}
        info = again.resume_info("here-dead")
        alive = again.resume_info("here-alive")
    assert outcomes == {"far-fresh": "running", "far-stale": "interrupted", "here-dead": "interrupted",
                        "here-reused": "interrupted", "here-alive": "running"}
    assert info.resumable and "gone" in query.run_detail(store, "here-dead")["run"]["message"]
    assert not alive.resumable and "still running" in alive.reason


def test_resume_continues_the_same_run_without_duplicates(store, db_url):
    rec = Recorder(store)
    s = Script(rec, "res-1")
    s.start()
    s.step("power_on", {"vin": 12.0}, group="setup", low=11, high=13)
    s.step("s1", {"a": 0.75})
    s.step("s2", {"b": 0.76})
    cut = s.step("s3", {"c": 0.77}, end=False)  # killed here: measurements not committed
    rec.flush()
    rec.close()
    with store.engine.begin() as conn:
        conn.execute(update(runs).where(runs.c.id == "res-1").values(pid=dead_pid()))
    store.mark_interrupted()
    info = store.resume_info("res-1")
    assert info.outcome == "interrupted" and info.resumable
    assert info.finished == {"setup/power_on[0]": "PASS", "steps/s1[0]": "PASS", "steps/s2[0]": "PASS"}
    assert [(c.step_key, c.next_attempt) for c in info.cut_off] == [(cut, 2)]
    assert info.next_session == 1 and info.plan_text == "name: power-smoke\n"

    rec2 = Recorder(store)
    s2 = Script.on_bus(rec2, run_id="res-1")
    s2.start(resumed_from="res-1", plan_hash="b" * 64)  # plan changed: resumed with --force
    s2.step("power_on", {"vin": 12.1}, group="setup", low=11, high=13)
    s2.step("s3", {"c": 0.77}, attempt=info.next_attempt(cut))
    s2.end()
    assert s2.bus.errors == []
    d = query.run_detail(store, "res-1")
    assert d["run"]["outcome"] == "passed" and d["run"]["sessions"] == 2
    assert [(x["session"], x["plan_changed"]) for x in d["sessions"]] == [(0, False), (1, True)]
    assert sorted((m["name"], m["session"]) for m in d["measurements"]) == [
        ("a", 0), ("b", 0), ("c", 1), ("vin", 1)]
    assert count(store, measurements, run_id="res-1") == 5  # vin twice (setup re-ran), c once
    s3 = [(x["session"], x["attempt"], x["outcome"], x["final"]) for x in d["steps"] if x["step_id"] == "s3"]
    assert s3 == [(0, 1, "INTERRUPTED", False), (1, 2, "PASS", True)]


def test_a_resumed_runs_duration_is_its_sessions_not_the_gap_between_them(store):
    """A run cut off and resumed an hour later ran for its two sessions (`labctl runs`, the
    exports): the hour between them is not its duration."""
    from labctl.report.record import load_records

    rec = Recorder(store)
    s = Script(rec, "gap-1", t0=time.time() - 100.0)
    s.start()
    s.step("s1", {"a": 0.75})
    s.step("s2", {"b": 0.76}, end=False)  # killed here
    rec.flush()
    rec.close()
    with store.engine.begin() as conn:
        conn.execute(update(runs).where(runs.c.id == "gap-1").values(pid=dead_pid()))
    store.mark_interrupted()
    s2 = Script.on_bus(Recorder(store), run_id="gap-1", t0=s.t + 3600.0)
    s2.start(resumed_from="gap-1")
    s2.step("s2", {"b": 0.76}, attempt=2)
    s2.end()
    assert s2.bus.errors == []
    sessions = query.run_detail(store, "gap-1")["sessions"]
    ran = sum(x["ended_at"] - x["started_at"] for x in sessions)
    assert ran < 200 and len(sessions) == 2  # (the first ends at its last heartbeat, about now)
    [row] = [r for r in query.list_runs(store) if r["id"] == "gap-1"]
    assert row["duration"] == pytest.approx(ran)
    assert float(query.runs(store).set_index("id").loc["gap-1", "duration_s"]) == pytest.approx(ran)
    [record] = load_records(store, ["gap-1"])
    assert record.duration == pytest.approx(ran)
    assert query.run_detail(store, "gap-1")["run"]["duration"] == pytest.approx(ran)  # `labctl runs show`


def test_a_second_run_with_an_existing_id_is_refused(store):
    Script(Recorder(store), "dup-1").start()
    s = Script.on_bus(Recorder(store), run_id="dup-1")
    s.start()
    assert isinstance(s.bus.errors[0][1], StoreError)
    assert "already exists" in str(s.bus.errors[0][1])


def test_events_for_a_run_not_started_are_an_error(store):
    with pytest.raises(StoreError, match="has not started"):
        Recorder(store)(ev.LogMessage(run_id="nope", time=0.0, level="info", message="x"))


@pytest.mark.timeout(120)
def test_ending_runs_never_deadlocks_with_the_background_flush(store):
    """RunEnded stops the background thread; it must not wait for a thread that waits for it."""
    rec = Recorder(store, flush_interval=0.002, heartbeat_interval=0.004)
    for i in range(40):
        s = Script(rec, f"quick-{i}")
        s.start()
        key = s.step("s", {}, end=False)
        for _ in range(5):
            s.emit(ev.SampleRecorded, step_key=key, series="t", value=1.0)
            time.sleep(0.001)  # let the background flush take the lock
        s.emit(ev.StepEnded, step_key=key, outcome=ev.StepOutcome.PASS)
        s.end()
    assert rec._keeper is None
    assert len(query.list_runs(store, outcome="passed", limit=100)) == 40


def test_a_live_run_marked_interrupted_by_mistake_takes_itself_back(store):
    rec = Recorder(store, heartbeat_interval=0.1)
    Script(rec, "back-1").start()
    with store.engine.begin() as conn:  # e.g. another station judged our heartbeat stale
        conn.execute(update(runs).where(runs.c.id == "back-1").values(outcome="interrupted", ended_at=1.0))
    poll(lambda: query.list_runs(store)[0]["outcome"] == "running")
    assert query.list_runs(store)[0]["ended_at"] is None
    rec.close()


def test_resuming_a_run_that_is_still_alive_is_refused(store):
    rec = Recorder(store)
    Script(rec, "live-1").start()  # this process owns it and is alive
    s = Script.on_bus(Recorder(store), run_id="live-1")
    s.start(resumed_from="live-1")
    assert isinstance(s.bus.errors[0][1], StoreError)
    assert "still running" in str(s.bus.errors[0][1])
    assert store.next_session("live-1") == 1  # no second session was opened
    rec.close()


def test_a_watcher_follows_a_run_while_it_is_written(store, db_url):
    rec = Recorder(store)
    s = Script(rec, "watch-1")
    s.start()
    s.step("a", {"x": 0.75, "y": 0.76})
    with open_store(db_url, mark_interrupted=False) as watcher:
        changes, cur = query.follow(watcher, "watch-1")
        assert changes["run"]["outcome"] == "running"
        assert [m["name"] for m in changes["measurements"]] == ["x", "y"]
        key = s.step("b", {"z": 0.77}, end=False)
        s.emit(ev.LogMessage, level="info", message="soaking", step_key=key)
        s.emit(ev.SampleRecorded, step_key=key, series="temp", value=45.0)
        rec.flush()
        changes, cur = query.follow(watcher, "watch-1", cur)
        assert changes["measurements"] == []  # step b's measurements come with its end
        assert [x["value"] for x in changes["samples"]] == [45.0]
        assert [x["message"] for x in changes["logs"]] == ["soaking"]
        assert [x["outcome"] for x in changes["steps"]] == ["PASS", None]
        s.emit(ev.StepEnded, step_key=key, outcome=ev.StepOutcome.PASS)
        s.end()
        changes, cur = query.follow(watcher, "watch-1", cur)
        assert [m["name"] for m in changes["measurements"]] == ["z"]
        assert changes["samples"] == [] and changes["logs"] == []
        assert changes["run"]["outcome"] == "passed"


def test_a_watcher_of_a_long_run_asks_for_counts_and_the_newest_rows_and_misses_nothing(store, db_url):
    """``follow(every_step=False, newest=N)`` (the TUI's watch mode) reads the step counts and
    the running step instead of every step, and only the newest N measurements, with every
    one since the cursor counted by verdict: what the full answer gives, cut down; the cursor
    is the full answer's, so the next poll starts where that one would."""
    from collections import Counter

    rec = Recorder(store, commit_window=60.0)
    s = Script(rec, "watch-long")
    s.start()
    for i in range(40):
        s.step(f"s{i}", {"vdd": 0.9 if i % 7 == 3 else 0.75, "vio": 0.75},
               outcome=ev.StepOutcome.FAIL if i % 7 == 3 else ev.StepOutcome.PASS)
    s.step("safe", {}, group="teardown", end=False)  # (an open safe state is no plan step)
    s.emit(ev.StepStarted, step_key="teardown/safe_psu[0]#1", step_id="safe_psu", group="teardown",
           check="safe_state", corner={}, corner_index=0, attempt=1)
    rec.flush()
    with open_store(db_url, mark_interrupted=False) as watcher:
        full, cur_full = query.follow(watcher, "watch-long")
        lean, cur = query.follow(watcher, "watch-long", every_step=False, newest=5)
        assert "steps" not in lean and dataclasses.replace(cur, settled=0, settled_counts=()) == cur_full
        plan_steps = [x for x in full["steps"] if x["check"] != "safe_state"]
        assert lean["step_counts"] == dict(Counter(x["outcome"] for x in plan_steps)) == {"PASS": 34, "FAIL": 6, None: 1}
        assert lean["current_step"] == plan_steps[-1] and lean["current_step"]["step_key"] == "teardown/safe[0]#1"
        assert lean["measurements"] == full["measurements"][-5:]
        assert lean["measurement_counts"] == dict(Counter(m["verdict"] for m in full["measurements"])) \
            == {"PASS": 74, "FAIL": 6}
        assert {k: v for k, v in lean.items() if k not in ("step_counts", "current_step", "measurements",
                                                          "measurement_counts")} \
            == {k: v for k, v in full.items() if k not in ("steps", "measurements")}
        s.step("s40", {"vdd": 0.75})
        rec.flush()
        lean, cur = query.follow(watcher, "watch-long", cur, every_step=False, newest=5)
        assert [m["name"] for m in lean["measurements"]] == ["vdd"] and lean["measurement_counts"] == {"PASS": 1}
        lean, cur = query.follow(watcher, "watch-long", cur, every_step=False, newest=5)
        assert lean["measurements"] == [] and lean["measurement_counts"] == {}
    rec.close()


def test_a_watchers_step_counts_stay_right_poll_after_poll_reading_only_the_new_rows(store, db_url):
    """Each poll of the watch mode counts the steps settled before from its cursor and reads only
    the rows after them: a step still running is counted as running until it ends, another
    run's steps written in between are not this run's, and every poll's counts and running
    step are what a first poll (no cursor) finds."""
    from collections import Counter

    rec = Recorder(store, commit_window=60.0)
    main, other = Script(rec, "watch-counts"), Script(rec, "watch-other")
    main.start()
    other.start()
    with open_store(db_url, mark_interrupted=False) as watcher:
        def poll(cur):
            rec.flush()
            lean, cur = query.follow(watcher, "watch-counts", cur, every_step=False, newest=3)
            fresh, _ = query.follow(watcher, "watch-counts", every_step=False, newest=3)
            full, _ = query.follow(watcher, "watch-counts")
            assert lean["step_counts"] == fresh["step_counts"] == dict(Counter(x["outcome"] for x in full["steps"]))
            assert lean["current_step"] == fresh["current_step"]
            return lean, cur

        lean, cur = poll(None)
        assert lean["step_counts"] == {} and lean["current_step"] is None
        for i in range(5):
            main.step(f"a{i}", {"v": 0.75}, outcome=ev.StepOutcome.FAIL if i == 2 else ev.StepOutcome.PASS)
            other.step(f"o{i}", {"v": 0.75})
        lean, cur = poll(cur)
        assert lean["step_counts"] == {"PASS": 4, "FAIL": 1} and cur.settled > 0
        key = main.step("long", {}, end=False)
        lean, cur = poll(cur)
        assert lean["step_counts"] == {"PASS": 4, "FAIL": 1, None: 1} and lean["current_step"]["step_key"] == key
        settled = cur.settled
        for i in range(3):
            other.step(f"p{i}", {"v": 0.75})
        lean, cur = poll(cur)
        assert cur.settled == settled  # (nothing of this run settled since: the running step holds it)
        # a later step settles while this one is open (a session cut off, its step closed
        # later as INTERRUPTED, beside the resumed session's): the open one is read again
        main.step("b", {"v": 0.75})
        lean, cur = poll(cur)
        assert lean["step_counts"] == {"PASS": 5, "FAIL": 1, None: 1} and cur.settled == settled
        main.emit(ev.StepEnded, step_key=key, outcome=ev.StepOutcome.ERROR)
        lean, cur = poll(cur)
        assert lean["step_counts"] == {"PASS": 5, "FAIL": 1, "ERROR": 1} and lean["current_step"] is None
        lean, cur = poll(cur)  # nothing new
        assert lean["step_counts"] == {"PASS": 5, "FAIL": 1, "ERROR": 1}
    rec.close()


def test_a_watcher_asks_for_the_newest_samples_of_each_series_and_the_cursor_passes_them_all(store, db_url):
    """``follow(newest_samples=N)``: of the samples since the cursor, the newest N of each series
    (in the order they were recorded); the cursor is where the full answer leaves it."""
    rec = Recorder(store)
    s = Script(rec, "watch-soak")
    s.start()
    key = s.step("soak", {}, end=False)
    for i in range(6):
        s.emit(ev.SampleRecorded, step_key=key, series="die", value=40.0 + i, unit="degC")
        if i % 2:
            s.emit(ev.SampleRecorded, step_key=key, series="hbm", value=30.0 + i, unit="degC")
    rec.flush()
    with open_store(db_url, mark_interrupted=False) as watcher:
        full, cur_full = query.follow(watcher, "watch-soak")
        lean, cur = query.follow(watcher, "watch-soak", newest_samples=2)
        assert cur == cur_full and [(x["series"], x["value"]) for x in full["samples"]][-1] == ("hbm", 35.0)
        assert [(x["series"], x["value"]) for x in lean["samples"]] == [
            ("hbm", 33.0), ("die", 44.0), ("die", 45.0), ("hbm", 35.0)]
        assert lean["samples"] == [x for x in full["samples"] if x in lean["samples"]]  # (rows as the full answer has them)
        s.emit(ev.SampleRecorded, step_key=key, series="die", value=46.0, unit="degC")
        rec.flush()
        lean, cur = query.follow(watcher, "watch-soak", cur, newest_samples=2)
        assert [(x["series"], x["value"]) for x in lean["samples"]] == [("die", 46.0)]
    rec.close()


def test_one_recorder_follows_two_duts_interleaved(store):
    """Two fixture slots in one process share a bus: events are routed by run id."""
    bus = ev.EventBus()
    bus.subscribe(Recorder(store))
    a, b = Script(bus, "slot-a"), Script(bus, "slot-b")
    a.start(dut="DUT-A", slot="A")
    b.start(dut="DUT-B", slot="B")
    ka = a.step("rails", {"vdd": 0.75}, end=False)
    kb = b.step("rails", {"vdd": 0.90}, end=False)
    b.emit(ev.StepEnded, step_key=kb, outcome=ev.StepOutcome.FAIL)
    a.emit(ev.StepEnded, step_key=ka, outcome=ev.StepOutcome.PASS)
    b.end(ev.RunOutcome.FAILED)
    a.end()
    assert bus.errors == []
    df = query.measurements(store)
    assert sorted(zip(df.dut_serial, df.slot, df.value, df.verdict, strict=True)) == [
        ("DUT-A", "A", 0.75, "PASS"), ("DUT-B", "B", 0.90, "FAIL")]
    assert {r["id"]: r["outcome"] for r in query.list_runs(store)} == {"slot-a": "passed", "slot-b": "failed"}


def test_group_commit_stores_whole_steps_within_the_window_and_everything_at_the_run_end(store):
    """With a commit window the run never waits for a commit at a step end: the finished steps
    reach the database together (each with its measurements and its end), soon after."""
    rec = Recorder(store, commit_window=0.2)
    s = Script.on_bus(rec, run_id="group-1")
    s.start()
    keys = [s.step("rail", {"vdd": 0.75, "vddq": 0.79}, corner_index=i) for i in range(50)]

    def ended_steps():
        with store.read_engine.connect() as conn:
            rows = conn.execute(select(steps.c.step_key, steps.c.outcome).where(steps.c.run_id == "group-1")).all()
        return rows

    stored = poll(lambda: len(ended_steps()) == 50 and ended_steps())  # the background thread committed them
    assert {k for k, _ in stored} == set(keys) and {o for _, o in stored} == {"PASS"}
    assert count(store, measurements, run_id="group-1") == 100
    # a step still running keeps its measurements out of the database until it ends
    open_key = s.step("rail", {"vdd": 0.75}, corner_index=99, end=False)
    time.sleep(0.5)
    with store.read_engine.connect() as conn:
        held = conn.execute(select(func.count()).select_from(measurements).join(steps, measurements.c.step_ref == steps.c.id)
                            .where(steps.c.step_key == open_key)).scalar()
    assert held == 0
    s.emit(ev.StepEnded, step_key=open_key, outcome=ev.StepOutcome.PASS, duration=1.0)
    s.end()  # RunEnded commits at once: nothing is left pending
    assert count(store, measurements, run_id="group-1") == 101
    with store.read_engine.connect() as conn:
        assert conn.execute(select(runs.c.outcome).where(runs.c.id == "group-1")).scalar() == "passed"
    rec.close()


def test_a_run_whose_end_waits_in_the_spool_is_not_resumed_before_sync(tmp_path, labctl):
    """The database failed during the run and its end went to the local spool: the database
    reads the run `interrupted` (its owner is gone), but resuming it then would add a second
    session over an end the spool holds. Resume says so and points at `labctl sync`."""
    import os

    from labctl.store.location import resolve_db
    from labctl.store.sink import Batch
    from labctl.store.spool import Spool

    db, home = tmp_path / "r.db", tmp_path / "home"
    with open_store(str(db)) as store:
        rec = Recorder(store)
        Script(rec, "spooled-1").start()
        rec.close()
        with store.engine.begin() as conn:
            conn.execute(update(runs).where(runs.c.id == "spooled-1").values(pid=dead_pid()))
    spool = Spool(home / "spool.db")
    spool.append(resolve_db(str(db)), Batch("spooled-1", 0, [(9, ev.RunEnded(
        run_id="spooled-1", time=time.time(), outcome=ev.RunOutcome.PASSED))]))
    spool.close()
    res = labctl("resume", "spooled", "--db", str(db), env={**os.environ, "LABCTL_HOME": str(home)})
    assert res.returncode == 4, res.stderr
    assert "cannot resume run spooled-1: 1 of its records wait in the local spool" in res.stderr, res.stderr
    assert "labctl sync" in res.stderr


def test_a_run_that_exists_only_in_the_spool_is_pointed_at_not_denied(tmp_path, labctl):
    """The database stalled as the run started, then the run was killed: the database has no
    such run; `runs show` and `resume` say where its records are (`labctl sync`), and the
    list of runs says that some wait (they had only said "no run")."""
    import os

    from labctl.store.location import resolve_db
    from labctl.store.sink import Batch
    from labctl.store.spool import Spool

    db, home = tmp_path / "r.db", tmp_path / "home"
    env = {**os.environ, "LABCTL_HOME": str(home)}
    with open_store(str(db)):
        pass
    spool = Spool(home / "spool.db")
    spool.append(resolve_db(str(db)), Batch("only-spooled-7", 0, [(1, ev.RunEnded(
        run_id="only-spooled-7", time=time.time(), outcome=ev.RunOutcome.ABORTED))]))
    spool.close()
    for args in (("runs", "show", "only-spooled"), ("resume", "only-spooled-7")):
        res = labctl(*args, "--db", str(db), env=env)
        assert res.returncode != 0 and "no run 'only-spooled" in res.stderr, res.stderr
        assert "wait in this machine's spool" in res.stderr and "labctl sync --all" in res.stderr, res.stderr
    res = labctl("runs", "--db", str(db), env=env)
    assert res.returncode == 0 and "1 run(s) of this database wait in this machine's spool" in res.stderr, res.stderr


def test_an_interrupted_run_ends_no_earlier_than_its_last_recorded_step(store, db_url):
    """The owner died between heartbeats, after a step was committed: the run's end is that
    step's end, not the older heartbeat (a run that "ended" before its own steps did)."""
    rec = Recorder(store)
    s = Script(rec, "late-step")
    s.start()
    s.step("a", {"v": 0.75})
    s.tick(30.0)  # 30 s after the last heartbeat
    s.step("b", {"v": 0.76})
    step_end = s.t
    row = _killed_and_reopened(rec, store, db_url, "late-step")
    assert row["outcome"] == "interrupted"
    assert row["ended_at"] == pytest.approx(step_end, abs=1e-3)


def _killed_and_reopened(rec: Recorder, store, db_url: str, run_id: str) -> dict:  # noqa: ANN001
    """The run's row once its owner is dead and the store is opened again (which marks it)."""
    rec.close()
    with store.engine.begin() as conn:
        conn.execute(update(runs).where(runs.c.id == run_id).values(pid=dead_pid()))
    with open_store(db_url) as again:
        [row] = [r for r in query.list_runs(again) if r["id"] == run_id]
    return row


def test_an_interrupted_run_ends_no_earlier_than_its_last_sample_or_instrument_exchange(store, db_url):
    """Killed during a soak: samples and instrument exchanges were recorded after the last step
    start and the last heartbeat; the run's end is the last of them (an export showed the run
    ending seconds before its own samples)."""
    rec = Recorder(store, flush_interval=0.05)
    s = Script(rec, "late-sample")
    s.start()
    key = s.step("soak", {"v": 0.75}, end=False)
    s.tick(20.0)
    s.emit(ev.SampleRecorded, step_key=key, series="temp", value=45.0)
    sample_t = s.t
    rec.add_session_log("late-sample", [{"t": s.tick(3.0), "instrument": "chamber", "resource": "ASRL/dev/x",
                                         "kind": "query", "text": "TEMP?"}], step_key=key)
    io_t = s.t
    rec.flush()
    row = _killed_and_reopened(rec, store, db_url, "late-sample")
    assert row["outcome"] == "interrupted"
    assert io_t > sample_t and row["ended_at"] == pytest.approx(io_t, abs=1e-3)


def test_compare_matches_a_step_moved_between_groups_and_orders_the_same_both_ways(store):
    """`runs compare` (and the TUI's): a step that moved from setup to steps between two plan
    versions is one row, not two; a changed verdict ranks above a measurement that only one run
    has, whichever run is A."""
    rec = Recorder(store)
    a = Script(rec, "cmp-a")
    a.start()
    a.step("power_on", {"vin": 12.0}, group="setup", low=11, high=13)
    a.step("fan", {"rpm": 0.75})
    a.step("label", {"v": 0.9}, outcome=ev.StepOutcome.FAIL)
    a.end(ev.RunOutcome.FAILED)
    b = Script(rec, "cmp-b")
    b.start()
    b.step("power_on", {"vin": 12.1}, low=11, high=13)
    b.step("label", {"v": 0.75})
    b.end()
    rec.close()
    for first, second in (("cmp-a", "cmp-b"), ("cmp-b", "cmp-a")):
        rows = query.compare_runs(store, first, second)
        assert [r["name"] for r in rows] == ["v", "rpm", "vin"], (first, rows)
        [vin] = [r for r in rows if r["name"] == "vin"]
        assert vin["value_a"] is not None and vin["value_b"] is not None


def test_records_synced_after_their_run_was_marked_interrupted_close_it_again(store, tmp_path):
    """A run killed while its database was failing: `labctl runs` marked it interrupted at its
    last sign of life in the database; `labctl sync` then pushed the spooled rest, a step that
    was running when it died among them. That step is INTERRUPTED, not running for ever, and the
    run ends no earlier than its last record (it had ended before them)."""
    from labctl.store.sink import DbSink
    from labctl.store.spool import Spool
    from labctl.store.store import DEFAULT_HEARTBEAT_INTERVAL

    spool_path = tmp_path / "spool.db"
    rec = Recorder(store, spool_path=spool_path)
    s = Script(rec, "late-1", t0=time.time() - 60)
    s.start()
    s.step("s1", {"a": 0.75})
    rec.spooled = True  # the database fails: the rest goes to the journal
    s.step("s2", {"a": 0.76})
    cut = s.step("s3", {"a": 0.77}, end=False)
    s.emit(ev.LogMessage, level="info", message="still soaking", step_key=cut)
    last = s.t
    rec.flush()
    rec.close()
    with store.engine.begin() as conn:
        conn.execute(update(runs).where(runs.c.id == "late-1").values(pid=dead_pid(), heartbeat_at=s.t - 50))
    assert store.mark_interrupted() == ["late-1"]  # (`labctl runs` before the sync)
    spool = Spool(spool_path)
    report = spool.replay(DbSink(store, heartbeat_interval=DEFAULT_HEARTBEAT_INTERVAL), None)
    store.close_synced(report.runs)  # what `labctl sync` does after the replay
    spool.close()
    d = query.run_detail(store, "late-1")
    assert d["run"]["outcome"] == "interrupted" and d["run"]["ended_at"] >= last
    assert [(x["step_id"], x["outcome"]) for x in d["steps"]] == [
        ("s1", "PASS"), ("s2", "PASS"), ("s3", "INTERRUPTED")]
