"""``labctl run`` on a terminal without ``--answers`` asks the plan's prompts there, and
enforces their ``timeout:``: nobody answering in time ends the step ERROR (exit 2)."""

from __future__ import annotations

import os
import pty
import select
import sqlite3
import subprocess
import sys
import time

import pytest

from labctl.sim.testing import isolated_fixture
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


class Terminal:
    """``labctl run`` with a pseudo-terminal as its stdin, stdout and stderr."""

    def __init__(self, *args: str) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen([sys.executable, "-m", "labctl", "run", *args], cwd=ROOT, stdin=slave,
                                     stdout=slave, stderr=slave, close_fds=True,
                                     env={**os.environ, "TERM": "xterm", "COLUMNS": "120"})
        os.close(slave)
        self.output = ""

    def read_until(self, text: str, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while text not in self.output:
            if time.monotonic() > end:
                raise AssertionError(f"{text!r} never printed; output so far:\n{self.output}")
            self._read(0.2)

    def _read(self, wait: float) -> None:
        ready, _, _ = select.select([self.master], [], [], wait)
        if ready:
            try:
                self.output += os.read(self.master, 65536).decode(errors="replace")
            except OSError:  # the process closed the terminal
                time.sleep(wait)

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def finish(self, timeout: float = 60) -> int:
        end = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < end:
            self._read(0.2)
        self._read(0.2)
        os.close(self.master)
        return self.proc.wait(timeout=5)


def test_prompt_asked_on_the_terminal_times_out_when_nobody_answers(tmp_path):
    fx = isolated_fixture(tmp_path, time_scale=600)
    term = Terminal(str(ROOT / "tests/data/tui/unanswered.yaml"), "--fixture", str(fx), "--db", str(tmp_path / "r.db"))
    term.read_until("? Scan the DUT label")
    started = time.monotonic()
    code = term.finish()
    assert code == 2, term.output
    assert "nobody answered 'Scan the DUT label' within 2 s" in term.output
    assert time.monotonic() - started < 30
    with sqlite3.connect(tmp_path / "r.db") as conn:
        assert conn.execute("select prompt_id, answer from prompts").fetchall() == [("label", None)]
        assert conn.execute("select outcome from runs").fetchall() == [("error",)]


def test_prompt_answered_on_the_terminal_is_recorded_with_who_answered(tmp_path):
    fx = isolated_fixture(tmp_path, time_scale=600)
    term = Terminal(str(ROOT / "tests/data/engine/operator.yaml"), "--fixture", str(fx), "--db", str(tmp_path / "r.db"),
                    "--operator", "bench-op")
    term.read_until("? Is the heatsink fan installed? [yes/no]")
    term.type("maybe\n")
    term.read_until("answer one of: yes, no")
    term.type("yes\n")
    assert term.finish() == 0, term.output
    with sqlite3.connect(tmp_path / "r.db") as conn:
        rows = conn.execute("select prompt_id, answer, answer_source, answered_at from prompts").fetchall()
    assert [r[:3] for r in rows] == [("fan_installed", "yes", "operator:bench-op")]
    assert rows[0][3] is not None


def test_without_a_terminal_nobody_is_asked(labctl, tmp_path):
    fx = isolated_fixture(tmp_path, time_scale=600)
    res = labctl("run", str(ROOT / "tests/data/engine/operator.yaml"), "--fixture", str(fx), "--db", str(tmp_path / "r.db"))
    assert res.returncode == 2
    assert "nobody can answer" in res.stdout + res.stderr
