"""An agent stopped by a signal keeps handling the stop signals until its process ends: a
second Ctrl-C that lands just after the stop (the job was already safe) is "already
stopping", not a KeyboardInterrupt that turns a clean exit 0 into a death by SIGINT."""

from __future__ import annotations

import signal

from labctl.fleet.agent import STOP_SIGNALS, Agent
from labctl.resources import builtin_file


def _agent(tmp_path, said):  # noqa: ANN001
    # the database is never reached: the agent is stopped before it connects
    return Agent(str(builtin_file("fixtures", "sim-bench.yaml")), str(tmp_path / "never.db"),
                 workdir=tmp_path, say=said.append)


def test_a_signal_stop_leaves_the_agents_handlers_for_late_presses(tmp_path):
    said: list[str] = []
    agent = _agent(tmp_path, said)
    before = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    try:
        agent._on_signal(signal.SIGINT, None)  # the first press, as the handler receives it
        assert agent.run() == 0
        assert signal.getsignal(signal.SIGINT) == agent._on_signal
        signal.raise_signal(signal.SIGINT)  # the second press, after the stop: handled, no KeyboardInterrupt
        assert any("again: already stopping" in line for line in said), said
    finally:
        for sig, old in before.items():
            signal.signal(sig, old)


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
