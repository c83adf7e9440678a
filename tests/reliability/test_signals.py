"""Every way a terminal session ends a run leaves the bench safe, and the record says so.

SIGINT and SIGTERM were covered before; SIGHUP (terminal closed, SSH session lost), SIGQUIT
(Ctrl-\\\\) and SIGUSR1/2 ended the run at once with the supply on. The bench is read back by
an independent SCPI/serial client after each run.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import signal
import subprocess
import sys
import termios
import time

import pytest
from engine_support import DATA, RunProcess, assert_bench_safe
from rel_support import FULL, RELIABILITY_DATA

from labctl.sim.testing import isolated_fixture
from labctl.store import open_store

ABORTABLE = str(DATA / "abortable.yaml")
SHORT = str(RELIABILITY_DATA / "short-soak.yaml")




def run_outcomes(db) -> dict[str, str]:
    if not os.path.exists(db):
        return {}
    from labctl.store.query import list_runs

    store = open_store(str(db))
    try:
        return {r["id"]: r["outcome"] for r in list_runs(store)}
    finally:
        store.close()


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2],
                         ids=lambda s: s.name)
def test_signal_mid_soak_aborts_to_the_safe_state(served_lab, tmp_path, sig):
    db = tmp_path / "results.db"
    run = RunProcess("run", ABORTABLE, "--fixture", str(served_lab.fixture), "--db", str(db), "--json")
    run.wait_for('"step_id": "soak"', timeout=90)
    assert served_lab.scpi("psu", "OUTP? (@1)") == "1"
    sent = time.monotonic()
    run.proc.send_signal(sig)
    rc = run.finish(timeout=60)
    print(f"\n{sig.name} mid-soak: exit {rc} in {time.monotonic() - sent:.2f} s")
    assert rc == 3, run.output  # before: -1 / -3 / -10 / -12, no RunEnded, supply on
    ended = [json.loads(line) for line in run.lines if '"event": "RunEnded"' in line]
    assert ended and ended[0]["outcome"] == "aborted" and sig.name in ended[0]["message"]
    assert_bench_safe(served_lab)
    assert list(run_outcomes(db).values()) == ["aborted"]


def _in_a_terminal(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, int]:
    """Start ``labctl`` as the session leader of a new pseudo-terminal, as a shell in a
    terminal window (or an SSH session) would; returns the process and the master side."""
    master, slave = os.openpty()

    def become_terminal_owner() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen([sys.executable, "-m", "labctl", *args], stdin=slave, stdout=slave, stderr=slave,
                            preexec_fn=become_terminal_owner, env=env, close_fds=True)
    os.close(slave)
    return proc, master


def _read_until(master: int, text: bytes, timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and text not in seen:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    assert text in seen, seen.decode(errors="replace")[-2000:]
    return seen


@pytest.mark.parametrize("output", ["--json", "console"])
def test_closing_the_terminal_aborts_to_the_safe_state(served_lab, tmp_path, output):
    """The terminal window is closed (or the SSH session drops) in the middle of a soak. With
    the console's output (a summary table printed at the end) this exited 1 with a traceback
    (EIO): a hung-up terminal is no longer ``isatty``, so it was not swapped for /dev/null."""
    db = tmp_path / "results.db"
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    proc, master = _in_a_terminal(["run", ABORTABLE, "--fixture", str(served_lab.fixture), "--db", str(db),
                                   *(["--json"] if output == "--json" else [])], env)
    try:
        _read_until(master, b'"step_id": "soak"' if output == "--json" else b"soak", timeout=90)
        assert served_lab.scpi("psu", "OUTP? (@1)") == "1"
        time.sleep(0.5)
    finally:
        os.close(master)  # hang-up: the kernel sends SIGHUP to the session
    rc = proc.wait(timeout=60)
    assert rc == 3
    assert_bench_safe(served_lab)
    assert list(run_outcomes(db).values()) == ["aborted"]


_SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1]


def _random_points():
    rng = random.Random(20261130)
    n = 30 if FULL else 4
    return [(rng.choice(_SIGNALS), round(rng.uniform(0.2, 14.0), 2)) for _ in range(n)]


@pytest.mark.parametrize("sig,delay", _random_points(), ids=lambda v: v.name if hasattr(v, "name") else f"{v}s")
def test_a_signal_at_any_point_leaves_the_bench_safe(served_lab, tmp_path, sig, delay):
    """From process start to exit (connect, pre-flight, setup, soak, teardown, safe state,
    closing): whenever the signal lands, the bench ends safe and every recorded run ended.

    Full matrix (30 points): ``LABCTL_FULL=1 pytest tests/reliability/test_signals.py``."""
    db = tmp_path / "results.db"
    run = RunProcess("run", SHORT, "--fixture", str(served_lab.fixture), "--db", str(db), "--json")
    time.sleep(delay)
    if run.proc.poll() is None:
        run.proc.send_signal(sig)
    rc = run.finish(timeout=90)
    assert_bench_safe(served_lab)
    outcomes = run_outcomes(db)
    if rc == 3:  # aborted: during the run, or before anything started
        assert set(outcomes.values()) <= {"aborted"}, outcomes
    elif rc == 0:  # the signal came after the run ended (or was a late Ctrl-C, ignored)
        assert list(outcomes.values()) == ["passed"], outcomes
    else:  # killed by the signal's default action: only before the run was set up or after it ended
        assert rc < 0, run.output
        assert set(outcomes.values()) <= {"passed"}, (rc, outcomes, run.output)


def test_run_thread_blocked_on_its_output_still_reaches_the_safe_state(served_lab, tmp_path):
    """A rig reads the --json stream and stops reading: the run's thread blocks writing to a
    full pipe. SIGTERM must still bring the bench to its safe state (the watchdog drives it),
    and once the pipe drains the run ends aborted with the watchdog's actions recorded."""
    db = tmp_path / "results.db"
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen([sys.executable, "-m", "labctl", "run", ABORTABLE, "--fixture", str(served_lab.fixture),
                             "--db", str(db), "--json"], stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)
    seen = b""
    while b'"step_id": "soak"' not in seen:  # the rig reads until the soak starts, then stops reading
        chunk = os.read(read_end, 4096)
        assert chunk, "the run ended before its soak"
        seen += chunk
    assert served_lab.scpi("psu", "OUTP? (@1)") == "1"
    time.sleep(4.0)  # nobody reads: the 4 KiB pipe fills, the run's thread blocks in write()
    proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    while served_lab.scpi("psu", "OUTP? (@1)") != "0":
        assert time.monotonic() < sent + 30, "supply still on 30 s after SIGTERM"
        time.sleep(0.2)
    print(f"\nblocked on output: supply off {time.monotonic() - sent:.1f} s after SIGTERM")
    assert proc.poll() is None  # still blocked on its output: the watchdog made the bench safe
    assert served_lab.scpi("load", "INP?") == "0"
    with os.fdopen(read_end, "rb") as stream:  # the rig reads again
        stream.read()
    assert proc.wait(timeout=60) == 3
    assert_bench_safe(served_lab)
    from labctl.store.schema import logs

    store = open_store(str(db))
    try:
        with store.read_engine.connect() as conn:
            messages = [m for (m,) in conn.execute(logs.select().with_only_columns(logs.c.message))]
    finally:
        store.close()
    assert any("safe-state watchdog drove the safe state" in m for m in messages), messages


def test_ctrl_c_in_the_demo_stops_the_demo_not_only_the_current_board(tmp_path):
    """Before, each DUT of `labctl demo` had its own abort: Ctrl-C aborted one board and the
    demo went on powering the next one."""
    # the demo's own fixture on free ports: the built-in one's fixed ports can be held by any
    # other connection on a shared machine (CI failed on "Address already in use")
    bench = isolated_fixture(tmp_path / "lab")
    run = RunProcess("demo", "--fixture", str(bench), "--time-scale", "300", env={"LABCTL_HOME": str(tmp_path)})
    run.wait_for("DUT SIM-GOLD-0001", timeout=120)
    run.wait_for("power", timeout=120)
    run.proc.send_signal(signal.SIGINT)
    rc = run.finish(timeout=120)
    assert rc == 3, run.output
    assert run.output.count("the demo was aborted before this DUT") == 2, run.output
    assert "DUT SIM-GOLD-0002" not in run.output


def test_a_reader_that_goes_away_neither_stops_the_run_nor_passes_what_never_ran(served_lab, tmp_path):
    """``labctl run … | head -3``: the pipe closes after a few lines. The run goes on to its end
    (its output dropped), as with output to a file, and its record holds every step. Before,
    rich's console raised SystemExit at the next print, mid-step: the run went straight to
    teardown and was recorded `passed` on the teardown steps alone, exit 1."""
    db = tmp_path / "results.db"
    proc = subprocess.Popen([sys.executable, "-m", "labctl", "run", SHORT, "--fixture", str(served_lab.fixture),
                             "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "COLUMNS": "120"})
    assert proc.stdout is not None
    for _ in range(3):
        proc.stdout.readline()
    proc.stdout.close()  # the reader goes away while the plan has most of its steps to run
    rc = proc.wait(timeout=120)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    assert rc == 0, err
    assert "Traceback" not in err
    assert list(run_outcomes(db).values()) == ["passed"]
    store = open_store(str(db))
    try:
        from labctl.store.query import run_detail

        [run_id] = run_outcomes(db)
        steps = {s["step_key"].split("#")[0]: s["outcome"] for s in run_detail(store, run_id)["steps"]}
    finally:
        store.close()
    assert {k: v for k, v in steps.items() if "safe-state" not in k} == {
        "setup/power": "PASS", "setup/load-on": "PASS", "steps/soak": "PASS", "teardown/load-off": "PASS"}
    assert_bench_safe(served_lab)
