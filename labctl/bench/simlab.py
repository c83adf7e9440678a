"""The simulated lab's round trips, against an out-of-process echo server in the same run.

* SCPI: ``MEAS:VOLT? (@1)`` to the simulated supply through pyvisa-py (the board's physics is
  integrated up to the query's time), and ``*IDN?`` (the server path alone), against the same
  client asking a trivial echo server (another Python process answering every line at once).
* Console: ``sensors`` to the simulated DUT over its pty through labctl's console role,
  against the SCPI query through labctl's supply role (the same client stack).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from labctl.bench import Row
from labctl.bench.common import current_cpus, pin, placement

_ECHO = r"""
import socket, sys, threading
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(4)
print(srv.getsockname()[1], flush=True)
def serve(conn):
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with conn:
        while data := conn.recv(4096):
            conn.sendall(b"+4.99870000E+00\n" * data.count(b"\n"))
while True:
    conn, _ = srv.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
"""


def _per_query(fn, n: int) -> float:  # noqa: ANN001
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def _best_interleaved(fns: dict[str, object], n: int, rounds: int = 5) -> dict[str, float]:
    """Seconds per call of each function: the best of ``rounds`` rounds, the functions taking
    turns within each round (a slow spell of the machine hits them all; other processes only
    ever add time)."""
    for fn in fns.values():
        for _ in range(20):
            fn()  # type: ignore[operator]
    best = {name: float("inf") for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            best[name] = min(best[name], _per_query(fn, n))
    return best


def rows(tmp: Path, quick: bool) -> list[Row]:
    import pyvisa
    import yaml

    from labctl.fixture import load_fixture
    from labctl.instruments import open_station
    from labctl.sim.testing import isolated_fixture, served_lab

    n = 100 if quick else 1000
    fixture = isolated_fixture(tmp / "simlab")
    roles = yaml.safe_load(fixture.read_text())["roles"]
    client_cpus, server_cpus = placement()
    everywhere = current_cpus()
    pin(server_cpus)  # the servers started below inherit it
    echo_proc = subprocess.Popen([sys.executable, "-c", _ECHO], stdout=subprocess.PIPE, text=True)
    try:
        port = int(echo_proc.stdout.readline())
        rm = pyvisa.ResourceManager("@py")
        with served_lab(fixture):
            pin(client_cpus)
            echo = rm.open_resource(f"TCPIP0::127.0.0.1::{port}::SOCKET", read_termination="\n",
                                    write_termination="\n")
            psu = rm.open_resource(roles["psu"]["resource"], read_termination="\n", write_termination="\n")
            got = _best_interleaved({"floor": lambda: echo.query("MEAS:VOLT? (@1)"),
                                     "scpi": lambda: psu.query("MEAS:VOLT? (@1)"),
                                     "idn": lambda: psu.query("*IDN?")}, n // 2)
            floor, scpi, idn = got["floor"], got["scpi"], got["idn"]
            psu.close()
            echo.close()
            station = open_station(load_fixture(fixture))
            try:
                supply, dut = station.role("psu"), station.role("dut")
                got = _best_interleaved({"scpi_role": lambda: supply.measure_voltage("1"),
                                         "console": dut.sensors}, max(n // 8, 20))
                scpi_role, console = got["scpi_role"], got["console"]
            finally:
                station.close()
        rm.close()
    finally:
        pin(everywhere)
        echo_proc.kill()
        echo_proc.wait()
    return [
        Row("sim: SCPI query MEAS:VOLT? (pyvisa-py) vs echo server", "≤ 1.5× echo",
            f"{scpi * 1e6:.0f} µs vs {floor * 1e6:.0f} µs", scpi / floor / 1.5),
        Row("sim: SCPI query *IDN? (server path, no physics) vs echo", "≤ 1.5× echo",
            f"{idn * 1e6:.0f} µs vs {floor * 1e6:.0f} µs", idn / floor / 1.5),
        Row("sim: DUT console query (pty, labctl role) vs SCPI query (labctl role)", "≤ 2× SCPI",
            f"{console * 1e6:.0f} µs vs {scpi_role * 1e6:.0f} µs", console / scpi_role / 2.0),
    ]
