"""Hundreds of consecutive short runs in one process against one served lab (a rig that runs
all day): file descriptors, sockets and threads stay flat and memory stays bounded.

CI runs a seeded sample of 40 runs; the full soak is
``LABCTL_FULL=1 pytest tests/reliability/test_soak_runs.py -s`` (500 runs)."""

from __future__ import annotations

import os
import threading

from rel_support import FULL

from labctl.launch import RunRequest, execute

RUNS = 500 if FULL else 40
WARM_UP = 5


def _fds() -> tuple[int, int]:
    names = os.listdir("/proc/self/fd")
    sockets = 0
    for n in names:
        try:
            sockets += os.readlink(f"/proc/self/fd/{n}").startswith("socket:")
        except OSError:
            pass
    return len(names), sockets


def _rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def test_consecutive_runs_leak_nothing(served_lab, tmp_path):
    db = str(tmp_path / "results.db")
    request = RunRequest(plan="smoke.yaml", fixture=str(served_lab.fixture), db=db)
    baseline = None
    for i in range(RUNS):
        out = execute(request, [], say=lambda _t: None, handle_signals=False)
        assert int(out.exit_code) == 0, (i, out.result.message)
        if i == WARM_UP - 1:
            baseline = (*_fds(), threading.active_count(), _rss_mib())
    fds, sockets, threads, rss = (*_fds(), threading.active_count(), _rss_mib())
    print(f"\n{RUNS} runs: fds {baseline[0]} -> {fds}, sockets {baseline[1]} -> {sockets}, "
          f"threads {baseline[2]} -> {threads}, RSS {baseline[3]:.0f} -> {rss:.0f} MiB")
    assert fds <= baseline[0] + 2, f"file descriptors grew from {baseline[0]} to {fds}"
    assert sockets <= baseline[1] + 1, f"sockets grew from {baseline[1]} to {sockets}"
    assert threads <= baseline[2] + 1, f"threads grew from {baseline[2]} to {threads}"
    assert rss - baseline[3] < 40 + 0.1 * RUNS, f"memory grew by {rss - baseline[3]:.0f} MiB over {RUNS} runs"
    from labctl.store import open_store
    from labctl.store.query import list_runs

    store = open_store(db)
    try:
        rows = list_runs(store, limit=RUNS + 10)
    finally:
        store.close()
    assert len(rows) == RUNS and {r["outcome"] for r in rows} == {"passed"}
