"""Watching for a reply before sleeping on it (``reply_spin``): replies stay whole and in
order, a slow instrument is not watched for on every query, serial ports watch too, and the
role option is checked. Real loopback sockets and a real pty."""

from __future__ import annotations

import os
import threading
import time
import tty

import pytest
from instr_linesrv import LineServer

from labctl.errors import FixtureError
from labctl.fixture.model import Fixture
from labctl.instruments import open_station
from labctl.instruments.station import DEFAULT_REPLY_SPIN_US
from labctl.instruments.transports import make_transport
from labctl.instruments.transports.base import SPIN_BACKOFF


def numbered(line: str) -> str | None:
    word, _, n = line.partition(" ")
    if word == "TWO?":  # two lines for one query: the second waits in pyvisa-py's buffer
        return f"A{n}\nB{n}"
    return f"R{n}" if word == "Q?" else None


def test_watched_replies_are_whole_and_in_order():
    with LineServer(numbered) as srv:
        t = make_transport(srv.resource, name="psu", timeout=2.0, reply_spin=0.01)
        with t:
            for i in range(300):
                assert t.query(f"Q? {i}") == f"R{i}"
                if i % 50 == 0:  # a reply line already buffered is seen at once, not watched for
                    assert t.query(f"TWO? {i}") == f"A{i}"
                    assert t.read() == f"B{i}"
        assert srv.wait_received(306)[-1] == "Q? 299"


def test_a_slow_instrument_is_waited_for_without_watching_most_of_the_time():
    """An instrument slower than the watch costs one watch in SPIN_BACKOFF + 1 queries: the
    CPU of this thread stays far below one watch a query."""

    def slow(line: str) -> str | None:
        time.sleep(0.02)
        return numbered(line)

    watch = 0.005
    queries = 16
    assert SPIN_BACKOFF >= 8
    with LineServer(slow) as srv:
        t = make_transport(srv.resource, name="dmm", timeout=2.0, reply_spin=watch)
        with t:
            cpu = time.thread_time()
            for i in range(queries):
                assert t.query(f"Q? {i}") == f"R{i}"
            cpu = time.thread_time() - cpu
    assert cpu < queries * watch / 3, f"{cpu * 1e3:.1f} ms of CPU for {queries} slow queries"


def test_a_dropped_link_ends_the_watch_and_is_reported_as_before():
    srv = LineServer(numbered)
    t = make_transport(srv.resource, name="bert", timeout=0.5, reconnect_delay=0, reconnect_attempts=0,
                       reply_spin=0.01)
    t.open()
    assert t.query("Q? 1") == "R1"
    srv.close()
    from labctl.errors import InstrumentDisconnected

    with pytest.raises(InstrumentDisconnected):
        t.query("Q? 2")
    t.close()


def test_serial_port_watches_for_the_reply_too():
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    path = os.ttyname(slave)

    def answer() -> None:
        buf = b""
        while b"\n" not in buf:
            buf += os.read(master, 100)
        time.sleep(0.001)
        os.write(master, b"24.5\r\n")

    try:
        t = make_transport(path, name="chamber", timeout=1.0, reply_spin=0.01)
        with t:
            helper = threading.Thread(target=answer)
            helper.start()
            assert t.query("TEMP?") == "24.5"
            helper.join()
    finally:
        for fd in (master, slave):
            os.close(fd)


def _fixture(resource: str, **options) -> Fixture:
    return Fixture.model_validate({
        "station": "unit-bench",
        "roles": {"psu": {"driver": "keysight-e36312a", "resource": resource, "options": options}},
    })


def test_role_option_sets_the_watch_and_a_bad_value_is_one_clear_line():
    address = "TCPIP0::127.0.0.1::9::SOCKET"  # nothing is opened here
    with open_station(_fixture(address)) as st:
        assert st.entry("psu").driver.transport.reply_spin == DEFAULT_REPLY_SPIN_US * 1e-6
    with open_station(_fixture(address, reply_spin_us=0)) as st:
        assert st.entry("psu").driver.transport.reply_spin == 0
    with open_station(_fixture(address, reply_spin_us=50)) as st:
        assert st.entry("psu").driver.transport.reply_spin == pytest.approx(50e-6)
    for bad in ("fast", -1, 1e6, True):
        with pytest.raises(FixtureError, match=r"roles\.psu\.options\.reply_spin_us") as info:
            open_station(_fixture(address, reply_spin_us=bad))
        assert "\n" not in info.value.message and info.value.hint


def _trial_of(watched: float, slept: float, trial=None):
    """Run one whole trial whose watched queries take ``watched`` s and the others ``slept``."""
    from labctl.instruments.transports.watch import BLOCK, BLOCKS, WatchTrial

    trial = trial or WatchTrial()
    asked = []
    for _ in range(2 * BLOCK * BLOCKS):
        watch = trial.watch()
        asked.append(watch)
        trial.took(watched if watch else slept)
    return trial, asked


def test_a_trial_keeps_watching_only_where_it_saves_time():
    from labctl.instruments.transports.watch import BLOCK, MARGIN

    trial, asked = _trial_of(40e-6, 60e-6)
    assert trial.trials == 1 and trial.watching
    assert asked[:BLOCK] == [True] * BLOCK and asked[BLOCK:2 * BLOCK] == [False] * BLOCK  # blocks take turns
    assert asked.count(True) == asked.count(False)
    trial, _ = _trial_of(60e-6, 40e-6)  # watching delays the reply (seen on a VM): the queries sleep
    assert not trial.watching
    trial, _ = _trial_of(50e-6 * (1 - MARGIN / 2), 50e-6)  # a draw goes to sleeping (no CPU spent)
    assert not trial.watching


def test_a_trial_goes_by_the_typical_query_not_a_rare_stall():
    from labctl.instruments.transports.watch import BLOCK, BLOCKS, WatchTrial

    trial = WatchTrial()
    for i in range(2 * BLOCK * BLOCKS):
        watch = trial.watch()
        stall = watch and i % 50 == 0  # a few watched queries hit a 40 ms stall of the machine
        trial.took(0.04 if stall else (40e-6 if watch else 60e-6))
    assert trial.watching


def test_the_decision_holds_between_trials_and_the_next_trial_can_change_it():
    from labctl.instruments.transports.watch import SETTLED

    trial, _ = _trial_of(40e-6, 60e-6)
    for _ in range(SETTLED):
        assert trial.watch()
        trial.took(80e-6)  # meanwhile the machine changed; nothing is decided between trials
    assert trial.watching and trial.trials == 1
    _trial_of(80e-6, 50e-6, trial)
    assert trial.trials == 2 and not trial.watching
    trial.reset()  # a new connection starts with a trial
    assert trial.watch() and trial.trials == 2


def test_a_connection_where_watching_does_not_pay_stops_watching():
    """A real socket, looks that cost more than they can save (each takes 0.5 ms here): the
    trial measures that the watched queries are slower, and the queries sleep from then on."""
    from labctl.instruments.transports.watch import BLOCK, BLOCKS

    with LineServer(numbered) as srv:
        t = make_transport(srv.resource, name="psu", timeout=2.0, reply_spin=0.002)
        with t:
            slow_when_watched = t._reply_waiting

            def look() -> bool:
                time.sleep(0.0005)  # every look costs what it would save
                return slow_when_watched()

            t._reply_waiting = look
            for i in range(2 * BLOCK * BLOCKS):
                assert t.query(f"Q? {i}") == f"R{i}"
            assert t.watch_trial.trials == 1 and not t.watch_trial.watching
