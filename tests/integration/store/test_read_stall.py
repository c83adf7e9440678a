"""A PostgreSQL server that takes a reading command's query and never answers (a hung server,
a black-holed path: TCP still acknowledges) ends the command in one line within
$LABCTL_DB_READ_TIMEOUT, instead of leaving it waiting forever (a rig's nightly report job, a
script polling `labctl stations`)."""

from __future__ import annotations

import os
import time

import pytest
from eventkit import Script
from sqlalchemy.engine import make_url
from tcpproxy import TcpProxy

from labctl.engine import events as ev
from labctl.store import Recorder, open_store
from labctl.store.location import resolve_db
from labctl.store.testing import temporary_database


@pytest.fixture
def recorded(tmp_path):
    """A PostgreSQL database holding one failed run."""
    with temporary_database("postgresql", tmp_path) as url:
        url = resolve_db(url)
        with open_store(url) as store:
            rec = Recorder(store)
            s = Script.on_bus(rec, run_id="stall-1")
            s.start()
            s.step("s1", {"a": 0.75})
            s.end(ev.RunOutcome.FAILED)
            rec.close()
        yield url


@pytest.mark.parametrize(("args", "query"), [
    (("runs",), b"FROM runs"), (("runs", "show", "stall-1"), b"stall-1"),
    (("report", "stall-1", "--format", "json", "-o", "r.json"), b"stall-1"), (("stats",), b"FROM runs"),
    (("stations",), b"stations"), (("queue", "list"), b"jobs")],
    ids=["runs", "runs-show", "report", "stats", "stations", "queue-list"])
def test_a_silent_server_ends_a_reading_command_in_one_line(recorded, labctl, args, query, tmp_path):
    u = make_url(recorded)
    proxy = TcpProxy(u.host, u.port)
    proxy.stall_on = query  # the server goes silent once the command's query has gone out
    url = u.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    began = time.monotonic()
    res = labctl(*args, "--db", url, cwd=tmp_path, timeout=60, env={**os.environ, "LABCTL_DB_READ_TIMEOUT": "2"})
    took = time.monotonic() - began
    assert proxy._stalled.is_set(), res.stderr  # the server went silent while the command waited for it
    assert res.returncode == 2, res.stdout + res.stderr
    assert "did not answer within 2 s" in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert took < 30, took
