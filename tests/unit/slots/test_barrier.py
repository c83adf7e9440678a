"""The barrier of shared steps: it runs once for every live slot, a slot that ended never
holds the others, and a leader aborted on its own hands the lead over."""

from __future__ import annotations

import threading

import pytest

from labctl.engine.abort import AbortController
from labctl.slots.barrier import AbortedWaiting, SharedStepBarrier


def _run_all(barrier, slots, action, keep=lambda r: True, aborts=None):
    results = {}
    threads = [threading.Thread(target=lambda s=s: results.__setitem__(
        s, barrier.run("steps/soak@0", s, lambda s=s: action(s), (aborts or {}).get(s, AbortController()), keep=keep)))
        for s in slots]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return results


def test_the_shared_step_runs_once_for_every_slot():
    barrier = SharedStepBarrier(["1", "2", "3", "4"])
    runs = []
    results = _run_all(barrier, ["1", "2", "3", "4"], lambda s: runs.append(s) or f"moved by {s}")
    assert len(runs) == 1
    assert {r for r, _leader in results.values()} == {f"moved by {runs[0]}"}
    assert barrier.runs == {"steps/soak@0": 1}


def test_a_slot_that_ended_does_not_hold_the_others():
    barrier = SharedStepBarrier(["1", "2", "3"])
    barrier.leave("3")  # stopped by on_fail: stop before the soak
    results = _run_all(barrier, ["1", "2"], lambda s: "ok")
    assert set(results) == {"1", "2"}


def test_a_leader_aborted_alone_hands_the_lead_over():
    barrier = SharedStepBarrier(["1", "2"])
    calls = []

    def action(slot):
        calls.append(slot)
        if len(calls) == 1:
            barrier.leave(slot)  # its run ends: aborted on its own
            return "aborted"
        return "moved"

    results = _run_all(barrier, ["1", "2"], action, keep=lambda r: r != "aborted")
    assert len(calls) == 2
    survivor = calls[1]
    assert results[survivor] == ("moved", survivor)


def test_an_abort_while_waiting_says_whether_the_step_was_under_way():
    """Aborted before every slot arrived: nobody ran the step (``under_way`` False); aborted
    while another slot led it: this slot's board was in it (True)."""
    barrier = SharedStepBarrier(["1", "2", "3"])
    early = AbortController()
    early.request("signal", "SIGINT")
    with pytest.raises(AbortedWaiting) as info:  # slots 2 and 3 have not arrived
        barrier.run("steps/soak@0", "1", lambda: "moved", early, keep=lambda r: True)
    assert info.value.under_way is False and info.value.reason.message == "SIGINT"

    barrier = SharedStepBarrier(["1", "2"])
    leading, follower_abort = threading.Event(), AbortController()
    release = threading.Event()

    def lead():
        leading.set()
        release.wait(10)
        return "moved"

    leader = threading.Thread(target=barrier.run, args=("steps/soak@0", "1", lead, AbortController()),
                              kwargs={"keep": lambda r: True, "rank": 1})
    leader.start()
    caught = []

    def follow():
        try:
            barrier.run("steps/soak@0", "2", lambda: "moved", follower_abort, keep=lambda r: True)
        except AbortedWaiting as exc:
            caught.append(exc)

    follower = threading.Thread(target=follow)
    follower.start()
    assert leading.wait(10)
    follower_abort.request("interlock", "die over-temperature")
    follower.join(10)
    release.set()
    leader.join(10)
    assert [exc.under_way for exc in caught] == [True]
