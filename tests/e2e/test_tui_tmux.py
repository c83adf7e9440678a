"""``labctl tui`` in a real terminal: tmux runs it, keys are sent, the screen is read back
with ``capture-pane``. The simulated lab is started by the app itself (nothing serves the
isolated fixture's addresses)."""

from __future__ import annotations

import shlex
import sqlite3
import subprocess
import sys
import time
import uuid

import pytest

from labctl.sim.testing import isolated_fixture
from tests.conftest import ROOT

pytestmark = pytest.mark.slow
PLANS = ROOT / "tests" / "data" / "tui"


class Tmux:
    def __init__(self, tmp_path, command: str, width: int = 100, height: int = 30) -> None:
        self.socket = f"labctl-test-{uuid.uuid4().hex[:8]}"  # our own tmux server
        self.tmp_path = tmp_path
        # the app's size is the pane's: a COLUMNS / LINES that reached the test's environment would
        # override it (the terminal then drawn 80x24 whatever width and height were asked for)
        self._run("new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height),
                  f"unset COLUMNS LINES; {command}")

    def _run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True,
                              timeout=20).stdout

    def screen(self) -> str:
        return self._run("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        for key in keys:
            self._run("send-keys", "-t", "t", key)
            time.sleep(0.15)

    def wait_for(self, *texts: str, timeout: float = 60) -> str:
        """The screen once every one of ``texts`` is on it."""
        end = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if all(text in screen for text in texts):
                return screen
            if time.monotonic() > end:
                raise AssertionError(f"{texts!r} never appeared on the terminal; last screen:\n{screen}")
            time.sleep(0.2)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=20)


@pytest.fixture
def terminal(tmp_path):
    opened: list[Tmux] = []

    def start(command: str, **size) -> Tmux:
        t = Tmux(tmp_path, command, **size)
        opened.append(t)
        return t

    yield start
    for t in opened:
        t.close()


def test_labctl_tui_in_tmux_runs_a_plan_and_quits(tmp_path, terminal):
    fx = isolated_fixture(tmp_path, time_scale=600)
    db = tmp_path / "results.db"
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "labctl", "tui", "--fixture", str(fx), "--db", str(db),
                                            "--plans", str(PLANS), "--operator", "tmux-op"])
    term = terminal(f"cd {shlex.quote(str(ROOT))} && TERM=xterm-256color {cmd}; echo EXIT=$?; sleep 60",
                    width=100, height=30)
    # the first status poll (head line) and the plan catalog
    term.wait_for("Station sim-bench-1 · DUT SIM-GOLD-0001 · instruments OK", "accelerator-evt", "abortable",
                  "SIM-GOLD-0001", "MY59002391")
    term.keys("Down", "Down", "Down")  # accelerator-evt, link-ber, power-rails -> smoke
    term.keys("r")
    term.wait_for("Start smoke")
    term.wait_for("nothing blocks the start")
    term.keys("C-s")
    screen = term.wait_for("PASSED", timeout=90)
    assert "core_rail" in screen and "safe state" in screen
    term.keys("Escape")
    term.wait_for("Plans")
    term.keys("q")
    term.wait_for("EXIT=0")
    with sqlite3.connect(db) as conn:
        assert conn.execute("select plan_name, outcome, operator from runs").fetchall() == [("smoke", "passed", "tmux-op")]


def test_labctl_tui_bad_fixture_is_one_clear_line(labctl, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("station: x\nroles: [1, 2\n", encoding="utf-8")
    res = labctl("tui", "--fixture", str(bad))
    assert res.returncode == 4, res.stderr
    assert "Traceback" not in res.stderr and str(bad) in res.stderr
    res = labctl("tui", "--plans", str(tmp_path / "nowhere"))
    assert res.returncode == 4 and "--plans" in res.stderr and "no such folder" in res.stderr


def test_closing_the_terminal_during_a_run_aborts_it_to_the_safe_state(tmp_path, terminal):
    import pyvisa

    from labctl.fixture import load_fixture
    from labctl.sim.lab import SimulatedLab

    fx = isolated_fixture(tmp_path, time_scale=60)
    db = tmp_path / "results.db"
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "labctl", "tui", "--fixture", str(fx), "--db", str(db),
                                            "--plans", str(PLANS)])
    with SimulatedLab(load_fixture(fx)) as lab:  # served from here: it outlives the closed terminal
        psu = pyvisa.ResourceManager("@py").open_resource(lab.addresses["psu"], read_termination="\n",
                                                          write_termination="\n", timeout=3000)
        try:
            term = terminal(f"cd {shlex.quote(str(ROOT))} && TERM=xterm-256color exec {cmd}", width=120, height=40)
            term.wait_for("instruments OK", "abortable")
            term.keys("Down", "Down", "Down", "Down", "Down", "r")  # after the five built-in plans: abortable
            term.wait_for("Start abortable", "nothing blocks the start")
            term.keys("C-s")
            term.wait_for("soak", "RUNNING")
            end = time.monotonic() + 30
            while psu.query("OUTP? (@1)").strip() != "1":
                assert time.monotonic() < end, "the run never powered the board"
                time.sleep(0.2)
            term.close()  # the terminal goes away: SIGHUP
            end = time.monotonic() + 60
            while True:
                with sqlite3.connect(db) as conn:
                    outcome = conn.execute("select outcome from runs").fetchall()
                if outcome == [("aborted",)] or time.monotonic() > end:
                    break
                time.sleep(0.3)
            assert outcome == [("aborted",)]
            assert psu.query("OUTP? (@1)").strip() == "0"  # read back by an independent client
        finally:
            psu.close()
    with sqlite3.connect(db) as conn:
        steps = conn.execute("select step_id, outcome from steps where step_id like 'safe-state.%'").fetchall()
    assert ("safe-state.psu", "PASS") in steps


def test_on_80_columns_a_hung_instrument_s_countdown_and_the_outcome_are_readable(tmp_path, terminal):
    from labctl.fixture import load_fixture
    from labctl.sim.lab import SimulatedLab

    fx = isolated_fixture(tmp_path, time_scale=600)
    db = tmp_path / "results.db"
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "labctl", "tui", "--fixture", str(fx), "--db", str(db),
                                            "--plans", str(PLANS), "--operator", "tmux-op"])
    with SimulatedLab(load_fixture(fx)) as lab:
        term = terminal(f"cd {shlex.quote(str(ROOT))} && TERM=xterm-256color {cmd}; echo EXIT=$?; sleep 60",
                        width=80, height=24)
        term.wait_for("instruments OK", "accelerator-evt")  # the plan list, loaded at once (it scrolls)
        term.keys(*["Down"] * 7, "r")  # after the five built-in plans, abortable and tui-bringup: tui-hung
        term.wait_for("Start tui-hung", "nothing blocks the start")
        term.keys("C-s")
        term.wait_for("Is the DMM probe on VDD_CORE?")
        lab.inject({"fault": "instrument_timeout", "role": "dmm"})  # the DMM stops answering
        term.keys("Enter")  # yes

        def words() -> str:  # the screen's text with its line breaks undone: a wrapped line reads on
            return " ".join(term.screen().split())

        end = time.monotonic() + 30
        while "timeout in" not in words():
            assert time.monotonic() < end, f"the countdown to the DMM's timeout never showed:\n{term.screen()}"
            time.sleep(0.2)
        assert "dmm: MEAS:VOLT:DC? DEF,DEF no reply for" in words()
        term.wait_for("ERROR")
        with sqlite3.connect(db) as conn:
            (run_id,) = conn.execute("select id from runs").fetchone()
        end = time.monotonic() + 10
        while not (f"run {run_id}" in words() and "BENCH MAY BE UNSAFE: safe-state.dmm: not confirmed" in words()):
            assert time.monotonic() < end, f"the run's id and outcome are cut off:\n{term.screen()}"
            time.sleep(0.2)


def test_a_history_date_that_cannot_be_read_says_how_to_write_it(tmp_path, terminal):
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "labctl", "tui", "--watch",
                                            "--db", str(tmp_path / "results.db")])
    term = terminal(f"cd {shlex.quote(str(ROOT))} && TERM=xterm-256color {cmd}", width=80, height=24)
    term.wait_for("Watch")
    term.keys("h")
    term.wait_for("0 run(s)")
    term.keys("/", "Tab", "Tab", "Tab", "Tab")  # plan, DUT, station, outcome: since
    term.keys("last tuesday", "Enter")
    screen = " ".join(term.wait_for("cannot read").split())  # the status line, wrapped or not
    assert "cannot read the since filter 'last tuesday'" in screen and "7d" in screen and "2026-11-30" in screen, screen


def test_a_mode_key_typed_with_q_quits_cleanly(tmp_path, terminal):
    """`q` and `s` (or `h`, `w`) in one burst: the app quit with a NoMatches traceback, the
    next screen being built while the app went away."""
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "labctl", "tui", "--watch",
                                            "--db", str(tmp_path / "results.db")])
    term = terminal(f"cd {shlex.quote(str(ROOT))} && TERM=xterm-256color {cmd}; echo EXIT=$?; sleep 30",
                    width=100, height=30)
    term.wait_for("Watch")
    term._run("send-keys", "-t", "t", "q", "s", "h")  # one burst, as fast fingers or a paste
    screen = term.wait_for("EXIT=", timeout=30)  # the shell's line once the app has gone
    assert "EXIT=0" in screen and "Traceback" not in screen and "NoMatches" not in screen, screen
