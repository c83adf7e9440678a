"""Per-step and per-measurement cost of a run, against the instrument I/O it does.

* ``labctl run`` of N ``measure`` steps (``MEAS:VOLT? (@1)`` then the error queue,
  ``SYST:ERR?``, on the simulated supply; limits; SQLite store; console on, piped) for two
  sizes: the slope is the cost of one step. The floor is a hand-written pyvisa loop doing
  the same two queries against the same served lab, in the same run. Three rows: the wall
  slope against 1.5× that floor, the wall slope minus the floor (labctl's time per step) and
  labctl's CPU per step (the child's CPU slope minus the floor's CPU), the last two against
  0.3 ms. As in :mod:`labctl.bench.simlab`, the served lab runs on one CPU and the client
  (the raw loop, then ``labctl run`` with all its threads) on another, the way a bench PC
  and its instruments are apart: left to the scheduler, the floor is either ~25 µs a query
  (client and lab sharing a CPU, which no real instrument does) or ~50 µs, by the moment.
* Each plan runs once per round, 4 rounds (the best run counts). From its second run on, a
  plan's YAML data comes from the plan cache (``labctl.plan.cache``), as when a lab runs a
  plan again; ``python -m labctl.bench`` starts every benchmark with an empty cache of its own.
* A step recording 1,000 measurements, published through the event bus into the recorder
  (SQLite, ``synchronous=FULL``) and the console: the cost of one measurement (20 such steps,
  the best of 3 rounds, each into a new database).
"""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

from labctl.bench import Row
from labctl.bench.common import measure_plan, run_started, served_apart, timed_cli_cpu


def raw_pyvisa_step(resource: str, n: int) -> tuple[float, float]:
    """(wall, CPU) seconds per step of the hand-written loop: the floor labctl is measured against."""
    import pyvisa

    rm = pyvisa.ResourceManager("@py")
    psu = rm.open_resource(resource, read_termination="\n", write_termination="\n", timeout=5000)
    try:
        for _ in range(50):
            psu.query("MEAS:VOLT? (@1)")
            psu.query("SYST:ERR?")
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(n):
            psu.query("MEAS:VOLT? (@1)")
            psu.query("SYST:ERR?")
        return (time.perf_counter() - start) / n, (time.process_time() - cpu) / n
    finally:
        psu.close()
        rm.close()


def step_rows(tmp: Path, quick: bool) -> list[Row]:
    import yaml

    from labctl.sim.testing import isolated_fixture

    small, large = (50, 300) if quick else (500, 5000)
    fixture = isolated_fixture(tmp / "lab")
    resource = yaml.safe_load(fixture.read_text())["roles"]["psu"]["resource"]
    plans = {n: measure_plan(tmp / f"measure-{n}.yaml", n) for n in (small, large)}
    rounds = 1 if quick else 4  # the best of each: other jobs on the machine only ever add time (2 left
    # the ratio swinging between 1.9× and 2.5× from one invocation to the next on this VM)
    raws: list[tuple[float, float]] = []
    wall: dict[int, float] = {n: float("inf") for n in plans}
    cpu: dict[int, float] = {n: float("inf") for n in plans}
    with served_apart(fixture):
        for r in range(rounds):  # the floor and labctl alternate, so a slow spell hits both
            raws.append(raw_pyvisa_step(resource, 300 if quick else 3000))
            for n, plan in plans.items():
                db = tmp / f"run-{n}-{r}.db"
                w, c, code, out = timed_cli_cpu("run", str(plan), "--fixture", str(fixture), "--db", str(db),
                                                "--no-preflight", big=False)  # default limits
                if code != 0:
                    raise RuntimeError(f"labctl run of {n} steps exited {code}: {out[-2000:]}")
                wall[n], cpu[n] = min(wall[n], w), min(cpu[n], c)
        raws.append(raw_pyvisa_step(resource, 300 if quick else 3000))
    raw_wall, raw_cpu = min(r[0] for r in raws), min(r[1] for r in raws)
    slope = (wall[large] - wall[small]) / (large - small)
    cpu_slope = (cpu[large] - cpu[small]) / (large - small)
    labctl = max(cpu_slope - raw_cpu, 0.0)
    return [
        Row(f"run: one measure step, wall ({small}→{large} steps, slope)", "≤ 1.5× raw pyvisa loop",
            f"{slope * 1e3:.3f} ms vs {raw_wall * 1e3:.3f} ms raw", slope / raw_wall / 1.5),
        Row("run: labctl's wall per step beyond the raw loop (slope − raw)", "≤ 0.3 ms",
            f"{max(slope - raw_wall, 0.0) * 1e3:.3f} ms", max(slope - raw_wall, 0.0) / 0.3e-3),
        Row("run: labctl's own CPU per step (slope − raw loop's CPU)", "≤ 0.3 ms",
            f"{labctl * 1e3:.3f} ms ({cpu_slope * 1e3:.3f} − {raw_cpu * 1e3:.3f})", labctl / 0.3e-3),
    ]


def measurement_row(tmp: Path, quick: bool) -> Row:
    rounds = 1 if quick else 3  # the best of them: other jobs on the machine only ever add time
    per = min(_record_measurements(tmp / f"measurements-{r}.db", 3 if quick else 20) for r in range(rounds))
    return Row("record: CPU per measurement (steps of 1,000; bus → store + console)", "≤ 20 µs",
               f"{per * 1e6:.1f} µs", per / 20e-6)


def _record_measurements(db: Path, steps: int) -> float:
    """CPU seconds a measurement, ``steps`` steps of 1,000 published and recorded."""
    from labctl.console import ConsoleReporter, make_console
    from labctl.engine import events as ev
    from labctl.store import open_store
    from labctl.store.recorder import Recorder, commit_window_from_env

    per_step = 1000
    run_id = f"bench-{os.getpid()}-{time.time_ns()}"
    limits = ev.Limits(low=0.7, high=0.8, text="0.7 V ≤ x ≤ 0.8 V")
    with open_store(str(db)) as store:
        recorder = Recorder(store, commit_window=commit_window_from_env())
        bus = ev.EventBus()
        bus.subscribe(recorder)
        bus.subscribe(ConsoleReporter(make_console(file=io.StringIO())))
        bus.publish(run_started(run_id))
        start = time.process_time()
        for i in range(steps):
            key = f"steps/rails[{i}]#1"
            t = time.time()
            bus.publish(ev.StepStarted(run_id=run_id, time=t, step_key=key, step_id="rails", group="steps",
                                       check="power.rails"))
            for j in range(per_step):
                bus.publish(ev.MeasurementRecorded(
                    run_id=run_id, time=t, step_key=key, name="voltage", value=0.75 + j * 1e-6, unit="V",
                    limits=limits, verdict=ev.Verdict.PASS, labels={"rail": f"R{j % 16}"}))
            bus.publish(ev.StepEnded(run_id=run_id, time=t, step_key=key, outcome=ev.StepOutcome.PASS))
        bus.publish(ev.RunEnded(run_id=run_id, time=time.time(), outcome=ev.RunOutcome.PASSED))
        recorder.close()  # waits for the last commit: its CPU counts too
        per = (time.process_time() - start) / (steps * per_step)
        if bus.errors or not recorder.saved:
            raise RuntimeError(f"recorder failed: {bus.errors} {recorder.problem}")
    return per


def rows(tmp: Path, quick: bool) -> list[Row]:
    return [*step_rows(tmp, quick), measurement_row(tmp, quick)]
