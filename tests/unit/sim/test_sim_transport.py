"""The line session between a socket (or pty) and an emulator: splitting, faults."""

from __future__ import annotations

from labctl.sim.faults import FaultGate
from labctl.sim.transport import LineSession


class Echo:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def process(self, line: str) -> str | None:
        self.lines.append(line)
        return line.upper() if line.endswith("?") else None


def test_lines_end_at_cr_lf_or_crlf_and_may_come_in_pieces():
    echo = Echo()
    s = LineSession(echo, FaultGate())
    assert s.feed(b"a?\r\nb 1\rc?\n") == (b"A?\nC?\n", False)
    assert s.feed(b"  d") == (b"", False)
    assert s.feed(b"?  \n\n") == (b"D?\n", False)
    assert echo.lines == ["a?", "b 1", "c?", "d?"]


def test_a_runaway_line_is_dropped():
    echo = Echo()
    s = LineSession(echo, FaultGate(), max_line=8)
    assert s.feed(b"x" * 20) == (b"", False)
    assert s.feed(b"y?\n") == (b"Y?\n", False)
    assert echo.lines == ["y?"]


def test_armed_faults_count_lines_and_close():
    echo = Echo()
    gate = FaultGate()
    s = LineSession(echo, gate)
    assert not gate.armed
    gate.add({"fault": "instrument_timeout", "count": 1})
    gate.add({"fault": "garbage_reply", "reply": "overload", "after": 2})
    gate.add({"fault": "disconnect", "after": 3})
    assert gate.armed
    assert s.feed(b"a?\nb?\nc?\nd?\n") == (b"+9.90000000E+37\n", True)  # a swallowed, b garbled, c closes
    assert echo.lines == ["b?"] and s.buffer == b"d?\n"  # c closed the connection
    gate.clear()
    assert not gate.armed
