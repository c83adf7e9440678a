"""A scripted writer for kill tests: publishes a run's events through the real Recorder.

Run as a script (the kill tests start it in a child process and SIGKILL it)::

    python kill_child.py --db URL --run-id R [--steps N] [--per-step M] [--resume]
                         [--die-after-measurements K] [--die-in-commit K]

Lines on stdout (flushed), which the parent trusts as "reported":

* ``READY <pid>`` once the run row is committed;
* ``PAUSED <step_key>`` when ``--pause-in-step`` starts its endless soak;
* ``COMMITTED <step_key> <n>`` after ``publish(StepEnded)`` returned: the step's n
  measurements are committed;
* ``DONE <outcome> <saved>`` after the run ended.

Measurement values are deterministic (``step_index * 100000 + j``) so the parent can check
them. With ``--resume`` the run is continued the way ``labctl resume`` does it: setup
again, finished steps skipped, the cut-off step re-run as its next attempt, teardown.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import time

from sqlalchemy import event

from labctl.engine import events as ev
from labctl.store import Recorder, open_store

PLAN_TEXT = "name: kill-test\nsteps: [...]\n"
PLAN_HASH = "0" * 63 + "1"


def value_of(step_index: int, j: int) -> float:
    return step_index * 100000.0 + j


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--run-id", required=True)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--per-step", type=int, default=500)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--plan-hash", default=PLAN_HASH)
    ap.add_argument("--die-after-measurements", type=int, default=0)
    ap.add_argument("--die-in-commit", type=int, default=0, help="SIGKILL self inside the K-th commit")
    ap.add_argument("--go", default=None, help="after READY, wait until this file exists before the steps")
    ap.add_argument("--pause-in-step", type=int, default=0,
                    help="halfway through step K, keep publishing samples (no step end) until killed")
    args = ap.parse_args(argv)

    store = open_store(args.db)
    if args.die_in_commit:
        commits = {"n": 0}

        def before_commit(conn: object) -> None:
            commits["n"] += 1
            if commits["n"] == args.die_in_commit:
                os.kill(os.getpid(), signal.SIGKILL)  # rows written, COMMIT not yet issued

        event.listen(store.engine, "commit", before_commit)

    recorder = Recorder(store, heartbeat_interval=0.5, flush_interval=0.2)
    bus = ev.EventBus()
    bus.subscribe(recorder)
    rid = args.run_id
    info = store.resume_info(rid) if args.resume else None
    measured = 0

    def publish(e: ev.Event) -> None:
        bus.publish(e)
        if bus.errors:
            raise RuntimeError(f"subscriber failed: {bus.errors[0][1]!r}")

    publish(ev.RunStarted(
        run_id=rid, time=time.time(), plan_name="kill-test", plan_version="1",
        plan_hash=args.plan_hash, plan_text=PLAN_TEXT, plan_path="testplans/kill-test.yaml",
        station="bench-1", dut_serial="DUT-0001", operator="ci", labctl_version="0.1.0",
        host=socket.gethostname(), pid=os.getpid(), parameters={"vout": 0.75},
        instruments=[ev.InstrumentInfo(role="psu", driver="sim-psu", resource="TCPIP0::127.0.0.1::5025::SOCKET",
                                       idn="LABCTL,SIMPSU,SN1,1.0", asset_serial="A-1")],
        resumed_from=rid if args.resume else None,
    ))
    print(f"READY {os.getpid()}", flush=True)
    while args.go and not os.path.exists(args.go):
        time.sleep(0.01)

    def step(key: str, group: str, step_id: str, index: int, count: int, attempt: int = 1) -> None:
        nonlocal measured
        publish(ev.StepStarted(run_id=rid, time=time.time(), step_key=key, step_id=step_id, group=group,
                               check="generic.measure", corner={"temp": 25}, corner_index=0, attempt=attempt))
        for j in range(count):
            publish(ev.MeasurementRecorded(
                run_id=rid, time=time.time(), step_key=key, name="vout", value=value_of(index, j), unit="V",
                limits=ev.Limits(low=0.0, high=1e9, text="0..1e9 V"), verdict=ev.Verdict.PASS,
                labels={"lane": str(j % 8)}))
            measured += 1
            if measured == args.die_after_measurements:
                os.kill(os.getpid(), signal.SIGKILL)
            if j % 100 == 0:
                publish(ev.SampleRecorded(run_id=rid, time=time.time(), step_key=key, series="temp", value=25.0 + j / 1e4))
            if index == args.pause_in_step and group == "steps" and j == count // 2:
                print(f"PAUSED {key}", flush=True)
                for n in range(600):  # a long soak: samples only, flushed by the recorder's timer
                    publish(ev.SampleRecorded(run_id=rid, time=time.time(), step_key=key, series="soak", value=float(n)))
                    time.sleep(0.05)
        publish(ev.StepEnded(run_id=rid, time=time.time(), step_key=key, outcome=ev.StepOutcome.PASS, duration=0.0))
        print(f"COMMITTED {key} {count}", flush=True)

    step("setup/power_on[0]#1", "setup", "power_on", 0, 1)
    for i in range(1, args.steps + 1):
        key = f"steps/s{i}[0]#1"
        attempt = 1
        if info is not None:
            if info.is_finished(key):
                continue
            attempt = info.next_attempt(key)
            key = f"steps/s{i}[0]#{attempt}"
        step(key, "steps", f"s{i}", i, args.per_step, attempt)
    step("teardown/power_off[0]#1", "teardown", "power_off", 0, 1)
    publish(ev.RunEnded(run_id=rid, time=time.time(), outcome=ev.RunOutcome.PASSED))
    recorder.close()
    print(f"DONE passed {recorder.saved}", flush=True)
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
