"""One run per bench: the address lock refuses a second holder and names the first; the
kernel frees it when the holder dies."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from labctl.errors import BenchBusy
from labctl.instruments.benchlock import BenchLock, address_key


@pytest.fixture(autouse=True)
def _private_lock_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("LABCTL_LOCK_DIR", str(tmp_path / "locks"))


def test_one_spelling_per_instrument():
    assert address_key("TCPIP0::127.0.0.1::5025::SOCKET") == address_key("tcpip::127.0.0.1::5025::socket")
    assert address_key("ASRL/dev/ttyUSB0::INSTR") == address_key("/dev/ttyUSB0")
    assert address_key("TCPIP0::10.0.0.2::5025::SOCKET") != address_key("TCPIP0::10.0.0.2::5026::SOCKET")


def test_a_second_run_on_a_shared_address_is_refused_and_told_who_holds_it():
    first = BenchLock(["TCPIP0::127.0.0.1::5025::SOCKET", "/tmp/x/dut"], station="bench-a")
    second = BenchLock(["TCPIP::127.0.0.1::5025::SOCKET", "TCPIP0::127.0.0.1::6000::SOCKET"], station="bench-b")
    with first:
        with pytest.raises(BenchBusy) as err:
            second.acquire()
        assert err.value.resource == "TCPIP::127.0.0.1::5025::SOCKET"
        assert err.value.holder["station"] == "bench-a"
        assert "in use by process" in err.value.message and "bench-a" in err.value.message
        assert "nothing was powered" in (err.value.hint or "")
        # all or none: the free address it had taken is given back
        with BenchLock(["TCPIP0::127.0.0.1::6000::SOCKET"], station="bench-c"):
            pass
    with second:  # the first is done: the bench is free
        pass


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    code = ("import sys, time; from labctl.instruments.benchlock import BenchLock; "
            "BenchLock(['TCPIP0::127.0.0.1::5025::SOCKET'], station='s').acquire(); print('held', flush=True); "
            "time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "held"
        with pytest.raises(BenchBusy) as err:
            BenchLock(["TCPIP0::127.0.0.1::5025::SOCKET"], station="t").acquire()
        assert err.value.holder["pid"] == child.pid
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        deadline = time.monotonic() + 5
        while True:
            try:
                with BenchLock(["TCPIP0::127.0.0.1::5025::SOCKET"], station="t"):
                    break
            except BenchBusy:
                assert time.monotonic() < deadline
                time.sleep(0.05)
    finally:
        child.kill()


def test_a_lock_folder_that_is_a_file_is_one_clear_line(tmp_path):
    import pytest

    from labctl.errors import UsageError

    not_a_folder = tmp_path / "locks"
    not_a_folder.write_text("")
    with pytest.raises(UsageError, match=r"cannot keep the bench's locks in .*locks: it is a file, not a folder"):
        BenchLock(["TCPIP0::127.0.0.1::5025::SOCKET"], station="s", directory=not_a_folder).acquire()


def test_spellings_of_one_instrument_are_one_key():
    assert address_key("TCPIP::localhost::5025::SOCKET") == address_key("TCPIP0::127.0.0.1::5025::SOCKET")
    assert address_key("TCPIP0::10.0.0.5::INSTR") == address_key("tcpip::10.0.0.5::inst0::INSTR")
    assert address_key("GPIB::5::INSTR") == address_key("GPIB0::5::INSTR") != address_key("GPIB0::6::INSTR")
