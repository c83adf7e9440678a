"""Reading a long run back costs in proportion to its steps.

Counted in SQLite's own work (virtual machine instructions, through its progress handler),
not in seconds: the same on every machine. A run of four times the steps may cost about four
times as much to list, show and report, never sixteen times: finding each step's final
attempt once looked at every step of the run for every step (seconds for ``labctl runs`` at
10,000 steps, minutes for a lab's history).
"""

from __future__ import annotations

from eventkit import Script
from sqlalchemy import event

from labctl.store import Recorder, open_store, query

_EVERY = 100  # instructions per call of the handler


def _record(store, run_id: str, steps: int) -> None:
    rec = Recorder(store, commit_window=60.0)  # one commit at the run's end: quick to build
    s = Script(rec, run_id)
    s.start()
    for i in range(steps):
        s.step(f"s{i}", {"vdd": 0.75})
    s.step("s0", {"vdd": 0.75}, attempt=2)  # a retried step: its second attempt is final
    s.end()
    rec.close()


def _work(store, run_id: str) -> int:
    """SQLite instructions (in hundreds) to list the runs, show one and read its measurements."""
    count = [0]

    def tick() -> int:
        count[0] += 1
        return 0  # go on

    def hook(dbapi_conn, _record, _proxy) -> None:
        dbapi_conn.set_progress_handler(tick, _EVERY)

    engines = {id(e): e for e in (store.engine, store.read_engine)}.values()
    for engine in engines:
        event.listen(engine, "checkout", hook)
    try:
        runs = query.list_runs(store)
        detail = query.run_detail(store, run_id)
        rows = query.measurement_rows(store, run_id)
    finally:
        for engine in engines:
            event.remove(engine, "checkout", hook)
    mine = next(r for r in runs if r["id"] == run_id)
    assert mine["steps_passed"] == len(rows) == len({s["step_id"] for s in detail["steps"]})
    return count[0]


def test_listing_showing_and_reading_a_run_grow_linearly_with_its_steps(tmp_path):
    with open_store(tmp_path / "small.db") as small, open_store(tmp_path / "large.db") as large:
        _record(small, "run-small", 300)
        _record(large, "run-large", 1200)
        ratio = _work(large, "run-large") / _work(small, "run-small")
    assert ratio < 6, f"4x the steps cost {ratio:.1f}x the database work (quadratic would be 16x)"
