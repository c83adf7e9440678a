"""Where a simulated SCPI query's time goes on the server's side: the time ``labctl sim serve``
spends handling each line (``LineSession.feed``: the line parsed, the emulator's answer, the
physics it integrates), beside the round trip a pyvisa client sees, and the echo floor.

The served lab runs in a child process of its own, on one CPU (as in ``python -m
labctl.bench``), with ``LineSession.feed`` timed there; this process asks on the other CPU,
through pyvisa-py, ``MEAS:VOLT? (@1)`` and ``*IDN?`` of the supply in turns (and the echo
server of ``labctl.bench.simlab``). Printed per query: the round trip (best of the rounds),
and the server's handling time (median, mean, 90th percentile) with the share of queries
that integrated the board's physics (a new reading of the supply's ADC).

    .venv/bin/python bench/sim_server_time.py [--queries 1000] [--rounds 5]

Not a test: it never fails on time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from labctl.bench.common import current_cpus, pin, placement
from labctl.bench.simlab import _ECHO, _best_interleaved

_SERVER = r"""
import json, os, sys, time
from collections import defaultdict
from pathlib import Path
from labctl.fixture import load_fixture
from labctl.sim import transport
from labctl.sim.lab import SimulatedLab
from labctl.sim.testing import isolated_fixture

feed, took, integrated = transport.LineSession.feed, defaultdict(list), defaultdict(int)
lab = SimulatedLab(load_fixture(isolated_fixture(Path(sys.argv[1]))))
bench = lab.instrument("psu").bench

def timed(self, data):
    solves, start = bench.solves, time.perf_counter_ns()
    out = feed(self, data)
    key = data.decode("latin-1").strip()
    took[key].append(time.perf_counter_ns() - start)
    integrated[key] += bench.solves != solves
    return out

transport.LineSession.feed = timed
lab.start()
print(lab.addresses["psu"], flush=True)
sys.stdin.readline()  # the client is done
print(json.dumps({k: [v, integrated[k]] for k, v in took.items()}), flush=True)
lab.stop()
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=1000, help="queries of each kind a round")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    import pyvisa

    client, server = placement()
    everywhere = current_cpus()
    with tempfile.TemporaryDirectory() as tmp:
        pin(server)  # the children inherit it
        echo = subprocess.Popen([sys.executable, "-c", _ECHO], stdout=subprocess.PIPE, text=True)
        lab = subprocess.Popen([sys.executable, "-c", _SERVER, str(Path(tmp) / "lab")], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
        try:
            port, address = int(echo.stdout.readline()), lab.stdout.readline().strip()
            pin(client)
            rm = pyvisa.ResourceManager("@py")
            floor = rm.open_resource(f"TCPIP0::127.0.0.1::{port}::SOCKET", read_termination="\n",
                                     write_termination="\n")
            psu = rm.open_resource(address, read_termination="\n", write_termination="\n")
            trips = _best_interleaved({"echo": lambda: floor.query("MEAS:VOLT? (@1)"),
                                       "MEAS:VOLT? (@1)": lambda: psu.query("MEAS:VOLT? (@1)"),
                                       "*IDN?": lambda: psu.query("*IDN?")}, args.queries, args.rounds)
            psu.close()
            floor.close()
            rm.close()
            lab.stdin.write("done\n")
            lab.stdin.flush()
            served = json.loads(lab.stdout.readline())
        finally:
            pin(everywhere)
            echo.kill()
            lab.kill()
            echo.wait()
            lab.wait()
    print(f"round trip (best of {args.rounds} rounds of {args.queries}), and the server's handling of each line:")
    print(f"  {'echo server':18s} {trips['echo'] * 1e6:7.1f} µs")
    for query in ("MEAS:VOLT? (@1)", "*IDN?"):
        times, integrations = served[query]
        times.sort()
        n = len(times)
        print(f"  {query:18s} {trips[query] * 1e6:7.1f} µs ({trips[query] / trips['echo']:.2f}× echo); server: "
              f"median {times[n // 2] / 1e3:.1f} µs, mean {sum(times) / n / 1e3:.1f} µs, "
              f"p90 {times[int(n * 0.9)] / 1e3:.1f} µs; physics integrated in {integrations / n:.1%} of {n:,}")


if __name__ == "__main__":
    main()
