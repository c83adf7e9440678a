"""Benchmark: what the simulated lab costs per query, against a bare socket echo.

Starts the default station (on free ports) and asks the same thing N times along several
paths; prints microseconds per query and ratios measured in this one run (never fails on
time). Also reports how many simulated seconds of physics one wall second integrates.

    bare echo server -> sim *IDN? (parser only) -> sim MEAS (parser + physics) -> DAQ scan
    -> DUT console over a pty

Run: .venv/bin/python bench/sim_roundtrip.py [N]
"""

from __future__ import annotations

import socket
import sys
import tempfile
import threading
import time
from pathlib import Path


def echo_server() -> tuple[socket.socket, int]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def run() -> None:
        conn, _ = srv.accept()
        with conn:
            while data := conn.recv(4096):
                conn.sendall(b"+4.99870000E+00\n" * data.count(b"\n"))

    threading.Thread(target=run, daemon=True).start()
    return srv, srv.getsockname()[1]


def ask_socket(sock: socket.socket, line: bytes) -> bytes:
    sock.sendall(line)
    data = b""
    while not data.endswith(b"\n"):
        data += sock.recv(4096)
    return data


def timed(label: str, n: int, fn) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    per = (time.perf_counter() - start) / n * 1e6
    print(f"  {label:44} {per:9.1f} us/query")
    return per


def main(n: int = 1000) -> None:
    import pyvisa
    import serial

    from labctl.clock import ManualClock
    from labctl.fixture import load_fixture
    from labctl.sim.lab import SimulatedLab
    from labctl.sim.physics.bench import Bench
    from labctl.sim.physics.dut import DutParams
    from labctl.sim.testing import isolated_fixture

    tmp = Path(tempfile.mkdtemp(prefix="labctl-bench-"))
    fixture = load_fixture(isolated_fixture(tmp, time_scale=60))
    srv, port = echo_server()
    print(f"simulated lab round trips, N={n}")
    with SimulatedLab(fixture) as lab, socket.create_connection(("127.0.0.1", port)) as echo:
        host, sim_port = lab.addresses["psu"].split("::")[1:3]
        with socket.create_connection((host, int(sim_port))) as raw:
            base = timed("bare echo server (raw socket)", n, lambda: ask_socket(echo, b"X?\n"))
            idn = timed("sim *IDN? (raw socket)", n, lambda: ask_socket(raw, b"*IDN?\n"))
            meas = timed("sim MEAS:CURR? (@1) (raw socket)", n, lambda: ask_socket(raw, b"MEAS:CURR? (@1)\n"))
        rm = pyvisa.ResourceManager("@py")
        psu = rm.open_resource(lab.addresses["psu"], read_termination="\n", write_termination="\n")
        daq = rm.open_resource(lab.addresses["daq"], read_termination="\n", write_termination="\n")
        visa = timed("sim MEAS:CURR? (@1) (pyvisa-py)", n, lambda: psu.query("MEAS:CURR? (@1)"))
        scan = timed("sim MEAS:TEMP? TC,K,(@101:104) (pyvisa-py)", n // 4,
                     lambda: daq.query("MEAS:TEMP? TC,K,(@101:104)"))
        con = serial.Serial(lab.addresses["dut"], 115200, timeout=2)

        def sensors() -> None:
            con.write(b"sensors\n")
            while con.readline().strip() != b"OK":
                pass

        console = timed("console sensors (pyserial over pty)", n // 4, sensors)
        con.close()
        psu.close()
        daq.close()
        rm.close()
    srv.close()

    clock = ManualClock()
    bench = Bench(DutParams.build("BENCH-1", 7), clock=clock)
    bench.psu[1].v_set, bench.psu[1].on = 5.0, True
    start = time.perf_counter()
    clock.advance(3600)
    bench.update()
    sim_per_wall = 3600 / (time.perf_counter() - start)

    print("ratios (this run):")
    print(f"  *IDN? / bare echo            {idn / base:6.1f}x")
    print(f"  MEAS (physics) / *IDN?        {meas / idn:6.1f}x")
    print(f"  pyvisa-py / raw socket        {visa / meas:6.1f}x")
    print(f"  4-channel DAQ scan / MEAS     {scan / visa:6.1f}x")
    print(f"  console sensors / MEAS        {console / visa:6.1f}x")
    print(f"physics: {sim_per_wall:,.0f} simulated s per wall s (time_scale headroom)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
