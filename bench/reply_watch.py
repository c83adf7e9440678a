"""Benchmark: does watching for a reply pay on this machine, and what does labctl decide?

A raw pyvisa loop asks the simulated supply (``labctl sim serve`` of an isolated fixture) the
two queries of a ``measure`` step (``MEAS:VOLT? (@1)``, ``SYST:ERR?``) three ways, taking
turns within each round:

* ``sleep``: write, then pyvisa's blocking read (the kernel wakes the thread on the reply);
* ``poll``: write, then look with ``poll`` until the reply is there (at most 200 µs), then read;
* ``peek``: the same with a peeking ``recv`` (what labctl's watch used before 2026-12-06);
* ``busy``: as ``sleep``, while a busy process of the lowest priority (``SCHED_IDLE``, else
  nice 19) shares this CPU: what a step's wait would cost if the results store's writer did
  its work in it (the kernel then wakes the thread on a CPU that is running, not halted).

Each way runs with a pause of 0, 150 and 300 µs between steps (busy, so the CPU stays
awake as it does while labctl works between queries). Prints µs a step (the best of the
rounds) and each way's difference from ``sleep``. Then a labctl transport with the default
watch runs ``--trials`` trials against the same supply and prints what each decided
(``labctl.instruments.transports.watch``). The lab runs on one CPU and this process on
another, as in ``labctl.bench.runsteps``. Never fails on time.

    .venv/bin/python bench/reply_watch.py [--steps 1000] [--rounds 3] [--trials 5]
"""

from __future__ import annotations

import argparse
import select
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from labctl.bench.common import served_apart
from labctl.sim.testing import isolated_fixture

WATCH = 200e-6  # seconds: labctl's default reply_spin_us
GAPS = (0.0, 150e-6, 300e-6)
WAYS = ("sleep", "poll", "peek", "busy")
#: a process that keeps this CPU busy at the lowest priority (any other task runs first)
_BUSY = ("import os\ntry:\n    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
         "except (AttributeError, OSError):\n    os.nice(19)\nwhile True:\n    pass\n")
_PEEK = int(socket.MSG_PEEK | socket.MSG_DONTWAIT)


def raw_way(resource: str, way: str, gap: float, steps: int) -> float:
    """Seconds a step of the raw loop, asked ``way``, with ``gap`` seconds between steps."""
    import pyvisa

    rm = pyvisa.ResourceManager("@py")
    psu = rm.open_resource(resource, read_termination="\n", write_termination="\n", timeout=5000)
    sock = psu.visalib.sessions[psu.session].interface
    poller = select.poll()
    poller.register(sock, select.POLLIN)

    def look() -> bool:
        if way == "poll":
            return bool(poller.poll(0))
        try:
            return bool(sock.recv(1, _PEEK))
        except BlockingIOError:
            return False

    def ask(command: str) -> None:
        psu.write(command)
        if way in ("poll", "peek"):
            end = time.perf_counter() + WATCH
            while not look() and time.perf_counter() < end:
                pass
        psu.read()

    try:
        for _ in range(20):
            ask("MEAS:VOLT? (@1)")
            ask("SYST:ERR?")
        spent = 0.0
        for _ in range(steps):
            start = time.perf_counter()
            ask("MEAS:VOLT? (@1)")
            ask("SYST:ERR?")
            done = time.perf_counter()
            spent += done - start
            while time.perf_counter() - done < gap:
                pass
        return spent / steps
    finally:
        psu.close()
        rm.close()


def timed_way(resource: str, way: str, gap: float, steps: int) -> float:
    """:func:`raw_way`; for ``busy``, with the lowest-priority busy process on this CPU meanwhile."""
    if way != "busy":
        return raw_way(resource, way, gap, steps)
    busy = subprocess.Popen([sys.executable, "-c", _BUSY])  # on this process's CPU (inherited)
    try:
        time.sleep(0.05)  # running before the first query
        return raw_way(resource, way, gap, steps)
    finally:
        busy.kill()
        busy.wait()


def trials(resource: str, count: int) -> list[bool]:
    """What ``count`` trials of a labctl transport with the default watch decided."""
    from labctl.instruments.station import DEFAULT_REPLY_SPIN_US
    from labctl.instruments.transports import make_transport
    from labctl.instruments.transports.watch import BLOCK, BLOCKS

    decided: list[bool] = []
    t = make_transport(resource, name="psu", timeout=2.0, reply_spin=DEFAULT_REPLY_SPIN_US * 1e-6)
    with t:
        for _ in range(count):
            t.watch_trial.reset()  # a trial now, not after the settled queries
            for _ in range(BLOCK * BLOCKS):  # two queries each: one whole trial
                t.query("MEAS:VOLT? (@1)")
                t.query("SYST:ERR?")
            decided.append(t.watch_trial.watching)
    return decided


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1000, help="steps of two queries per way, gap and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (the best of each figure is kept)")
    parser.add_argument("--trials", type=int, default=5, help="trials of labctl's watch decision")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        fixture = isolated_fixture(Path(tmp_name) / "lab")
        resource = yaml.safe_load(fixture.read_text())["roles"]["psu"]["resource"]
        best = {(way, gap): float("inf") for way in WAYS for gap in GAPS}
        with served_apart(fixture):
            for _ in range(args.rounds):
                for gap in GAPS:
                    for way in WAYS:  # taking turns: a slow spell of the machine hits them all
                        best[way, gap] = min(best[way, gap], timed_way(resource, way, gap, args.steps))
            decisions = trials(resource, args.trials)
    print(f"A step of two queries (raw pyvisa loop, best of {args.rounds} rounds of {args.steps} steps):")
    print(f"  {'pause between steps':22s}" + "".join(f"{way:>10s}" for way in WAYS)
          + "".join(f"{way + ' − sleep':>15s}" for way in WAYS[1:]))
    for gap in GAPS:
        row = "".join(f"{best[way, gap] * 1e6:7.1f} µs" for way in WAYS)
        diff = "".join(f"{(best[way, gap] - best['sleep', gap]) * 1e6:+12.1f} µs" for way in WAYS[1:])
        print(f"  {gap * 1e6:6.0f} µs{'':14s}{row}{diff}")
    kept = sum(decisions)
    print(f"labctl's watch trials on this connection: {kept} of {len(decisions)} kept watching "
          f"({', '.join('watch' if d else 'sleep' for d in decisions)})")


if __name__ == "__main__":
    main()
