"""Start-up: ``labctl --help``, and how soon ``labctl run`` sends its first instrument command."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from labctl.bench import Row
from labctl.bench.common import env, measure_plan


def help_seconds(repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "labctl", "--help"], capture_output=True, check=True, env=env())
        times.append(time.perf_counter() - start)
    return min(times)


def first_command_seconds(tmp: Path) -> float:
    """Seconds from starting ``labctl run`` (one step) to the first byte at the supply's socket.

    The supply is a listening socket that only notes when the first command arrives; the run
    is stopped then."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(30)
    port = srv.getsockname()[1]
    fixture = tmp / "first-command-fixture.yaml"
    fixture.write_text(
        "station: bench-startup\nroles:\n  psu:\n    driver: keysight-e36312a\n"
        f"    resource: TCPIP0::127.0.0.1::{port}::SOCKET\n    timeout: 2 s\n", encoding="utf-8")
    plan = measure_plan(tmp / "one-step.yaml", 1)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "labctl", "run", str(plan), "--fixture", str(fixture),
                             "--db", str(tmp / "first.db"), "--no-preflight", "--dut", "X"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env())
    try:
        conn, _ = srv.accept()
        conn.settimeout(30)
        conn.recv(1)
        seconds = time.perf_counter() - start
        conn.close()
    finally:
        proc.kill()
        proc.wait()
        srv.close()
    return seconds


def rows(tmp: Path, quick: bool) -> list[Row]:
    help_s = help_seconds(2 if quick else 5)
    first = min(first_command_seconds(tmp) for _ in range(1 if quick else 3))
    return [
        Row("start-up: labctl --help", "≤ 0.15 s", f"{help_s:.3f} s", help_s / 0.15),
        Row("start-up: labctl run → first instrument command", "≤ 1 s", f"{first:.2f} s", first / 1.0),
    ]
