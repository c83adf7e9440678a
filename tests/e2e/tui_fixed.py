"""Fixed data for the TUI's snapshot tests: a station status and a run in the middle of a
soak, with no clock, port or temporary path anywhere in what is rendered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from labctl.engine import events as ev
from labctl.tui.catalog import PlanEntry
from labctl.tui.status import InstrumentStatus, InterlockValue, StationStatus

T0 = 1_767_225_600.0  # a fixed wall time
RUN = "0000demo00000001"


_TUI_PLANS = Path(__file__).resolve().parents[1] / "data" / "tui"
EVT_LOCKS = (("die over-temperature", "dut.die_temp", "≤ 105 degC"), ("input over-current", "psu.ch1.current", "≤ 6 A"))


def plan_catalog() -> tuple[PlanEntry, ...]:
    """A fixed plan list (the built-in plans change; these snapshots should not with them).
    ``tui-bringup`` is a real file: the start form validates it."""
    return (
        PlanEntry("accelerator-evt.yaml", "accelerator-evt", "built-in",
                  "EVT of the accelerator board: power integrity, link quality on all lanes, thermal "
                  "behaviour under load at three ambient corners, and performance per watt.",
                  ("psu", "daq", "dmm", "bert", "chamber", "dut"), 18, 32, 3, "33m53s", {"vin": "5 V"}, EVT_LOCKS),
        PlanEntry("link-ber.yaml", "link-ber", "built-in", "Link training and PRBS31 BER on every lane.",
                  ("psu", "daq", "bert", "dut"), 7, 7, 0, "1m57s"),
        PlanEntry(str(_TUI_PLANS / "bringup.yaml"), "tui-bringup", "tests/data/tui",
                  "Prompt the operator, power the board, read the core rail.", ("psu", "daq", "dut"), 4, 4, 0, "2s",
                  {"vin": "5 V"}),
        PlanEntry("broken.yaml", "broken", "tests/data/tui", error="broken.yaml:3:1: unknown top-level key 'stepz'"),
    )


def station_status() -> StationStatus:
    rows = [
        ("psu", "keysight-e36312a", "E36312A", "MY59002391", "2027-09-30", "ok", "empty"),
        ("load", "keysight-el34143a", "EL34143A", "MY61001234", "2027-09-30", "ok", "empty"),
        ("dmm", "keysight-34465a", "34465A", "MY59008389", "2026-12-20", "warn", "empty"),
        ("daq", "keysight-daq970a", "DAQ970A", "MY58012345", "2027-09-30", "ok", "empty"),
        ("bert", "anritsu-mp1900a", "", "", "2027-09-30", "fail", "no answer within 3 s"),
        ("chamber", "intest-ats545", "ATS-545", "ATS-545-0042", "2027-09-30", "fail", 'error queue not empty: -113 "Undefined header"'),
        ("dut", "accel-console", "ACCEL-SIM-X1", "SIM-GOLD-0001", "", "ok", "empty"),
    ]
    instruments = tuple(InstrumentStatus(role=r, driver=d, resource=f"fixed://{r}", status=st, model=m, serial=s,
                                         asset_serial=s, calibration_due=due, errors=err,
                                         detail="calibration due in 19 days (2026-12-20)" if st == "warn" else "")
                        for r, d, m, s, due, st, err in rows)
    return StationStatus(
        "sim-bench-1", instruments, "SIM-GOLD-0001", "serial SIM-GOLD-0001 board ACCEL-SIM-X1 rev B",
        (InterlockValue("die over-temperature", "dut.die_temp", "48.2 degC", "≤ 105 degC", True),
         InterlockValue("input over-current", "psu.ch1.current", "1.92 A", "≤ 6 A", True)),
        plan="accelerator-evt")


def run_events() -> list[Any]:
    """A run of accelerator-evt in its second corner: setup passed, rails measured (one
    MARGINAL), the link's BER per lane, and a soak waiting for the chamber."""
    out: list[Any] = []
    t = [T0]

    def at(dt: float = 1.0) -> float:
        t[0] += dt
        return t[0]

    out.append(ev.RunStarted(run_id=RUN, time=at(0), plan_name="accelerator-evt", plan_version="1.2", plan_hash="0" * 64,
                             plan_text="", plan_path="accelerator-evt.yaml", station="sim-bench-1",
                             dut_serial="SIM-GOLD-0001", operator="alice", labctl_version="0.1.0", host="bench",
                             pid=1, corners=[{"ambient": "0 degC"}, {"ambient": "25 degC"}, {"ambient": "45 degC"}]))

    def step(key: str, step_id: str, group: str, check: str, outcome: str | None, corner: int | None = None,
             duration: float = 1.5, attempt: int = 1, message: str = "", during: Any = None) -> None:
        out.append(ev.StepStarted(run_id=RUN, time=at(), step_key=f"{key}#{attempt}", step_id=step_id, group=group,
                                  check=check, corner_index=corner, attempt=attempt))
        if during is not None:
            during()
        if outcome is not None:
            out.append(ev.StepEnded(run_id=RUN, time=at(duration), step_key=f"{key}#{attempt}",
                                    outcome=ev.StepOutcome(outcome), message=message, duration=duration))

    step("setup/power_on", "power_on", "setup", "power.on", "PASS", duration=0.4)
    step("setup/link_up", "link_up", "setup", "link.train", "PASS", duration=2.1)
    step("steps/rails[0]", "rails", "steps", "power.rails", "PASS", corner=0, duration=1.2)
    step("steps/soak[0]", "soak", "steps", "thermal.soak", "PASS", corner=0, duration=42.0)
    def ber() -> None:
        for lane in range(8):
            out.append(ev.MeasurementRecorded(
                run_id=RUN, time=at(0.1), step_key="steps/ber[0]#2", name="ber",
                value=2.1e-11 if lane == 5 else 10.0 ** (-14 + lane % 2), unit="",
                limits=ev.Limits(high=1e-12, text="≤ 1e-12"), verdict=ev.Verdict.FAIL if lane == 5 else ev.Verdict.PASS,
                labels={"lane": str(lane)}))

    step("steps/ber[0]", "ber", "steps", "link.ber", "FAIL", corner=0, duration=12.5, attempt=2,
         message="ber (lane 5) = 2.1e-11, limit ≤ 1e-12", during=ber)
    step("steps/rails[1]", "rails", "steps", "power.rails", None, corner=1)
    limits = ev.Limits(low=0.7275, high=0.7725, nominal=0.75, marginal_low=0.7315, marginal_high=0.7685,
                       text="0.75 V ± 3 %")
    for rail, value, verdict in (("VDD_CORE", 0.7502, "PASS"), ("VDD_HBM", 1.1, "PASS"), ("VDD_IO", 0.7302, "MARGINAL")):
        lim = limits if rail != "VDD_HBM" else ev.Limits(low=1.067, high=1.133, nominal=1.1, text="1.1 V ± 3 %")
        out.append(ev.MeasurementRecorded(run_id=RUN, time=at(0.1), step_key="steps/rails[1]#1", name="voltage",
                                          value=value, unit="V", limits=lim, verdict=ev.Verdict(verdict),
                                          labels={"rail": rail}))
    out.append(ev.StepEnded(run_id=RUN, time=at(), step_key="steps/rails[1]#1", outcome=ev.StepOutcome.PASS,
                            message="1 marginal measurement(s)", duration=1.3))
    step("steps/soak[1]", "soak", "steps", "thermal.soak", None, corner=1)
    for i in range(40):
        out.append(ev.SampleRecorded(run_id=RUN, time=at(3), step_key="steps/soak[1]#1", series="chamber",
                                     value=min(25.0, 0.0 + i * 1.1), unit="degC"))
        out.append(ev.SampleRecorded(run_id=RUN, time=at(0), step_key="steps/soak[1]#1", series="die_temp",
                                     value=min(38.0, 12.0 + i * 1.0), unit="degC"))
    out.append(ev.Progress(run_id=RUN, time=at(), step_key="steps/soak[1]#1",
                           text="chamber 24.6 → 25.0 degC, stable 20s of 2m", fraction=0.17))
    out.append(ev.LogMessage(run_id=RUN, time=at(), level="warning", message="pre-flight dmm: calibration due in 19 days"))
    return out


INTERLOCK_READINGS = {"die over-temperature": (38.0, "degC", None, 105.0),
                      "input over-current": (1.92, "A", None, 6.0)}
