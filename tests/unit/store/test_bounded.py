"""Bounded database calls: a call that overruns its time fails the caller at once, and
every later call fails at once too (the recorder spools), without waiting on the stuck one."""

from __future__ import annotations

import threading
import time

import pytest

from labctl.errors import StoreError, StoreTimeout
from labctl.store.bounded import BoundedCaller


def test_a_call_that_returns_in_time_gives_its_result_and_errors():
    caller = BoundedCaller(5)
    assert caller.call(lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(KeyError):
        caller.call({}.__getitem__, "x")
    assert caller.stalled is None


def test_a_stalled_call_times_out_and_later_calls_fail_at_once():
    release = threading.Event()
    caller = BoundedCaller(0.3, what="the results database x")
    t0 = time.monotonic()
    with pytest.raises(StoreTimeout) as err:
        caller.call(release.wait)
    assert isinstance(err.value, StoreError) and isinstance(err.value, TimeoutError)
    assert "did not answer within 0.3 s" in str(err.value)
    t1 = time.monotonic()
    with pytest.raises(StoreTimeout):
        caller.call(lambda: 1)  # no second wait: the store is known to be stalled
    assert time.monotonic() - t1 < (t1 - t0)
    release.set()
