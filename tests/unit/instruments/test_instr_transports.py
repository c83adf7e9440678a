"""Transports: error translation, reconnect policy, session log; VISA over real loopback
sockets and pyserial over a real pty."""

from __future__ import annotations

import os
import tty

import pytest
from instr_linesrv import LineServer

from labctl.errors import InstrumentDisconnected, InstrumentTimeout
from labctl.instruments.sessionlog import SessionLog
from labctl.instruments.transports import is_serial_path, make_transport
from labctl.instruments.transports.base import Transport
from labctl.instruments.transports.protocol import ProtocolTransport


def scpi(line: str) -> str | None:
    if line == "*IDN?":
        return "Keysight Technologies,E36312A,MY1,1.0"
    if "?" in line.split(" ")[0]:
        return "+1.00000000E+00"
    return None


class FlakyTransport(Transport):
    """Drops the link on chosen calls; counts opens (a unit-test double of one module)."""

    kind = "flaky"

    def __init__(self, drops: int, reopen_ok: bool = True) -> None:
        super().__init__("FLAKY::1", name="psu", timeout=0.5, reconnect_delay=0, reconnect_attempts=2)
        self.drops = drops
        self.reopen_ok = reopen_ok
        self.opens = 0
        self.sent: list[str] = []

    def _open(self) -> None:
        self.opens += 1
        if self.opens > 1 and not self.reopen_ok:
            raise ConnectionRefusedError("still down")

    def _close(self) -> None:
        pass

    def _write(self, command: str) -> None:
        if self.drops:
            self.drops -= 1
            raise ConnectionResetError("reset by peer")
        self.sent.append(command)

    def _read(self) -> str:
        return "1"


def test_timeout_names_instrument_resource_and_command():
    t = ProtocolTransport([("MEAS:VOLT? (@1)", TimeoutError)], name="psu", resource="TCPIP0::h::5025::SOCKET")
    with pytest.raises(InstrumentTimeout) as info:
        t.query("MEAS:VOLT? (@1)")
    err = info.value
    assert (err.instrument, err.resource, err.command) == ("psu", "TCPIP0::h::5025::SOCKET", "MEAS:VOLT? (@1)")
    assert "no answer within 2 s" in str(err) and "psu" in str(err) and "MEAS:VOLT?" in str(err)
    assert isinstance(err, TimeoutError)


def test_query_is_sent_again_after_a_reconnect():
    t = FlakyTransport(drops=1)
    assert t.query("OUTP? (@1)") == "1"
    assert t.opens == 2 and t.sent == ["OUTP? (@1)"]


def test_write_is_never_replayed_after_a_reconnect():
    t = FlakyTransport(drops=1)
    with pytest.raises(InstrumentDisconnected, match="never replays a write") as info:
        t.write("OUTP 1,(@1)")
    assert info.value.command == "OUTP 1,(@1)"
    assert t.opens == 2, "reconnected for the next command"
    assert t.sent == [], "the output-on command was not sent again by the transport"
    t.write("VOLT 1,(@1)")  # the link works again
    assert t.sent == ["VOLT 1,(@1)"]


def test_reconnect_is_bounded():
    t = FlakyTransport(drops=1, reopen_ok=False)
    with pytest.raises(InstrumentDisconnected):
        t.query("*IDN?")
    assert t.opens == 1 + t.reconnect_attempts


def test_session_log_records_every_exchange(tmp_path):
    path = tmp_path / "run" / "session.jsonl"
    with SessionLog(path) as log:
        t = ProtocolTransport([("*IDN?", "A,B,C,D"), ("*CLS", None), ("X?", TimeoutError)], session_log=log, name="dmm")
        t.query("*IDN?")
        t.write("*CLS")
        with pytest.raises(InstrumentTimeout):
            t.query("X?")
    kinds = [(r["kind"], r["text"]) for r in log.records if r["kind"] != "note"]
    assert kinds[:4] == [("query", "*IDN?"), ("reply", "A,B,C,D"), ("write", "*CLS"), ("query", "X?")]
    assert kinds[4][0] == "error" and "timeout" in kinds[4][1]
    assert all(r["instrument"] == "dmm" and isinstance(r["t"], float) for r in log.records)
    assert SessionLog.read_jsonl(path) == log.records


def test_resource_kinds():
    assert is_serial_path("/dev/ttyUSB0") and is_serial_path("COM3")
    assert not is_serial_path("TCPIP0::127.0.0.1::5025::SOCKET")
    assert make_transport("/dev/ttyUSB0").kind == "serial"
    assert make_transport("ASRL/dev/ttyUSB0::INSTR").kind == "visa"
    with pytest.raises(ValueError):
        make_transport("x", kind="carrier-pigeon")


def test_visa_socket_query_and_write():
    with LineServer(scpi) as srv:
        t = make_transport(srv.resource, name="psu", timeout=1.0)
        with t:
            assert t.query("*IDN?").startswith("Keysight Technologies,E36312A")
            t.write("VOLT 1,(@1)")
            assert t.query("VOLT? (@1)") == "+1.00000000E+00"
        assert srv.wait_received(3) == ["*IDN?", "VOLT 1,(@1)", "VOLT? (@1)"]


def test_visa_open_refused_is_a_clear_disconnect():
    with LineServer(scpi) as srv:
        resource = srv.resource
    t = make_transport(resource, name="psu", timeout=0.5)
    with pytest.raises(InstrumentDisconnected, match="nothing listens at this address") as info:
        t.open()
    assert info.value.resource == resource and info.value.hint


def test_visa_silent_instrument_times_out_and_late_replies_are_dropped():
    with LineServer(scpi) as srv:
        t = make_transport(srv.resource, name="dmm", timeout=0.3, reconnect_attempts=0)
        with t:
            srv.silent = True
            with pytest.raises(InstrumentTimeout) as info:
                t.query("MEAS:VOLT:DC? DEF,DEF")
            assert info.value.command == "MEAS:VOLT:DC? DEF,DEF"
            srv.silent = False
            assert t.query("*IDN?").startswith("Keysight")


def test_visa_dropped_connection_reconnects_and_replays_the_query():
    log = SessionLog()
    with LineServer(scpi) as srv:
        t = make_transport(srv.resource, name="bert", timeout=0.5, reconnect_delay=0, session_log=log)
        with t:
            assert t.query("*IDN?")
            srv.drop()  # the next line closes the connection unanswered
            assert t.query("*IDN?").startswith("Keysight")
        assert srv.received == ["*IDN?", "*IDN?"]
    notes = [r["text"] for r in log.records if r["kind"] == "note"]
    assert any("reconnected" in n for n in notes) and any("sent again" in n for n in notes)


def test_visa_dropped_connection_without_server_raises_disconnected():
    srv = LineServer(scpi)
    t = make_transport(srv.resource, name="bert", timeout=0.5, reconnect_delay=0, reconnect_attempts=1)
    t.open()
    assert t.query("*IDN?")
    srv.close()
    with pytest.raises(InstrumentDisconnected):
        t.query("*IDN?")
    t.close()


@pytest.fixture
def pty_pair():
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    yield master, os.ttyname(slave)
    for fd in (master, slave):
        try:
            os.close(fd)
        except OSError:
            pass


def test_serial_over_a_pty(pty_pair):
    master, path = pty_pair
    t = make_transport(path, name="chamber", timeout=0.5, options={"baud_rate": 9600})
    with t:
        t.write("SETP 25.0")
        assert os.read(master, 100) == b"SETP 25.0\n"
        os.write(master, b"84.7\r\n")
        assert t.read() == "84.7"
        with pytest.raises(InstrumentTimeout):
            t.query("TEMP?")  # nobody answers


def test_serial_read_until_takes_a_table_arriving_in_one_write_and_keeps_what_follows(pty_pair):
    """A console's reply arrives in one read: the lines up to the end line are returned (no
    more than max_lines), the rest stay for the next read, in order, byte for byte."""
    master, path = pty_pair
    t = make_transport(path, name="dut", timeout=0.5)
    with t:
        os.write(master, b"a 1\r\nb 2\nOK\nlater 1\nlater 2\r\npart")
        assert t.read_until(lambda line: line == "OK", 10, float("inf")) == ["a 1", "b 2", "OK"]
        assert t.read() == "later 1"
        assert t.read_until(lambda line: False, 1, float("inf")) == ["later 2"]
        os.write(master, b"ial\nx\ny\nz\n")
        assert t.read_until(lambda line: False, 3, float("inf")) == ["partial", "x", "y"]
        assert t.read() == "z"
        with pytest.raises(InstrumentTimeout):
            t.read()  # nothing left over


def test_serial_missing_device_is_a_clear_disconnect(tmp_path):
    t = make_transport(str(tmp_path / "nothing"), name="dut", timeout=0.5)
    with pytest.raises(InstrumentDisconnected, match="no such serial device"):
        t.open()


def test_visa_resource_manager_closed_by_someone_else_is_replaced():
    import pyvisa

    from labctl.instruments.transports.visa import resource_manager

    resource_manager("@py")
    pyvisa.ResourceManager("@py").close()  # e.g. a user script or a third-party driver
    again = resource_manager("@py")
    assert again.session is not None  # a closed manager would raise InvalidSession here


def test_read_until_stops_at_the_end_line_and_logs_each_line():
    log = SessionLog()
    t = ProtocolTransport([(None, "a 1"), (None, "b 2"), (None, "OK"), (None, "later")], session_log=log)
    assert t.read_until(lambda line: line == "OK", 10, float("inf")) == ["a 1", "b 2", "OK"]
    assert [r["text"] for r in log.records if r["kind"] == "reply"] == ["a 1", "b 2", "OK"]
    assert t.read() == "later"  # what follows the end line stays for the next read


def test_read_until_stops_at_max_lines_and_at_the_deadline():
    t = ProtocolTransport([(None, "x")] * 5)
    assert t.read_until(lambda line: False, 2, float("inf")) == ["x", "x"]
    assert t.read_until(lambda line: False, 9, 0.0) == []  # deadline passed: nothing more is read
    with pytest.raises(InstrumentTimeout):
        ProtocolTransport([(None, TimeoutError)], name="dut").read_until(lambda line: False, 3, float("inf"))


def test_record_lines_keeps_them_like_records_in_order_and_in_the_file(tmp_path):
    log = SessionLog(tmp_path / "s.jsonl", max_records=4)
    log.record("dut", "/dev/x", "query", "sensors")
    log.record_lines("dut", "/dev/x", "reply", ["a 1", "b 2", "OK"])
    log.record_lines("dut", "/dev/x", "reply", [])
    assert [(r["kind"], r["text"]) for r in log.records] == [("query", "sensors"), ("reply", "a 1"), ("reply", "b 2"),
                                                            ("reply", "OK")]
    assert log.total == 4 and set(log.records[1]) == {"t", "instrument", "resource", "kind", "text"}
    log.close()
    assert (tmp_path / "s.jsonl").read_text().count("\n") == 4


def test_visa_reply_bytes_that_are_not_text_come_back_escaped_never_raised():
    """A garbled line (0xff, a lone 0x80, latin-1's degree sign) is a reply a check reports
    with what came, not a UnicodeDecodeError; UTF-8 is read as text."""
    replies = {"GARB?": "\xff\xfe\x80 junk", "TEMP?": "25.0 \xb0C"}
    with LineServer(lambda line: replies.get(line, "+1")) as srv:
        t = make_transport(srv.resource, name="psu", timeout=1.0)
        with t:
            assert t.query("GARB?") == "\\xff\\xfe\\x80 junk"
            assert t.query("TEMP?") == "25.0 \\xb0C"
            assert t.query("*IDN?") == "+1"  # the next exchange is unaffected
            t.write("VOLT 5 µV")  # a plan's text that is not ASCII goes out as UTF-8
        assert srv.wait_received(4)[-1] == "VOLT 5 µV".encode().decode("latin-1")


@pytest.mark.parametrize("resource", ["TCPIP0::psu-bench3.invalid::5025::SOCKET", "TCPIP0::127.0.0.1::99999::SOCKET"])
def test_visa_host_that_does_not_resolve_or_port_out_of_range_is_a_clear_disconnect(resource):
    t = make_transport(resource, name="psu", timeout=0.5)
    with pytest.raises(InstrumentDisconnected, match="cannot open connection") as info:
        t.open()
    assert info.value.resource == resource and info.value.hint
