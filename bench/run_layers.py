"""Where the wall ratio of a ``measure`` step goes, layer by layer.

Against ``labctl sim serve`` of an isolated fixture (the lab pinned to one CPU, this process
to the other, as in ``labctl.bench.runsteps``), loops of N steps each doing a ``measure``
step's I/O (``MEAS:VOLT? (@1)``, then the error queue) and recording it, with more of labctl
in each way:

* ``raw``: the hand-written pyvisa loop of the table's floor;
* ``transport + store``: labctl's transport (the session log of every exchange, the reply
  watch) and the results store recording each step (its start, measurement, end and four I/O
  records; SQLite, the commit window of ``labctl run``), driven by this loop, no engine;
* ``drivers + store``: the same through the station's role (``measure_voltage``) and its
  error-queue drain, as a check reaches them;
* ``+ console``: and the console subscriber (to a buffer);
* ``labctl run``: ``launch.execute`` of a plan of N ``measure`` steps in this process (plan
  loading, runner, step context, checks, events), the slope between N/10 and N steps.

Prints each way's time a step in each round and the best of the rounds, and its ratio to the
raw loop. Never fails on time.

    .venv/bin/python bench/run_layers.py [--steps 3000] [--rounds 4]
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_breakdown import run_once  # noqa: E402

from labctl.bench.common import measure_plan, run_started, served_apart  # noqa: E402
from labctl.bench.runsteps import raw_pyvisa_step  # noqa: E402
from labctl.sim.testing import isolated_fixture  # noqa: E402

WAYS = ("raw", "transport + store", "drivers + store", "+ console", "labctl run")


def recorded_loop(way: str, resource: str, fixture: Path, db: Path, n: int) -> float:
    """Seconds a step of ``n`` steps done ``way`` (one of the middle three) and recorded."""
    from labctl.console import ConsoleReporter, make_console
    from labctl.engine import events as ev
    from labctl.gcpause import gc_settled
    from labctl.instruments.sessionlog import SessionLog
    from labctl.store import open_store
    from labctl.store.recorder import DEFAULT_COMMIT_WINDOW, Recorder

    closing: Any
    if way == "transport + store":
        from labctl.instruments.station import SESSION_LOG_KEEP
        from labctl.instruments.transports.visa import VisaTransport

        log = SessionLog(max_records=SESSION_LOG_KEEP)
        transport = VisaTransport(resource, name="psu", session_log=log, reply_spin=200e-6)
        transport.open()

        def step() -> float:
            value = float(transport.query("MEAS:VOLT? (@1)"))
            transport.query("SYST:ERR?")
            return value

        closing = transport
    else:
        from labctl.fixture import load_fixture
        from labctl.instruments import open_station

        station = open_station(load_fixture(fixture))
        log = station.session_log
        psu = station.role("psu")

        def step() -> float:
            value = psu.measure_voltage("1")
            station.drain_errors(["psu"])
            return value

        closing = station
    try:
        for _ in range(50):
            step()
        limits = ev.Limits(low=-1.0, high=30.0, text="-1 V ≤ x ≤ 30 V")
        with open_store(str(db)) as store, gc_settled():
            recorder = Recorder(store, commit_window=DEFAULT_COMMIT_WINDOW)
            bus = ev.EventBus()
            bus.subscribe(recorder)
            if way == "+ console":
                bus.subscribe(ConsoleReporter(make_console(file=io.StringIO())))
            run_id = f"layers-{time.time_ns()}"
            bus.publish(run_started(run_id))
            sent = log.total
            start = time.perf_counter()
            for i in range(n):
                key = f"steps/m{i}#1"
                bus.publish(ev.StepStarted(run_id=run_id, time=time.time(), step_key=key, step_id=f"m{i}",
                                           group="steps", check="measure"))
                value = step()
                bus.publish(ev.MeasurementRecorded(run_id=run_id, time=time.time(), step_key=key, name="value",
                                                   value=value, unit="V", limits=limits, verdict=ev.Verdict.PASS))
                records, sent = log.since(sent)
                recorder.add_session_log(run_id, records, step_key=key)
                bus.publish(ev.StepEnded(run_id=run_id, time=time.time(), step_key=key, outcome=ev.StepOutcome.PASS))
            bus.publish(ev.RunEnded(run_id=run_id, time=time.time(), outcome=ev.RunOutcome.PASSED))
            recorder.close()  # the last commit counts too
            seconds = time.perf_counter() - start
            if bus.errors or not recorder.saved:
                raise SystemExit(f"the recorder failed: {bus.errors} {recorder.problem}")
    finally:
        closing.close()
    return seconds / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    n = args.steps
    small = max(10, n // 10)
    best = dict.fromkeys(WAYS, float("inf"))
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        fixture = isolated_fixture(tmp / "lab")
        resource = yaml.safe_load(fixture.read_text(encoding="utf-8"))["roles"]["psu"]["resource"]
        plans = {k: measure_plan(tmp / f"measure-{k}.yaml", k) for k in (small, n)}
        with served_apart(fixture):
            run_once(plans[small], fixture, tmp / "warm-up.db", console=True, store=True)  # imports, caches
            print(f"seconds a step (µs), {n} steps a way, the lab on one CPU and this process on another:")
            print("  round  " + "  ".join(f"{w:>17s}" for w in WAYS))
            for r in range(args.rounds):
                got = {"raw": raw_pyvisa_step(resource, n)[0]}
                for way in WAYS[1:4]:
                    got[way] = recorded_loop(way, resource, fixture, tmp / f"r{r}-{way[:5]}.db", n)
                walls = {k: run_once(p, fixture, tmp / f"run{r}-{k}.db", console=True, store=True)[0]
                         for k, p in plans.items()}
                got["labctl run"] = (walls[n] - walls[small]) / (n - small)
                for way, seconds in got.items():
                    best[way] = min(best[way], seconds)
                print(f"  {r + 1:5d}  " + "  ".join(f"{got[w] * 1e6:17.1f}" for w in WAYS), flush=True)
    print("  best   " + "  ".join(f"{best[w] * 1e6:17.1f}" for w in WAYS))
    print("  × raw  " + "  ".join(f"{best[w] / best['raw']:17.2f}" for w in WAYS))


if __name__ == "__main__":
    main()
