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


class Queueing(Echo):
    """An echo with an instrument's error queue."""

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[int] = []

    def push_error(self, code: int, text: str | None = None) -> None:
        self.errors.append(code)


def test_a_runaway_line_is_refused_whole_and_queues_too_much_data():
    """Nothing of a line longer than the input buffer runs: not its head, and not its tail
    once its terminator comes (`VOLT 1` + 150 kB of blanks + `OUTP ON` must not switch on)."""
    echo = Queueing()
    s = LineSession(echo, FaultGate(), max_line=8)
    assert s.feed(b"x" * 20) == (b"", False)
    assert s.feed(b"y" * 20) == (b"", False)
    assert s.feed(b" OUTP ON\nz?\n") == (b"Z?\n", False)
    assert echo.lines == ["z?"] and echo.errors == [-223]
    # a whole line too long in one read, between two good ones
    assert s.feed(b"a?\n" + b"w" * 20 + b"\nb?\n") == (b"A?\nB?\n", False)
    assert echo.lines == ["z?", "a?", "b?"] and echo.errors == [-223, -223]


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
