"""`labctl resume` reads the results store once for its checks (the run id, the record it
resumes from), then the run records into the store it opens like any run, under the bench
lock. Before, a single-board resume opened the store three times before the run: to find
the run, and once per `prepare_resume`, which ran twice."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from engine_support import DATA, RunProcess

from labctl.sim.testing import isolated_fixture

PLAN = str(DATA / "short-hold.yaml")

# `labctl resume` as a user starts it, with each opening of the results store written to
# stderr as the labctl function that opened it (the store itself is the real one)
# (the run's own opening is in the bounded thread that launch.py names labctl-open-store)
COUNTING = """
import sys, threading, traceback
import labctl.store.store as st
real = st.Store.__init__
def counted(self, *a, **k):
    here = [f for f in traceback.extract_stack()[:-1] if "/labctl/" in f.filename and "/labctl/store/" not in f.filename]
    by = here[-1].filename.split("/labctl/")[-1] + ":" + here[-1].name if here else threading.current_thread().name
    print("store opened by " + by, file=sys.stderr)
    real(self, *a, **k)
st.Store.__init__ = counted
from labctl.cli import main
sys.argv = ["labctl", *sys.argv[1:]]
main()
"""


def test_resume_opens_the_store_once_before_the_run(tmp_path):
    fixture = isolated_fixture(tmp_path, time_scale=600)
    db = str(tmp_path / "results.db")
    run = RunProcess("run", PLAN, "--fixture", str(fixture), "--db", db, "--json")
    run.wait_for('"step_id": "hold"', timeout=90)
    run.proc.send_signal(signal.SIGTERM)
    assert run.finish() == 3, run.output
    run_id = next(json.loads(x)["run_id"] for x in run.lines if '"event": "RunStarted"' in x)

    res = subprocess.run([sys.executable, "-c", COUNTING, "resume", run_id[:10], "--db", db, "--fixture",
                          str(fixture)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"resuming run {run_id}: 1 step(s) already finished" in res.stdout
    opened = [x.removeprefix("store opened by ") for x in res.stderr.splitlines() if x.startswith("store opened")]
    assert opened == ["cli/run.py:resume", "labctl-open-store"], res.stderr
