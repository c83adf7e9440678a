"""PostgreSQL goes away mid-run: results spool locally, `labctl sync` pushes them, once."""

from __future__ import annotations

import shutil

import pytest
from eventkit import Script
from sqlalchemy import func, select
from sqlalchemy.engine import make_url
from tcpproxy import TcpProxy

from labctl.engine import events as ev
from labctl.errors import StoreError
from labctl.store import Recorder, open_store, query
from labctl.store.location import resolve_db
from labctl.store.schema import measurements, samples
from labctl.store.spool import Spool
from labctl.store.testing import temporary_database


@pytest.fixture
def pg_url(tmp_path):
    with temporary_database("postgresql", tmp_path) as url:
        yield resolve_db(url)


def via_proxy(url: str, proxy: TcpProxy) -> str:
    return make_url(url).set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)


def totals(url: str, run_id: str) -> tuple[int, int, str]:
    with open_store(url, mark_interrupted=False) as store:
        with store.read_engine.connect() as conn:
            m = conn.execute(select(func.count()).where(measurements.c.run_id == run_id)).scalar()
            s = conn.execute(select(func.count()).where(samples.c.run_id == run_id)).scalar()
        return m, s, query.list_runs(store)[0]["outcome"]


def run_through_outage(url: str, spool_path, run_id: str = "outage-1") -> Recorder:
    """Record a run whose database connection dies after the first step."""
    u = make_url(url)
    proxy = TcpProxy(u.host, u.port)
    store = open_store(via_proxy(url, proxy))
    rec = Recorder(store, spool_path=spool_path)
    s = Script.on_bus(rec, run_id=run_id)
    s.start()
    s.step("s1", {"a": 0.75, "b": 0.76})
    proxy.cut()  # PostgreSQL unreachable from here on
    key = s.step("s2", {"c": 0.77, "d": 0.9}, end=False)
    s.emit(ev.SampleRecorded, step_key=key, series="temp", value=45.0)
    s.emit(ev.StepEnded, step_key=key, outcome=ev.StepOutcome.FAIL)
    s.step("s3", {"e": 0.78})
    s.end(ev.RunOutcome.FAILED)
    assert s.bus.errors == []  # nothing lost, so nothing to complain about to the engine
    assert not rec.saved and rec.spooled and not rec.lost
    assert "failed" in rec.problem
    rec.close()
    store.close()
    return rec


def test_results_spool_during_an_outage_and_sync_pushes_them_exactly_once(pg_url, tmp_path, labctl):
    spool_path = tmp_path / "spool.db"
    run_through_outage(pg_url, spool_path)
    assert totals(pg_url, "outage-1") == (2, 0, "running")  # only what was committed before the cut
    pending = Spool(spool_path).pending()
    assert [(run, n > 0) for _, run, n in pending] == [("outage-1", True)]

    backup = tmp_path / "spool-copy.db"
    shutil.copy(spool_path, backup)
    res = labctl("sync", "--db", pg_url, "--spool", str(spool_path))
    assert res.returncode == 0, res.stderr
    assert "stay spooled" in res.stdout  # the batches were meant for the proxy's address
    res = labctl("sync", "--db", pg_url, "--spool", str(spool_path), "--all")
    assert res.returncode == 0, res.stderr
    assert "outage-1" in res.stdout and "synced" in res.stdout
    assert totals(pg_url, "outage-1") == (5, 1, "failed")

    res = labctl("sync", "--spool", str(spool_path))
    assert res.returncode == 0 and "nothing to sync" in res.stdout

    shutil.copy(backup, spool_path)  # the same journal pushed twice: still no duplicates
    res = labctl("sync", "--db", pg_url, "--spool", str(spool_path), "--all")
    assert res.returncode == 0, res.stderr
    assert totals(pg_url, "outage-1") == (5, 1, "failed")
    with open_store(pg_url) as store:
        d = query.run_detail(store, "outage-1")
    assert [m["name"] for m in d["measurements"]] == ["d", "a", "b", "c", "e"]  # the failure first
    assert [s["outcome"] for s in d["steps"]] == ["PASS", "FAIL", "PASS"]


def test_sync_to_the_recorded_target_needs_no_options_when_it_is_back(pg_url, tmp_path):
    spool_path = tmp_path / "spool.db"
    spool = Spool(spool_path)
    with open_store(pg_url) as store:
        rec = Recorder(store, spool_path=spool_path)
        rec.spooled = True  # as if the database had failed: everything goes to the journal
        Script(rec, "later-1").start()
        rec.close()
    assert spool.pending()[0][1] == "later-1"
    from click.testing import CliRunner

    from labctl.cli.runs import sync

    result = CliRunner().invoke(sync, ["--spool", str(spool_path)])
    assert result.exit_code == 0, result.output
    assert "synced" in result.output and spool.pending() == []
    assert totals(pg_url, "later-1")[2] == "running"  # its writer (this process) is alive


def test_when_the_spool_fails_too_the_recorder_says_results_were_lost(pg_url, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    u = make_url(pg_url)
    proxy = TcpProxy(u.host, u.port)
    store = open_store(via_proxy(pg_url, proxy))
    rec = Recorder(store, spool_path=blocker / "spool.db")
    s = Script.on_bus(rec, run_id="lost-1")
    s.start()
    proxy.cut()
    s.step("s1", {"a": 0.75})
    assert rec.lost and not rec.saved
    assert isinstance(s.bus.errors[0][1], StoreError) and "could not be saved anywhere" in str(s.bus.errors[0][1])
    rec.close()
    store.close()


@pytest.mark.parametrize("failure", ["cut", "stall"])
def test_a_sync_whose_database_fails_half_way_says_so_in_one_line_and_the_rest_waits(pg_url, tmp_path, monkeypatch,
                                                                                   capsys, failure):
    """The connection drops (``cut``), or the server stops answering with the connection open
    (``stall``), after the first spooled batch went: `labctl sync` ends with one line (exit 2)
    saying how many batches wait, no traceback, a stall within $LABCTL_DB_TIMEOUT (it had
    waited for ever); nothing is lost, and the next sync pushes the rest."""
    import time

    from click.testing import CliRunner

    from labctl.cli import main
    from labctl.cli.runs import sync
    from labctl.store.sink import DbSink

    spool_path = tmp_path / "spool.db"
    with open_store(pg_url) as store:
        rec = Recorder(store, spool_path=spool_path)
        rec.spooled = True  # as if the database had failed: everything goes to the journal
        s = Script(rec, "half-1")
        s.start()
        for i in range(3):
            s.step(f"s{i}", {"a": 0.75})
        s.end()
        rec.close()
    waiting = sum(n for *_, n in Spool(spool_path).pending())
    assert waiting >= 3
    u = make_url(pg_url)
    proxy = TcpProxy(u.host, u.port)
    write = DbSink.write

    def first_then_fail(self, batch):
        write(self, batch)
        getattr(proxy, failure)()  # the database goes away (or hangs) once the first batch is in

    monkeypatch.setattr(DbSink, "write", first_then_fail)
    monkeypatch.setenv("LABCTL_DB_TIMEOUT", "2")
    began = time.monotonic()
    with pytest.raises(SystemExit) as exited:  # labctl's entry point, as `labctl sync` runs it
        main(["sync", "--spool", str(spool_path), "--db", via_proxy(pg_url, proxy), "--all"])
    took = time.monotonic() - began
    said = capsys.readouterr().err
    assert exited.value.code == 2 and said.startswith("error: sync to ") and "stopped" in said, said
    assert f"{waiting - 1} spooled batch(es) wait" in said and "Traceback" not in said, said
    if failure == "stall":
        assert "did not answer within 2 s" in said and took < 60, said
    proxy.cut()
    monkeypatch.undo()
    result = CliRunner().invoke(sync, ["--spool", str(spool_path), "--db", pg_url])
    assert result.exit_code == 0, result.output
    assert Spool(spool_path).pending() == [] and totals(pg_url, "half-1")[2] == "passed"


def test_a_long_outages_journal_syncs_a_batch_at_a_time(tmp_path):
    """A journal that grew through a long outage is replayed a batch at a time: `labctl sync`
    never holds it whole in memory (a 100,000-step journal of 276 MB took 563 MB to sync, and
    each batch's delete scanned the whole journal: 23.7 s; 140 MB and 12.8 s a batch at a time)."""
    import sqlite3
    import tracemalloc
    from contextlib import closing

    from labctl.bench.readback import spool_run
    from labctl.store.sink import DbSink
    from labctl.store.store import DEFAULT_HEARTBEAT_INTERVAL

    db = tmp_path / "central.db"
    target = f"sqlite:///{db}"
    spool_run(tmp_path / "spool.db", target, "long-outage-1", 6000, per_batch=100)
    with closing(sqlite3.connect(tmp_path / "spool.db")) as con:
        journal = con.execute("SELECT sum(length(body)) FROM entries").fetchone()[0]
    spool = Spool(tmp_path / "spool.db")
    with open_store(str(db)) as store:
        tracemalloc.start()
        try:
            report = spool.replay(DbSink(store, heartbeat_interval=DEFAULT_HEARTBEAT_INTERVAL), target)
            _held, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert (report.batches, report.left) == (60 + 2, 0)
        with store.read_engine.connect() as conn:
            assert conn.execute(select(func.count()).where(measurements.c.run_id == "long-outage-1")).scalar() == 6000
        assert query.list_runs(store)[0]["outcome"] == "passed"
    spool.close()
    assert peak < journal / 2, f"sync peaked at {peak / 1e6:.1f} MB for a journal of {journal / 1e6:.1f} MB of text"
