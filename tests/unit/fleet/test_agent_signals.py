"""An agent stopped by a signal ignores the stop signals until its process ends: a second
Ctrl-C that lands just after the stop (the job was already safe), even while the interpreter
is finalizing, must not turn a clean exit 0 into a KeyboardInterrupt or a death by SIGINT."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from labctl.fleet.agent import STOP_SIGNALS, Agent
from labctl.resources import builtin_file


def _agent(tmp_path, said):  # noqa: ANN001
    # the database is never reached: the agent is stopped before it connects
    return Agent(str(builtin_file("fixtures", "sim-bench.yaml")), str(tmp_path / "never.db"),
                 workdir=tmp_path, say=said.append)


def test_a_signal_stop_ignores_late_presses(tmp_path):
    said: list[str] = []
    agent = _agent(tmp_path, said)
    before = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    try:
        agent._on_signal(signal.SIGINT)  # the first press, as the signal relay delivers it
        assert agent.run() == 0
        assert {signal.getsignal(sig) for sig in STOP_SIGNALS} == {signal.SIG_IGN}
        signal.raise_signal(signal.SIGINT)  # the second press, after the stop: no KeyboardInterrupt
    finally:
        for sig, old in before.items():
            signal.signal(sig, old)


_CHILD = """
import sys
from pathlib import Path
from labctl.fleet.agent import Agent
from labctl.resources import builtin_file
agent = Agent(str(builtin_file("fixtures", "sim-bench.yaml")), str(Path(sys.argv[1]) / "never.db"),
              workdir=Path(sys.argv[1]), say=lambda text: None)
agent._on_signal(2)  # stopped by a first Ctrl-C
code = agent.run()
print("stopped", flush=True)
sys.exit(code)
"""


def test_presses_while_the_stopped_agents_process_ends_leave_exit_0(tmp_path):
    """Ctrl-C pressed again and again from the moment the agent has stopped until its process is
    gone (interpreter finalization included): the process still exits 0."""
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "stopped\n"
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            os.kill(proc.pid, signal.SIGINT)
        except ProcessLookupError:
            break
        time.sleep(0.0002)
    assert proc.wait(timeout=30) == 0


def test_an_agent_that_stops_on_its_own_gives_the_handlers_back(tmp_path):
    said: list[str] = []
    agent = _agent(tmp_path, said)
    before = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    try:
        agent.stop_reason = "asked to stop"  # e.g. max_jobs reached: no signal involved
        assert agent.run() == 0
        assert {sig: signal.getsignal(sig) for sig in STOP_SIGNALS} == before
    finally:
        for sig, old in before.items():
            signal.signal(sig, old)
