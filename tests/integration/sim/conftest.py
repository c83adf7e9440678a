"""A simulated lab per test, on free loopback ports and its own ptys; clients are pyvisa-py
and pyserial, exactly as a lab engineer's scripts would be."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import pyvisa
import serial

from labctl.clock import ManualClock
from labctl.fixture import load_fixture
from labctl.sim.lab import SimulatedLab
from labctl.sim.testing import isolated_fixture

pytestmark = pytest.mark.timeout(60)


class Console:
    """The DUT console through pyserial: ``cmd("sensors")`` returns the lines before OK."""

    def __init__(self, path: str) -> None:
        self.port = serial.Serial(path, 115200, timeout=2)

    def raw(self, text: str) -> list[str]:
        self.port.write((text + "\n").encode())
        lines = []
        while True:
            line = self.port.readline().decode().rstrip("\r\n")
            if not line:
                raise TimeoutError(f"no OK/ERR after {text!r}; got {lines}")
            lines.append(line)
            if line == "OK" or line.startswith("ERR"):
                return lines

    def cmd(self, text: str) -> list[str]:
        lines = self.raw(text)
        assert lines[-1] == "OK", lines
        return lines[:-1]

    def table(self, text: str) -> dict[str, str]:
        return {ln.split()[0]: ln.split()[1] for ln in self.cmd(text)}

    def close(self) -> None:
        self.port.close()


@pytest.fixture
def fixture_path(tmp_path):
    return isolated_fixture(tmp_path, time_scale=600)


@pytest.fixture
def lab(fixture_path) -> Iterator[SimulatedLab]:
    with SimulatedLab(load_fixture(fixture_path)) as lab:
        yield lab


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def manual_lab(fixture_path, clock) -> Iterator[SimulatedLab]:
    """A lab whose time moves only when the test advances ``clock``."""
    with SimulatedLab(load_fixture(fixture_path), clock=clock) as lab:
        yield lab


@pytest.fixture
def dp832_lab(fixture_path, clock):
    """A lab whose supply is the Rigol DP832 (CH1 feeds the board), on a manual clock."""
    fixture = load_fixture(fixture_path)
    fixture.roles["psu"].driver = "rigol-dp832"
    with SimulatedLab(fixture, clock=clock) as lab:
        yield lab, fixture


@pytest.fixture
def rm() -> Iterator[pyvisa.ResourceManager]:
    manager = pyvisa.ResourceManager("@py")
    yield manager
    manager.close()


def _opener(rm: pyvisa.ResourceManager, lab: SimulatedLab, request) -> Callable[[str], object]:
    def open_role(role: str, **kw):
        opts = {"read_termination": "\n", "write_termination": "\n", "timeout": 2000, **kw}
        res = rm.open_resource(lab.addresses[role], **opts)
        request.addfinalizer(res.close)
        return res

    return open_role


@pytest.fixture
def visa(rm, lab, request):
    return _opener(rm, lab, request)


@pytest.fixture
def mvisa(rm, manual_lab, request):
    return _opener(rm, manual_lab, request)


@pytest.fixture
def console(lab) -> Iterator[Console]:
    c = Console(lab.addresses["dut"])
    yield c
    c.close()


@pytest.fixture
def mconsole(manual_lab) -> Iterator[Console]:
    c = Console(manual_lab.addresses["dut"])
    yield c
    c.close()


def power_on(psu, volts: float = 5.0, clock: ManualClock | None = None) -> None:
    """CH1 to ``volts`` with a 5 A limit, output on; a manual clock moves 1 s (sequencing)."""
    psu.write(f"VOLT {volts},(@1);CURR 5,(@1);:OUTP ON,(@1)")
    assert psu.query("OUTP? (@1)") == "1"
    if clock is not None:
        clock.advance(1.0)


def scpi_errors(res, query: str = "SYST:ERR?", empty: tuple[str, ...] = ("0,", "+0,")) -> list[str]:
    """Read the error queue until its "no error" entry (a reply starting with one of ``empty``);
    the entries before it, oldest first. Fails if the queue never empties."""
    out = []
    for _ in range(25):
        reply = res.query(query)
        if reply.startswith(empty):
            return out
        out.append(reply)
    raise AssertionError(f"error queue never emptied: {out}")
