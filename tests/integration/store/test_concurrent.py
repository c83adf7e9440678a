"""Several writers (say, one process per DUT slot) share one database, and a reader follows."""

from __future__ import annotations

import time

from childproc import Child

from labctl.store import open_store, query
from labctl.store.testing import verify_after_kill


def test_three_writers_and_a_reader_at_once(db_url, tmp_path):
    go = tmp_path / "go"  # the writers start their steps together, once the reader has seen them open
    children = [Child(db_url, f"slot-{i}", "--steps", "8", "--per-step", "2000", "--go", str(go)) for i in range(3)]
    seen_running = set()
    with open_store(db_url) as reader:
        for c in children:
            assert c.wait_for("READY"), c.stderr
        assert {r["id"] for r in query.list_runs(reader, outcome="running")} == {"slot-0", "slot-1", "slot-2"}
        go.touch()
        while any(c.proc.poll() is None for c in children):  # reads never wait for the writers
            seen_running |= {r["id"] for r in query.list_runs(reader, outcome="running")}
            time.sleep(0.02)
        for c in children:
            assert c.finish() == 0, c.stderr
            assert "DONE passed True" in c.lines
        for i in range(3):
            kc = verify_after_kill(reader, f"slot-{i}")
            assert kc.outcome == "passed" and kc.integrity == "ok"
            assert sum(kc.measurement_counts.values()) == 8 * 2000 + 2
        assert len(query.list_runs(reader)) == 3
    assert seen_running <= {"slot-0", "slot-1", "slot-2"}  # (the writers may finish between two looks)
