"""Build the events of a scripted run (what the engine would publish)."""

from __future__ import annotations

import os
import socket
import time

from labctl.engine import events as ev


class Script:
    """Publishes a run's events with increasing times; ``t`` is the run clock."""

    def __init__(self, bus_or_recorder, run_id: str = "run-1", *, t0: float | None = None) -> None:
        self.sink = bus_or_recorder.publish if hasattr(bus_or_recorder, "publish") else bus_or_recorder
        self.run_id = run_id
        self.t = time.time() if t0 is None else t0

    @classmethod
    def on_bus(cls, *subscribers, run_id: str = "run-1", t0: float | None = None) -> Script:
        """A script publishing through an event bus (as the engine does) that ``subscribers``
        (a Recorder first, as a run subscribes it) listen to; the bus is ``script.bus``."""
        bus = ev.EventBus()
        for sub in subscribers:
            bus.subscribe(sub)
        script = cls(bus, run_id, t0=t0)
        script.bus = bus
        return script

    def tick(self, dt: float = 0.5) -> float:
        self.t += dt
        return self.t

    def emit(self, cls, **fields):
        e = cls(run_id=self.run_id, time=self.tick(), **fields)
        self.sink(e)
        return e

    def start(self, *, plan="power-smoke", dut="DUT-1", station="bench-1", plan_hash="a" * 64,
              resumed_from=None, **more):
        fields = dict(
            plan_name=plan, plan_version="1.2", plan_hash=plan_hash, plan_text=f"name: {plan}\n",
            plan_path=f"testplans/{plan}.yaml", station=station, dut_serial=dut, operator="ana",
            labctl_version="0.1.0", host=socket.gethostname(), pid=os.getpid(),
            parameters={"vout": 0.75}, corners=[{"temp": 25}],
            instruments=[ev.InstrumentInfo(role="psu", driver="sim-psu", resource="TCPIP0::127.0.0.1::5025::SOCKET",
                                           idn="LABCTL,SIMPSU,SN7,1.0", asset_serial="PSU-007", calibration_due="2027-01-01")],
            resumed_from=resumed_from,
        )
        fields.update(more)
        return self.emit(ev.RunStarted, **fields)

    def step(self, step_id: str, values: dict[str, float], *, group="steps", attempt=1, corner_index=0,
             outcome=ev.StepOutcome.PASS, low=0.7, high=0.8, end=True, labels=None):
        key = f"{group}/{step_id}[{corner_index}]#{attempt}"
        self.emit(ev.StepStarted, step_key=key, step_id=step_id, group=group, check="power.rail_voltage",
                  corner={"temp": 25}, corner_index=corner_index, attempt=attempt)
        for name, value in values.items():
            verdict = ev.Verdict.PASS if low <= value <= high else ev.Verdict.FAIL
            self.emit(ev.MeasurementRecorded, step_key=key, name=name, value=value, unit="V",
                      limits=ev.Limits(low=low, high=high, nominal=(low + high) / 2, text=f"{low}..{high} V"),
                      verdict=verdict, labels=labels or {"rail": name})
        if end:
            self.emit(ev.StepEnded, step_key=key, outcome=outcome, message="" if outcome == "PASS" else "out of limits",
                      duration=1.0)
        return key

    def end(self, outcome=ev.RunOutcome.PASSED):
        return self.emit(ev.RunEnded, outcome=outcome)
