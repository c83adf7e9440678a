"""A stop signal must reach the run whatever the main thread holds when it lands.

A Python signal handler runs in the main thread between two bytecodes. If it took a lock
that the main thread already held at that instant (the abort's own lock, or the lock inside
the ``threading.Event`` a step waits on), it waited for itself: the process hung with the
bench powered, and every later signal was swallowed the same way. Each case here runs in a
child process that sends itself the signal while it holds such a lock."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import os, signal, sys, time
    from labctl.engine.abort import AbortController, abort_on_signals

    controller = AbortController()
    held = {"event": controller.event._cond, "abort": controller._lock}[sys.argv[1]]
    with abort_on_signals(controller):
        with held:  # the main thread is inside Event.wait / AbortController at the instant the signal lands
            os.kill(os.getpid(), getattr(signal, sys.argv[2]))
            time.sleep(0.3)
        aborted = controller.event.wait(20)
    print("aborted" if aborted else "not aborted", controller.reason.message if aborted else "", flush=True)
""")


@pytest.mark.parametrize("held", ["event", "abort"])
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_landing_while_the_run_holds_the_abort_lock_still_aborts(held, sig):
    try:
        res = subprocess.run([sys.executable, "-c", CHILD, held, sig], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{sig} landing while the main thread held the {held} lock hung the process")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.startswith(f"aborted {sig} received: aborting to the safe state"), res.stdout + res.stderr


RELAY_CHILD = textwrap.dedent("""
    import os, signal, threading, time
    from labctl.signals import SignalRelay

    got = []
    done = threading.Event()

    def callback(signum):
        got.append(signum)
        if len(got) == 1:
            raise RuntimeError("broken handler")
        done.set()

    with SignalRelay((signal.SIGUSR1,), callback):
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGUSR1)
        print("delivered twice" if done.wait(20) else "second lost", flush=True)
""")


def test_a_failing_callback_is_reported_and_the_next_signal_still_arrives():
    res = subprocess.run([sys.executable, "-c", RELAY_CHILD], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "delivered twice"
    assert "labctl: handling SIGUSR1 failed: RuntimeError: broken handler" in res.stderr
