"""Benchmark: what the instrument layer costs per query, against raw sockets and raw pyvisa.

Serves a minimal SCPI responder on a loopback port and asks the same query N times through
four paths; prints microseconds per query and ratios measured in this one run (never fails
on time):

    raw socket  ->  raw pyvisa-py  ->  labctl transport (+session log)  ->  labctl role (+profile, parser)

Run: .venv/bin/python bench/instruments_overhead.py [N]
"""

from __future__ import annotations

import socket
import sys
import time

REPLY = "+4.99870000E+00"


class Responder:
    """Answers every query with one reading (the simulated lab's TCP host serves it)."""

    def process(self, line: str) -> str | None:
        return REPLY if "?" in line else None


def timed(label: str, n: int, fn) -> float:
    fn()  # warm up
    start = time.perf_counter()
    for _ in range(n):
        fn()
    per = (time.perf_counter() - start) / n * 1e6
    print(f"  {label:38} {per:9.1f} us/query")
    return per


def main(n: int = 2000) -> None:
    import pyvisa

    from labctl.fixture.model import Fixture
    from labctl.instruments import open_station
    from labctl.sim.server import TcpEndpoint

    endpoint = TcpEndpoint("127.0.0.1", 0, Responder())
    endpoint.start()
    port = endpoint.port
    resource = endpoint.address
    print(f"{n} queries of MEAS:VOLT? (@1) against a loopback responder ({resource})")

    raw = socket.create_connection(("127.0.0.1", port), timeout=2)
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def raw_query() -> bytes:
        raw.sendall(b"MEAS:VOLT? (@1)\n")
        data = b""
        while not data.endswith(b"\n"):
            data += raw.recv(4096)
        return data

    rm = pyvisa.ResourceManager("@py")
    inst = rm.open_resource(resource, read_termination="\n", write_termination="\n", timeout=2000)
    fixture = Fixture.model_validate(
        {"station": "bench", "roles": {"psu": {"driver": "keysight-e36312a", "resource": resource, "timeout": 2}}}
    )
    station = open_station(fixture)
    psu = station.role("psu")
    transport = station.driver("psu").transport

    t_raw = timed("raw socket", n, raw_query)
    t_visa = timed("raw pyvisa-py query", n, lambda: inst.query("MEAS:VOLT? (@1)"))
    t_tr = timed("labctl VisaTransport.query (+log)", n, lambda: transport.query("MEAS:VOLT? (@1)"))
    t_role = timed("labctl PowerSupply.measure_voltage", n, lambda: psu.measure_voltage("1"))
    print(f"  ratios: pyvisa/raw {t_visa / t_raw:.2f}x, transport/pyvisa {t_tr / t_visa:.2f}x, "
          f"role/pyvisa {t_role / t_visa:.2f}x")
    print(f"  session log kept {len(station.session_log.records)} records")

    station.close()
    inst.close()
    raw.close()
    endpoint.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
