"""Hand-built run records for the exporters' unit tests (no store, no lab)."""

from __future__ import annotations

from types import MappingProxyType

from labctl.report.record import Instrument, Limits, Measurement, Plan, RunRecord, Session, Step

T0 = 1_764_000_000.0  # 2025-11-24T16:00:00Z


def measurement(name: str, value: float | None, unit: str, verdict: str, limits: Limits | None = None,
                t: float = T0 + 1, **labels: str) -> Measurement:
    return Measurement(name=name, value=value, value_text=None, unit=unit, limits=limits, verdict=verdict,
                       labels=MappingProxyType(labels), time=t, seq=1)


def step(step_id: str, outcome: str, *ms: Measurement, corner: dict | None = None, corner_index: int | None = None,
         attempt: int = 1, final: bool = True, group: str = "steps", check: str = "power.rails",
         message: str = "") -> Step:
    at = f"@{corner_index}" if corner_index is not None else ""
    return Step(step_key=f"{group}/{step_id}{at}#{attempt}", step_id=step_id, group=group, check=check,
                corner=MappingProxyType(corner or {}), corner_index=corner_index, attempt=attempt, session=0,
                tags=(), started_at=T0, ended_at=T0 + 2, duration=2.0, duration_sim=None, outcome=outcome,
                message=message, final=final, measurements=ms)


def record(*steps: Step, run_id: str = "run-1", outcome: str = "failed", dut: str = "DUT-7",
           message: str = "") -> RunRecord:
    return RunRecord(
        run_id=run_id, outcome=outcome, message=message, station="bench-3", slot=None, dut_serial=dut,
        operator="qa", host="h", labctl_version="0.1.0", started_at=T0, ended_at=T0 + 10, resumed_from=None,
        plan=Plan(name="power-rails", version="1.2", hash="ab" * 32, path="power-rails.yaml", text="name: x\n",
                  parameters=MappingProxyType({"rail_tol": "3 %"}), corners=(MappingProxyType({"vin": "5 V"}),)),
        sessions=(Session(0, T0, T0 + 10, outcome, "h", 1, "0.1.0", "ab" * 32, False, None),),
        instruments=(Instrument("psu", "keysight-e36313a", "TCPIP0::h::5025::SOCKET", "KEYSIGHT,E36313A,MY1,1",
                                "MY1", "2027-01-31", 0),),
        steps=steps, prompts=(), instrument_errors=(), logs=(), attachments=(),
    )


CORE_LIMITS = Limits(low=0.725, high=0.775, nominal=0.75, text="0.75 V ± 3 %")


def failing_record() -> RunRecord:
    """Two corners of one step: VDD_CORE fails at the second; an earlier attempt was retried."""
    return record(
        step("rails", "PASS", measurement("VDD_CORE", 0.751, "V", "PASS", CORE_LIMITS, rail="VDD_CORE"),
             corner={"vin": "4.75 V"}, corner_index=0),
        step("rails", "FAIL", measurement("VDD_CORE", 0.70, "V", "FAIL", CORE_LIMITS, rail="VDD_CORE"),
             corner={"vin": "5 V"}, corner_index=1, attempt=1, final=False, message="VDD_CORE out of limits"),
        step("rails", "FAIL", measurement("VDD_CORE", 0.71, "V", "FAIL", CORE_LIMITS, rail="VDD_CORE"),
             corner={"vin": "5 V"}, corner_index=1, attempt=2, message="VDD_CORE out of limits"),
    )


def rich_record() -> RunRecord:
    """An interrupted, resumed run with everything a record can hold: two sessions, an ERROR
    step, a step cut off (no outcome), a text value, samples, an unanswered prompt, an
    instrument error, a log line and an attachment."""
    import dataclasses

    from labctl.report.record import Attachment, InstrumentError, LogEntry, Prompt, Sample

    base = record(outcome="interrupted")
    text = Measurement(name="fw", value=None, value_text="1.4.2", unit="", limits=Limits(regex=r"^1\.4"),
                       verdict="PASS", labels=MappingProxyType({}), time=T0 + 3, seq=1)
    cut = dataclasses.replace(step("soak", "PASS", check="thermal.soak"), outcome=None, ended_at=None,
                              duration=None, step_key="steps/soak#1")
    soak = dataclasses.replace(step("soak", "ERROR", check="thermal.soak", attempt=2, message="chamber timeout"),
                               session=1, samples=(Sample("chamber_temp", 44.5, "degC", T0 + 4),
                                                   Sample("chamber_temp", 45.0, "degC", T0 + 5)))
    return dataclasses.replace(
        base, ended_at=None, message="the process died",
        sessions=(*base.sessions, Session(1, T0 + 20, None, None, "h2", 2, "0.1.0", "ab" * 32, True, "name: y\n")),
        steps=(step("fw", "PASS", text, check="console", group="setup"), cut, soak,
               dataclasses.replace(step("skipped", "SKIPPED", message="when: false"), session=1),
               dataclasses.replace(step("safe-state.psu", "FAIL", group="teardown", check="safe_state",
                                        message="output still on"), session=1)),
        prompts=(Prompt("fan", "Fan installed?", ("yes", "no"), None, None, T0 + 1, None, "setup/fw#1", 0),),
        instrument_errors=(InstrumentError("chamber", -222, "Data out of range", T0 + 25, "steps/soak#2", 1),),
        logs=(LogEntry("warning", "calibration due in 10 days", T0, None, 0),
              LogEntry("info", "soaking", T0 + 21, "steps/soak#2", 1)),
        attachments=(Attachment("eye.png", "image/png", "/tmp/eye.png", 1234, "cd" * 32, T0 + 26, "steps/soak#2", 1),),
    )
