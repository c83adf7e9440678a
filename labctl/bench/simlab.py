"""The simulated lab's round trips against a bare echo server measured in the same run."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

from labctl.bench import Row


def _echo_server() -> tuple[socket.socket, int]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve() -> None:
        conn, _ = srv.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn:
            while data := conn.recv(4096):
                conn.sendall(b"+4.99870000E+00\n" * data.count(b"\n"))

    threading.Thread(target=serve, daemon=True).start()
    return srv, srv.getsockname()[1]


def _per_query(fn, n: int) -> float:  # noqa: ANN001
    for _ in range(20):
        fn()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def rows(tmp: Path, quick: bool) -> list[Row]:
    import pyvisa
    import serial
    import yaml

    from labctl.sim.testing import isolated_fixture, served_lab

    n = 200 if quick else 2000
    fixture = isolated_fixture(tmp / "simlab")
    roles = yaml.safe_load(fixture.read_text())["roles"]
    srv, port = _echo_server()
    rm = pyvisa.ResourceManager("@py")
    with served_lab(fixture):
        echo = rm.open_resource(f"TCPIP0::127.0.0.1::{port}::SOCKET", read_termination="\n", write_termination="\n")
        psu = rm.open_resource(roles["psu"]["resource"], read_termination="\n", write_termination="\n")
        floor = _per_query(lambda: echo.query("MEAS:VOLT? (@1)"), n)
        scpi = _per_query(lambda: psu.query("MEAS:VOLT? (@1)"), n)
        con = serial.Serial(roles["dut"]["resource"], 115200, timeout=2)

        def sensors() -> None:
            con.write(b"sensors\n")
            while con.readline().strip() not in (b"OK", b""):
                pass

        console = _per_query(sensors, max(n // 4, 20))
        con.close()
        psu.close()
        echo.close()
    rm.close()
    srv.close()
    return [
        Row("sim: SCPI query (pyvisa-py) vs echo server", "≤ 1.5× echo",
            f"{scpi * 1e6:.0f} µs vs {floor * 1e6:.0f} µs", scpi / floor / 1.5),
        Row("sim: DUT console query over the pty vs SCPI", "≤ 2× SCPI",
            f"{console * 1e6:.0f} µs vs {scpi * 1e6:.0f} µs", console / scpi / 2.0),
    ]
