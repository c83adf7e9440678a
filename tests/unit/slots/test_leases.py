"""Leases on shared instruments: first come first served, a timeout that names the holder,
an abort that frees a waiter, and no deadlock when two slots need the same two instruments."""

from __future__ import annotations

import threading
import time

import pytest

from labctl.engine.abort import AbortController, RunAborted
from labctl.errors import LeaseTimeout
from labctl.slots.leases import Lease, LeasePool


def test_waiters_are_served_in_arrival_order():
    lease = Lease("TCPIP0::127.0.0.1::1::SOCKET", "daq")
    lease.acquire("slot 0", 5)
    order: list[str] = []
    threads = []
    for k in range(1, 5):
        t = threading.Thread(target=lambda k=k: (lease.acquire(f"slot {k}", 5), order.append(f"slot {k}"),
                                                 lease.release()))
        t.start()
        threads.append(t)
        time.sleep(0.05)  # arrive one after the other
    lease.release()
    for t in threads:
        t.join(5)
    assert order == ["slot 1", "slot 2", "slot 3", "slot 4"]


def test_a_waiter_gives_up_after_its_timeout_naming_the_holder():
    lease = Lease("/dev/chamber", "chamber")
    lease.acquire("slot 1", 1)
    errors = []
    t = threading.Thread(target=lambda: errors.append(pytest.raises(LeaseTimeout, lease.acquire, "slot 2", 0.2)))
    t.start()
    t.join(5)
    assert "slot 2 waited 0.2 s for the shared chamber held by slot 1" in str(errors[0].value)
    lease.release()
    lease.acquire("slot 3", 0.2)  # the one who gave up left the queue
    lease.release()


def test_an_abort_frees_a_waiter_at_once():
    lease = Lease("x", "chamber")
    lease.acquire("slot 1", 1)
    abort = AbortController()
    caught = []

    def wait() -> None:
        try:
            lease.acquire("slot 2", 60, abort)
        except RunAborted as exc:
            caught.append(exc)

    t = threading.Thread(target=wait)
    t.start()
    abort.request("signal", "SIGINT")
    t.join(2)
    assert not t.is_alive() and caught


def test_the_same_slot_may_take_its_lease_again():
    lease = Lease("x")
    lease.acquire("slot 1", 1)
    lease.acquire("slot 1", 1)
    lease.release()
    assert lease.holder == "slot 1"
    lease.release()
    assert lease.holder is None


def test_two_instruments_in_opposite_order_never_deadlock():
    pool = LeasePool()
    done = []

    def worker(addresses: list[str], who: str) -> None:
        for _ in range(200):
            with pool.hold(addresses, who, timeout=5):
                pass
        done.append(who)

    a = threading.Thread(target=worker, args=(["chamber", "daq"], "slot 1"))
    b = threading.Thread(target=worker, args=(["daq", "chamber"], "slot 2"))
    a.start()
    b.start()
    a.join(20)
    b.join(20)
    assert sorted(done) == ["slot 1", "slot 2"]
