"""`labctl tui --watch` in a real terminal (tmux): the command line's options reach the watch
screen, which shows a `labctl run` started headless beside it; `q` quits with exit code 0."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid

from labctl.sim.testing import isolated_fixture


def _screen(sock: str) -> str:
    return subprocess.run(["tmux", "-L", sock, "capture-pane", "-p", "-t", "watch"], capture_output=True,
                          text=True, check=True).stdout


def _wait_for(sock: str, *words: str, pattern: str | None = None, timeout: float = 90) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        shown = _screen(sock)
        if all(w in shown for w in words) and (pattern is None or re.search(pattern, shown)):
            return shown
        time.sleep(0.3)
    raise AssertionError(f"{words} never shown; the terminal shows:\n{_screen(sock)}")


def test_labctl_tui_watch_in_a_terminal_follows_a_headless_run(labctl, tmp_path):
    bench, db = isolated_fixture(tmp_path, time_scale=600), tmp_path / "results.db"
    sock = f"labctl-watch-{uuid.uuid4().hex[:8]}"
    rc_file = tmp_path / "rc"
    cmd = (f"env -u COLUMNS -u LINES {sys.executable} -m labctl tui --watch --fixture {bench} --db {db}; echo $? > {rc_file}; sleep 30")
    subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-s", "watch", "-x", "120", "-y", "36", cmd], check=True)
    try:
        _wait_for(sock, "Watch · station", "waiting for a run")
        run = labctl("run", "smoke.yaml", "--fixture", str(bench), "--db", str(db), "--dut", "SIM-GOLD-0001")
        assert run.returncode == 0, run.stdout + run.stderr
        # the run's row says passed (not the "0 passed" of a step count) and its measurements,
        # read from the database, are listed
        shown = _wait_for(sock, "smoke v1.0", "SIM-GOLD-0001", "VDD_CORE", pattern=r"passed\s+sim-bench-1")
        assert "running  sim-bench-1" not in shown, shown
        subprocess.run(["tmux", "-L", sock, "send-keys", "-t", "watch", "q"], check=True)
        end = time.monotonic() + 20
        while not rc_file.exists() and time.monotonic() < end:
            time.sleep(0.2)
        assert rc_file.read_text().strip() == "0"
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)


def test_station_and_all_stations_exclude_each_other(labctl, tmp_path):
    res = labctl("tui", "--watch", "--station", "a", "--all-stations", "--db", str(tmp_path / "r.db"))
    assert res.returncode == 4 and "--station and --all-stations exclude each other" in res.stdout + res.stderr
    assert "Traceback" not in res.stdout + res.stderr
