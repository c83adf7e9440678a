"""Stations whose clocks differ agree about which run is alive: heartbeats on PostgreSQL are
stamped and judged on the database server's clock. A host whose clock runs a minute ahead
(libfaketime, as `labctl runs` there sees it) does not mark another station's live run
`interrupted` (it did, writing that into the shared database)."""

from __future__ import annotations

import subprocess
import sys

from eventkit import Script
from sqlalchemy import func, select, update

from labctl.store import Recorder, open_store
from labctl.store.schema import runs
from labctl.store.testing import temporary_database


def test_a_host_whose_clock_runs_ahead_leaves_another_stations_live_run_alone(tmp_path):
    with temporary_database("postgresql", tmp_path) as url:
        with open_store(url) as store:
            rec = Recorder(store)
            s = Script(rec, "skew-1")
            s.start()
            s.step("s1", {"a": 0.75})
            rec.flush()
            with store.engine.begin() as conn:  # station-b's run, its heartbeat just stamped (server clock)
                server_now = float(conn.execute(select(func.extract("epoch", func.now()))).scalar())
                conn.execute(update(runs).where(runs.c.id == "skew-1")
                             .values(host="station-b", heartbeat_at=server_now, heartbeat_interval=5.0))
            assert abs(store.now() - server_now) < 5
            res = subprocess.run(["faketime", "-f", "+60s", sys.executable, "-m", "labctl", "runs", "--db", url,
                                  "--format", "csv"], capture_output=True, text=True, timeout=120)
            assert res.returncode == 0, res.stderr
            with store.engine.connect() as conn:
                outcome = conn.execute(select(runs.c.outcome).where(runs.c.id == "skew-1")).scalar()
            assert outcome == "running", res.stdout
            rec.close()
