"""The safe-state watchdog acts only when the run's own thread does not reach its teardown."""

from __future__ import annotations

import re
import threading

from labctl.engine.abort import AbortController
from labctl.engine.events import EventBus, LogMessage
from labctl.engine.watchdog import SafeStateWatchdog


def _watchdog(calls, abort, **kw):
    done = threading.Event()

    def safe_state():
        calls.append("safe")
        done.set()
        return {}

    return SafeStateWatchdog(safe_state, abort, say=lambda _t: None, **kw), done


def test_it_drives_the_safe_state_when_the_runner_is_blocked():
    calls: list[str] = []
    abort = AbortController()
    dog, done = _watchdog(calls, abort, grace=0.2, stall=10)
    dog.start()
    abort.request("signal", "SIGTERM received")
    assert done.wait(5), "the watchdog never acted"
    dog.stop()
    assert calls == ["safe"] and "teardown" in dog.why


def test_it_stands_down_when_the_runner_reaches_its_teardown():
    calls: list[str] = []
    abort = AbortController()
    dog, done = _watchdog(calls, abort, grace=0.3, stall=10)
    dog.start()
    abort.request("operator", "abort")
    dog.teardown_started()
    dog.stop()
    assert not done.wait(0.6) and calls == []


def test_quiet_before_the_abort_is_not_blocked_while_aborting():
    # a slot waiting at a shared soak's barrier publishes nothing for a while; an abort then
    # reaches its teardown at once: no alarm (it had fired at once, "blocked for 6 s")
    import time

    calls: list[str] = []
    abort = AbortController()
    dog, done = _watchdog(calls, abort, grace=5, stall=0.4)
    dog.start()
    time.sleep(0.6)  # quiet longer than the stall, before any abort
    abort.request("interlock", "die_temp above 50 degC")
    assert not done.wait(0.2)
    dog.teardown_started()
    dog.activity()
    assert not done.wait(0.2) and calls == []
    assert done.wait(5) and re.search(r"blocked for 0\.[4-9] s while aborting", dog.why), dog.why  # then silent past the stall: it acts
    dog.stop()


def test_it_does_nothing_without_an_abort():
    calls: list[str] = []
    dog, done = _watchdog(calls, AbortController(), grace=0.05, stall=0.05)
    dog.start()
    assert not done.wait(0.3)
    dog.stop()
    assert calls == []


def test_a_critical_subscriber_failure_is_acted_on_and_others_still_run():
    bus = EventBus()
    seen: list[str] = []
    failures: list[BaseException] = []
    bus.on_critical_failure = lambda _s, exc: failures.append(exc)

    def recorder(_e):
        raise RuntimeError("disk full")

    bus.subscribe(recorder, critical=True)
    bus.subscribe(lambda e: seen.append(e.message))
    bus.subscribe(lambda _e: (_ for _ in ()).throw(ValueError("console glitch")))  # not critical
    bus.publish(LogMessage(run_id="r", time=0.0, level="info", message="hello"))
    assert seen == ["hello"]
    assert [str(f) for f in failures] == ["disk full"]
    assert len(bus.errors) == 2
